//! ELF (x86-64, aarch64; glibc and musl): section `.bun` since Bun 1.3.12,
//! appended payload before that. Only the file header and the section header
//! table are read — never the symbol tables of a 250 MB binary.

use super::{ContainerError, ContainerOptions, ContainerReader, Format, Located};
use goblin::container::{Container, Ctx};
use goblin::elf::{header, section_header::SectionHeader};

pub(crate) struct Elf;

const SECTION: &str = ".bun";

fn malformed(e: impl std::fmt::Display) -> ContainerError {
    ContainerError::Malformed {
        format: "ELF",
        detail: e.to_string(),
    }
}

fn arch_name(machine: u16) -> String {
    match machine {
        header::EM_X86_64 => "x86_64".into(),
        header::EM_AARCH64 => "arm64".into(),
        header::EM_386 => "i386".into(),
        header::EM_ARM => "arm".into(),
        header::EM_RISCV => "riscv".into(),
        other => format!("machine-{other}"),
    }
}

impl ContainerReader for Elf {
    fn matches(bytes: &[u8]) -> bool {
        bytes.starts_with(b"\x7fELF")
    }

    fn locate<'a>(bytes: &'a [u8], _: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
        let h = goblin::elf::Elf::parse_header(bytes).map_err(malformed)?;
        let arch = Some(arch_name(h.e_machine));
        let container = if h.e_ident[header::EI_CLASS] == header::ELFCLASS64 {
            Container::Big
        } else {
            Container::Little
        };
        let endian = h.endianness().map_err(malformed)?;
        let ctx = Ctx::new(container, endian);
        let count = h.e_shnum as usize;
        let shoff = usize::try_from(h.e_shoff).map_err(malformed)?;
        // goblin checks the table against the file size before allocating.
        let sections = if count == 0 {
            Vec::new()
        } else {
            SectionHeader::parse(bytes, shoff, count, ctx).map_err(malformed)?
        };
        let names = sections.get(h.e_shstrndx as usize).and_then(|s| {
            let start = usize::try_from(s.sh_offset).ok()?;
            let end = start.checked_add(usize::try_from(s.sh_size).ok()?)?;
            bytes.get(start..end)
        });
        if let Some(names) = names {
            for s in &sections {
                let name = names
                    .get(s.sh_name..)
                    .and_then(|n| n.split(|&b| b == 0).next());
                if name != Some(SECTION.as_bytes()) {
                    continue;
                }
                let start = usize::try_from(s.sh_offset).map_err(malformed)?;
                let len = usize::try_from(s.sh_size).map_err(malformed)?;
                let end = start
                    .checked_add(len)
                    .ok_or_else(|| malformed("section size overflows"))?;
                return super::from_section(bytes, Format::Elf, arch, SECTION, start..end);
            }
        }
        super::fallback(bytes, Format::Elf, arch, SECTION)
    }
}
