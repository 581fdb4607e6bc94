//! `history export --format json|csv`: every item of every release, as
//! data for other tools (the SQLite export is the store's own file).

use crate::report::escape;
use crate::store::history::{ItemRow, Release};
use serde::Serialize;
use serde_json::Value;

/// The JSON export: every release, and every item with its value parsed
/// (labelled with its store, as every history answer is: see
/// [`super::Labelled`]).
#[derive(Debug, Clone, Serialize)]
pub struct ExportJson {
    pub releases: Vec<Release>,
    pub items: Vec<ExportedItem>,
}

/// One item of one release, in the JSON export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedItem {
    pub version: String,
    pub platform: String,
    pub kind: String,
    pub name: String,
    /// The stored value, parsed (null when it is not JSON).
    pub value: Value,
}

impl ExportJson {
    pub fn new(releases: Vec<Release>, items: Vec<ItemRow>) -> ExportJson {
        let items = items
            .into_iter()
            .map(|i| ExportedItem {
                value: serde_json::from_str(&i.value).unwrap_or_default(),
                version: i.version,
                platform: i.platform,
                kind: i.kind,
                name: i.name,
            })
            .collect();
        ExportJson { releases, items }
    }
}

/// The CSV export: a header, then one line per item.
pub fn csv(items: Vec<ItemRow>) -> String {
    let mut text = String::from("version,platform,kind,name,value\n");
    for ItemRow {
        version,
        platform,
        kind,
        name,
        value,
    } in items
    {
        let row: Vec<String> = [version, platform, kind, name, value]
            .iter()
            .map(|f| csv_field(f))
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    text
}

/// One CSV field, after OWASP's advice on CSV injection: every field is
/// quoted (RFC 4180, `"` doubled); a field that begins with `=`, `+`, `-`,
/// `@`, a tab or a carriage return — what a spreadsheet may run as a
/// formula — gets a leading apostrophe. Stored text is untrusted: control
/// characters (NUL, line breaks, tabs, ESC, DEL, C1) and the bidirectional
/// controls are written as the visible escapes of [`escape::display`]
/// (`\x00`, `\n`, `\u{202e}`), as every human output shows them, so a
/// field is one line of plain text.
fn csv_field(f: &str) -> String {
    let formula = f.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let shown = escape::display(f);
    let guard = if formula { "'" } else { "" };
    format!("\"{guard}{}\"", shown.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("plain"), "\"plain\"");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=cmd()"), "\"'=cmd()\"");
        assert_eq!(
            csv_field("{\"a\":1,\"b\":2}"),
            "\"{\"\"a\"\":1,\"\"b\"\":2}\""
        );
    }

    #[test]
    fn csv_fields_show_control_and_bidi_characters() {
        // A leading tab or carriage return starts a formula too (OWASP).
        assert_eq!(csv_field("\t=1+1"), "\"'\\t=1+1\"");
        assert_eq!(csv_field("\r@SUM(A1)"), "\"'\\r@SUM(A1)\"");
        assert_eq!(csv_field("+1"), "\"'+1\"");
        assert_eq!(csv_field("-2"), "\"'-2\"");
        assert_eq!(csv_field("@x"), "\"'@x\"");
        // NUL, ESC, DEL, C1, line breaks: visible escapes, one line.
        assert_eq!(csv_field("a\0b"), "\"a\\x00b\"");
        assert_eq!(csv_field("\x1b[2Jx"), "\"\\x1b[2Jx\"");
        assert_eq!(csv_field("a\x7f\u{9b}b"), "\"a\\x7f\\u{9b}b\"");
        assert_eq!(csv_field("a\nb\r\nc"), "\"a\\nb\\r\\nc\"");
        // Bidirectional controls and separators, anywhere in the field.
        assert_eq!(csv_field("evil\u{202e}txt.exe"), "\"evil\\u{202e}txt.exe\"");
        assert_eq!(
            csv_field("\u{2066}x\u{2069}\u{2028}"),
            "\"\\u{2066}x\\u{2069}\\u{2028}\""
        );
        for raw in ["\0", "\x1b", "\u{202e}", "\u{85}", "\n", "\t"] {
            let f = csv_field(&format!("x{raw}=1"));
            assert!(!f.contains(raw), "{f:?}");
            assert!(!f.chars().any(escape::is_unsafe), "{f:?}");
        }
        // Not a formula when the sign is not first; text stays as it is.
        assert_eq!(csv_field("a=1"), "\"a=1\"");
        assert_eq!(csv_field("é 世"), "\"é 世\"");
    }
}
