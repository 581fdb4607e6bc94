//! The exact check after parsing: an AST's depth measured by a walk that
//! stops at the limit, and an AST too deep to drop recursively taken apart
//! iteratively.

use super::{AST_LIMIT, with_stack};
use swc_common::{DUMMY_SP, Span, Spanned};
use swc_ecma_ast::{EmptyStmt, Expr, Invalid, Pat, Program, Stmt};
use swc_ecma_visit::{Visit, VisitMut, VisitMutWith, VisitWith};

/// Measures AST depth (in expressions, statements and patterns: every
/// recursive path through swc's AST passes through one of them), never
/// descending past the limit. As a visitor it walks a tree by itself; a walk
/// of its own that counts the same levels (the index's, [`crate::js::index`])
/// holds one and steps it with [`Measure::down`] and [`Measure::up`].
pub struct Measure {
    depth: u32,
    max: u32,
    limit: u32,
    over: Option<Span>,
}

impl Default for Measure {
    /// At a program's root, limited to [`AST_LIMIT`].
    fn default() -> Measure {
        Measure {
            depth: 0,
            max: 0,
            limit: AST_LIMIT,
            over: None,
        }
    }
}

impl Measure {
    /// One level down, into the node at `span`: whether to descend. Not
    /// past the limit: then `span` is the node over it, and nothing more is
    /// descended into. Each `true` is followed by one [`Measure::up`].
    #[inline]
    pub fn down(&mut self, span: impl FnOnce() -> Span) -> bool {
        if self.over.is_some() {
            return false;
        }
        if self.depth >= self.limit {
            self.over = Some(span());
            return false;
        }
        self.depth += 1;
        self.max = self.max.max(self.depth);
        true
    }

    #[inline]
    pub fn up(&mut self) {
        self.depth -= 1;
    }

    /// Measure a part the caller's walk does not descend into itself (a
    /// declaration's pattern, a method's key), from the current level:
    /// whether it stays within the limit.
    pub fn part<N: VisitWith<Measure>>(&mut self, node: &N) -> bool {
        if self.over.is_some() {
            return false;
        }
        let mut sub = Measure {
            depth: self.depth,
            max: self.depth,
            limit: self.limit,
            over: None,
        };
        node.visit_with(&mut sub);
        self.max = self.max.max(sub.max);
        self.over = sub.over;
        self.over.is_none()
    }

    /// The first node past the limit, if one was met.
    pub fn over(&self) -> Option<Span> {
        self.over
    }

    fn enter(&mut self, span: impl FnOnce() -> Span, f: impl FnOnce(&mut Self)) {
        if self.down(span) {
            f(self);
            self.up();
        }
    }
}

impl Visit for Measure {
    fn visit_expr(&mut self, e: &Expr) {
        self.enter(|| e.span(), |s| e.visit_children_with(s));
    }
    fn visit_stmt(&mut self, st: &Stmt) {
        self.enter(|| st.span(), |s| st.visit_children_with(s));
    }
    fn visit_pat(&mut self, p: &Pat) {
        self.enter(|| p.span(), |s| p.visit_children_with(s));
    }
}

/// The depth of `program` in AST levels, or the first node past
/// [`AST_LIMIT`] levels.
pub fn check_program(program: &Program) -> Result<u32, Span> {
    measure(|m| program.visit_with(m))
}

/// The depth of `e` in AST levels, or the first node past [`AST_LIMIT`]
/// levels.
pub fn check_expr(e: &Expr) -> Result<u32, Span> {
    measure(|m| e.visit_with(m))
}

fn measure(walk: impl FnOnce(&mut Measure)) -> Result<u32, Span> {
    let mut m = Measure::default();
    with_stack(|| walk(&mut m));
    m.over.map_or(Ok(m.max), Err)
}

/// Subtrees cut off an AST to be freed one by one.
enum Piece {
    Expr(Expr),
    Stmt(Stmt),
    Pat(Pat),
}

/// Cuts every subtree below `CUT` levels off, into `pieces`.
struct Cutter {
    depth: u32,
    pieces: Vec<Piece>,
}

const CUT: u32 = 64;

impl Cutter {
    fn enter<T>(&mut self, node: &mut T, take: impl FnOnce(&mut T) -> Piece)
    where
        T: VisitMutWith<Self>,
    {
        if self.depth >= CUT {
            self.pieces.push(take(node));
            return;
        }
        self.depth += 1;
        node.visit_mut_children_with(self);
        self.depth -= 1;
    }
}

impl VisitMut for Cutter {
    fn visit_mut_expr(&mut self, e: &mut Expr) {
        self.enter(e, |e| {
            Piece::Expr(std::mem::replace(
                e,
                Expr::Invalid(Invalid { span: DUMMY_SP }),
            ))
        });
    }
    fn visit_mut_stmt(&mut self, s: &mut Stmt) {
        self.enter(s, |s| {
            Piece::Stmt(std::mem::replace(
                s,
                Stmt::Empty(EmptyStmt { span: DUMMY_SP }),
            ))
        });
    }
    fn visit_mut_pat(&mut self, p: &mut Pat) {
        self.enter(p, |p| {
            Piece::Pat(std::mem::replace(
                p,
                Pat::Invalid(Invalid { span: DUMMY_SP }),
            ))
        });
    }
}

impl Cutter {
    /// Free every piece, cutting each one's deep parts off first: no drop
    /// recurses more than `CUT` levels.
    fn drain(mut self) {
        while let Some(mut piece) = self.pieces.pop() {
            self.depth = 0;
            match &mut piece {
                Piece::Expr(e) => e.visit_mut_children_with(&mut self),
                Piece::Stmt(s) => s.visit_mut_children_with(&mut self),
                Piece::Pat(p) => p.visit_mut_children_with(&mut self),
            }
            drop(piece);
        }
    }
}

/// Free an AST of any depth without recursing deeply.
pub fn dismantle_program(mut program: Program) {
    let mut c = Cutter {
        depth: 0,
        pieces: Vec::new(),
    };
    program.visit_mut_with(&mut c);
    drop(program);
    c.drain();
}

/// Free an expression of any depth without recursing deeply.
pub fn dismantle_expr(mut e: Box<Expr>) {
    let mut c = Cutter {
        depth: 0,
        pieces: Vec::new(),
    };
    e.visit_mut_children_with(&mut c);
    drop(e);
    c.drain();
}
