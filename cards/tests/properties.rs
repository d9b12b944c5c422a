//! Properties of the markdown conversion: it never panics, and the words of the source survive
//! whatever markup wraps them.

use proptest::prelude::*;
use workmate_cards::{Block, Inline, markdown_to_blocks};

/// Every visible text of the blocks, in order (link targets excluded).
fn visible(blocks: &[Block]) -> String {
    let mut out = Vec::new();
    let inlines = |out: &mut Vec<String>, inlines: &[Inline]| {
        out.extend(inlines.iter().map(|i| i.text().to_owned()));
    };
    for block in blocks {
        match block {
            Block::Heading { text } | Block::Code { text, .. } => out.push(text.clone()),
            Block::Text(r) | Block::Quote(r) => inlines(&mut out, &r.0),
            Block::Context(i) => inlines(&mut out, i),
            Block::List { items, .. } => items.iter().for_each(|r| inlines(&mut out, &r.0)),
            Block::Table { header, rows } => {
                out.extend(header.iter().cloned());
                rows.iter().for_each(|r| out.extend(r.iter().cloned()));
            }
            Block::Fields(f) => f
                .iter()
                .for_each(|(k, v)| out.extend([k.clone(), v.clone()])),
            Block::Divider | Block::Actions(_) => {}
        }
        out.push(" ".into());
    }
    out.join(" ")
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One word wrapped in one kind of markup.
fn decorated() -> impl Strategy<Value = (String, String)> {
    ("[a-z]{1,8}", 0..11usize).prop_map(|(w, style)| {
        let md = match style {
            0 => w.clone(),
            1 => format!("**{w}**"),
            2 => format!("*{w}*"),
            3 => format!("`{w}`"),
            4 => format!("~~{w}~~"),
            5 => format!("\n# {w}\n"),
            6 => format!("\n- {w}\n"),
            7 => format!("\n1. {w}\n"),
            8 => format!("\n> {w}\n"),
            9 => format!("[{w}](https://example.com/{w})"),
            _ => format!("\n```\n{w}\n```\n"),
        };
        (w, md)
    })
}

fn no_empty_blocks(blocks: &[Block]) -> bool {
    blocks.iter().all(|b| match b {
        Block::Heading { text } | Block::Code { text, .. } => !text.trim().is_empty(),
        Block::Text(r) | Block::Quote(r) => !r.is_empty(),
        Block::List { items, .. } => !items.is_empty(),
        _ => true,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(md in any::<String>()) {
        let blocks = markdown_to_blocks(&md);
        prop_assert!(no_empty_blocks(&blocks));
    }

    #[test]
    fn markup_soup_never_panics(md in r"[#*_`~>|\-+=\[\]()!<>/:.0-9a-c \t\n\\]{0,300}") {
        let blocks = markdown_to_blocks(&md);
        prop_assert!(no_empty_blocks(&blocks));
    }

    #[test]
    fn deep_nesting_never_panics(depth in 1..400usize, quote in any::<bool>()) {
        let md = if quote {
            format!("{} x", ">".repeat(depth))
        } else {
            (0..depth).map(|i| format!("{}- x{i}\n", "  ".repeat(i))).collect()
        };
        prop_assert!(!markdown_to_blocks(&md).is_empty());
    }

    #[test]
    fn words_survive_their_markup(parts in prop::collection::vec((decorated(), 0..3usize), 1..24)) {
        let mut md = String::new();
        let mut expected = Vec::new();
        for ((word, marked), sep) in &parts {
            md.push_str(marked);
            md.push_str(["", " ", "\n\n"][*sep]);
            expected.push(word.clone());
        }
        // Words written without a separator may merge ("ab" from `a` and `b`), so letters are
        // compared in order rather than word by word.
        let got = visible(&markdown_to_blocks(&md));
        prop_assert_eq!(
            words(&got).concat(),
            expected.concat(),
            "markdown: {:?}", md
        );
    }
}
