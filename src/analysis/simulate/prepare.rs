//! Turning a workflow script into what the runtime executes, as the real
//! runtime does: the leading `export const meta = {...}` statement is cut
//! off, and the rest becomes the body of a strict-mode async function (so
//! top-level `await` and `return` work). The body keeps its line numbers:
//! the cut lines are replaced by newlines, so errors point into the file.
//!
//! Also here: the identifiers a script uses but never declares, so globals
//! the mock runtime lacks are named before the script runs.

use crate::js::lines::line_col;
use crate::js::parse::{self, Goal};
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Syntax {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

#[derive(Debug)]
pub struct Prepared {
    /// The expression evaluated in the sandbox; it yields the run's promise.
    pub source: String,
    /// Whether a meta statement was found and cut.
    pub had_meta: bool,
    /// Identifiers referenced but declared nowhere in the script, with the
    /// line of their first use (`typeof x` alone does not count).
    pub free: Vec<(String, usize)>,
}

pub fn prepare(text: &str) -> Result<Prepared, Syntax> {
    let owned = text.to_string();
    let (meta_end, free) = parse::with_big_stack(move || {
        let (p, _) =
            parse::parse("workflow.js", owned.clone(), Goal::Module).map_err(|e| match e {
                crate::js::JsError::Syntax {
                    line, col, message, ..
                } => Syntax { line, col, message },
                crate::js::JsError::TooDeep {
                    line, col, limit, ..
                } => Syntax {
                    line,
                    col,
                    message: format!("nesting deeper than {limit}"),
                },
                other => Syntax {
                    line: 0,
                    col: 0,
                    message: other.to_string(),
                },
            })?;
        let meta_end = match &p.program {
            Program::Module(m) => m.body.first().and_then(|item| match item {
                ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(ExportDecl {
                    decl: Decl::Var(v),
                    span,
                })) if is_meta(v) => Some(p.offset(span.hi)),
                _ => None,
            }),
            Program::Script(_) => None,
        };
        let mut names = Names::default();
        p.program.visit_with(&mut names);
        let mut free: Vec<(String, usize)> = Vec::new();
        for (name, pos) in names.referenced {
            if names.declared.contains(&name) || name == "arguments" {
                continue;
            }
            if !free.iter().any(|(n, _)| *n == name) {
                free.push((name, line_col(&owned, p.offset(pos)).0));
            }
        }
        Ok::<_, Syntax>((meta_end, free))
    })?;
    let body_start = match meta_end {
        Some(end) => {
            let rest = &text[end..];
            // As the runtime does: drop `;` and blanks up to the last
            // newline among them, then leading blanks.
            let lead = rest.len()
                - rest
                    .trim_start_matches(|c: char| c == ';' || c.is_whitespace())
                    .len();
            let cut = rest[..lead].rfind('\n').map_or(0, |p| p + 1);
            let after = &rest[cut..];
            end + cut + (after.len() - after.trim_start().len())
        }
        None => 0,
    };
    let newlines = text[..body_start].matches('\n').count();
    let source = format!(
        "(async () => {{'use strict';{}{}\n}})()",
        "\n".repeat(newlines),
        &text[body_start..]
    );
    Ok(Prepared {
        source,
        had_meta: meta_end.is_some(),
        free,
    })
}

fn is_meta(v: &VarDecl) -> bool {
    v.kind == VarDeclKind::Const
        && v.decls.len() == 1
        && matches!(&v.decls[0].name, Pat::Ident(b) if &*b.id.sym == "meta")
}

/// Names declared anywhere and names referenced anywhere. Scopes are not
/// tracked: a name declared in any scope counts as declared, so a name is
/// only reported when it can be nothing but a global.
#[derive(Default)]
struct Names {
    declared: std::collections::HashSet<String>,
    referenced: Vec<(String, swc_common::BytePos)>,
}

impl Visit for Names {
    fn visit_expr(&mut self, e: &Expr) {
        match e {
            Expr::Ident(i) => self.referenced.push((i.sym.to_string(), i.span.lo)),
            // `typeof x` is how a script asks whether a global exists.
            Expr::Unary(u) if u.op == UnaryOp::TypeOf && matches!(&*u.arg, Expr::Ident(_)) => {}
            _ => e.visit_children_with(self),
        }
    }
    fn visit_prop(&mut self, p: &Prop) {
        if let Prop::Shorthand(i) = p {
            self.referenced.push((i.sym.to_string(), i.span.lo));
        }
        p.visit_children_with(self);
    }
    fn visit_simple_assign_target(&mut self, t: &SimpleAssignTarget) {
        match t {
            SimpleAssignTarget::Ident(b) => {
                self.referenced.push((b.id.sym.to_string(), b.id.span.lo))
            }
            _ => t.visit_children_with(self),
        }
    }
    fn visit_binding_ident(&mut self, b: &BindingIdent) {
        self.declared.insert(b.id.sym.to_string());
    }
    fn visit_fn_decl(&mut self, f: &FnDecl) {
        self.declared.insert(f.ident.sym.to_string());
        f.visit_children_with(self);
    }
    fn visit_class_decl(&mut self, c: &ClassDecl) {
        self.declared.insert(c.ident.sym.to_string());
        c.visit_children_with(self);
    }
    fn visit_fn_expr(&mut self, f: &FnExpr) {
        if let Some(i) = &f.ident {
            self.declared.insert(i.sym.to_string());
        }
        f.visit_children_with(self);
    }
    fn visit_class_expr(&mut self, c: &ClassExpr) {
        if let Some(i) = &c.ident {
            self.declared.insert(i.sym.to_string());
        }
        c.visit_children_with(self);
    }
    fn visit_import_decl(&mut self, d: &ImportDecl) {
        for s in &d.specifiers {
            let local = match s {
                ImportSpecifier::Named(n) => &n.local,
                ImportSpecifier::Default(n) => &n.local,
                ImportSpecifier::Namespace(n) => &n.local,
            };
            self.declared.insert(local.sym.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_cut_and_lines_are_kept() {
        let s = "export const meta = {\n  name: \"x\",\n}\n\nconst a = 1\nreturn a\n";
        let p = prepare(s).unwrap();
        assert!(p.had_meta);
        assert!(!p.source.contains("meta"));
        let line = p.source.lines().position(|l| l == "const a = 1").unwrap() + 1;
        assert_eq!(line, 5, "the body keeps its line in the file");
        let p = prepare("while (true) {}").unwrap();
        assert!(!p.had_meta);
    }

    #[test]
    fn free_identifiers_are_found() {
        let s = "const x = foo(1); function g(a) { return a + x + bar } \
                 if (typeof maybe === 'string') {} const o = { baz }; qux = 2; g(o)";
        let p = prepare(s).unwrap();
        let names: Vec<&str> = p.free.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["foo", "bar", "baz", "qux"]);
        let e = prepare("const = 1").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
