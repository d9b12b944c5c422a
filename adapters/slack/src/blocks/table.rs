//! Tables as monospace text: Block Kit's message surfaces have no table block that every
//! client shows, and a code block keeps the columns aligned.
//!
//! Invariant: every row has as many cells as the widest row or the header, each cell is one line
//! of at most [`CELL_CHARS`] chars, and columns are padded to a common width (in `char`s; wide
//! CJK glyphs may still drift, which a monospace font cannot fix).

// Cells are cut before escaping, so a plain cut: the entity-aware one would drop everything
// after a bare `&`.
use workmate_cards::text::{one_line, truncate};

/// The widest cell shown, in chars; longer ones end in `…`.
const CELL_CHARS: usize = 40;

/// The table as aligned lines: header, a rule, then the rows. Not escaped.
pub(crate) fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let columns = rows
        .iter()
        .map(Vec::len)
        .chain(std::iter::once(header.len()))
        .max()
        .unwrap_or(0);
    if columns == 0 {
        return String::new();
    }
    let clean = |row: &[String]| -> Vec<String> {
        (0..columns)
            .map(|i| {
                let cell = row.get(i).map_or("", String::as_str);
                truncate(&one_line(cell), CELL_CHARS)
            })
            .collect()
    };
    let header = (!header.is_empty()).then(|| clean(header));
    let rows: Vec<Vec<String>> = rows.iter().map(|r| clean(r)).collect();
    let mut widths = vec![0; columns];
    for row in header.iter().chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |row: &[String]| -> String {
        let mut cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &width)| format!("{cell:<width$}"))
            .collect();
        // Short rows end where their text ends, not in a run of empty columns.
        while cells.last().is_some_and(|c| c.trim().is_empty()) {
            cells.pop();
        }
        cells.join(" | ").trim_end().to_owned()
    };
    let mut lines = Vec::with_capacity(rows.len() + 2);
    if let Some(header) = &header {
        lines.push(line(header));
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w.max(1))).collect();
        lines.push(rule.join("-+-"));
    }
    lines.extend(rows.iter().map(|r| line(r)));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn pads_ragged_rows_and_cuts_long_cells() {
        let header = strings(&["Service", "Run"]);
        let rows = vec![
            strings(&["api", "4812", "extra"]),
            strings(&["web"]),
            vec!["x".repeat(50)],
        ];
        let text = render(&header, &rows);
        let long = format!("{}…", "x".repeat(39));
        assert_eq!(
            text,
            format!(
                "Service{pad} | Run\n{rule}-+------+------\napi{pad4} | 4812 | extra\nweb\n{long}",
                pad = " ".repeat(33),
                rule = "-".repeat(40),
                pad4 = " ".repeat(37),
            )
        );
        assert_eq!(render(&[], &[]), "");
    }

    #[test]
    fn a_long_cell_with_an_ampersand_keeps_its_text() {
        let rows = vec![strings(&[
            "Tom & Jerry and friends at the annual summer picnic",
        ])];
        let text = render(&[], &rows);
        assert!(text.starts_with("Tom & Jerry and friends"), "{text}");
        assert!(text.ends_with('…'));
        assert_eq!(text.chars().count(), CELL_CHARS);
    }
}
