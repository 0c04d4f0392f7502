//! The text of an attached file, for recall to search: PDF (its text layer), HTML (what a
//! reader sees: script and style dropped), Markdown (its words without the markup) and
//! plain text. Each by a kept library; levh only decides which one a file is.
//!
//! Files come from anyone who may attach (an agent included), so every format has a
//! bound: a PDF's streams may inflate to at most [`MAX_INFLATED_BYTES`], and the text kept
//! is cut at the caller's limit.

use std::fmt;

/// Most bytes a PDF's compressed streams may inflate to: a small file can otherwise expand
/// to gigabytes (a "zip bomb" in a content stream).
pub const MAX_INFLATED_BYTES: usize = 64 * 1024 * 1024;

/// What kind of file it is, as stored with the attachment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    /// `application/pdf`
    Pdf,
    /// `text/html`
    Html,
    /// `text/markdown`
    Markdown,
    /// `text/plain`
    Text,
}

impl MediaType {
    /// Its MIME name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pdf => "application/pdf",
            Self::Html => "text/html",
            Self::Markdown => "text/markdown",
            Self::Text => "text/plain",
        }
    }

    /// What `name` and the first bytes say the file is: a PDF by its signature whatever its
    /// name; HTML and Markdown by extension (or an HTML doctype); other UTF-8 as plain
    /// text. `None` for binary data levh cannot read text from.
    pub fn of(name: &str, bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"%PDF-") {
            return Some(Self::Pdf);
        }
        let extension = name
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .unwrap_or_default();
        let text = std::str::from_utf8(bytes).ok()?;
        let head = text
            .trim_start()
            .get(..15)
            .unwrap_or("")
            .to_ascii_lowercase();
        Some(match extension.as_str() {
            "html" | "htm" | "xhtml" => Self::Html,
            "md" | "markdown" | "mdown" => Self::Markdown,
            _ if head.starts_with("<!doctype html") || head.starts_with("<html") => Self::Html,
            _ => Self::Text,
        })
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why no text could be derived.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// Not a kind of file levh reads.
    #[error(
        "'{0}' is neither a PDF nor UTF-8 text (HTML, Markdown, plain text): no text can be derived from it"
    )]
    Unsupported(String),
    /// A PDF that does not parse.
    #[error("'{name}' is not a readable PDF: {why}")]
    BadPdf {
        /// The file.
        name: String,
        /// What the parser said.
        why: String,
    },
    /// A PDF with no text layer (a scan).
    #[error("'{0}' has no text layer (a scanned PDF?): nothing to search")]
    NoText(String),
}

/// A file's type and derived text.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// What it is.
    pub media_type: MediaType,
    /// Its text, whitespace tidied (no runs of blank lines).
    pub text: String,
}

/// The text of `bytes`, a file called `name`.
pub fn extract(name: &str, bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let media_type =
        MediaType::of(name, bytes).ok_or_else(|| ExtractError::Unsupported(name.to_owned()))?;
    let text = match media_type {
        MediaType::Pdf => pdf_text(name, bytes)?,
        // Valid UTF-8: checked by `MediaType::of`.
        MediaType::Html => html_text(std::str::from_utf8(bytes).unwrap_or_default()),
        MediaType::Markdown => markdown_text(std::str::from_utf8(bytes).unwrap_or_default()),
        MediaType::Text => std::str::from_utf8(bytes).unwrap_or_default().to_owned(),
    };
    let text = tidy(&text);
    if text.is_empty() && media_type == MediaType::Pdf {
        return Err(ExtractError::NoText(name.to_owned()));
    }
    Ok(Extracted { media_type, text })
}

fn pdf_text(name: &str, bytes: &[u8]) -> Result<String, ExtractError> {
    let bad = |why: String| ExtractError::BadPdf {
        name: name.to_owned(),
        why,
    };
    let document = lopdf::Document::load_mem(bytes).map_err(|e| bad(e.to_string()))?;
    let pages: Vec<u32> = document.get_pages().keys().copied().collect();
    document
        .extract_text_with_limit(&pages, MAX_INFLATED_BYTES)
        .map_err(|e| bad(e.to_string()))
}

fn html_text(html: &str) -> String {
    // A wide line: the text is for search, not for a terminal; wrapping would split words
    // from their neighbours only at odd places.
    html2text::config::plain()
        .string_from_read(html.as_bytes(), 10_000)
        .unwrap_or_default()
}

fn markdown_text(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, TagEnd};
    let mut out = String::with_capacity(markdown.len());
    for event in Parser::new(markdown) {
        match event {
            Event::Text(text) | Event::Code(text) | Event::InlineHtml(text) => out.push_str(&text),
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::End(
                TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item | TagEnd::CodeBlock,
            ) => out.push('\n'),
            _ => {}
        }
    }
    out
}

/// Lines trimmed, blank runs collapsed to one blank line.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../../fixtures/attachments/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn a_pdf_made_by_a_pdf_library_gives_its_text_from_every_page() {
        let got = extract("runbook.pdf", &fixture("runbook.pdf")).unwrap();
        assert_eq!(got.media_type, MediaType::Pdf);
        assert!(
            got.text.contains("quiesce the Kestrel ingestion workers"),
            "{}",
            got.text
        );
        assert!(
            got.text.contains("heliotrope-7 standby"),
            "page 2: {}",
            got.text
        );
    }

    #[test]
    fn html_keeps_what_a_reader_sees_and_drops_script_and_style() {
        let got = extract("page.html", &fixture("page.html")).unwrap();
        assert_eq!(got.media_type, MediaType::Html);
        assert!(
            got.text.contains("Larkspur community garden rota"),
            "{}",
            got.text
        );
        for hidden in [
            "zanzibar-tollbooth-5521",
            "periwinkle-gutter-913",
            "marmalade-lantern-style",
        ] {
            assert!(!got.text.contains(hidden), "{hidden} in {}", got.text);
        }
    }

    #[test]
    fn markdown_and_plain_text_keep_their_words() {
        let md = extract("notes.md", &fixture("notes.md")).unwrap();
        assert_eq!(md.media_type, MediaType::Markdown);
        assert!(
            md.text.contains("sourdough starter feeding schedule"),
            "{}",
            md.text
        );
        assert!(!md.text.contains("##"), "markup left: {}", md.text);
        let txt = extract("plain.txt", &fixture("plain.txt")).unwrap();
        assert_eq!(txt.media_type, MediaType::Text);
    }

    #[test]
    fn binary_and_broken_files_are_refused_by_name() {
        let binary = extract("photo.jpg", &[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x80]);
        assert!(
            binary
                .unwrap_err()
                .to_string()
                .contains("'photo.jpg' is neither a PDF")
        );
        let broken = extract("cut.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog");
        assert!(
            broken
                .unwrap_err()
                .to_string()
                .contains("'cut.pdf' is not a readable PDF")
        );
    }
}
