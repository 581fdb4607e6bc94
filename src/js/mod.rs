//! Layer 4: JavaScript. Parse (swc), pretty-print with line maps, index every
//! module once, recover original names and link imports across chunks.

pub mod code;
pub mod depth;
pub mod flow;
pub mod grep;
pub mod index;
pub mod json;
pub mod keywords;
pub mod lines;
pub mod parse;
pub mod pieces;
pub mod print;
pub mod shape;
pub mod symbols;

#[derive(Debug, thiserror::Error)]
pub enum JsError {
    #[error("{module}:{line}:{col}: syntax error: {message}")]
    Syntax {
        module: String,
        line: usize,
        col: usize,
        message: String,
    },
    /// Deeper than [`depth::MAX_NESTING`]: refused before anything recursive
    /// (parser, printer, visitors) could overflow the stack.
    #[error(
        "{module}:{line}:{col}: nesting deeper than {limit} (the limit on nested brackets, operator chains and statements)"
    )]
    TooDeep {
        module: String,
        line: usize,
        col: usize,
        limit: u32,
    },
    /// The system refused a thread or memory the parse needs.
    #[error("{0}")]
    Resources(String),
    #[error("printing failed: {0}")]
    Print(String),
    #[error("module {0} is not text")]
    NotText(String),
}
