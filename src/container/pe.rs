//! PE (x64, arm64): the last section `.bun` since Bun 1.2.19. Its raw size is
//! padded to the file alignment, so the virtual size bounds the payload.

use super::{ContainerError, ContainerOptions, ContainerReader, Format, Located};
use goblin::pe::header::{Header, SIZEOF_COFF_HEADER, SIZEOF_PE_MAGIC};

pub(crate) struct Pe;

const SECTION: &str = ".bun";

fn malformed(e: impl std::fmt::Display) -> ContainerError {
    ContainerError::Malformed {
        format: "PE",
        detail: e.to_string(),
    }
}

fn arch_name(machine: u16) -> String {
    use goblin::pe::header::*;
    match machine {
        COFF_MACHINE_X86_64 => "x86_64".into(),
        COFF_MACHINE_ARM64 => "arm64".into(),
        COFF_MACHINE_X86 => "i386".into(),
        other => format!("machine-{other:#x}"),
    }
}

impl ContainerReader for Pe {
    fn matches(bytes: &[u8]) -> bool {
        bytes.starts_with(b"MZ")
    }

    fn locate<'a>(bytes: &'a [u8], _: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
        let h = Header::parse(bytes).map_err(malformed)?;
        let arch = Some(arch_name(h.coff_header.machine));
        let mut offset = (h.dos_header.pe_pointer as usize)
            .checked_add(
                SIZEOF_PE_MAGIC
                    + SIZEOF_COFF_HEADER
                    + h.coff_header.size_of_optional_header as usize,
            )
            .ok_or_else(|| malformed("section table offset overflows"))?;
        let sections = h
            .coff_header
            .sections(bytes, &mut offset)
            .map_err(malformed)?;
        for s in &sections {
            if s.name().ok() != Some(SECTION) {
                continue;
            }
            let start = s.pointer_to_raw_data as usize;
            let len = if s.virtual_size == 0 {
                s.size_of_raw_data
            } else {
                s.virtual_size.min(s.size_of_raw_data)
            } as usize;
            return super::from_section(bytes, Format::Pe, arch, SECTION, start..start + len);
        }
        super::fallback(bytes, Format::Pe, arch, SECTION)
    }
}
