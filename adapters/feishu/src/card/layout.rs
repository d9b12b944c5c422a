//! Fitting the pieces into one card: the element cap, the byte budget, and element ids.
//!
//! Invariants: the card has at most [`MAX_ELEMENTS`] elements and its compact JSON at most
//! [`MAX_CARD_BYTES`] bytes. Button rows are never cut or dropped. To fit, text and tables are cut
//! first, evenly from the top (every piece longer than a common cap is cut to it, so short
//! pieces such as a status line stay whole); only when even that is not enough are the last
//! pieces dropped, and a note takes the place of the first one dropped. Element ids depend only
//! on position: `e<n>` for the n-th body element that is not a button row, `r<k>` for the k-th
//! button row, `r<k>c<j>` for its columns and `b<n>` for the n-th button of the card.

use serde_json::{Map, Value, json};

use super::blocks::{Piece, note};
use super::text::{json_size, plural};
use super::{MAX_CARD_BYTES, MAX_ELEMENTS};

/// What the card shows besides its body.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) title: Option<String>,
    pub(crate) summary: String,
    pub(crate) streaming: bool,
}

/// A piece, measured whole.
#[derive(Debug)]
struct Measured<'a> {
    piece: &'a Piece,
    whole: Value,
    size: usize,
}

impl Measured<'_> {
    /// The element, cut to `cap` bytes when it is longer and can be cut.
    fn at(&self, cap: usize) -> Value {
        match self.piece {
            Piece::Markdown(md) if self.size > cap => md.cut(cap),
            Piece::Table(table) if self.size > cap => table.element(Some(cap)),
            _ => self.whole.clone(),
        }
    }

    fn is_buttons(&self) -> bool {
        matches!(self.piece, Piece::Buttons(_))
    }
}

/// The card: `frame` around `pieces`, within every limit.
pub(crate) fn card(frame: &Frame, pieces: &[Piece]) -> Value {
    let measured: Vec<Measured<'_>> = pieces
        .iter()
        .map(|piece| {
            let whole = match piece {
                Piece::Markdown(md) => md.element(),
                Piece::Table(table) => table.element(None),
                Piece::Fixed(value) => value.clone(),
                Piece::Buttons(row) => row.element(),
            };
            let size = json_size(&whole);
            Measured { piece, whole, size }
        })
        .collect();
    let button_nodes: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Buttons(row) => row.nodes(),
            _ => 0,
        })
        .sum();
    let others = measured.iter().filter(|m| !m.is_buttons()).count();
    let most = if button_nodes + others <= MAX_ELEMENTS {
        others
    } else {
        // One element is the note saying how many were dropped.
        MAX_ELEMENTS.saturating_sub(button_nodes + 1)
    };
    let widest = measured.iter().map(|m| m.size).max().unwrap_or(0);
    let whole = assemble(frame, &measured, most, widest);
    if fits(&whole) {
        return whole;
    }
    // The most pieces that fit once every cuttable one is cut to its shortest form. Keeping
    // none always fits: buttons are bounded well under the budget.
    let keep = (0..=most)
        .rev()
        .find(|&keep| fits(&assemble(frame, &measured, keep, 0)))
        .unwrap_or(0);
    // The largest common cap that fits; `lo` always fits.
    let (mut lo, mut hi) = (0, widest);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&assemble(frame, &measured, keep, mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    assemble(frame, &measured, keep, lo)
}

fn fits(card: &Value) -> bool {
    json_size(card) <= MAX_CARD_BYTES
}

/// The card with the first `keep` pieces that are not buttons (and every button row), each cut
/// to `cap` bytes.
fn assemble(frame: &Frame, measured: &[Measured<'_>], keep: usize, cap: usize) -> Value {
    let mut elements = Vec::with_capacity(measured.len());
    let dropped = (measured.iter().filter(|m| !m.is_buttons()).count()).saturating_sub(keep);
    let mut seen = 0;
    for m in measured {
        if m.is_buttons() {
            elements.push(m.at(cap));
            continue;
        }
        seen += 1;
        if seen <= keep {
            elements.push(m.at(cap));
        } else if seen == keep + 1 {
            let text = format!("… {} not shown", plural(dropped, "more block"));
            elements.push(note(&text));
        }
    }
    let mut ids = Ids::default();
    let elements: Vec<Value> = elements.into_iter().map(|e| ids.assign(e)).collect();
    let mut card = Map::new();
    card.insert("schema".into(), "2.0".into());
    card.insert(
        "config".into(),
        json!({
            "update_multi": true,
            "streaming_mode": frame.streaming,
            "summary": { "content": frame.summary },
        }),
    );
    if let Some(title) = &frame.title {
        card.insert(
            "header".into(),
            json!({ "title": { "tag": "plain_text", "content": title } }),
        );
    }
    card.insert("body".into(), json!({ "elements": elements }));
    Value::Object(card)
}

/// Element ids by position.
#[derive(Debug, Default)]
struct Ids {
    elements: usize,
    rows: usize,
    buttons: usize,
}

impl Ids {
    /// `element` with its id (and its columns' and buttons' ids) second, after its tag.
    fn assign(&mut self, element: Value) -> Value {
        let Value::Object(fields) = element else {
            return element;
        };
        if fields.get("tag").and_then(Value::as_str) != Some("column_set") {
            let id = format!("e{}", self.elements);
            self.elements += 1;
            return with_id(fields, id);
        }
        let row = self.rows;
        self.rows += 1;
        let mut out = with_id(fields, format!("r{row}"));
        let columns = out.get_mut("columns").and_then(Value::as_array_mut);
        for (j, column) in columns.into_iter().flatten().enumerate() {
            let Value::Object(fields) = std::mem::take(column) else {
                continue;
            };
            *column = with_id(fields, format!("r{row}c{j}"));
            let buttons = column.get_mut("elements").and_then(Value::as_array_mut);
            for button in buttons.into_iter().flatten() {
                if let Value::Object(fields) = std::mem::take(button) {
                    *button = with_id(fields, format!("b{}", self.buttons));
                    self.buttons += 1;
                }
            }
        }
        out
    }
}

/// `fields` with `element_id` right after `tag`.
fn with_id(fields: Map<String, Value>, id: String) -> Value {
    let mut out = Map::with_capacity(fields.len() + 1);
    let mut fields = fields.into_iter();
    if let Some((key, value)) = fields.next() {
        out.insert(key, value);
    }
    out.insert("element_id".into(), id.into());
    out.extend(fields);
    Value::Object(out)
}
