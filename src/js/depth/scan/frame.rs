//! The scan's bracket levels: what each one counts, and how a token adds
//! to it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Paren,
    Bracket,
    /// An object literal or pattern: only expressions inside.
    Object,
    /// A block, function or class body, or a brace we could not classify:
    /// statements may appear inside.
    Block,
    /// `${ … }` in a template literal.
    Subst,
}

/// Binary operator precedences, loosest first (`??` is 1, `**` is 12).
pub(super) const PRECEDENCES: usize = 13;

/// One bracket level. Its depth counts what can nest at this level: within
/// an expression, each binary operator's chain (a chain of one precedence
/// is left-deep: `a||b||c` is as deep as it is long; a looser operator
/// closes the tighter chains, which are then its operand), the prefix and
/// postfix operators, calls and member accesses of the current operand,
/// and the enclosing operators (`=`, `?:`, `=>`, `return`…); across
/// statements, the statement chains (`if`/`else`, loops, labels).
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame {
    pub(super) kind: Kind,
    /// Depth of the enclosing levels when this one opened.
    pub(super) base: u32,
    /// Enclosing operators since the current expression list began.
    pub(super) low: u32,
    /// Binary operators per precedence in the current chain.
    pub(super) bins: [u32; PRECEDENCES],
    /// Their sum.
    pub(super) bins_total: u32,
    /// Prefix/postfix operators, calls, members of the current operand.
    pub(super) operand: u32,
    /// Statement-nesting tokens since the last statement boundary.
    pub(super) stmt: u32,
    /// `?` still waiting for their `:`.
    pub(super) questions: u32,
    /// A `(` right after `if`/`while`/`for`/`with`: after its `)` a
    /// statement starts, so `/` begins a regular expression.
    pub(super) header: bool,
    /// The `(` of a `for` head (`of` is a keyword there).
    pub(super) for_head: bool,
    /// A `{` that closes an expression (object literal, function or class
    /// expression body): after its `}`, `/` divides.
    pub(super) expr_end: bool,
    /// A `function` or `class` expression at this level awaits its body.
    pub(super) expr_body_pending: bool,
    /// A `case` awaits its `:` (which is not a label's).
    pub(super) case_pending: bool,
}

/// What a label counts: swc checks each label against every enclosing one
/// and reports each duplicate, so `l:l:l:…` costs the square of its depth in
/// errors (2,000 nested labels: 2 million errors, 250 MB). Weighted so, at
/// most 62 labels nest; real code nests two or three.
pub(in crate::js::depth) const LABEL_WEIGHT: u32 = 32;

impl Frame {
    pub(super) fn clear_bins(&mut self) {
        if self.bins_total > 0 {
            self.bins = [0; PRECEDENCES];
            self.bins_total = 0;
        }
    }

    pub(super) fn new(kind: Kind, base: u32) -> Frame {
        Frame {
            kind,
            base,
            low: 0,
            bins: [0; PRECEDENCES],
            bins_total: 0,
            operand: 0,
            stmt: 0,
            questions: 0,
            header: false,
            for_head: false,
            expr_end: false,
            expr_body_pending: false,
            case_pending: false,
        }
    }

    #[inline]
    pub(super) fn depth(&self) -> u32 {
        self.base
            .saturating_add(1)
            .saturating_add(self.low)
            .saturating_add(self.bins_total)
            .saturating_add(self.operand)
            .saturating_add(self.stmt)
    }

    /// Every expression at this level has ended (`,` `;`).
    pub(super) fn end_expressions(&mut self) {
        self.low = 0;
        self.clear_bins();
        self.operand = 0;
        self.questions = 0;
    }
}

/// How a token nests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Nest {
    /// Identifiers, literals: leaves.
    Leaf,
    /// Part of the current operand: prefix and postfix operators, `.`,
    /// calls, `new`, `await`.
    Operand,
    /// A binary operator of this precedence.
    Bin(usize),
    /// Encloses a new expression: assignments, `?`, `:`, `=>`, `...`,
    /// `return`, `yield`…
    Low,
}
