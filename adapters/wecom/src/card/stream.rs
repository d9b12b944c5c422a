//! Splitting markdown into stream messages: a smart robot's stream `content` holds at most
//! [`MAX_STREAM_BYTES`].
//!
//! Invariants: every part is at most the given size (never less than one character's worth, 4
//! bytes), none is empty, no part ends inside a UTF-8 character, and the parts put together are
//! the text. A part ends at a blank line (a paragraph's end) when one falls in the second half of
//! what fits, else at the last line break that fits, and inside a line only when the line alone
//! is longer than a part.

/// Bytes of a stream message's `content` (UTF-8), WeCom's limit for the smart robot's stream
/// and markdown replies.
pub const MAX_STREAM_BYTES: usize = 20_480;

/// `content` in parts of at most `max_bytes` each (see the module docs); no parts for empty
/// content. A `max_bytes` below 4 counts as 4, so that any character fits in a part.
pub fn split_stream(content: &str, max_bytes: usize) -> Vec<String> {
    let max = max_bytes.max(4);
    let mut parts = Vec::new();
    let mut rest = content;
    while rest.len() > max {
        let mut window = max;
        while !rest.is_char_boundary(window) {
            window -= 1;
        }
        let head = &rest[..window];
        let cut = match head.rfind("\n\n") {
            Some(i) if (i + 2) * 2 > window => i + 2,
            _ => head.rfind('\n').map_or(window, |i| i + 1),
        };
        let (part, tail) = rest.split_at(cut);
        parts.push(part.to_owned());
        rest = tail;
    }
    if !rest.is_empty() {
        parts.push(rest.to_owned());
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_paragraphs_then_lines_then_characters() {
        assert!(split_stream("", 10).is_empty());
        assert_eq!(split_stream("short", 10), ["short"]);
        assert_eq!(
            split_stream("aaaa\n\nbbbb\ncc", 10),
            ["aaaa\n\n", "bbbb\ncc"]
        );
        assert_eq!(
            split_stream("a\nbbbbbbbbbbbb", 10),
            ["a\n", "bbbbbbbbbb", "bb"]
        );
        assert_eq!(split_stream("漢字漢字", 7), ["漢字", "漢字"]);
        assert_eq!(split_stream("😀😀", 1), ["😀", "😀"]);
    }
}
