//! Slack's Block Kit limits hold for any card: long text splits into sections, long lists of
//! blocks are cut with a note, labels are shortened, and text is escaped.

use std::collections::HashSet;

use serde_json::Value;
use workmate_cards::{Block, ButtonAction, ButtonStyle, Card, Inline, RichText};
use workmate_protocol::{ApprovalChoice, SessionId, TurnId};
use workmate_slack::blocks::{MAX_BUTTON_VALUE_CHARS, decode_button_value, fallback_text, render};

use crate::story::{
    answer, approval, empty_blocks_card, long_label_buttons, one_button, paragraph,
};

fn chars(value: &Value) -> usize {
    value.as_str().unwrap().chars().count()
}

/// Fails unless `blocks` is within every limit this adapter promises (see `blocks` docs).
pub(crate) fn assert_within_limits(blocks: &Value) {
    let blocks = blocks.as_array().expect("blocks is an array");
    assert!(blocks.len() <= 50, "{} blocks", blocks.len());
    let mut action_ids = HashSet::new();
    for block in blocks {
        match block["type"].as_str().unwrap() {
            "header" => {
                assert_eq!(block["text"]["type"], "plain_text");
                assert!((1..=150).contains(&chars(&block["text"]["text"])));
            }
            "section" => {
                if let Some(fields) = block.get("fields") {
                    let fields = fields.as_array().unwrap();
                    assert!((1..=10).contains(&fields.len()));
                    for field in fields {
                        assert!((1..=2_000).contains(&chars(&field["text"])));
                    }
                } else {
                    assert_eq!(block["text"]["type"], "mrkdwn");
                    assert!((1..=3_000).contains(&chars(&block["text"]["text"])));
                }
            }
            "context" => {
                let elements = block["elements"].as_array().unwrap();
                assert!((1..=10).contains(&elements.len()));
                for element in elements {
                    assert!((1..=3_000).contains(&chars(&element["text"])));
                }
            }
            "actions" => {
                let elements = block["elements"].as_array().unwrap();
                assert!((1..=25).contains(&elements.len()));
                for button in elements {
                    assert_eq!(button["type"], "button");
                    assert!((1..=75).contains(&chars(&button["text"]["text"])));
                    let id = button["action_id"].as_str().unwrap();
                    assert!(id.len() <= 255);
                    assert!(action_ids.insert(id.to_owned()), "duplicate action_id {id}");
                    assert!(chars(&button["value"]) <= 2_000);
                    decode_button_value(button["value"].as_str().unwrap()).unwrap();
                }
            }
            "divider" => {}
            other => panic!("unexpected block type {other}"),
        }
    }
}

fn section_texts(blocks: &Value) -> Vec<String> {
    blocks
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "section")
        .map(|b| b["text"]["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_long_answer_splits_into_sections_at_line_boundaries() {
    let lines: Vec<String> = (0..100)
        .map(|i| format!("{i:03} {}", "x".repeat(95)))
        .collect();
    let answer = lines.join("\n");
    assert_eq!(answer.chars().count(), 10_000 - 1);
    let blocks = render(&Card {
        blocks: vec![paragraph(&answer)],
    });
    assert_within_limits(&blocks);
    let sections = section_texts(&blocks);
    assert_eq!(sections.len(), 4, "10,000 chars need 4 sections of ≤ 3,000");
    assert!(
        sections
            .iter()
            .all(|s| !s.starts_with('\n') && !s.ends_with('\n'))
    );
    assert_eq!(sections.join("\n"), answer, "cut only between lines");

    // One line without breaks is cut too, and nothing is lost.
    let line = "x".repeat(10_000);
    let blocks = render(&Card {
        blocks: vec![paragraph(&line)],
    });
    assert_within_limits(&blocks);
    assert_eq!(section_texts(&blocks).concat(), line);
}

#[test]
fn long_code_becomes_several_fenced_sections() {
    let code = (0..500)
        .map(|i| format!("echo {i} && true"))
        .collect::<Vec<_>>()
        .join("\n");
    let blocks = render(&Card {
        blocks: vec![Block::Code {
            language: Some("sh".into()),
            text: code,
        }],
    });
    assert_within_limits(&blocks);
    let sections = section_texts(&blocks);
    assert!(sections.len() > 1);
    for s in &sections {
        assert!(s.starts_with("```\n") && s.ends_with("\n```"), "{s}");
        assert!(s.contains("&amp;&amp;"), "code is escaped too");
    }
}

#[test]
fn eighty_blocks_become_fifty_with_a_note() {
    let card = Card {
        blocks: (0..80)
            .map(|i| paragraph(&format!("paragraph {i}")))
            .collect(),
    };
    let blocks = render(&card);
    assert_within_limits(&blocks);
    let blocks = blocks.as_array().unwrap();
    assert_eq!(blocks.len(), 50);
    assert_eq!(blocks[48]["text"]["text"], "paragraph 48");
    assert_eq!(blocks[49]["type"], "context");
    assert_eq!(
        blocks[49]["elements"][0]["text"],
        "… (truncated: 31 more blocks)"
    );
}

#[test]
fn a_cut_card_keeps_its_buttons() {
    let mut card = Card {
        blocks: (0..80).map(|i| paragraph(&format!("line {i}"))).collect(),
    };
    card.blocks.push(one_button(
        "Approve once",
        approval("ib_1", ApprovalChoice::Once),
        ButtonStyle::Primary,
    ));
    let blocks = render(&card);
    assert_within_limits(&blocks);
    let blocks = blocks.as_array().unwrap();
    assert_eq!(blocks.len(), 50);
    assert_eq!(
        blocks[48]["elements"][0]["text"],
        "… (truncated: 32 more blocks)"
    );
    assert_eq!(blocks[49]["type"], "actions");
    assert_eq!(blocks[49]["elements"][0]["action_id"], "wm:0");
}

#[test]
fn mrkdwn_control_characters_are_escaped() {
    let card = Card {
        blocks: vec![
            paragraph("<!channel> Tom & Jerry <@U123> a>b"),
            Block::Context(vec![Inline::Bold("<b>".into())]),
            Block::Text(RichText(vec![Inline::Link {
                text: "everyone".into(),
                url: "!here".into(),
            }])),
        ],
    };
    let blocks = render(&card);
    assert_within_limits(&blocks);
    assert_eq!(
        blocks[0]["text"]["text"],
        "&lt;!channel&gt; Tom &amp; Jerry &lt;@U123&gt; a&gt;b"
    );
    assert_eq!(blocks[1]["elements"][0]["text"], "*&lt;b&gt;*");
    assert_eq!(
        blocks[2]["text"]["text"], "everyone (!here)",
        "a link to a non-web target is not a link"
    );
    assert_eq!(
        fallback_text(&card),
        "&lt;!channel&gt; Tom &amp; Jerry &lt;@U123&gt; a&gt;b\n&lt;b&gt;\neveryone"
    );
}

#[test]
fn labels_headers_fields_and_buttons_are_cut_to_slack_limits() {
    let buttons = long_label_buttons(30);
    let card = Card {
        blocks: vec![
            Block::Heading {
                text: "h".repeat(200),
            },
            Block::Fields(
                (0..23)
                    .map(|i| (format!("k{i}"), "v".repeat(3_000)))
                    .collect(),
            ),
            Block::Actions(buttons),
        ],
    };
    let blocks = render(&card);
    assert_within_limits(&blocks);
    let blocks = blocks.as_array().unwrap();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "header", "section", "section", "section", "actions", "actions"
        ]
    );
    assert_eq!(chars(&blocks[0]["text"]["text"]), 150);
    assert!(blocks[0]["text"]["text"].as_str().unwrap().ends_with('…'));
    assert_eq!(blocks[3]["fields"].as_array().unwrap().len(), 3);
    assert_eq!(blocks[4]["elements"].as_array().unwrap().len(), 25);
    assert_eq!(blocks[5]["elements"][4]["action_id"], "wm:29");
    assert!(blocks[4]["elements"][0].get("style").is_none());
    assert_eq!(
        fallback_text(&card).chars().count(),
        3_000,
        "the fallback is cut"
    );
}

#[test]
fn a_button_value_round_trips() {
    let action = answer("019a7c3e-5f1b-7c2d-9e4f-0a1b2c3d4e5f", "#ops & <#deploys>");
    let card = Card {
        blocks: vec![one_button("#ops", action.clone(), ButtonStyle::Danger)],
    };
    let blocks = render(&card);
    assert_within_limits(&blocks);
    let button = &blocks[0]["elements"][0];
    assert_eq!(button["style"], "danger");
    assert_eq!(button["action_id"], "wm:0");
    assert_eq!(
        decode_button_value(button["value"].as_str().unwrap()).unwrap(),
        action
    );
    assert!(decode_button_value("approve").is_err());
    assert!(decode_button_value(r#"{"type":"launch"}"#).is_err());
}

#[test]
fn a_stop_button_value_fits_and_round_trips() {
    // Minted ids are UUIDv7 text, the longest ids workmate puts in a Stop button.
    let action = ButtonAction::Stop {
        session_id: SessionId::new(),
        turn_id: TurnId::new(),
    };
    let card = Card {
        blocks: vec![one_button("Stop", action.clone(), ButtonStyle::Danger)],
    };
    let blocks = render(&card);
    assert_within_limits(&blocks);
    let button = &blocks[0]["elements"][0];
    assert_eq!(button["style"], "danger");
    assert_eq!(button["text"]["text"], "Stop");
    let value = button["value"].as_str().unwrap();
    assert!(
        value.chars().count() < MAX_BUTTON_VALUE_CHARS / 10,
        "{value} leaves plenty of room"
    );
    assert_eq!(decode_button_value(value).unwrap(), action);
    assert!(decode_button_value(r#"{"type":"stop","session_id":"s_1"}"#).is_err());
}

#[test]
fn empty_blocks_are_left_out() {
    let card = empty_blocks_card();
    assert_eq!(render(&card), serde_json::json!([]));
    assert_eq!(fallback_text(&card), "");
}

proptest::proptest! {
    /// Any markdown a model writes, at any length, renders within Slack's limits.
    #[test]
    fn any_markdown_renders_within_limits(
        md in "([#>*_`~|\\[\\]()<>&!@ \n-]|[a-z]{1,12}|https://x\\.io/[a-z]{0,5}|```\n){0,400}",
        repeat in 1usize..40,
    ) {
        let card = Card { blocks: workmate_cards::markdown_to_blocks(&md.repeat(repeat)) };
        assert_within_limits(&render(&card));
        proptest::prop_assert!(fallback_text(&card).chars().count() <= 3_000);
    }

    /// Any text, cut anywhere, keeps every visible character and never splits an entity.
    #[test]
    fn long_text_is_split_without_loss(text in "[a-z<>& \n]{0,200}", repeat in 1usize..100) {
        let text = text.repeat(repeat);
        let blocks = render(&Card { blocks: vec![paragraph(&text)] });
        assert_within_limits(&blocks);
        let joined = section_texts(&blocks).join("\n");
        let back = joined.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
        let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        proptest::prop_assert_eq!(visible(&back), visible(&text));
        proptest::prop_assert!(!joined.replace("&lt;", "").replace("&gt;", "").replace("&amp;", "").contains(['<', '>', '&']));
    }
}
