//! Tables as Feishu's `table` component, with plain-text cells.
//!
//! Invariants: a table shows at most [`MAX_TABLE_COLUMNS`] columns and [`MAX_TABLE_ROWS`] rows of
//! one-line cells of at most [`MAX_CELL_CHARS`] characters; cells are `text` (Feishu shows them
//! as written, so they need no escaping). When rows or columns are left out, by these caps or to
//! fit the card's size, a last row says how many. The cap of five tables per card is the caller's
//! ([`super::MAX_TABLES`]); later tables are shown as code with [`as_code`].

use serde_json::{Map, Value, json};
use workmate_cards::text::truncate;

use super::markdown::{Markdown, Part};
use super::text::{json_size, one_line, plural};

/// Columns shown; a wider table gets a note.
pub const MAX_TABLE_COLUMNS: usize = 10;
/// Rows shown (Feishu pages them ten at a time); a longer table gets a note.
pub const MAX_TABLE_ROWS: usize = 50;
/// Characters of one cell; longer ones end in `…`.
pub const MAX_CELL_CHARS: usize = 100;
/// Rows per page, the most Feishu allows.
const PAGE_SIZE: usize = 10;

/// A table, already cut to the caps.
#[derive(Debug)]
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    hidden_rows: usize,
    hidden_columns: usize,
}

impl Table {
    /// The table, or `None` when it has no cell to show.
    pub(crate) fn new(header: &[String], rows: &[Vec<String>]) -> Option<Self> {
        let columns = rows
            .iter()
            .map(Vec::len)
            .chain([header.len()])
            .max()
            .unwrap_or(0);
        let cell = |row: &[String], i: usize| {
            truncate(
                &one_line(row.get(i).map_or("", String::as_str)),
                MAX_CELL_CHARS,
            )
        };
        let shown = columns.min(MAX_TABLE_COLUMNS);
        let header: Vec<String> = (0..shown).map(|i| cell(header, i)).collect();
        let kept: Vec<Vec<String>> = rows
            .iter()
            .take(MAX_TABLE_ROWS)
            .map(|row| (0..shown).map(|i| cell(row, i)).collect())
            .collect();
        let empty = |row: &Vec<String>| row.iter().all(String::is_empty);
        if empty(&header) && kept.iter().all(empty) {
            return None;
        }
        Some(Self {
            header,
            rows: kept,
            hidden_rows: rows.len().saturating_sub(MAX_TABLE_ROWS),
            hidden_columns: columns - shown,
        })
    }

    /// The component, whole; or, given `max_bytes`, with as many rows as fit in that many bytes
    /// of JSON (none at the least).
    pub(crate) fn element(&self, max_bytes: Option<usize>) -> Value {
        let Some(max) = max_bytes else {
            return self.with_rows(self.rows.len());
        };
        // Binary search for the most rows that fit; zero rows is the shortest form there is.
        let (mut lo, mut hi) = (0, self.rows.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if json_size(&self.with_rows(mid)) <= max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        self.with_rows(lo)
    }

    fn with_rows(&self, shown: usize) -> Value {
        let columns: Vec<Value> = self
            .header
            .iter()
            .enumerate()
            .map(|(i, title)| {
                json!({ "name": name(i), "display_name": title, "data_type": "text", "width": "auto" })
            })
            .collect();
        let mut rows: Vec<Value> = self.rows[..shown]
            .iter()
            .map(|row| {
                let cells: Map<String, Value> = row
                    .iter()
                    .enumerate()
                    .map(|(i, cell)| (name(i), Value::from(cell.as_str())))
                    .collect();
                Value::Object(cells)
            })
            .collect();
        let hidden_rows = self.hidden_rows + (self.rows.len() - shown);
        let mut left_out = Vec::new();
        if hidden_rows > 0 {
            left_out.push(plural(hidden_rows, "more row"));
        }
        if self.hidden_columns > 0 {
            left_out.push(plural(self.hidden_columns, "more column"));
        }
        if !left_out.is_empty() {
            let note = format!("… {} not shown", left_out.join(" and "));
            rows.push(json!({ name(0): note }));
        }
        json!({
            "tag": "table",
            "page_size": PAGE_SIZE,
            "row_height": "low",
            "header_style": { "bold": true, "background_style": "grey" },
            "columns": columns,
            "rows": rows,
        })
    }
}

/// A column's key in the rows.
fn name(i: usize) -> String {
    format!("c{i}")
}

/// A table as code, one row a line, cells between ` | `: for the tables past Feishu's limit of
/// tables per card. `None` when there is no cell to show.
pub(crate) fn as_code(header: &[String], rows: &[Vec<String>]) -> Option<Markdown> {
    let lines: Vec<String> = std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .map(|row| {
            let cells: Vec<String> = row.iter().map(|cell| one_line(cell)).collect();
            cells.join(" | ").trim_end().to_owned()
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(Markdown {
        parts: vec![Part::code("```\n", &lines.join("\n"), "\n```")],
        ..Markdown::default()
    })
}
