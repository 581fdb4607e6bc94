//! Mach-O, thin and fat: the payload lives in segment `__BUN`, section `__bun`
//! (Bun ≥ 1.2.4); older builds appended it to the file.

use super::{ContainerError, ContainerOptions, ContainerReader, Format, Located, Slice};
use goblin::mach::{MachO as GMachO, MultiArch, constants::cputype};

pub(crate) struct MachO;

const SECTION: &str = "__BUN,__bun";

pub(crate) fn arch_name(cpu: u32) -> String {
    match cpu {
        cputype::CPU_TYPE_ARM64 => "arm64".into(),
        cputype::CPU_TYPE_X86_64 => "x86_64".into(),
        cputype::CPU_TYPE_ARM64_32 => "arm64_32".into(),
        cputype::CPU_TYPE_X86 => "i386".into(),
        other => format!("cpu-{other:#x}"),
    }
}

/// Most slices a fat header may list. Universal builds hold one per
/// architecture (Claude Code's: none, they are thin; `lipo` output: two or
/// three); the kernel itself reads the fat header from one page. The
/// container's slice list and the signature check both stop here, so a
/// header repeating one slice 50,000 times costs neither work nor output.
pub(crate) const MAX_FAT_SLICES: usize = 32;

fn malformed(e: impl std::fmt::Display) -> ContainerError {
    ContainerError::Malformed {
        format: "Mach-O",
        detail: e.to_string(),
    }
}

/// Locate the payload in one thin Mach-O image starting at `base` in `bytes`.
fn locate_thin<'a>(
    bytes: &'a [u8],
    base: usize,
    end: usize,
) -> Result<Located<'a>, ContainerError> {
    let image = &bytes[base..end];
    let m = GMachO::parse(image, 0).map_err(malformed)?;
    let arch = Some(arch_name(m.header.cputype));
    // Match on the section's own segment name: executables have a `__BUN`
    // segment, while object files put every section in one unnamed segment.
    for seg in &m.segments {
        for (sect, _) in seg.sections().map_err(malformed)? {
            if sect.segname().ok() != Some("__BUN") || sect.name().ok() != Some("__bun") {
                continue;
            }
            let start = base
                .checked_add(sect.offset as usize)
                .ok_or_else(|| malformed("section offset overflows"))?;
            let len = usize::try_from(sect.size).map_err(malformed)?;
            let stop = start
                .checked_add(len)
                .ok_or_else(|| malformed("section size overflows"))?;
            if stop > end {
                return Err(ContainerError::Truncated(format!(
                    "section {SECTION} ends at {stop} but the image ends at {end}"
                )));
            }
            return super::from_section(bytes, Format::Macho, arch, SECTION, start..stop);
        }
    }
    super::fallback(&bytes[..end], Format::Macho, arch, SECTION)
}

impl ContainerReader for MachO {
    fn matches(bytes: &[u8]) -> bool {
        matches!(
            bytes.get(..4),
            Some([0xcf, 0xfa, 0xed, 0xfe])
                | Some([0xce, 0xfa, 0xed, 0xfe])
                | Some([0xca, 0xfe, 0xba, 0xbe])
                | Some([0xca, 0xfe, 0xba, 0xbf])
        )
    }

    fn locate<'a>(bytes: &'a [u8], opts: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
        if !matches!(bytes.get(..4), Some([0xca, 0xfe, 0xba, 0xbe | 0xbf])) {
            return locate_thin(bytes, 0, bytes.len());
        }
        // Java class files share the 0xcafebabe magic; goblin rejects those.
        let fat = MultiArch::new(bytes).map_err(malformed)?;
        if fat.narches > MAX_FAT_SLICES {
            return Err(malformed(format!(
                "fat header lists {} slices (universal builds hold one per architecture; at most {MAX_FAT_SLICES})",
                fat.narches
            )));
        }
        let mut slices = Vec::new();
        for arch in fat.iter_arches() {
            let arch = arch.map_err(malformed)?;
            slices.push(Slice {
                arch: arch_name(arch.cputype),
                offset: arch.offset as u64,
                size: arch.size as u64,
            });
        }
        let wanted = opts.arch.unwrap_or(super::Arch::Arm64).as_str().to_string();
        let slice =
            slices
                .iter()
                .find(|s| s.arch == wanted)
                .ok_or_else(|| ContainerError::NoSuchArch {
                    wanted: wanted.clone(),
                    available: slices
                        .iter()
                        .map(|s| s.arch.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        let base = usize::try_from(slice.offset).map_err(malformed)?;
        let end = base
            .checked_add(usize::try_from(slice.size).map_err(malformed)?)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                ContainerError::Truncated(format!(
                    "fat slice {} runs past the end of the file",
                    slice.arch
                ))
            })?;
        let mut located = locate_thin(bytes, base, end)?;
        located.info.slices = slices;
        Ok(located)
    }
}
