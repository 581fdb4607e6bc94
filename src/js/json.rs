//! JSON text counted before it is parsed: what a parse allocates grows with
//! the values, not the bytes (`[0,0,0,…]` or `{}` repeated take far more
//! room parsed than written), so readers of untrusted JSON — stored facts,
//! a simulated script's `JSON.parse` — bound the values first.

/// The values `json` holds, counted in one pass without parsing, up to
/// `max` (counting stops there: the answer is then `max + 1`). Outside
/// strings every value but the first follows a `[`, `{`, `,` or `:`, so
/// their count bounds the values (and object keys) from above; strings
/// cost their bytes only.
pub fn values_up_to(json: &[u8], max: usize) -> usize {
    let (mut n, mut i) = (1usize, 0);
    while let Some(&b) = json.get(i) {
        i += 1;
        match b {
            // A string is skipped to its closing quote, escapes and all,
            // with memchr: its bytes are most of a stored body's.
            b'"' => loop {
                let Some(k) = json.get(i..).and_then(|s| memchr::memchr2(b'"', b'\\', s)) else {
                    return n;
                };
                i += k + 1;
                if json[i - 1] == b'"' {
                    break;
                }
                i += 1;
            },
            b'[' | b',' | b':' | b'{' => {
                n += 1;
                if n > max {
                    return n;
                }
            }
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::values_up_to;

    #[test]
    fn values_are_counted_outside_strings_and_the_count_stops_past_max() {
        assert_eq!(values_up_to(b"[1,2,3]", usize::MAX), 4);
        assert_eq!(values_up_to(br#"{"a,b:[": "x\"[,"}"#, usize::MAX), 3);
        assert_eq!(values_up_to(&b"{}".repeat(10), usize::MAX), 11);
        assert_eq!(values_up_to(&b"[".repeat(100), 5), 6);
        assert_eq!(values_up_to(b"", usize::MAX), 1);
        // An escaped backslash ends before the quote that closes.
        assert_eq!(values_up_to(br#"["a\\",[1]]"#, usize::MAX), 4);
        // Input that ends inside a string, or inside an escape.
        assert_eq!(values_up_to(b"[\"x", usize::MAX), 2);
        assert_eq!(values_up_to(b"[\"x\\", usize::MAX), 2);
    }
}
