//! Feishu's limits hold for any card: the size cap, element ids Feishu accepts, only Card JSON 2.0
//! components, buttons that carry their action back, and text that cannot become markup. Checked
//! on edge cases here, on every card state in `cards`, and on generated cards of any text, any
//! number of tool calls and any table.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::Value;
use workmate_cards::testing::{
    answer, any_text_in_every_block, approval, busy_turn, empty_blocks_card, long_label_buttons,
    one_button, paragraph,
};
use workmate_cards::{Block, Button, ButtonAction, ButtonStyle, Card, markdown_to_blocks};
use workmate_feishu::card::{
    MAX_BUTTON_LABEL_CHARS, MAX_BUTTON_VALUE_BYTES, MAX_BUTTONS, MAX_CARD_BYTES, MAX_ELEMENTS,
    MAX_HEADER_CHARS, MAX_PLAIN_TEXT_CHARS, MAX_SUMMARY_CHARS, MAX_TABLE_COLUMNS, MAX_TABLE_ROWS,
    MAX_TABLES, decode_action, plain_text, render,
};
use workmate_protocol::ApprovalChoice;

/// The components the renderer may write: all of them exist in Card JSON 2.0.
const COMPONENTS: &[&str] = &["markdown", "hr", "table", "column_set", "column", "button"];
/// The markdown text sizes the renderer may write.
const TEXT_SIZES: &[&str] = &["heading", "notation"];

/// Whether Feishu accepts `id` as an `element_id`: a letter, then at most 19 letters, digits or
/// underscores (`^[A-Za-z][A-Za-z0-9_]{0,19}$`).
pub(crate) fn is_element_id(id: &str) -> bool {
    let mut chars = id.chars();
    let first = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    first && id.len() <= 20 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn chars(value: &Value) -> usize {
    value.as_str().unwrap().chars().count()
}

/// Fails unless `card` is a Card JSON 2.0 card within every limit the adapter promises (see the
/// `card` module docs): at most [`MAX_CARD_BYTES`] (≤ 30 KB) of compact JSON; a `config`, and a
/// well-formed header when the card has a title; every body component a known 2.0 one with a
/// unique, valid `element_id`; no 1.0 `action` container anywhere; at most [`MAX_ELEMENTS`]
/// components, [`MAX_TABLES`] tables and [`MAX_BUTTONS`] buttons; every button a callback whose
/// value is exactly its action; and no markup tag in any text but the renderer's grey notes.
pub(crate) fn assert_within_limits(card: &Value) {
    const { assert!(MAX_CARD_BYTES <= 30 * 1024) };
    let size = serde_json::to_vec(card).unwrap().len();
    assert!(size <= MAX_CARD_BYTES, "{size} bytes > {MAX_CARD_BYTES}");
    assert_no_action_tag(card);

    let fields = card.as_object().expect("the card is an object");
    for key in fields.keys() {
        assert!(
            ["schema", "config", "header", "body"].contains(&key.as_str()),
            "unexpected top-level key {key}"
        );
    }
    assert_eq!(card["schema"], "2.0");
    let config = &card["config"];
    assert_eq!(config["update_multi"], true, "a shared card");
    assert!(config["streaming_mode"].is_boolean());
    assert!((1..=MAX_SUMMARY_CHARS).contains(&chars(&config["summary"]["content"])));
    if let Some(header) = card.get("header") {
        assert_eq!(header["title"]["tag"], "plain_text");
        let title = &header["title"]["content"];
        assert!((1..=MAX_HEADER_CHARS).contains(&chars(title)), "{title}");
    }

    let mut walk = Walk::default();
    for element in card["body"]["elements"].as_array().expect("body.elements") {
        walk.component(element);
    }
    assert!(
        walk.ids.len() <= MAX_ELEMENTS,
        "{} components",
        walk.ids.len()
    );
    assert!(walk.tables <= MAX_TABLES, "{} tables", walk.tables);
    assert!(walk.buttons <= MAX_BUTTONS, "{} buttons", walk.buttons);
    let stop = walk
        .actions
        .iter()
        .any(|a| matches!(a, ButtonAction::Stop { .. }));
    assert_eq!(
        config["streaming_mode"], stop,
        "streaming exactly while there is a Stop button"
    );
}

/// Fails unless `json`, the rendering of `card`, has a header exactly when the card starts with a
/// heading that shows some text: the header is the card's title, and only titled cards (an
/// automation run's result) have one.
pub(crate) fn assert_header_iff_titled(card: &Card, json: &Value) {
    let titled = matches!(
        card.blocks.first(),
        Some(Block::Heading { text }) if text.chars().any(|c| !c.is_whitespace() && !c.is_control())
    );
    assert_eq!(json.get("header").is_some(), titled, "{json}");
}

/// Fails if any object anywhere in `value` is a 1.0 `action` container.
fn assert_no_action_tag(value: &Value) {
    match value {
        Value::Object(fields) => {
            assert_ne!(fields.get("tag"), Some(&Value::from("action")), "{value}");
            fields.values().for_each(assert_no_action_tag);
        }
        Value::Array(items) => items.iter().for_each(assert_no_action_tag),
        _ => {}
    }
}

/// What a walk over the body found.
#[derive(Debug, Default)]
struct Walk {
    ids: HashSet<String>,
    tables: usize,
    buttons: usize,
    actions: Vec<ButtonAction>,
}

impl Walk {
    fn component(&mut self, element: &Value) {
        let tag = element["tag"].as_str().expect("a component has a tag");
        assert!(COMPONENTS.contains(&tag), "unexpected component {tag}");
        let id = element["element_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{tag} without an element_id"));
        assert!(is_element_id(id), "invalid element_id {id:?}");
        assert!(self.ids.insert(id.to_owned()), "duplicate element_id {id}");
        match tag {
            "markdown" => {
                let content = element["content"].as_str().unwrap();
                assert!(!content.trim().is_empty(), "an empty markdown element");
                assert_no_markup_tag(content);
                if let Some(size) = element.get("text_size") {
                    assert!(TEXT_SIZES.contains(&size.as_str().unwrap()), "{size}");
                }
            }
            "table" => {
                self.tables += 1;
                let columns = element["columns"].as_array().unwrap();
                assert!((1..=MAX_TABLE_COLUMNS).contains(&columns.len()));
                // The shown rows, and one saying how many were left out.
                assert!(element["rows"].as_array().unwrap().len() <= MAX_TABLE_ROWS + 1);
                assert!((1..=10).contains(&element["page_size"].as_u64().unwrap()));
            }
            "column_set" => {
                for column in element["columns"].as_array().unwrap() {
                    assert_eq!(column["tag"], "column");
                    self.component(column);
                }
            }
            "column" => {
                for inner in element["elements"].as_array().unwrap() {
                    self.component(inner);
                }
            }
            "button" => self.button(element),
            _ => {}
        }
    }

    fn button(&mut self, button: &Value) {
        self.buttons += 1;
        assert_eq!(button["text"]["tag"], "plain_text");
        let label = &button["text"]["content"];
        assert!(
            (1..=MAX_BUTTON_LABEL_CHARS).contains(&chars(label)),
            "{label}"
        );
        assert!(
            ["primary_filled", "danger", "default"].contains(&button["type"].as_str().unwrap())
        );
        assert!(button.get("value").is_none(), "a 1.0 button value");
        let behaviors = button["behaviors"].as_array().unwrap();
        assert_eq!(behaviors.len(), 1);
        assert_eq!(behaviors[0]["type"], "callback");
        let value = &behaviors[0]["value"];
        assert!(value.is_object(), "the callback value is an object");
        assert!(serde_json::to_vec(value).unwrap().len() <= MAX_BUTTON_VALUE_BYTES);
        let action = decode_action(value).expect("the value decodes");
        // Nothing but the action: re-encoding it gives the value back, key for key.
        assert_eq!(&serde_json::to_value(&action).unwrap(), value);
        self.actions.push(action);
    }
}

/// Fails if `content` has a tag other than the renderer's own grey font: text from the card must
/// not become a mention, a link tag or a style.
fn assert_no_markup_tag(content: &str) {
    let rest = content
        .replace("<font color='grey'>", "")
        .replace("</font>", "");
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' {
            let next = chars.peek().copied().unwrap_or(' ');
            assert!(
                !(next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?')),
                "a tag in {content:?}"
            );
        }
    }
}

/// Renders `card`, checks the limits and the plain text, and returns the card.
fn rendered(card: &Card) -> Value {
    let json = render(card);
    assert_within_limits(&json);
    assert_header_iff_titled(card, &json);
    assert!(plain_text(card).chars().count() <= MAX_PLAIN_TEXT_CHARS);
    json
}

fn elements(card: &Value) -> &Vec<Value> {
    card["body"]["elements"].as_array().unwrap()
}

#[test]
fn the_element_id_matcher_follows_feishu() {
    for good in ["e0", "r0c1", "b19", "A", "a_b_C9", "abcdefghijklmnopqrst"] {
        assert!(is_element_id(good), "{good}");
    }
    for bad in [
        "",
        "0e",
        "_e",
        "e-1",
        "e 1",
        "é1",
        "abcdefghijklmnopqrstu",
        "e.1",
    ] {
        assert!(!is_element_id(bad), "{bad}");
    }
}

#[test]
fn edge_cards_render_within_limits() {
    let cards = [
        Card::default(),
        Card {
            blocks: vec![Block::Heading { text: "  ".into() }],
        },
        Card {
            blocks: vec![Block::Heading {
                text: "h".repeat(500),
            }],
        },
        empty_blocks_card(),
    ];
    for card in &cards {
        rendered(card);
    }
    let empty = rendered(&cards[3]);
    assert!(elements(&empty).is_empty(), "{empty}");
    let long_title = rendered(&cards[2]);
    assert_eq!(
        chars(&long_title["header"]["title"]["content"]),
        MAX_HEADER_CHARS
    );
}

#[test]
fn buttons_past_the_cap_or_too_long_to_carry_leave_a_note() {
    let mut buttons = long_label_buttons(30);
    buttons.insert(
        0,
        Button {
            label: "A long answer".into(),
            action: answer("ib_x", &"x".repeat(MAX_BUTTON_VALUE_BYTES)),
            style: ButtonStyle::Primary,
        },
    );
    let card = rendered(&Card {
        blocks: vec![Block::Actions(buttons)],
    });
    let elements = elements(&card);
    assert_eq!(elements.len(), 2);
    assert_eq!(
        elements[0]["columns"].as_array().unwrap().len(),
        MAX_BUTTONS
    );
    assert_eq!(elements[0]["columns"][0]["elements"][0]["element_id"], "b0");
    assert_eq!(
        elements[1]["content"],
        "<font color='grey'>… 11 more buttons not shown; reply in the thread instead.</font>"
    );
}

#[test]
fn a_card_of_many_blocks_keeps_its_buttons_and_says_what_was_dropped() {
    let mut blocks: Vec<Block> = (0..300)
        .map(|i| paragraph(&format!("paragraph {i}")))
        .collect();
    blocks.push(one_button(
        "Approve once",
        approval("ib_1", ApprovalChoice::Once),
        ButtonStyle::Primary,
    ));
    let card = rendered(&Card { blocks });
    let elements = elements(&card);
    let last = elements.last().unwrap();
    assert_eq!(last["tag"], "column_set");
    assert!(
        elements[elements.len() - 2]["content"]
            .as_str()
            .unwrap()
            .contains("more blocks not shown")
    );
}

#[test]
fn a_thousand_tool_calls_and_a_huge_answer_fit() {
    let steps: Vec<(String, String, u8)> = (0..1_000u32)
        .map(|i| {
            (
                format!("tool_{i}"),
                format!("<at id=all></at> arg {i}"),
                (i % 6) as u8,
            )
        })
        .collect();
    let answer =
        "## Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n**bold** <font color='red'>x</font>\n"
            .repeat(5_000);
    let card = rendered(&busy_turn(&steps, &answer));
    let last = elements(&card).last().unwrap();
    assert_eq!(last["tag"], "column_set", "the Stop button is kept");
    assert_eq!(card["config"]["streaming_mode"], true);
}

fn table_block(columns: usize, rows: usize, cell: &str) -> Block {
    Block::Table {
        header: (0..columns).map(|c| format!("{cell} h{c}")).collect(),
        rows: (0..rows)
            .map(|r| (0..columns).map(|c| format!("{cell} {r}.{c}")).collect())
            .collect(),
    }
}

#[test]
fn huge_tables_are_capped_and_cut_to_fit() {
    // About 4 MB of cells: far more than any answer, with tables past the cap shown as code.
    let blocks: Vec<Block> = (0..12)
        .map(|i| table_block(40, 300, &"表格 ".repeat(i)))
        .collect();
    let card = rendered(&Card { blocks });
    let tables = elements(&card)
        .iter()
        .filter(|e| e["tag"] == "table")
        .count();
    assert!((1..=MAX_TABLES).contains(&tables), "{tables} tables");
}

/// Markdown a model may write, markup-heavy, with unicode and control characters.
fn markdownish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("# ".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("```\n".to_owned()),
            Just("| a | b |\n|---|---|\n| 1 | 2 |\n".to_owned()),
            Just("<at id=all></at>".to_owned()),
            Just("<font color='red'>".to_owned()),
            Just("[x](javascript:alert(1))".to_owned()),
            Just("[y](https://e.com/a_(b))".to_owned()),
            Just("- ".to_owned()),
            Just("1. ".to_owned()),
            Just("> ".to_owned()),
            Just("---".to_owned()),
            "[*_`~|#\\\\<>&!()\\[\\] -]{1,4}",
            "[a-z]{1,12}",
            "\\PC{1,8}",
            any::<String>(),
        ],
        0..100,
    )
    .prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any markdown, at any length, in a turn's answer renders within limits.
    #[test]
    fn any_answer_renders_within_limits(md in markdownish(), repeat in 1usize..50) {
        let answer = md.repeat(repeat);
        rendered(&busy_turn(&[], &answer));
        rendered(&Card { blocks: markdown_to_blocks(&answer) });
    }

    /// Any text in any block kind renders within limits.
    #[test]
    fn any_text_in_any_block_renders_within_limits(
        s in any::<String>(),
        md in markdownish(),
        repeat in 1usize..500,
    ) {
        rendered(&any_text_in_every_block(&s, &md, &s.repeat(repeat)));
    }

    /// Any number of tool calls with any names and details render within limits.
    #[test]
    fn many_tool_calls_render_within_limits(
        steps in prop::collection::vec(("\\PC{0,30}", any::<String>(), any::<u8>()), 0..400),
        md in markdownish(),
    ) {
        rendered(&busy_turn(&steps, &md));
    }

    /// Any number of tables of any shape and cell text render within limits.
    #[test]
    fn huge_tables_render_within_limits(
        tables in prop::collection::vec((0usize..30, 0usize..120, "\\PC{0,24}"), 0..9),
        md in markdownish(),
    ) {
        let mut blocks: Vec<Block> = tables
            .iter()
            .map(|(columns, rows, cell)| table_block(*columns, *rows, cell))
            .collect();
        blocks.extend(markdown_to_blocks(&md));
        rendered(&Card { blocks });
    }
}
