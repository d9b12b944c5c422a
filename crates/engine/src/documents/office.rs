//! The text of Office documents: a Word document's paragraphs, a workbook's sheets as rows of
//! tab-separated cells. Both are zip archives of XML parts; only the parts that hold text are read.

use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::{BytesRef, Event};

/// Largest XML part read from an archive (a bigger one is cut, not read whole).
const MAX_PART_BYTES: u64 = 32 * 1024 * 1024;
/// Most sheets of a workbook read.
const MAX_SHEETS: usize = 50;

/// Which kind of Office document an archive holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Office {
    /// A Word document (`.docx`).
    Word,
    /// An Excel workbook (`.xlsx`).
    Workbook,
}

/// The text of the Office document in `bytes`, or `None` when it is not one or holds none.
pub(crate) fn office_text(bytes: &[u8]) -> Option<(Office, String)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
    if let Some(xml) = part(&mut archive, "word/document.xml") {
        return Some((Office::Word, word_text(&xml)));
    }
    let shared = part(&mut archive, "xl/sharedStrings.xml")
        .map(|xml| shared_strings(&xml))
        .unwrap_or_default();
    let names = part(&mut archive, "xl/workbook.xml")
        .map(|xml| sheet_names(&xml))
        .unwrap_or_default();
    let mut out = String::new();
    for n in 1..=MAX_SHEETS {
        let Some(xml) = part(&mut archive, &format!("xl/worksheets/sheet{n}.xml")) else {
            break;
        };
        let name = names
            .get(n - 1)
            .cloned()
            .unwrap_or_else(|| format!("Sheet{n}"));
        out.push_str(&format!("## Sheet: {name}\n"));
        out.push_str(&sheet_rows(&xml, &shared));
        out.push('\n');
    }
    (!out.is_empty()).then_some((Office::Workbook, out))
}

fn part<R: std::io::Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
) -> Option<String> {
    let file = archive.by_name(name).ok()?;
    let mut text = String::new();
    file.take(MAX_PART_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The character a reference such as `&amp;` or `&#233;` stands for.
fn reference(r: &BytesRef<'_>) -> Option<String> {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return Some(c.to_string());
    }
    quick_xml::escape::resolve_predefined_entity(&r.xml10_content()).map(str::to_owned)
}

/// The local name of an element (`w:p` → `p`).
fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// A Word document's paragraphs, one per line (tabs and breaks kept).
fn word_text(xml: &str) -> String {
    let mut reader = Reader::from_str(xml);
    let mut out = String::new();
    let mut in_text = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if local(e.name().as_ref()) == "t" => in_text = true,
            Ok(Event::End(e)) => match local(e.name().as_ref()) {
                "t" => in_text = false,
                "p" => out.push('\n'),
                _ => {}
            },
            Ok(Event::Empty(e)) => match local(e.name().as_ref()) {
                "tab" => out.push('\t'),
                "br" | "cr" => out.push('\n'),
                _ => {}
            },
            Ok(Event::Text(t)) if in_text => out.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if in_text => out.push_str(&reference(&r).unwrap_or_default()),
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// The texts of the elements named `t` inside each element named `item`, one per item.
fn texts_of(xml: &str, item: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let (mut all, mut current, mut in_item, mut in_text) =
        (Vec::new(), String::new(), false, false);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => match local(e.name().as_ref()) {
                name if name == item => {
                    in_item = true;
                    current.clear();
                }
                "t" => in_text = in_item,
                _ => {}
            },
            Ok(Event::End(e)) => match local(e.name().as_ref()) {
                name if name == item => {
                    in_item = false;
                    all.push(std::mem::take(&mut current));
                }
                "t" => in_text = false,
                _ => {}
            },
            Ok(Event::Text(t)) if in_text => current.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if in_text => {
                current.push_str(&reference(&r).unwrap_or_default());
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    all
}

/// A workbook's shared strings, by index.
fn shared_strings(xml: &str) -> Vec<String> {
    texts_of(xml, "si")
}

/// A workbook's sheet names, in order.
fn sheet_names(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let mut names = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Empty(e) | Event::Start(e)) if local(e.name().as_ref()) == "sheet" => {
                if let Some(name) = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.as_ref() == "name")
                    .and_then(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .ok()
                            .map(std::borrow::Cow::into_owned)
                    })
                {
                    names.push(name);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    names
}

/// A sheet's rows, its cells separated by tabs (shared strings looked up, inline strings and
/// values as written).
fn sheet_rows(xml: &str, shared: &[String]) -> String {
    let mut reader = Reader::from_str(xml);
    let (mut out, mut row) = (String::new(), Vec::<String>::new());
    let (mut kind, mut value, mut in_value) = (String::new(), String::new(), false);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => match local(e.name().as_ref()) {
                "c" => {
                    kind = e
                        .attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == "t")
                        .map(|a| a.value.into_owned())
                        .unwrap_or_default();
                    value.clear();
                }
                "v" | "t" => in_value = true,
                _ => {}
            },
            Ok(Event::End(e)) => match local(e.name().as_ref()) {
                "v" | "t" => in_value = false,
                "c" => {
                    let cell = if kind == "s" {
                        value
                            .trim()
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| shared.get(i).cloned())
                            .unwrap_or_default()
                    } else {
                        value.clone()
                    };
                    row.push(cell.replace(['\t', '\n'], " "));
                }
                "row" => {
                    out.push_str(&row.join("\t"));
                    out.push('\n');
                    row.clear();
                }
                _ => {}
            },
            Ok(Event::Text(t)) if in_value => value.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if in_value => {
                value.push_str(&reference(&r).unwrap_or_default());
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn archive(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, body) in parts {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_word_documents_paragraphs_are_its_lines() {
        let doc = archive(&[(
            "word/document.xml",
            r#"<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>Q3 plan</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Costs &amp; </w:t></w:r><w:r><w:tab/><w:t>risks</w:t></w:r></w:p></w:body></w:document>"#,
        )]);
        let (kind, text) = office_text(&doc).unwrap();
        assert_eq!(kind, Office::Word);
        assert_eq!(text, "Q3 plan\nCosts & \trisks\n");
    }

    #[test]
    fn a_workbooks_sheets_are_rows_of_cells() {
        let book = archive(&[
            (
                "xl/workbook.xml",
                r#"<workbook><sheets><sheet name="Revenue" sheetId="1"/></sheets></workbook>"#,
            ),
            (
                "xl/sharedStrings.xml",
                r#"<sst><si><t>Region</t></si><si><t>EMEA &amp; UK</t></si></sst>"#,
            ),
            (
                "xl/worksheets/sheet1.xml",
                r#"<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>Total</t></is></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>4200000</v></c></row></sheetData></worksheet>"#,
            ),
        ]);
        let (kind, text) = office_text(&book).unwrap();
        assert_eq!(kind, Office::Workbook);
        assert_eq!(
            text,
            "## Sheet: Revenue\nRegion\tTotal\nEMEA & UK\t4200000\n\n"
        );
    }

    #[test]
    fn what_is_not_an_office_document_has_no_text() {
        assert_eq!(office_text(b"not a zip"), None);
        assert_eq!(office_text(&archive(&[("readme.txt", "hi")])), None);
    }
}
