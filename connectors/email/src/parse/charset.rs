//! A text part whose declared charset is wrong. Mailers stamp their locale's default
//! (`charset=GB2312`) on text they wrote as UTF-8; mail-parser decodes by the label, so
//! such a body came out as U+FFFD and mojibake. When the label does not decode the bytes
//! cleanly, the bytes decide, as browsers and mail readers sniff: valid UTF-8 is read as
//! UTF-8, anything else keeps the label's lossy decoding.
//!
//! Only a failed decoding is second-guessed: a label that decodes the bytes without an
//! error is believed, even when the bytes are also valid UTF-8 (Latin-1 that happens to
//! look like UTF-8 stays Latin-1).

use std::borrow::Cow;

use mail_parser::{Encoding as TransferEncoding, MessagePart, MimeHeaders, parsers::MessageStream};

/// The text of a text or HTML part: `text`, as mail-parser decoded it by the declared
/// charset, unless that charset fails on the part's bytes and they are valid UTF-8.
/// `raw_message` is the message the part's offsets point into.
pub(super) fn read_text<'t>(
    part: &MessagePart<'_>,
    text: &'t str,
    raw_message: &[u8],
) -> Cow<'t, str> {
    // Every decoder puts U+FFFD where it could not read: without one, nothing failed, and
    // well-labelled mail is not decoded twice.
    if !text.contains(char::REPLACEMENT_CHARACTER) {
        return Cow::Borrowed(text);
    }
    let Some(label) = part.content_type().and_then(|ct| ct.attribute("charset")) else {
        return Cow::Borrowed(text);
    };
    let bytes = transfer_decoded(part, raw_message);
    // encoding_rs says whether the label failed; a U+FFFD can also be in the text itself.
    // A label it does not know (UTF-7) is taken to have failed: the U+FFFD says so.
    let label_decodes =
        encoding_rs::Encoding::for_label(label.as_bytes()).is_some_and(|encoding| {
            encoding
                .decode_without_bom_handling_and_without_replacement(&bytes)
                .is_some()
        });
    if label_decodes {
        return Cow::Borrowed(text);
    }
    match String::from_utf8(bytes.into_owned()) {
        Ok(utf8) => Cow::Owned(utf8),
        Err(_) => Cow::Borrowed(text),
    }
}

/// The part's body with its transfer encoding undone, as mail-parser undid it.
fn transfer_decoded<'r>(part: &MessagePart<'_>, raw_message: &'r [u8]) -> Cow<'r, [u8]> {
    let body = raw_message
        .get(part.offset_body as usize..part.offset_end as usize)
        .unwrap_or_default();
    let mut stream = MessageStream::new(body);
    // An empty boundary reads to the end of the slice, which ends where the part ends.
    match part.encoding {
        TransferEncoding::Base64 => stream.decode_base64_mime(b"").1,
        TransferEncoding::QuotedPrintable => stream.decode_quoted_printable_mime(b"").1,
        TransferEncoding::None => Cow::Borrowed(body),
    }
}
