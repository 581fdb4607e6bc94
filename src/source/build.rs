//! A build opened for reading: the target's file, its payload and its module
//! graph, parsed once and shared by every command and analysis.

use super::{Opened, version};
use crate::bun::{BunGraph, GraphError};
use crate::container::{self, ContainerError, ContainerOptions, Located};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Container(#[from] ContainerError),
    #[error("Bun payload: {0}")]
    Graph(#[from] GraphError),
}

/// Where the Claude Code version was read.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VersionFacts {
    /// The version the bundle itself states (None when it cannot be told).
    pub bundle: Option<String>,
    /// The version package.json states, for targets from a package.
    pub package: Option<String>,
}

impl VersionFacts {
    /// The best-founded version: the bundle's own word, else package.json.
    pub fn best(&self) -> Option<&str> {
        self.bundle.as_deref().or(self.package.as_deref())
    }
}

pub struct Build<'a> {
    pub opened: &'a Opened,
    pub located: Located<'a>,
    pub graph: BunGraph<'a>,
}

impl<'a> Build<'a> {
    pub fn open(opened: &'a Opened, opts: &ContainerOptions) -> Result<Build<'a>, BuildError> {
        let bytes = opened.bytes();
        let is_js_name = opened
            .path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "js" | "mjs" | "cjs"));
        let mut opts = opts.clone();
        opts.assume_js |= is_js_name && !bytes.starts_with(b"\x7fELF") && !bytes.starts_with(b"MZ");
        let located = container::locate(bytes, &opts)?;
        let graph = if located.info.format == container::Format::Js {
            BunGraph::single_js(&opened.file_name, located.payload)
        } else {
            BunGraph::parse(located.payload)?
        };
        Ok(Build {
            opened,
            located,
            graph,
        })
    }

    pub fn version(&self) -> VersionFacts {
        VersionFacts {
            bundle: version::from_bundle(self.graph.entry_module().contents),
            package: self.opened.package_version.clone(),
        }
    }
}
