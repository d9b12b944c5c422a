//! Lengths as WeCom's template-card docs state them: in 字 (characters of Chinese text), which
//! are about as wide as two Latin letters. Here a length is counted in columns: a wide character
//! (CJK, fullwidth forms, most emoji) takes two, an invisible one (zero-width spaces, joiners,
//! variation selectors, combining marks) none, any other one. A limit of 26 字 is 52 columns.
//!
//! Invariants: every cut is on a `char` boundary, ends in `…` exactly when something was left
//! out, and is at most as many columns as asked for; where the text has a space late enough, a cut
//! ends at a word's end rather than inside a word.

/// Columns of `text` (see the module docs).
pub fn columns(text: &str) -> usize {
    text.chars().map(char_columns).sum()
}

/// Columns of one character.
fn char_columns(c: char) -> usize {
    if is_invisible(c) {
        0
    } else if is_wide(c) {
        2
    } else {
        1
    }
}

fn is_invisible(c: char) -> bool {
    matches!(
        c as u32,
        0x0300..=0x036F | 0x200B..=0x200F | 0x2060..=0x2064 | 0xFE00..=0xFE0F | 0xFEFF
    )
}

/// East Asian wide and fullwidth characters and the emoji shown as wide, after Unicode's
/// East Asian Width property (the common ranges; a rare character counted narrow only makes a
/// cut a little generous).
fn is_wide(c: char) -> bool {
    matches!(
        c as u32,
        0x1100..=0x115F
            | 0x231A..=0x231B
            | 0x2329..=0x232A
            | 0x23E9..=0x23EC
            | 0x23F0
            | 0x23F3
            | 0x25FD..=0x25FE
            | 0x2614..=0x2615
            | 0x2648..=0x2653
            | 0x267F
            | 0x2693
            | 0x26A1
            | 0x26AA..=0x26AB
            | 0x26BD..=0x26BE
            | 0x26C4..=0x26C5
            | 0x26CE
            | 0x26D4
            | 0x26EA
            | 0x26F2..=0x26F3
            | 0x26F5
            | 0x26FA
            | 0x26FD
            | 0x2705
            | 0x270A..=0x270B
            | 0x2728
            | 0x274C
            | 0x274E
            | 0x2753..=0x2755
            | 0x2757
            | 0x2795..=0x2797
            | 0x27B0
            | 0x27BF
            | 0x2B1B..=0x2B1C
            | 0x2B50
            | 0x2B55
            | 0x2E80..=0x303E
            | 0x3041..=0x33FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xA000..=0xA4CF
            | 0xA960..=0xA97F
            | 0xAC00..=0xD7A3
            | 0xF900..=0xFAFF
            | 0xFE10..=0xFE19
            | 0xFE30..=0xFE6F
            | 0xFF00..=0xFF60
            | 0xFFE0..=0xFFE6
            | 0x1F004
            | 0x1F0CF
            | 0x1F18E
            | 0x1F191..=0x1F19A
            | 0x1F200..=0x1F64F
            | 0x1F680..=0x1F6FF
            | 0x1F7E0..=0x1F7EB
            | 0x1F90C..=0x1F9FF
            | 0x1FA70..=0x1FAFF
            | 0x20000..=0x3FFFD
    )
}

/// `text` cut to at most `max` columns, ending in `…` when cut; at the end of a word when one
/// ends in the second half of what fits.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if columns(text) <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    let mut used = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let w = char_columns(c);
        if used + w > room {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    let head = &text[..end];
    let mid_word = text[end..].starts_with(|c: char| !c.is_whitespace())
        && head.ends_with(|c: char| !c.is_whitespace());
    let head = match head.rfind(char::is_whitespace) {
        Some(space) if mid_word && columns(&head[..space]) * 2 >= room => &head[..space],
        _ => head,
    };
    let mut out = head.trim_end().to_owned();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_wide_characters_twice_and_cuts_at_words() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("已批准"), 6);
        assert_eq!(columns("✅ ok"), 5);
        assert_eq!(columns("a\u{200B}b\u{FE0F}"), 2);
        assert_eq!(cut("Approve once", 20), "Approve once");
        assert_eq!(cut("Always allow this command", 20), "Always allow this…");
        assert_eq!(cut("Requested by", 10), "Requested…");
        assert_eq!(cut("abcdefghijklmnop", 10), "abcdefghi…");
        assert_eq!(cut("审批人已经批准了这个请求", 10), "审批人已…");
        assert_eq!(cut("a b", 0), "");
        for (text, max) in [("ab cd ef", 4), ("漢字漢字", 3), ("x", 1), ("xy", 1)] {
            let out = cut(text, max);
            assert!(columns(&out) <= max, "{out:?}");
            assert!(out.ends_with('…') || out == text);
        }
    }
}
