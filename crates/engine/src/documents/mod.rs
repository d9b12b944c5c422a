//! Text from attached documents, for models that cannot read them.
//!
//! Invariants: a document is read once, when its message arrives (never per model call), on a
//! blocking thread, and a document the parser cannot read (or that makes it panic) yields no text,
//! never a failed message; the text kept is capped, and what a model is sent says it was extracted
//! (and where it was cut), so nobody mistakes it for the document itself.

mod office;

use base64::Engine as _;

/// Longest text kept from one document (about 15,000 tokens).
pub(crate) const EXTRACTED_CHARS: usize = 60_000;
/// Largest document read (its decoded bytes).
const MAX_DOCUMENT_BYTES: usize = 25 * 1024 * 1024;

/// The text of the PDF in `data_url` (`data:application/pdf;base64,…`), capped, or `None` when
/// it has none that can be read.
pub(crate) async fn pdf_text(data_url: String) -> Option<String> {
    tokio::task::spawn_blocking(move || extract(&data_url))
        .await
        .ok()
        .flatten()
}

/// The text of the Word document or workbook in `data_url`, as a model is sent it in place of
/// the file named `filename`, or `None` when none can be read.
pub(crate) async fn office_part(filename: String, data_url: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        let bytes = decoded(&data_url)?;
        let read = std::panic::catch_unwind(|| office::office_text(&bytes)).ok()??;
        let (kind, text) = read;
        let text = tidy(&text);
        if text.is_empty() {
            return None;
        }
        let what = match kind {
            office::Office::Word => "Word document",
            office::Office::Workbook => "workbook (one tab-separated row per line)",
        };
        Some(marked(&format!("the {what} {filename}"), &cap(text)))
    })
    .await
    .ok()
    .flatten()
}

/// The bytes of a base64 data URL, unless it is too large to read.
fn decoded(data_url: &str) -> Option<Vec<u8>> {
    let (_, encoded) = data_url.split_once(";base64,")?;
    if encoded.len() / 4 * 3 > MAX_DOCUMENT_BYTES {
        tracing::info!("An attached document is too large to extract its text.");
        return None;
    }
    base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
}

fn extract(data_url: &str) -> Option<String> {
    let bytes = decoded(data_url)?;
    // The parser panics on some malformed files: a panic is a document without text.
    let parsed = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&bytes));
    let text = match parsed {
        Ok(Ok(text)) => text,
        Ok(Err(error)) => {
            tracing::info!(error = %error, "No text could be extracted from a PDF attachment.");
            return None;
        }
        Err(_) => {
            tracing::warn!("The PDF parser failed on an attachment; it is sent without its text.");
            return None;
        }
    };
    let text = tidy(&text);
    (!text.is_empty()).then(|| cap(text))
}

/// `text` with runs of blank lines and trailing spaces removed.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

fn cap(text: String) -> String {
    match text.char_indices().nth(EXTRACTED_CHARS) {
        Some((end, _)) => text[..end].to_owned(),
        None => text,
    }
}

/// What a model that cannot read PDFs is sent for the attachment `filename` with `text`.
pub(crate) fn as_text_part(filename: &str, text: &str) -> String {
    marked(&format!("the PDF attachment {filename}"), text)
}

/// `text` headed by a line saying it was extracted from `what` (and where it was cut).
fn marked(what: &str, text: &str) -> String {
    let cut = if text.chars().count() >= EXTRACTED_CHARS {
        format!(", cut at {EXTRACTED_CHARS} characters")
    } else {
        String::new()
    };
    format!(
        "[Text extracted by workmate from {what}{cut}; its layout, images and tables may be \
         lost]\n{text}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-page PDF saying "Q3 revenue grew 12 percent to 4.2 million".
    pub(crate) const Q3_PDF: &[u8] = include_bytes!("../../tests/fixtures/q3-revenue.pdf");

    fn data_url(bytes: &[u8]) -> String {
        format!(
            "data:application/pdf;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }

    #[test]
    fn a_pdfs_text_is_extracted_and_garbage_yields_none() {
        let text = extract(&data_url(Q3_PDF)).unwrap();
        assert!(
            text.contains("Q3 revenue grew 12 percent to 4.2 million"),
            "{text:?}"
        );
        assert_eq!(extract(&data_url(b"%PDF-1.4 not really")), None);
        assert_eq!(extract("data:application/pdf;base64,!!!"), None);
        assert_eq!(extract("no data url"), None);
    }

    #[test]
    fn long_text_is_capped_and_says_so() {
        let long = cap("x".repeat(EXTRACTED_CHARS + 10));
        assert_eq!(long.chars().count(), EXTRACTED_CHARS);
        assert!(as_text_part("r.pdf", &long).contains("cut at 60000 characters"));
        assert!(!as_text_part("r.pdf", "short").contains("cut at"));
        assert_eq!(tidy("a  \n\n\n\nb\n"), "a\n\nb");
    }
}
