//! A card as a WeCom `template_card`: a prompt with buttons as `button_interaction`, anything
//! else (a resolved prompt, an outcome) as `text_notice`.
//!
//! Layout: `main_title.title` is the card's title (its first heading or all-bold line, else its
//! first line), `main_title.desc` the note above the title (a question's header), when the card
//! has both; the label and value rows go to `horizontal_content_list`; everything else is
//! `sub_title_text`, one line per line, and a `text_notice` starts it with the card's last note,
//! which is the outcome ("✅ Approved by Bob Li · once"). A title that had to be cut is repeated
//! whole at the top of the sub-title. A row label too long for a row, even in WeCom's shorter
//! wording ("Asked by"), goes whole on a sub-title line instead of being cut; a sub-title that
//! does not fit ends with how many lines were left out ("… 7 more lines").
//!
//! Invariants: every text is within the limits below (WeCom's suggested lengths, counted as
//! [`super::columns`]); at most [`MAX_HORIZONTAL_ROWS`] rows (further ones become sub-title
//! lines) and [`super::MAX_BUTTONS`] buttons; `main_title.title` is never empty; buttons that
//! could not be carried are counted in the sub-title's last line, which is never cut; the
//! `task_id` is the one given, so an update keeps it. A `text_notice` has the `card_action`
//! WeCom requires of it, of type 0 (no link).

use serde_json::{Map, Value, json};
use workmate_cards::Card;

use super::buttons::{button_list, left_out_note};
use super::parts::Parts;
use super::width::{columns, cut};

/// Columns of `main_title.title`: WeCom suggests at most 26 字.
pub const MAX_TITLE_COLUMNS: usize = 52;
/// Columns of `main_title.desc`: WeCom suggests at most 30 字.
pub const MAX_DESC_COLUMNS: usize = 60;
/// Columns of `sub_title_text`, line breaks counting one each: WeCom suggests at most 112 字.
pub const MAX_SUB_TITLE_COLUMNS: usize = 224;
/// Rows of `horizontal_content_list` (WeCom's limit is six).
pub const MAX_HORIZONTAL_ROWS: usize = 6;
/// Columns of a row's `keyname`: WeCom suggests at most 5 字.
pub const MAX_KEYNAME_COLUMNS: usize = 10;
/// Columns of a row's `value`: WeCom suggests at most 26 字.
pub const MAX_VALUE_COLUMNS: usize = 52;

/// The card as a `template_card` object with `task_id` (see the module docs).
pub fn template_card(card: &Card, task_id: &str) -> Value {
    let Parts {
        title,
        mut header,
        fields,
        mut body,
        mut notes,
        buttons,
    } = Parts::of(card);
    let (button_list, left_out) = button_list(&buttons);
    let interactive = !button_list.is_empty();

    let mut lines = Vec::new();
    let full_title = match title {
        Some(title) => title,
        None => header
            .take()
            .or_else(|| (!body.is_empty()).then(|| body.remove(0)))
            .or_else(|| (!notes.is_empty()).then(|| notes.remove(0)))
            .unwrap_or_default(),
    };
    let title = match cut(&full_title, MAX_TITLE_COLUMNS) {
        title if title.is_empty() => "…".to_owned(),
        title => {
            if title != full_title {
                lines.push(full_title);
            }
            title
        }
    };
    if !interactive && let Some(outcome) = notes.pop() {
        lines.push(outcome);
    }
    lines.append(&mut body);
    let mut rows = Vec::new();
    for (label, value) in fields {
        if label.is_empty() || rows.len() == MAX_HORIZONTAL_ROWS {
            lines.push(if label.is_empty() {
                value
            } else {
                format!("{label}: {value}")
            });
        } else {
            // A label too long for a row even in WeCom's words goes whole on a line instead.
            let label = short_label(&label);
            if columns(label) > MAX_KEYNAME_COLUMNS {
                lines.push(format!("{label}: {value}"));
                continue;
            }
            rows.push(json!({
                "keyname": label,
                "value": cut(&value, MAX_VALUE_COLUMNS),
            }));
        }
    }
    lines.append(&mut notes);

    let mut main_title = Map::new();
    main_title.insert("title".into(), title.into());
    if let Some(desc) = header {
        main_title.insert("desc".into(), cut(&desc, MAX_DESC_COLUMNS).into());
    }
    let mut out = Map::new();
    let card_type = if interactive {
        "button_interaction"
    } else {
        "text_notice"
    };
    out.insert("card_type".into(), card_type.into());
    out.insert("main_title".into(), main_title.into());
    let note = (left_out > 0).then(|| left_out_note(left_out));
    let sub_title = sub_title(&lines, note.as_deref());
    if !sub_title.is_empty() {
        out.insert("sub_title_text".into(), sub_title.into());
    }
    if !rows.is_empty() {
        out.insert("horizontal_content_list".into(), rows.into());
    }
    if interactive {
        out.insert("button_list".into(), button_list.into());
    } else {
        out.insert("card_action".into(), json!({ "type": 0 }));
    }
    out.insert("task_id".into(), task_id.into());
    out.into()
}

/// A row label in WeCom's shorter wording, where one is needed to fit a row.
fn short_label(label: &str) -> &str {
    match label {
        "Requested by" => "Asked by",
        other => other,
    }
}

/// The lines joined and cut to fit, saying how many lines were left out ("… 7 more lines"),
/// then `note` on a line of its own, whole.
fn sub_title(lines: &[String], note: Option<&str>) -> String {
    let text = lines.join("\n");
    let mut notes: Vec<String> = note.map(str::to_owned).into_iter().collect();
    let room = |notes: &[String]| {
        let taken: usize = notes.iter().map(|n| columns(n) + 1).sum();
        MAX_SUB_TITLE_COLUMNS.saturating_sub(taken)
    };
    if cut(&text, room(&notes)) != text {
        // Reserve room for the count first, then count what did not fit.
        let total = text.lines().count();
        notes.insert(0, more_lines(total));
        let head = cut(&text, room(&notes));
        let shown = head.lines().count() - usize::from(head.ends_with('…'));
        notes[0] = more_lines(total.saturating_sub(shown));
    }
    let head = cut(&text, room(&notes));
    let mut out: Vec<String> = Vec::new();
    if !head.is_empty() {
        out.push(head);
    }
    out.extend(notes);
    out.join("\n")
}

/// "… N more lines" (or "… 1 more line").
fn more_lines(n: usize) -> String {
    if n == 1 {
        "… 1 more line".to_owned()
    } else {
        format!("… {n} more lines")
    }
}
