//! The Claude Code version of a build, read from the bundle itself: a
//! `// Version: X.Y.Z` header comment (recent builds) or the `VERSION:"X.Y.Z"`
//! build constant that the bundler inlines many times. Anything less certain
//! is reported as unknown, never guessed.

use regex::bytes::Regex;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^// Version: (\d+\.\d+\.\d+)\s*$").unwrap());
static CONSTANT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\bVERSION:"(\d+\.\d+\.\d+)""#).unwrap());

/// How far into the entry module we look (the constant appears in the first
/// few KB of every build seen; a bounded window keeps this cheap).
const WINDOW: usize = 256 << 10;

pub fn from_bundle(entry: &[u8]) -> Option<String> {
    let head = &entry[..entry.len().min(WINDOW)];
    if let Some(c) = HEADER.captures(&head[..head.len().min(4096)]) {
        return Some(String::from_utf8_lossy(&c[1]).into_owned());
    }
    // Require the first two occurrences to agree: one stray match (a
    // dependency's own VERSION) must not decide.
    let mut it = CONSTANT.captures_iter(head).map(|c| c[1].to_vec());
    let first = it.next()?;
    let second = it.next()?;
    (first == second).then(|| String::from_utf8_lossy(&first).into_owned())
}

/// A version as the registry spells them; anything else read from a build
/// is not sent to it.
pub fn plausible(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_comment_wins() {
        let b = b"// @bun\n// (c) someone\n\n// Version: 9.8.7\nimport x from 'y';";
        assert_eq!(from_bundle(b).as_deref(), Some("9.8.7"));
    }

    #[test]
    fn constant_needs_agreement() {
        assert_eq!(
            from_bundle(br#"a={VERSION:"1.2.3"};b={VERSION:"1.2.3"}"#).as_deref(),
            Some("1.2.3")
        );
        assert_eq!(
            from_bundle(br#"a={VERSION:"1.2.3"};b={VERSION:"4.5.6"}"#),
            None
        );
        assert_eq!(from_bundle(br#"a={VERSION:"1.2.3"}"#), None);
        assert_eq!(from_bundle(b"nothing here"), None);
    }
}
