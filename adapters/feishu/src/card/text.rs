//! Plain text: the card's fallback text, and the small text helpers the renderer shares on top
//! of `workmate_cards::text`: control characters dropped, counts with thousands separators, and
//! lengths in JSON bytes.
//!
//! Invariants: every cut is on a `char` boundary, and lengths that decide whether a card fits are
//! counted the way `serde_json` writes them, so a measured element is exactly as long as the one
//! sent.

use std::io;

use serde_json::Value;
use workmate_cards::Card;
use workmate_cards::text::plain_lines;

/// `text` without control characters other than line breaks and tabs (a carriage return is
/// dropped too): Feishu has no use for them and each would cost six bytes of JSON.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect()
}

/// `text` [`clean`]ed, with line breaks and runs of whitespace folded into single spaces.
pub(crate) fn one_line(text: &str) -> String {
    workmate_cards::text::one_line(&clean(text))
}

/// `n` with thousands separators: `12,345`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count with its noun, singular or plural: `1 row`, `3 rows`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n))
}

/// Bytes `c` takes inside a JSON string as `serde_json` writes it.
pub(crate) fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes `text` takes inside a JSON string (without the quotes).
pub(crate) fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

/// Bytes of `value` as compact JSON.
pub(crate) fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        // Writing a `Value` cannot fail; if it ever did, the card must count as too big.
        Err(_) => usize::MAX,
    }
}

/// The card as plain lines, without buttons or markup, [`clean`]ed, blank lines left out.
pub(crate) fn lines(card: &Card) -> Vec<String> {
    plain_lines(card)
        .iter()
        .flat_map(|text| clean(text).lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|line| !line.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helpers_count_and_cut_by_char() {
        assert_eq!(one_line("a\n  b\tc\r "), "a b c");
        assert_eq!(clean("a\u{0}b\r\nc\td"), "ab\nc\td");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(plural(1, "row"), "1 row");
        assert_eq!(plural(1_000, "row"), "1,000 rows");
        let text = "a\"\\\n\u{1}é漢😀";
        assert_eq!(
            json_len(text),
            serde_json::to_string(text).unwrap().len() - 2
        );
        let value = json!({ "a": [text, 1, null] });
        assert_eq!(json_size(&value), serde_json::to_vec(&value).unwrap().len());
    }
}
