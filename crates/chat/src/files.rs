//! Files shared into a thread become attachments of the message they came with, fetched
//! through the platform's file API.
//!
//! Invariants: a file is fetched only when its message reaches the engine (after the delivery
//! is durable and acknowledged, so a slow download never delays an acknowledgement); a file
//! that cannot be fetched or read is never dropped silently: the message goes on with a note
//! the model sees, naming the file and why; no file larger than [`MAX_FILE_BYTES`] is fetched
//! whole.

use base64::Engine as _;
use workmate_adapter::{AdapterError, Downloaded, InboundFile, with_retry};
use workmate_protocol::{Attachment, AttachmentKind};

use crate::handle::Slot;

/// The largest file fetched (larger ones are refused by the platform's download).
pub(crate) const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// The most files of one message fetched (the engine takes at most eight attachments).
const MAX_FILES: usize = 8;

/// The most characters of a text file kept.
const MAX_TEXT_CHARS: usize = 200_000;

/// What the files of a message came to: attachments, and a note for each that could not be
/// used.
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    pub(crate) attachments: Vec<Attachment>,
    pub(crate) notes: Vec<String>,
}

/// Fetches and converts the files of one message.
pub(crate) async fn fetch(slot: &Slot, files: &[InboundFile]) -> Fetched {
    let mut fetched = Fetched::default();
    for (n, file) in files.iter().enumerate() {
        if n >= MAX_FILES {
            fetched.notes.push(format!(
                "[{} more shared files were not read: at most {MAX_FILES} files per message]",
                files.len() - MAX_FILES
            ));
            break;
        }
        if file.size.is_some_and(|size| size > MAX_FILE_BYTES) {
            fetched.notes.push(too_large(&file.name));
            continue;
        }
        match fetch_one(slot, file).await {
            Ok(attachment) => fetched.attachments.push(attachment),
            Err(note) => {
                tracing::info!(file = %file.name, note = %note, "A shared file was not attached.");
                fetched.notes.push(note);
            }
        }
    }
    fetched
}

/// Why a download failed, in words for the person who shared the file.
fn reason(error: &AdapterError) -> String {
    match error {
        AdapterError::Rejected(why) => why.clone(),
        AdapterError::Transient(why) => format!("the platform could not be reached ({why})"),
        AdapterError::RateLimited { .. } => {
            "the platform kept refusing downloads for now (rate limited)".to_owned()
        }
        other => other.to_string(),
    }
}

/// One file as an attachment, or the note saying why it is not one. A file whose type is
/// unknown until it arrives (no type given, a name without a known extension) is fetched and
/// typed by what the platform answers with; one of a known type workmate cannot read is not
/// fetched at all.
async fn fetch_one(slot: &Slot, file: &InboundFile) -> Result<Attachment, String> {
    let not_read = |file: &InboundFile| {
        format!(
            "[Shared file {} was not read: workmate reads images, PDFs, Word and Excel files \
             and text files, and this is {}]",
            file.name,
            file.mime.as_deref().unwrap_or("another kind of file")
        )
    };
    let could_not = |why: String| format!("[Shared file {} could not be read: {why}]", file.name);
    let known_unreadable = file.mime.is_some() && kind_of(file).is_none();
    if known_unreadable && !file.handle.is_empty() {
        return Err(not_read(file));
    }
    let downloaded = with_retry(&slot.retry, || slot.platform.download(file, MAX_FILE_BYTES))
        .await
        .map_err(|e| could_not(reason(&e)))?;
    let file = learned(file, &downloaded);
    let Some(kind) = kind_of(&file) else {
        return Err(not_read(&file));
    };
    attachment(&file, kind, downloaded.bytes).map_err(could_not)
}

/// The file as its download describes it: the name and type the platform answered with, where
/// the message gave none.
fn learned(file: &InboundFile, downloaded: &Downloaded) -> InboundFile {
    let mut file = file.clone();
    let has_extension = file
        .name
        .rsplit_once('.')
        .is_some_and(|(_, e)| !e.is_empty());
    if let Some(name) = downloaded.file_name.as_ref().filter(|_| !has_extension) {
        file.name.clone_from(name);
    }
    let vague = file
        .mime
        .as_deref()
        .is_none_or(|m| m.ends_with("/*") || m == "application/octet-stream");
    let given = downloaded
        .content_type
        .as_deref()
        .map(|t| t.split(';').next().unwrap_or(t).trim())
        .filter(|t| !t.is_empty() && *t != "application/octet-stream");
    if vague && let Some(given) = given {
        file.mime = Some(given.to_owned());
    }
    file
}

fn too_large(name: &str) -> String {
    format!(
        "[Shared file {name} was not read: it is larger than {} MB]",
        MAX_FILE_BYTES / 1024 / 1024
    )
}

/// How a file is passed to the model, from its MIME type or, failing that, its name.
fn kind_of(file: &InboundFile) -> Option<AttachmentKind> {
    let mime = mime_of(file);
    let kind = match mime.as_str() {
        m if m.starts_with("image/") => AttachmentKind::Image,
        "application/pdf" => AttachmentKind::Pdf,
        DOCX | XLSX => AttachmentKind::Document,
        m if m.starts_with("text/") || TEXT_TYPES.contains(&m) => AttachmentKind::Text,
        _ => return None,
    };
    Some(kind)
}

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const TEXT_TYPES: [&str; 6] = [
    "application/json",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/sql",
];

/// The file's MIME type: the platform's when it is specific, else from the name's extension.
fn mime_of(file: &InboundFile) -> String {
    let given = file
        .mime
        .as_deref()
        .map(|m| m.split(';').next().unwrap_or(m).trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty() && m != "application/octet-stream");
    if let Some(mime) = given {
        return mime;
    }
    let extension = file
        .name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "docx" => DOCX,
        "xlsx" => XLSX,
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "sql" => "application/sql",
        "txt" | "md" | "csv" | "tsv" | "log" | "rs" | "py" | "js" | "ts" | "go" | "java" | "c"
        | "h" | "cpp" | "sh" | "html" | "css" | "ini" | "conf" => "text/plain",
        _ => "application/octet-stream",
    }
    .to_owned()
}

/// The attachment of a fetched file.
fn attachment(
    file: &InboundFile,
    kind: AttachmentKind,
    bytes: Vec<u8>,
) -> Result<Attachment, String> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
        return Err(format!(
            "it is larger than {} MB",
            MAX_FILE_BYTES / 1024 / 1024
        ));
    }
    if bytes.is_empty() {
        return Err("the platform returned an empty file".into());
    }
    let mut mime = mime_of(file);
    match kind {
        // What the bytes are, not what the platform called them (an image's type is often
        // unknown until it is fetched).
        AttachmentKind::Image => {
            mime = image_type(&bytes)
                .ok_or_else(|| {
                    "it is an image in a format models do not read (PNG, JPEG, GIF and WebP are \
                     read)"
                        .to_owned()
                })?
                .to_owned();
        }
        AttachmentKind::Pdf if !bytes.starts_with(b"%PDF-") => {
            return Err("it is not a PDF file".into());
        }
        _ => {}
    }
    let data = match kind {
        AttachmentKind::Text => {
            let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())?;
            match text.char_indices().nth(MAX_TEXT_CHARS) {
                Some((cut, _)) => format!(
                    "{}\n[… cut: the file is longer than {MAX_TEXT_CHARS} characters]",
                    &text[..cut]
                ),
                None => text,
            }
        }
        _ => format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        ),
    };
    Ok(Attachment {
        kind,
        name: file.name.clone(),
        mime,
        data,
    })
}

/// The type of an image from its first bytes: the formats models read.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, mime: Option<&str>) -> InboundFile {
        InboundFile {
            mime: mime.map(str::to_owned),
            ..InboundFile::new(name, "h")
        }
    }

    #[test]
    fn kinds_come_from_the_type_or_the_name() {
        assert_eq!(kind_of(&file("a.pdf", None)), Some(AttachmentKind::Pdf));
        assert_eq!(
            kind_of(&file("scan", Some("image/png"))),
            Some(AttachmentKind::Image)
        );
        assert_eq!(
            kind_of(&file("q3.xlsx", Some("application/octet-stream"))),
            Some(AttachmentKind::Document)
        );
        assert_eq!(kind_of(&file("notes.md", None)), Some(AttachmentKind::Text));
        assert_eq!(kind_of(&file("talk.key", None)), None);
        assert_eq!(kind_of(&file("x", Some("video/mp4"))), None);
    }

    #[test]
    fn attachments_are_data_urls_or_text() {
        let pdf = attachment(
            &file("a.pdf", None),
            AttachmentKind::Pdf,
            b"%PDF-1.4".to_vec(),
        )
        .unwrap();
        assert!(pdf.data.starts_with("data:application/pdf;base64,"));
        let text = attachment(
            &file("a.txt", None),
            AttachmentKind::Text,
            b"hello".to_vec(),
        )
        .unwrap();
        assert_eq!(text.data, "hello");
        let binary = attachment(&file("a.txt", None), AttachmentKind::Text, vec![0xff, 0xfe]);
        assert_eq!(binary.unwrap_err(), "it is not UTF-8 text");
        assert!(attachment(&file("a.pdf", None), AttachmentKind::Pdf, Vec::new()).is_err());
        let not_pdf = attachment(
            &file("a.pdf", None),
            AttachmentKind::Pdf,
            b"{\"code\":1}".to_vec(),
        );
        assert_eq!(not_pdf.unwrap_err(), "it is not a PDF file");
        // An image's type comes from its bytes.
        let png = b"\x89PNG\r\n\x1a\n0000".to_vec();
        let image =
            attachment(&file("image", Some("image/*")), AttachmentKind::Image, png).unwrap();
        assert!(
            image.data.starts_with("data:image/png;base64,"),
            "{}",
            image.data
        );
        assert_eq!(image.mime, "image/png");
        let heic = attachment(
            &file("x.heic", Some("image/heic")),
            AttachmentKind::Image,
            b"....ftypheic".to_vec(),
        );
        assert!(heic.unwrap_err().contains("PNG, JPEG, GIF and WebP"));
    }
}
