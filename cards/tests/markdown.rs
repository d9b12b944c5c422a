//! Markdown to blocks, by example.

use workmate_cards::{Block, Inline, RichText, markdown_to_blocks};

fn text(t: &str) -> Inline {
    Inline::Text(t.into())
}

fn rich(inlines: Vec<Inline>) -> RichText {
    RichText(inlines)
}

#[test]
fn paragraphs_keep_inline_styles() {
    let blocks = markdown_to_blocks(
        "Plain **bold** *italic* `code` ~~gone~~ [docs](https://x.io) ***both***\nnext line",
    );
    assert_eq!(
        blocks,
        [Block::Text(rich(vec![
            text("Plain "),
            Inline::Bold("bold".into()),
            text(" "),
            Inline::Italic("italic".into()),
            text(" "),
            Inline::Code("code".into()),
            text(" "),
            Inline::Strike("gone".into()),
            text(" "),
            Inline::Link {
                text: "docs".into(),
                url: "https://x.io".into()
            },
            text(" "),
            Inline::Bold("both".into()),
            text("\nnext line"),
        ]))]
    );
}

#[test]
fn headings_rules_code_and_tables_become_their_blocks() {
    let md = "# Title with `code`\n\nText\n\n---\n\n```rust ignore\nfn main() {}\n```\n\n    indented\n\n\
| a | b |\n|---|:-:|\n| 1 | **2** |\n| 3 |\n";
    assert_eq!(
        markdown_to_blocks(md),
        [
            Block::Heading {
                text: "Title with code".into()
            },
            Block::Text(rich(vec![text("Text")])),
            Block::Divider,
            Block::Code {
                language: Some("rust".into()),
                text: "fn main() {}".into()
            },
            Block::Code {
                language: None,
                text: "indented".into()
            },
            Block::Table {
                header: vec!["a".into(), "b".into()],
                rows: vec![
                    vec!["1".into(), "2".into()],
                    vec!["3".into(), String::new()]
                ],
            },
        ]
    );
}

#[test]
fn nested_lists_are_flattened_into_their_item() {
    let md = "1. first\n   - sub a\n   - sub b\n     1. deep\n2. second\n\n- loose\n\n  more\n";
    assert_eq!(
        markdown_to_blocks(md),
        [
            Block::List {
                ordered: true,
                items: vec![
                    rich(vec![text("first\n   • sub a\n   • sub b\n      1. deep"),]),
                    rich(vec![text("second")]),
                ],
            },
            Block::List {
                ordered: false,
                items: vec![rich(vec![text("loose\nmore")])],
            },
        ]
    );
}

#[test]
fn ordered_lists_keep_their_start_in_nested_numbering() {
    let blocks = markdown_to_blocks("- a\n\n  3. x\n  4. y\n");
    assert_eq!(
        blocks,
        [Block::List {
            ordered: false,
            items: vec![rich(vec![text("a\n   3. x\n   4. y")])],
        }]
    );
}

#[test]
fn quotes_hold_everything_inside_them() {
    let md = "> Quoted **text**\n>\n> - item\n> ```\n> code\n> ```\n";
    assert_eq!(
        markdown_to_blocks(md),
        [Block::Quote(rich(vec![
            text("Quoted "),
            Inline::Bold("text".into()),
            text("\n• item\n"),
            Inline::Code("code".into()),
        ]))]
    );
}

#[test]
fn images_become_links_and_html_stays_text() {
    let md = "![chart](https://x.io/c.png) and ![](https://x.io/d.png)\n\n<div>raw</div>\n\nSee <b>this</b>";
    assert_eq!(
        markdown_to_blocks(md),
        [
            Block::Text(rich(vec![
                Inline::Link {
                    text: "chart".into(),
                    url: "https://x.io/c.png".into()
                },
                text(" and "),
                Inline::Link {
                    text: "https://x.io/d.png".into(),
                    url: "https://x.io/d.png".into()
                },
            ])),
            Block::Text(rich(vec![text("<div>raw</div>")])),
            Block::Text(rich(vec![text("See <b>this</b>")])),
        ]
    );
}

#[test]
fn empty_and_blank_input_give_no_blocks() {
    assert_eq!(markdown_to_blocks(""), []);
    assert_eq!(markdown_to_blocks("  \n\n \t\n"), []);
    assert_eq!(markdown_to_blocks("#\n\n```\n```\n\n>"), []);
    assert_eq!(markdown_to_blocks("[ref]: https://x.io"), []);
}

#[test]
fn a_table_inside_a_list_item_becomes_lines() {
    let md = "- rows:\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n";
    assert_eq!(
        markdown_to_blocks(md),
        [Block::List {
            ordered: false,
            items: vec![rich(vec![text("rows:\na | b\n1 | 2")])],
        }]
    );
}
