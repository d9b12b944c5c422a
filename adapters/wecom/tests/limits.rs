//! WeCom's limits hold for any card: template cards within every documented length and count,
//! buttons whose keys carry their action back, valid task ids; markdown that no text can turn
//! into a tag, a colour or a mention; stream parts within the byte cap that put together give the
//! text. Checked on edge cases here, on every card state in `cards`, and on generated input.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Value, json};
use workmate_cards::testing::{
    answer, any_text_in_every_block, approval, busy_turn, empty_blocks_card, one_button, stop,
};
use workmate_cards::{Block, Button, ButtonStyle, Card, Inline, RichText, markdown_to_blocks};
use workmate_protocol::ApprovalChoice;
use workmate_wecom::card::{
    MAX_BUTTON_TEXT_COLUMNS, MAX_BUTTONS, MAX_DESC_COLUMNS, MAX_HORIZONTAL_ROWS, MAX_KEY_BYTES,
    MAX_KEYNAME_COLUMNS, MAX_STREAM_BYTES, MAX_SUB_TITLE_COLUMNS, MAX_TASK_ID_BYTES,
    MAX_TITLE_COLUMNS, MAX_VALUE_COLUMNS, columns, decode_key, markdown, split_stream, task_id,
    template_card,
};

/// The keys a rendered template card may have.
const CARD_KEYS: &[&str] = &[
    "card_type",
    "main_title",
    "sub_title_text",
    "horizontal_content_list",
    "button_list",
    "card_action",
    "task_id",
];

fn cols(value: &Value) -> usize {
    columns(value.as_str().expect("a string"))
}

/// Whether WeCom accepts `id` as a task id: 1 to 128 bytes of `[0-9A-Za-z_\-@]`.
fn valid_task_id(id: &str) -> bool {
    (1..=MAX_TASK_ID_BYTES).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'@'))
}

/// Fails unless `card` is a `button_interaction` or `text_notice` template card within every
/// limit the adapter promises (see the `card` module docs): known keys only; a non-empty title
/// and a desc and sub-title within their lengths; at most six label/value rows within theirs; a
/// `button_interaction` has one to six buttons with a known style, a short text and a unique key
/// of at most 1,024 bytes that is exactly its action's compact JSON; a `text_notice` has no
/// buttons and the `card_action` WeCom requires; the task id is valid.
pub(crate) fn assert_within_limits(card: &Value) {
    const { assert!(MAX_BUTTONS == 6 && MAX_HORIZONTAL_ROWS == 6) };
    const { assert!(MAX_KEY_BYTES == 1024 && MAX_TASK_ID_BYTES == 128) };
    let fields = card.as_object().expect("the card is an object");
    for key in fields.keys() {
        assert!(CARD_KEYS.contains(&key.as_str()), "unexpected key {key}");
    }
    let title = &card["main_title"]["title"];
    assert!((1..=MAX_TITLE_COLUMNS).contains(&cols(title)), "{title}");
    if let Some(desc) = card["main_title"].get("desc") {
        assert!((1..=MAX_DESC_COLUMNS).contains(&cols(desc)), "{desc}");
    }
    if let Some(sub) = card.get("sub_title_text") {
        assert!((1..=MAX_SUB_TITLE_COLUMNS).contains(&cols(sub)), "{sub}");
    }
    if let Some(rows) = card.get("horizontal_content_list") {
        let rows = rows.as_array().unwrap();
        assert!((1..=MAX_HORIZONTAL_ROWS).contains(&rows.len()));
        for row in rows {
            assert!(
                (1..=MAX_KEYNAME_COLUMNS).contains(&cols(&row["keyname"])),
                "{row}"
            );
            assert!(cols(&row["value"]) <= MAX_VALUE_COLUMNS, "{row}");
        }
    }
    match card["card_type"].as_str().unwrap() {
        "button_interaction" => {
            let buttons = card["button_list"].as_array().unwrap();
            assert!((1..=MAX_BUTTONS).contains(&buttons.len()));
            let mut keys = HashSet::new();
            for button in buttons {
                assert!((1..=MAX_BUTTON_TEXT_COLUMNS).contains(&cols(&button["text"])));
                assert!((1..=4).contains(&button["style"].as_u64().unwrap()));
                let key = button["key"].as_str().unwrap();
                assert!(key.len() <= MAX_KEY_BYTES, "{} bytes", key.len());
                assert!(keys.insert(key.to_owned()), "duplicate key {key}");
                let action = decode_key(key).expect("the key decodes");
                assert_eq!(
                    serde_json::to_string(&action).unwrap(),
                    key,
                    "nothing but the action"
                );
            }
            assert!(card.get("card_action").is_none());
        }
        "text_notice" => {
            assert!(card.get("button_list").is_none());
            assert_eq!(card["card_action"], json!({ "type": 0 }));
        }
        other => panic!("unexpected card_type {other}"),
    }
    assert!(
        valid_task_id(card["task_id"].as_str().unwrap()),
        "{}",
        card["task_id"]
    );
}

/// Fails if `md` could notify anyone or hold a tag: no `<@`, no `@all` in any case, no `<`
/// before a letter, `/`, `!` or `?` (so no `<font>`), and no line indented into a code block.
pub(crate) fn assert_markdown_safe(md: &str) {
    assert!(!md.contains("<@"), "a mention in {md:?}");
    assert!(!md.to_lowercase().contains("@all"), "@all in {md:?}");
    for (i, _) in md.match_indices('<') {
        let next = md[i + 1..].chars().next().unwrap_or(' ');
        assert!(
            !(next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?')),
            "a tag in {md:?}"
        );
    }
    for line in md.lines() {
        assert!(
            !line.starts_with("    ") && !line.starts_with('\t'),
            "indented code: {line:?}"
        );
    }
}

/// Template card and markdown of `card`, each checked.
fn rendered(card: &Card) -> (Value, String) {
    let json = template_card(card, &task_id("approval:ib_01JABCDEF"));
    assert_within_limits(&json);
    let md = markdown(card);
    assert_markdown_safe(&md);
    (json, md)
}

#[test]
fn edge_cards_render_within_limits() {
    for card in [
        Card::default(),
        empty_blocks_card(),
        Card {
            blocks: vec![Block::Heading {
                text: "标题".repeat(100),
            }],
        },
    ] {
        rendered(&card);
    }
    let (empty, md) = rendered(&empty_blocks_card());
    assert_eq!(md, "", "nothing to show");
    assert_eq!(empty["main_title"]["title"], "…");
    let (long, _) = rendered(&Card {
        blocks: vec![Block::Heading {
            text: "标题".repeat(100),
        }],
    });
    assert_eq!(cols(&long["main_title"]["title"]), MAX_TITLE_COLUMNS - 1);
    assert!(
        long["sub_title_text"]
            .as_str()
            .unwrap()
            .starts_with("标题标题")
    );
}

#[test]
fn buttons_past_the_cap_too_long_or_repeated_are_counted() {
    let mut buttons: Vec<Button> = (0..10)
        .map(|i| Button {
            label: format!("Option number {i}"),
            action: approval(&format!("ib_{i}"), ApprovalChoice::Once),
            style: ButtonStyle::Default,
        })
        .collect();
    buttons.insert(1, buttons[0].clone());
    buttons.insert(
        0,
        Button {
            label: "A long answer".into(),
            action: answer("ib_x", &"x".repeat(MAX_KEY_BYTES)),
            style: ButtonStyle::Primary,
        },
    );
    let (card, _) = rendered(&Card {
        blocks: vec![Block::Actions(buttons)],
    });
    let list = card["button_list"].as_array().unwrap();
    assert_eq!(list.len(), MAX_BUTTONS);
    assert_eq!(list[0]["text"], "Option number 0");
    assert_eq!(
        list[1]["text"], "Option number 1",
        "the repeated button is left out"
    );
    assert!(
        card["sub_title_text"]
            .as_str()
            .unwrap()
            .ends_with("… 6 more buttons not shown; reply in the thread instead.")
    );

    // The allowed path: a card of six distinct, short buttons carries all of them.
    let six: Vec<Button> = (0..6)
        .map(|i| Button {
            label: format!("{i}"),
            action: approval(&format!("ib_{i}"), ApprovalChoice::Deny),
            style: ButtonStyle::Danger,
        })
        .collect();
    let (card, _) = rendered(&Card {
        blocks: vec![Block::Actions(six)],
    });
    assert_eq!(card["button_list"].as_array().unwrap().len(), 6);
    assert!(card.get("sub_title_text").is_none());
}

#[test]
fn a_card_whose_only_button_cannot_be_carried_is_a_notice_that_says_so() {
    let card = Card {
        blocks: vec![
            Block::Text(RichText(vec![Inline::Bold("Pick one".into())])),
            one_button(
                "Long",
                answer("ib_1", &"é".repeat(MAX_KEY_BYTES)),
                ButtonStyle::Primary,
            ),
        ],
    };
    let (json, _) = rendered(&card);
    assert_eq!(json["card_type"], "text_notice");
    assert_eq!(
        json["sub_title_text"],
        "… 1 more button not shown; reply in the thread instead."
    );
}

#[test]
fn keys_decode_to_their_actions_and_nothing_else() {
    let actions = [approval("ib_1", ApprovalChoice::AlwaysCommand), stop()];
    for action in actions {
        let key = serde_json::to_string(&action).unwrap();
        assert_eq!(decode_key(&key), Some(action));
    }
    for garbage in ["", "approve", "{}", "{\"type\":\"launch\"}", "[1]"] {
        assert_eq!(decode_key(garbage), None, "{garbage}");
    }
}

#[test]
fn task_ids_of_the_chat_layers_keys_are_valid_and_distinct() {
    let keys = [
        "approval:ib_01JABCDEF",
        "question:ib_01JABCDEF",
        "turn:tn_01JABCDEF",
        "turn:tn_01JABCDEF:1",
        "turn:tn_01JABCDEF:1:page:2",
    ];
    let ids: HashSet<String> = keys.iter().map(|k| task_id(k)).collect();
    assert_eq!(ids.len(), keys.len());
    for (key, id) in keys.iter().zip(keys.iter().map(|k| task_id(k))) {
        assert!(valid_task_id(&id), "{id}");
        assert_eq!(task_id(key), id, "stable");
    }
    assert_eq!(
        task_id("tn_01JABCDEF"),
        "tn_01JABCDEF",
        "a valid key is kept"
    );
}

/// Markdown a model may write, markup-heavy, with unicode, mentions, tags and control characters.
fn markdownish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("# ".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("    ".to_owned()),
            Just("```\n".to_owned()),
            Just("| a | b |\n|---|---|\n| 1 | 2 |\n".to_owned()),
            Just("<@u_1>".to_owned()),
            Just("@all".to_owned()),
            Just("@ALL".to_owned()),
            Just("<font color=\"warning\">".to_owned()),
            Just("</font>".to_owned()),
            Just("[x](javascript:alert(1))".to_owned()),
            Just("[y](https://e.com/a_(b)@all)".to_owned()),
            Just("- ".to_owned()),
            Just("1. ".to_owned()),
            Just("> ".to_owned()),
            Just("---".to_owned()),
            "[*_`~|#\\\\<>&!@()\\[\\] -]{1,4}",
            "[a-z]{1,12}",
            "\\PC{1,8}",
            any::<String>(),
        ],
        0..80,
    )
    .prop_map(|pieces| pieces.concat())
}

/// Text with line breaks, long lines and multi-byte characters.
fn streamish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            "[a-z ]{0,40}",
            "[漢字é😀]{1,20}",
            any::<String>(),
        ],
        0..60,
    )
    .prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Parts fit, are never empty, end at a line break unless a line alone is too long, and put
    /// together are the text.
    #[test]
    fn stream_parts_fit_and_rebuild_the_text(text in streamish(), repeat in 1usize..20, max in 1usize..300) {
        let text = text.repeat(repeat);
        let parts = split_stream(&text, max);
        prop_assert_eq!(parts.concat(), text);
        let max = max.max(4);
        for (i, part) in parts.iter().enumerate() {
            prop_assert!(!part.is_empty());
            prop_assert!(part.len() <= max, "{} > {}", part.len(), max);
            if i + 1 < parts.len() && !part.ends_with('\n') {
                prop_assert!(!part.contains('\n'), "a line break was passed over: {:?}", part);
                prop_assert!(part.len() + 4 > max, "cut early inside a line: {:?}", part);
            }
        }
    }

    /// At the real cap, a long answer's markdown splits into messages WeCom accepts.
    #[test]
    fn long_markdown_splits_under_the_cap(md in markdownish(), repeat in 1usize..200) {
        let content = markdown(&Card { blocks: markdown_to_blocks(&md.repeat(repeat)) });
        let parts = split_stream(&content, MAX_STREAM_BYTES);
        prop_assert_eq!(parts.concat(), content);
        prop_assert!(parts.iter().all(|p| p.len() <= MAX_STREAM_BYTES));
    }

    /// Any markdown in a turn's answer renders within limits and safe.
    #[test]
    fn any_answer_renders_within_limits(md in markdownish(), repeat in 1usize..20) {
        let answer = md.repeat(repeat);
        rendered(&busy_turn(&[], &answer));
        rendered(&Card { blocks: markdown_to_blocks(&answer) });
    }

    /// Any text in any block kind renders within limits and safe.
    #[test]
    fn any_text_in_any_block_renders_within_limits(
        s in any::<String>(),
        md in markdownish(),
        repeat in 1usize..50,
    ) {
        let long = s.repeat(repeat);
        let mut card = any_text_in_every_block(&s, &md, &long);
        let table = Block::Table { header: vec![md.clone(), s], rows: vec![vec![long, md]] };
        card.blocks.insert(6, table);
        rendered(&card);
    }

    /// Any number of tool calls with any names and details render within limits.
    #[test]
    fn many_tool_calls_render_within_limits(
        steps in prop::collection::vec(("\\PC{0,30}", any::<String>(), any::<u8>()), 0..200),
        md in markdownish(),
    ) {
        rendered(&busy_turn(&steps, &md));
    }

    /// Any key gives a valid task id, the same one every time, and different keys different ids.
    #[test]
    fn any_key_gives_a_valid_stable_task_id(a in any::<String>(), b in any::<String>(), repeat in 1usize..40) {
        let a = a.repeat(repeat);
        let id = task_id(&a);
        prop_assert!(valid_task_id(&id), "{}", id);
        prop_assert_eq!(&task_id(&a), &id);
        if a != b {
            prop_assert_ne!(task_id(&b), id);
        }
    }
}
