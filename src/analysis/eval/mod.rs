//! A static evaluator for the small subset of JavaScript that builds the
//! bundled workflow scripts: literals, templates, `JSON.stringify`, array
//! `join`/`map`/`length`, indexing, and identifiers defined anywhere in the
//! bundle — including assignments inside lazy-init closures and imports
//! from other chunks. Nothing from the bundle is executed: expressions are
//! re-parsed from the source and interpreted here, and anything outside the
//! subset is an error naming the expression and where it is.

use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{DefKind, Definition};
use serde::Deserialize;
use std::collections::HashMap;
use swc_common::sync::Lrc;
use swc_common::{FileName, SourceMap, Spanned};
use swc_ecma_ast::*;
use swc_ecma_parser::{Parser, StringInput};

mod nodes;
/// One test per rule of the evaluator, on JavaScript written here; and what
/// it must refuse, with the expression named.
#[cfg(test)]
mod tests;
mod value;

use nodes::closure_of;
pub use value::{ValueError, json_stringify, number_to_string};

/// A JavaScript value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Array(Vec<Value>),
    /// Properties in insertion order, as JSON.stringify emits them.
    Object(Vec<(String, Value)>),
    /// An arrow or function with one returned expression.
    Func(Closure),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Closure {
    pub module: usize,
    /// Byte offset in the module where the snippet the body came from starts.
    pub base: u32,
    pub params: Vec<String>,
    pub body: Box<Expr>,
    pub env: Vec<(String, Value)>,
}

/// Why an expression could not be evaluated, and where it is.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, Deserialize)]
#[error("{module}:{line}: cannot evaluate `{expr}`: {reason}")]
pub struct EvalError {
    pub module: String,
    pub line: u32,
    pub expr: String,
    pub reason: String,
}

/// Why a text is not one expression [`parse_snippet`] can hand over.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnippetError {
    #[error("nesting deeper than {}", crate::js::depth::MAX_NESTING)]
    TooDeep,
    /// The parser's message.
    #[error("{0}")]
    Syntax(String),
}

/// Why a top-level binding has no value here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BindingError {
    #[error("{name} is assigned different values at lines {lines}")]
    DifferentValues { name: String, lines: String },
    #[error("definitions nest too deeply (a cycle?)")]
    TooDeep,
    #[error("{name} is imported from {from}, which this build does not export")]
    NotExported { name: String, from: String },
    #[error("{local} (exported by {exporter}) has no value")]
    ExportHasNoValue { local: String, exporter: String },
    #[error("function without a body")]
    NoBody,
    #[error("function {name}: {error}")]
    FunctionSnippet { name: String, error: SnippetError },
    #[error("function {name} is more than one returned expression")]
    NotOneExpression { name: String },
    #[error("{name} has no value")]
    NoValue { name: String },
    /// Its value's expression did not evaluate.
    #[error("{0}")]
    Value(Box<EvalError>),
}

/// A binding the evaluation read: the dependency closure of a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, Deserialize)]
pub struct Dependency {
    pub module: String,
    pub name: String,
    pub line: u32,
}

const MAX_DEPTH: usize = 200;

pub struct Evaluator<'a> {
    pub ci: &'a CodeIndex,
    cache: HashMap<(usize, String), Value>,
    pub deps: Vec<Dependency>,
    depth: usize,
    /// Nested [`Evaluator::eval`] calls, across bindings: bounded, so a
    /// chain of deep definitions cannot recurse without end.
    frames: u32,
}

/// Most nested `eval` calls at once (each definition's expression is within
/// the parse limit, but definitions chain).
const MAX_FRAMES: u32 = crate::js::depth::AST_LIMIT;

/// Parse an expression out of a module's source, at `lo..hi`. Nesting is
/// bounded as for modules (`js::depth`).
pub fn parse_snippet(text: &str) -> Result<Box<Expr>, SnippetError> {
    use crate::js::depth;
    depth::scan(text).map_err(|_| SnippetError::TooDeep)?;
    depth::with_stack(|| {
        let cm: Lrc<SourceMap> = Default::default();
        let fm = cm.new_source_file(Lrc::new(FileName::Anon), text.to_string());
        let mut p = Parser::new(crate::js::parse::syntax(), StringInput::from(&*fm), None);
        // A snippet comes from a module: code-split builds load chunks with
        // `import.meta.require(…)`, which a script refuses.
        p.allow_module_syntax();
        let e = p
            .parse_expr()
            .map_err(|e| SnippetError::Syntax(e.kind().msg().to_string()))?;
        if let Some(err) = p.take_errors().first() {
            return Err(SnippetError::Syntax(err.kind().msg().to_string()));
        }
        if depth::check_expr(&e).is_err() {
            depth::dismantle_expr(e);
            return Err(SnippetError::TooDeep);
        }
        Ok(e)
    })
}

fn short(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

type Env = Vec<(String, Value)>;

impl<'a> Evaluator<'a> {
    pub fn new(ci: &'a CodeIndex) -> Evaluator<'a> {
        Evaluator {
            ci,
            cache: HashMap::new(),
            deps: Vec::new(),
            depth: 0,
            frames: 0,
        }
    }

    fn module(&self, m: usize) -> &'a IndexedModule {
        &self.ci.modules[m]
    }

    fn err(&self, m: usize, e: &Expr, base: u32, reason: impl Into<String>) -> EvalError {
        let module = self.module(m);
        let span = e.span();
        let lo = base + span.lo.0.saturating_sub(1);
        let hi = (base + span.hi.0.saturating_sub(1)).min(module.source().len() as u32);
        let text = module.source().get(lo as usize..hi as usize).unwrap_or("?");
        EvalError {
            module: module.name.clone(),
            line: module.raw_pos(lo).0,
            expr: short(text),
            reason: reason.into(),
        }
    }

    /// Evaluate the expression at `lo..hi` of module `m`.
    pub fn eval_span(&mut self, m: usize, lo: u32, hi: u32) -> Result<Value, EvalError> {
        let module = self.module(m);
        let text = module.source().get(lo as usize..hi as usize).unwrap_or("");
        let expr = parse_snippet(text).map_err(|reason| EvalError {
            module: module.name.clone(),
            line: module.raw_pos(lo).0,
            expr: short(text),
            reason: format!("does not parse as an expression: {reason}"),
        })?;
        self.eval(m, &expr, lo, &Vec::new())
    }

    /// The definition that gives a top-level name its value.
    fn value_definition(
        &self,
        m: usize,
        name: &str,
    ) -> Result<Option<&'a Definition>, BindingError> {
        let module = self.module(m);
        let Some(defs) = module.index.definitions.get(name) else {
            return Ok(None);
        };
        let depth = |d: &Definition| {
            let mut n = 0;
            let mut f = d.in_function;
            while let Some(id) = f {
                n += 1;
                f = module.index.functions[id as usize].parent;
            }
            n
        };
        if let Some(import) = defs.iter().find(|d| d.kind == DefKind::Import) {
            return Ok(Some(import));
        }
        let with_value: Vec<&Definition> = defs
            .iter()
            .filter(|d| d.kind != DefKind::Param && d.value.is_some())
            .collect();
        let Some(min) = with_value.iter().map(|d| depth(d)).min() else {
            return Ok(defs
                .iter()
                .find(|d| matches!(d.kind, DefKind::Function | DefKind::Class)));
        };
        let outer: Vec<&Definition> = with_value.into_iter().filter(|d| depth(d) == min).collect();
        let first = outer[0];
        let text = |d: &Definition| {
            d.value
                .map(|(lo, hi)| &module.source()[lo as usize..hi as usize])
        };
        if outer.iter().any(|d| text(d) != text(first)) {
            let lines: Vec<String> = outer
                .iter()
                .map(|d| module.raw_pos(d.lo).0.to_string())
                .collect();
            return Err(BindingError::DifferentValues {
                name: name.to_string(),
                lines: lines.join(", "),
            });
        }
        Ok(Some(first))
    }

    /// The value of a top-level binding of module `m`.
    pub fn binding(&mut self, m: usize, name: &str) -> Result<Option<Value>, BindingError> {
        if let Some(v) = self.cache.get(&(m, name.to_string())) {
            return Ok(Some(v.clone()));
        }
        let Some(def) = self.value_definition(m, name)? else {
            return Ok(None);
        };
        let module = self.module(m);
        self.deps.push(Dependency {
            module: module.name.clone(),
            name: name.to_string(),
            line: module.raw_pos(def.lo).0,
        });
        if self.depth > MAX_DEPTH {
            return Err(BindingError::TooDeep);
        }
        self.depth += 1;
        let result = self.binding_value(m, name, def);
        self.depth -= 1;
        let v = result?;
        self.cache.insert((m, name.to_string()), v.clone());
        Ok(Some(v))
    }

    fn binding_value(
        &mut self,
        m: usize,
        name: &str,
        def: &Definition,
    ) -> Result<Value, BindingError> {
        let module = self.module(m);
        if def.kind == DefKind::Import {
            let (t, local) = self.ci.follow_import(m, name).ok_or_else(|| {
                let source = module
                    .index
                    .imports
                    .iter()
                    .find(|i| i.local == name)
                    .map_or("?", |i| i.source.as_str());
                BindingError::NotExported {
                    name: name.to_string(),
                    from: source.to_string(),
                }
            })?;
            let exporter = self.ci.modules[t].name.clone();
            let local = local.to_string();
            return self
                .binding(t, &local)?
                .ok_or(BindingError::ExportHasNoValue { local, exporter });
        }
        if matches!(def.kind, DefKind::Function) {
            // A function whose body is `return <expr>` can be called here.
            let (lo, hi) = def.value.ok_or(BindingError::NoBody)?;
            let text = &module.source()[lo as usize..hi as usize];
            // A declaration is not an expression: parse it as one, wrapped.
            let wrapped = format!("({text})");
            let expr = parse_snippet(&wrapped).map_err(|error| BindingError::FunctionSnippet {
                name: name.to_string(),
                error,
            })?;
            return closure_of(m, lo.saturating_sub(1), &expr, Vec::new()).ok_or_else(|| {
                BindingError::NotOneExpression {
                    name: name.to_string(),
                }
            });
        }
        let (lo, hi) = def.value.ok_or_else(|| BindingError::NoValue {
            name: name.to_string(),
        })?;
        self.eval_span(m, lo, hi)
            .map_err(|e| BindingError::Value(Box::new(e)))
    }

    /// Evaluate `e`, parsed from module `m` at byte offset `base`.
    pub fn eval(&mut self, m: usize, e: &Expr, base: u32, env: &Env) -> Result<Value, EvalError> {
        if self.frames >= MAX_FRAMES {
            return Err(self.err(
                m,
                e,
                base,
                format!("expressions nest deeper than {MAX_FRAMES} levels"),
            ));
        }
        self.frames += 1;
        let r = crate::js::depth::guard(|| self.eval_node(m, e, base, env));
        self.frames -= 1;
        r
    }
}
