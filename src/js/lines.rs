//! Line tables and the map between raw (extracted) and pretty-printed code.

use serde::Serialize;

/// 1-based (line, column) of byte `offset` in `src`; columns count bytes.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let b = &src.as_bytes()[..offset.min(src.len())];
    let line = memchr::memchr_iter(b'\n', b).count() + 1;
    let start = memchr::memrchr(b'\n', b).map_or(0, |i| i + 1);
    (line, offset.min(src.len()) - start + 1)
}

/// Where each line of a text starts.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &[u8]) -> LineIndex {
        let mut starts = vec![0u32];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i as u32 + 1));
        LineIndex {
            starts,
            len: text.len() as u32,
        }
    }

    pub fn lines(&self) -> usize {
        self.starts.len()
    }

    /// 1-based line and column of a byte offset.
    pub fn locate(&self, offset: u32) -> (u32, u32) {
        let i = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        (i as u32 + 1, offset - self.starts[i] + 1)
    }

    /// Byte offset of a 1-based line and column (clamped into the text).
    pub fn offset(&self, line: u32, col: u32) -> Option<u32> {
        let start = *self.starts.get(line.checked_sub(1)? as usize)?;
        Some((start + col.saturating_sub(1)).min(self.len))
    }
}

/// A [`LineMap`] built one printer entry at a time, so that a print made
/// in parts never holds all its entries at once (12 bytes per token, ~100
/// MB on a 20 MB bundle). Which raw offset a pretty line "comes from" does
/// not depend on the order of the entries: the smallest of its tokens' own
/// positions (`direct`), else the smallest of all positions on it.
#[derive(Debug, Default)]
pub struct LineMapBuilder {
    to_pretty: Vec<(u32, u32)>,
    first_raw: Vec<u32>,
    has_direct: Vec<bool>,
}

impl LineMapBuilder {
    pub fn with_capacity(entries: usize) -> LineMapBuilder {
        LineMapBuilder {
            to_pretty: Vec::with_capacity(entries),
            ..Default::default()
        }
    }

    /// Raw offset `r` printed on pretty line `line` (0-based); `direct`
    /// when it is the token's own position (see [`LineMap::new`]).
    #[inline]
    pub fn push(&mut self, r: u32, line: u32, direct: bool) {
        let i = line as usize;
        if i >= self.first_raw.len() {
            self.first_raw.resize(i + 1, u32::MAX);
            self.has_direct.resize(i + 1, false);
        }
        Self::merge(&mut self.first_raw[i], &mut self.has_direct[i], r, direct);
        self.to_pretty.push((r, line + 1));
    }

    #[inline]
    fn merge(first: &mut u32, has_direct: &mut bool, r: u32, direct: bool) {
        if direct && !*has_direct {
            *has_direct = true;
            *first = r;
        } else if direct == *has_direct {
            *first = (*first).min(r);
        }
    }

    /// The map of a text of `pretty_lines` lines printed from `raw_text`.
    pub fn finish(mut self, raw_text: &[u8], pretty_lines: u32) -> LineMap {
        let n = pretty_lines as usize + 1;
        // Positions past the last line count on it.
        while self.first_raw.len() > n {
            let (r, d) = (self.first_raw.pop(), self.has_direct.pop());
            if let (Some(r), Some(d)) = (r, d)
                && r != u32::MAX
            {
                let last = self.first_raw.len() - 1;
                Self::merge(&mut self.first_raw[last], &mut self.has_direct[last], r, d);
            }
        }
        self.first_raw.resize(n, u32::MAX);
        let mut to_pretty = self.to_pretty;
        to_pretty.sort_unstable();
        to_pretty.dedup_by_key(|e| e.0);
        LineMap {
            to_pretty,
            pretty_first_raw: self.first_raw,
            raw: LineIndex::new(raw_text),
            pretty_lines,
        }
    }
}

/// The map between raw byte offsets and pretty-printed positions, built
/// from the printer's source-map entries.
#[derive(Debug, Clone, Default)]
pub struct LineMap {
    /// (raw offset, pretty line 1-based), sorted by raw offset.
    to_pretty: Vec<(u32, u32)>,
    /// For each pretty line (index 0 = line 1), the smallest raw offset
    /// mapped onto it, or u32::MAX when none is.
    pretty_first_raw: Vec<u32>,
    pub raw: LineIndex,
    pub pretty_lines: u32,
}

impl LineMap {
    /// `entries` are (raw offset, pretty line 0-based, direct) in output
    /// order; `direct` marks a token's own position, as opposed to the start
    /// of an enclosing node announced before it (such as a module whose span
    /// begins at the licence comment).
    pub fn new(raw_text: &[u8], entries: &[(u32, u32, bool)], pretty_lines: u32) -> LineMap {
        let mut b = LineMapBuilder::with_capacity(entries.len());
        for &(r, l, direct) in entries {
            b.push(r, l, direct);
        }
        b.finish(raw_text, pretty_lines)
    }

    /// The map reduced to what [`LineMap::pretty_line_of`] needs: of
    /// consecutive tokens (in raw order) on the same pretty line only the
    /// first, which answers every offset up to the next line change the
    /// same way. About one entry per token becomes about one per line (a
    /// quarter of the memory on a 4,000-chunk build). [`LineMap::raw_to_pretty`]
    /// looks at neighbouring tokens, so it wants the full map.
    pub fn for_lookups(mut self) -> LineMap {
        self.to_pretty.dedup_by(|later, kept| later.1 == kept.1);
        self.to_pretty.shrink_to_fit();
        self
    }

    /// [`LineMap::new`] followed by [`LineMap::for_lookups`], from
    /// (raw offset, pretty line 1-based) entries in output order, without
    /// the per-line table: [`LineMap::pretty_to_raw`] and
    /// [`LineMap::to_file`] (what `pretty` shows) know no line of such a
    /// map; `pretty_line_of` and `pretty_lines` answer as the full map's.
    pub fn for_lookups_from(
        raw_text: &[u8],
        mut to_pretty: Vec<(u32, u32)>,
        pretty_lines: u32,
    ) -> LineMap {
        // As in `new`: of the entries for one raw offset the smallest line.
        to_pretty.sort_unstable();
        to_pretty.dedup_by_key(|e| e.0);
        LineMap {
            to_pretty,
            pretty_first_raw: Vec::new(),
            raw: LineIndex::new(raw_text),
            pretty_lines,
        }
        .for_lookups()
    }

    /// A map of raw positions only: no pretty line is known
    /// (`pretty_line_of` answers None).
    pub fn raw_only(raw_text: &[u8]) -> LineMap {
        LineMap {
            raw: LineIndex::new(raw_text),
            ..LineMap::default()
        }
    }

    /// Whether `pretty_line_of`, `pretty_lines` and the raw positions
    /// answer alike for every offset in both maps (both reduced by
    /// [`LineMap::for_lookups`]): their entries are the same.
    pub fn same_lookups(&self, other: &LineMap) -> bool {
        self.to_pretty == other.to_pretty
            && self.pretty_lines == other.pretty_lines
            && self.raw.starts == other.raw.starts
    }

    /// The pretty line (1-based) showing raw byte `offset`.
    pub fn pretty_line_of(&self, offset: u32) -> Option<u32> {
        let i = self.to_pretty.partition_point(|e| e.0 <= offset);
        self.to_pretty.get(i.checked_sub(1)?).map(|e| e.1)
    }

    /// Pretty line of a raw 1-based line (and column): the last token at or
    /// before it, unless that token is on an earlier raw line and one on the
    /// same line follows.
    pub fn raw_to_pretty(&self, line: u32, col: u32) -> Option<u32> {
        let off = self.raw.offset(line, col)?;
        let i = self.to_pretty.partition_point(|e| e.0 <= off);
        let before = i.checked_sub(1).map(|j| self.to_pretty[j]);
        let after = self.to_pretty.get(i).copied();
        match (before, after) {
            (Some(b), _) if self.raw.locate(b.0).0 == line => Some(b.1),
            (_, Some(a)) if self.raw.locate(a.0).0 == line => Some(a.1),
            (Some(b), _) => Some(b.1),
            (None, a) => a.map(|a| a.1),
        }
    }

    /// Raw (line, column) where a pretty line's code comes from.
    pub fn pretty_to_raw(&self, pretty_line: u32) -> Option<(u32, u32)> {
        // A line with no mapping (a closing brace) takes the next mapped line's origin.
        let start = pretty_line.checked_sub(1)? as usize;
        let off = self
            .pretty_first_raw
            .get(start..)?
            .iter()
            .find(|&&r| r != u32::MAX)?;
        Some(self.raw.locate(*off))
    }

    /// The compact on-disk form (docs/internals/linemap.md).
    pub fn to_file(&self, module: &str) -> LineMapFile {
        LineMapFile {
            format: "cc-teardown-linemap/1",
            module: module.to_string(),
            raw_lines: self.raw.lines() as u32,
            pretty_lines: self.pretty_lines,
            pretty_line_raw_offset: self
                .pretty_first_raw
                .iter()
                .take(self.pretty_lines as usize)
                .map(|&r| if r == u32::MAX { -1 } else { r as i64 })
                .collect(),
        }
    }
}

#[derive(Serialize)]
pub struct LineMapFile {
    pub format: &'static str,
    pub module: String,
    pub raw_lines: u32,
    pub pretty_lines: u32,
    /// For pretty line i+1: the raw byte offset its first token comes from, or -1.
    pub pretty_line_raw_offset: Vec<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_round_trips() {
        let t = b"ab\ncd\n\nefg";
        let li = LineIndex::new(t);
        assert_eq!(li.lines(), 4);
        assert_eq!(li.locate(0), (1, 1));
        assert_eq!(li.locate(4), (2, 2));
        assert_eq!(li.locate(7), (4, 1));
        assert_eq!(li.offset(4, 3), Some(9));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
