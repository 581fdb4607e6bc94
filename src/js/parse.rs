//! Parsing a module with swc: script or module goal, explicit resource
//! management on, recovered errors treated as errors, nesting bounded by
//! [`depth::MAX_NESTING`], on a stack large enough for that depth.

use super::JsError;
use super::depth;
use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_common::{FileName, SourceFile, SourceMap, Spanned};
use swc_ecma_ast::{EsVersion, Program};
use swc_ecma_parser::{EsSyntax, Parser, StringInput, Syntax};

/// Stack for parser, printer and visitors: [`depth::MAX_NESTING`] levels
/// (and an AST of [`depth::AST_LIMIT`]) must fit. Unoptimised test builds
/// need between 16 and 28 MiB for the deepest input tests/nesting.rs
/// accepts; this is over four times that. Only the pages used are
/// committed, but each thread reserves the whole: `diff` runs about ten.
pub const STACK_BYTES: usize = 128 << 20;

/// Which grammar a module is parsed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// CJS-wrapped bundles (a pragma, then a function wrapper).
    Script,
    /// ESM chunks of code-split builds.
    Module,
}

/// A parsed module: its source map (one per module, so modules can be
/// parsed on any thread), the file and the AST.
pub struct Parsed {
    pub cm: Lrc<SourceMap>,
    pub file: Lrc<SourceFile>,
    pub program: Program,
    pub goal: Goal,
}

impl Parsed {
    /// Byte offset in the source of a swc position.
    pub fn offset(&self, pos: swc_common::BytePos) -> usize {
        (pos.0.saturating_sub(self.file.start_pos.0)) as usize
    }
}

pub fn syntax() -> Syntax {
    Syntax::Es(EsSyntax {
        explicit_resource_management: true,
        import_attributes: true,
        allow_return_outside_function: true,
        decorators: false,
        jsx: false,
        ..Default::default()
    })
}

/// Parse `src`. The goal follows the module's format: ESM as a module,
/// anything else as a script, falling back to module when a script parse
/// fails on `import`/`export`. Comments come back separately: they are
/// single-threaded in swc, and only the printer wants them.
///
/// Input nested deeper than [`depth::MAX_NESTING`] is refused with
/// [`JsError::TooDeep`], before parsing when the lexical scan sees it, else
/// right after (the AST is then freed without recursion); see [`depth`].
pub fn parse(
    name: &str,
    src: String,
    goal: Goal,
) -> Result<(Parsed, SingleThreadedComments), JsError> {
    depth::with_stack(|| parse_bounded(name, src, goal, true))
}

/// [`parse`] without collecting comments: what indexing needs (the
/// comments only change how a module prints, and taking each one costs
/// the parser a map operation).
pub fn parse_bare(name: &str, src: String, goal: Goal) -> Result<Parsed, JsError> {
    depth::with_stack(|| parse_bounded(name, src, goal, false)).map(|(p, _)| p)
}

/// A module parsed whose AST's depth is not measured yet. Only a walk that
/// counts the levels itself and stops at [`depth::AST_LIMIT`] may read it:
/// [`super::index::ModuleIndex::build_measured`], which then hands back the
/// [`Parsed`] module (or frees a too-deep AST without recursing). On most
/// modules that saves a walk of the whole AST: the index walk measures as
/// it goes.
pub struct Unmeasured {
    name: String,
    parsed: Parsed,
    comments: SingleThreadedComments,
}

impl Unmeasured {
    /// The AST, for a walk that bounds its own depth.
    pub(super) fn program(&self) -> &Program {
        &self.parsed.program
    }

    /// The swc position the module's source starts at.
    pub(super) fn base(&self) -> u32 {
        self.parsed.file.start_pos.0
    }

    /// The walk stayed within [`depth::AST_LIMIT`]: the module as
    /// [`parse`] returns it.
    pub(super) fn measured(self) -> (Parsed, SingleThreadedComments) {
        (self.parsed, self.comments)
    }

    /// Measured by the separate walk: what [`parse`] returns.
    fn measure(self) -> Result<(Parsed, SingleThreadedComments), JsError> {
        match depth::check_program(&self.parsed.program) {
            Ok(_) => Ok(self.measured()),
            Err(span) => Err(self.too_deep(span)),
        }
    }

    /// The walk met a node past the limit at `span`: the AST is taken apart
    /// without recursing, and the module refused as [`parse`] refuses it.
    pub(super) fn too_deep(self, span: swc_common::Span) -> JsError {
        let file = self.parsed.file.clone();
        let at = span.lo.0.saturating_sub(file.start_pos.0) as usize;
        depth::dismantle_program(self.parsed.program);
        depth::too_deep(&self.name, &file.src, at)
    }
}

/// [`parse`] (`with_comments`) or [`parse_bare`], leaving the measure of
/// the AST's depth to the first walk over it (see [`Unmeasured`]).
pub fn parse_unmeasured(
    name: &str,
    src: String,
    goal: Goal,
    with_comments: bool,
) -> Result<Unmeasured, JsError> {
    depth::with_stack(|| unmeasured(name, src, goal, with_comments))
}

fn parse_bounded(
    name: &str,
    src: String,
    goal: Goal,
    with_comments: bool,
) -> Result<(Parsed, SingleThreadedComments), JsError> {
    unmeasured(name, src, goal, with_comments)?.measure()
}

fn unmeasured(
    name: &str,
    src: String,
    goal: Goal,
    with_comments: bool,
) -> Result<Unmeasured, JsError> {
    let (parsed, comments) = parse_unbounded(name, src, goal, with_comments)?;
    Ok(Unmeasured {
        name: name.to_string(),
        parsed,
        comments,
    })
}

/// Scan, then parse; the AST's depth is the caller's to check.
fn parse_unbounded(
    name: &str,
    src: String,
    goal: Goal,
    with_comments: bool,
) -> Result<(Parsed, SingleThreadedComments), JsError> {
    depth::check_source(name, &src)?;
    let cm: Lrc<SourceMap> = Default::default();
    let file = cm.new_source_file(Lrc::new(FileName::Custom(name.to_string())), src);
    let comments = SingleThreadedComments::default();
    let keep = |c| if with_comments { Some(c) } else { None };
    let (program, comments) = match parse_file(&file, goal, keep(&comments)) {
        Ok(p) => (p, comments),
        Err(e) if goal == Goal::Script => {
            let c2 = SingleThreadedComments::default();
            (
                parse_file(&file, Goal::Module, keep(&c2)).map_err(|_| e)?,
                c2,
            )
        }
        Err(e) => return Err(e),
    };
    let goal = match program {
        Program::Module(_) => Goal::Module,
        Program::Script(_) => Goal::Script,
    };
    Ok((
        Parsed {
            cm,
            file,
            program,
            goal,
        },
        comments,
    ))
}

fn parse_file(
    file: &SourceFile,
    goal: Goal,
    comments: Option<&SingleThreadedComments>,
) -> Result<Program, JsError> {
    let mut parser = Parser::new(
        syntax(),
        StringInput::from(file),
        comments.map(|c| c as &dyn swc_common::comments::Comments),
    );
    let result = match goal {
        Goal::Script => parser.parse_script().map(Program::Script),
        Goal::Module => parser.parse_module().map(Program::Module),
    };
    let recovered = parser.take_errors();
    let located = |span: swc_common::Span, msg: String| {
        let lo = (span.lo.0.saturating_sub(file.start_pos.0)) as usize;
        let (line, col) = super::lines::line_col(&file.src, lo);
        JsError::Syntax {
            module: file.name.to_string(),
            line,
            col,
            message: msg,
        }
    };
    match result {
        Err(e) => Err(located(e.span(), e.kind().msg().to_string())),
        Ok(_) if !recovered.is_empty() => {
            let e = &recovered[0];
            Err(located(
                e.span(),
                format!(
                    "{} (recovered; {} error(s) in all)",
                    e.kind().msg(),
                    recovered.len()
                ),
            ))
        }
        Ok(p) => Ok(p),
    }
}

/// Run `f` on a thread with [`STACK_BYTES`] of stack.
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| spawn_big(s, "cc-teardown-js", f).join())
}

/// Work started by [`spawn_big`]: on a thread of its own, or already done.
pub enum Task<'scope, T> {
    Thread(std::thread::ScopedJoinHandle<'scope, T>),
    Done(T),
}

impl<T> Task<'_, T> {
    pub fn join(self) -> T {
        match self {
            Task::Thread(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Task::Done(t) => t,
        }
    }
}

/// Start `f` on a scoped thread with [`STACK_BYTES`] of stack. When no
/// thread can be started (each reserves its whole stack, so a tight
/// address-space limit refuses a few of them), `f` runs here instead, on a
/// stack grown to the same size: slower, never a crash.
pub fn spawn_big<'scope, 'env, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Task<'scope, T> {
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let theirs = slot.clone();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .stack_size(STACK_BYTES)
        .spawn_scoped(s, move || {
            let f = theirs.lock().ok().and_then(|mut g| g.take());
            f.expect("a task runs once")()
        });
    match spawned {
        Ok(h) => Task::Thread(h),
        Err(_) => {
            let f = slot.lock().ok().and_then(|mut g| g.take());
            Task::Done(depth::with_stack(f.expect("a task runs once")))
        }
    }
}

/// A rayon pool whose threads have [`STACK_BYTES`] of stack; when the
/// address space does not allow that, a single thread (whose parses then
/// grow their stack as they go, see [`depth::with_stack`]).
pub fn pool() -> Result<rayon::ThreadPool, JsError> {
    let build = |threads: usize, stack: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(stack)
            .thread_name(|i| format!("cc-teardown-js-{i}"))
            .build()
    };
    build(0, STACK_BYTES)
        .or_else(|_| build(1, STACK_BYTES))
        .or_else(|_| build(1, 1 << 20))
        .map_err(|e| JsError::Resources(format!("cannot start a parser thread: {e}")))
}

pub const TARGET: EsVersion = EsVersion::EsNext;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_using_and_cjs_wrapper() {
        let src =
            "// @bun\n(function(exports, require) { { using x = f(); } return 1; })".to_string();
        let (p, _) = parse("a.js", src, Goal::Script).unwrap();
        assert_eq!(p.goal, Goal::Script);
        let (p, _) = parse(
            "b.js",
            "import {a} from \"./x.js\"; export { a as b };".into(),
            Goal::Script,
        )
        .unwrap();
        assert_eq!(p.goal, Goal::Module, "falls back to module goal");
    }

    #[test]
    fn syntax_errors_have_a_location() {
        let e = parse("bad.js", "var a = 1;\nvar b = ;\n".into(), Goal::Script)
            .err()
            .unwrap();
        let JsError::Syntax { line, .. } = e else {
            panic!("{e}")
        };
        assert_eq!(line, 2);
    }
}
