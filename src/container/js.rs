//! A plain JavaScript file (the `cli.js` of older npm packages) is a valid
//! target: the whole file is the payload, a graph of one module.

use super::{
    ContainerError, ContainerInfo, ContainerOptions, ContainerReader, Format, Located, Placement,
};

pub(crate) struct Js;

impl ContainerReader for Js {
    fn matches(bytes: &[u8]) -> bool {
        // Text that starts like a script: a shebang, a comment, or code.
        let head = &bytes[..bytes.len().min(512)];
        let text = match std::str::from_utf8(head) {
            Ok(t) => t,
            // The 512-byte window may cut a multi-byte character.
            Err(e) if e.valid_up_to() + 4 > head.len() => {
                std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
            }
            Err(_) => return false,
        };
        let t = text.trim_start_matches('\u{feff}').trim_start();
        !t.is_empty()
            && !text.contains('\0')
            && (t.starts_with("#!")
                || t.starts_with("//")
                || t.starts_with("/*")
                || t.starts_with("\"use strict\"")
                || t.starts_with("'use strict'")
                || t.starts_with("import")
                || t.starts_with("export")
                || t.starts_with("(function")
                || t.starts_with("var ")
                || t.starts_with("const ")
                || t.starts_with("let "))
    }

    fn locate<'a>(bytes: &'a [u8], _: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
        if bytes.is_empty() {
            return Err(ContainerError::Truncated("the file is empty".into()));
        }
        Ok(Located {
            info: ContainerInfo {
                format: Format::Js,
                arch: None,
                slices: Vec::new(),
                placement: Placement::WholeFile,
                section: None,
                section_offset: 0,
                section_size: bytes.len() as u64,
                header_width: None,
                payload_offset: 0,
                payload_size: bytes.len() as u64,
            },
            payload: bytes,
        })
    }
}
