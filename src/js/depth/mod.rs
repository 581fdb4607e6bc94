//! Nesting limits for JavaScript input.
//!
//! swc's parser, its printer and every AST visitor recurse once per nesting
//! level, and so does dropping an AST: 200k nested parentheses, a million-term
//! `1+1+…` chain (swc builds it left-deep) or a long `else if` chain would
//! overflow any stack and abort the process. None of those can be made
//! iterative from here, so depth is bounded before anything recursive runs:
//!
//! 1. [`scan`], before parsing: a lexical pass (strings, comments, template
//!    literals and regular expressions skipped as swc's lexer does) that
//!    over-approximates how deep any parse of the text can nest — brackets,
//!    and within each bracket level every token since the last point where
//!    all expressions at that level have ended (`,` `;`, a block followed by
//!    a new statement), plus the statement chains (`if`/`else`, loops,
//!    labels) that continue across those points. It bounds the parser's own
//!    recursion, which nothing else can (swc offers no hook into it).
//! 2. [`check_program`] / [`check_expr`], after parsing: the AST's depth
//!    measured exactly by a walk that stops at the limit. An AST that is too
//!    deep is taken apart iteratively ([`dismantle_program`]) rather than
//!    dropped recursively.
//! 3. [`with_stack`]: every parse, print and walk runs with
//!    [`STACK_BYTES`](super::parse::STACK_BYTES) of stack, in which
//!    [`MAX_NESTING`] provably fits (tests/nesting.rs runs every command at
//!    the limit).

mod ast;
mod scan;
#[cfg(test)]
mod tests;

pub use ast::{Measure, check_expr, check_program, dismantle_expr, dismantle_program};
pub use scan::{scan, scan_with_limit, wrapper_statement_ends};

/// The deepest nesting accepted, in the units of [`scan`] (about two per
/// bracket level, one per chained operator or statement) and, after parsing,
/// in AST levels (expressions, statements and patterns). Claude Code's
/// bundles reach 262 (2.1.220 – 2.1.332, measured by
/// `cargo test --test all nesting::real_bundles_are_well_below_the_limit`).
pub const MAX_NESTING: u32 = 2_000;

/// The limit of the exact check after parsing, in AST levels. The scan's
/// units track AST levels closely on single constructs (every real bundle:
/// within a quarter), but a mix can be deeper than its estimate — a member chain
/// under a `+` chain under a `||` chain is as deep as their sum, where the
/// scan sees the longest — so the AST may go somewhat past the scan's
/// limit. Walkers, printer and drops are sized (and tested) for this.
pub const AST_LIMIT: u32 = 2 * MAX_NESTING;

/// Input nested deeper than [`MAX_NESTING`]: where the limit was crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// Byte offset in the scanned text (for [`scan`]) or swc position (for
    /// the AST checks).
    pub offset: usize,
}

/// Run `f` with at least [`STACK_BYTES`](super::parse::STACK_BYTES) / 2 of
/// stack left, switching to a fresh stack segment when the current thread
/// has less (the main thread has 8 MiB, rayon's workers 2 MiB). On the
/// big-stack threads of [`super::parse`] this costs one comparison.
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(super::parse::STACK_BYTES / 2, super::parse::STACK_BYTES, f)
}

/// For recursive walkers over parsed (hence depth-checked) input: keep at
/// least 1 MiB of stack, growing by 16 MiB segments when needed.
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(1 << 20, 16 << 20, f)
}

/// [`scan`] `src` (module `name`), as the error the JavaScript layer reports.
pub fn check_source(name: &str, src: &str) -> Result<(), crate::js::JsError> {
    match scan(src) {
        Ok(_) => Ok(()),
        Err(d) => Err(too_deep(name, src, d.offset)),
    }
}

/// The error for input nested past the limit at byte `offset` of `src`.
pub fn too_deep(name: &str, src: &str, offset: usize) -> crate::js::JsError {
    let (line, col) = crate::js::lines::line_col(src, offset);
    crate::js::JsError::TooDeep {
        module: name.to_string(),
        line,
        col,
        limit: MAX_NESTING,
    }
}
