//! One message's bytes → the fields levh keeps: decoded headers, people, the date in UTC,
//! a readable body excerpt, attachment names. MIME, RFC 2047 encoded words, charsets and
//! transfer encodings are mail-parser's; the choices (which part, how much text, what is
//! an error) are here, and so are three repairs of damaged MIME that mail-parser does not
//! make itself ([`repair`]): a header section that runs into its body, a multipart cut
//! off before its closing boundary, and encoded words in a quoted string
//! ([`encoded_words`]). A part whose declared charset does not fit its bytes is read by
//! its bytes ([`charset`]).

use std::borrow::Cow;
use std::collections::HashMap;

use levh_connector_sdk::{days_from_civil, rfc3339_utc};
use mail_parser::{Addr, Address, HeaderValue, MessageParser, MessagePart, MimeHeaders, PartType};

mod charset;
mod encoded_words;
mod repair;

/// A person on a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// Display name, decoded.
    pub name: Option<String>,
    /// Address.
    pub email: Option<String>,
    /// `sender`, `recipient` or `cc`.
    pub role: &'static str,
}

impl Participant {
    /// `Name <address>`, or whichever of the two there is.
    pub fn display(&self) -> String {
        match (&self.name, &self.email) {
            (Some(name), Some(email)) => format!("{name} <{email}>"),
            (Some(name), None) => name.clone(),
            (None, Some(email)) => email.clone(),
            (None, None) => String::new(),
        }
    }
}

/// A parsed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    /// Message-ID without the angle brackets.
    pub message_id: Option<String>,
    /// Subject, decoded (empty when there is none).
    pub subject: String,
    /// From.
    pub from: Vec<Participant>,
    /// To.
    pub to: Vec<Participant>,
    /// Cc.
    pub cc: Vec<Participant>,
    /// Date as Unix seconds.
    pub date: i64,
    /// In-Reply-To.
    pub in_reply_to: Option<String>,
    /// References, oldest first.
    pub references: Vec<String>,
    /// Readable body text (whole, normalised; cut to an excerpt by [`Email::content`]).
    pub body: String,
    /// Names of attached files.
    pub attachments: Vec<String>,
    /// Whether the message has an HTML body.
    pub has_html: bool,
    /// Why the message is incomplete, when it is (it is kept as far as it goes):
    /// `multipart boundary "b" never closes`.
    pub truncated: Option<String>,
}

/// Why a message is not turned into an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The sender matched `exclude_senders`: noise, skipped and named in the report, not
    /// an error. `reason` says which sender and pattern.
    Excluded {
        message_id: Option<String>,
        reason: String,
    },
    /// A message that cannot be read: one error line.
    Invalid(String),
}

/// What the reader needs to know beyond the bytes.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Lowercase substrings of sender addresses to skip.
    pub exclude_senders: Vec<String>,
}

/// Parses one message. Never panics, whatever the bytes.
pub fn parse_message(raw: &[u8], rules: &Rules) -> Result<Email, Rejection> {
    parse_message_at(raw, rules, None)
}

/// The magic number of an OLE compound file, which an Outlook `.msg` is.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// [`parse_message`], with the date an mbox's `From ` line gave the message: its time
/// when it has no `Date:` header and no `Received:` header with a date.
pub fn parse_message_at(
    raw: &[u8],
    rules: &Rules,
    postmark_date: Option<i64>,
) -> Result<Email, Rejection> {
    let invalid = |m: &str| Rejection::Invalid(m.to_owned());
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid("empty message"));
    }
    if raw.starts_with(&OLE_MAGIC) {
        return Err(invalid(
            "an Outlook message (.msg), which levh cannot read: save it from Outlook as .eml (or export an mbox)",
        ));
    }
    let parser = MessageParser::default();
    let message = parser.parse(raw);
    // Damaged MIME is rare: the repaired copy is parsed only when the first parse shows
    // damage, so well-formed mail is parsed once.
    if let Some(repaired) = message.as_ref().and_then(|m| repair::needed(m)) {
        drop(message);
        let repaired = repair::complete(&parser, repaired);
        let message = parser.parse(&repaired.bytes);
        return read(message, rules, postmark_date, repaired.truncated);
    }
    read(message, rules, postmark_date, None)
}

/// The fields of a parsed message; `truncated` says why it is incomplete, if it is.
fn read(
    message: Option<mail_parser::Message<'_>>,
    rules: &Rules,
    postmark_date: Option<i64>,
    truncated: Option<String>,
) -> Result<Email, Rejection> {
    let invalid = |m: &str| Rejection::Invalid(m.to_owned());
    let message = message.ok_or_else(|| invalid("not an email: no headers"))?;
    let root = message.root_part();
    let has_mail_header = root.headers.iter().any(|h| {
        matches!(
            h.name().to_ascii_lowercase().as_str(),
            "from" | "to" | "date" | "subject" | "message-id" | "sender"
        )
    });
    if !has_mail_header {
        return Err(invalid("not an email: no headers"));
    }

    let from = people(message.from(), "sender");
    if let Some(address) = from.first().and_then(|p| p.email.as_deref()) {
        let address = address.to_ascii_lowercase();
        if let Some(pattern) = rules
            .exclude_senders
            .iter()
            .find(|pattern| address.contains(pattern.as_str()))
        {
            return Err(Rejection::Excluded {
                message_id: message.message_id().map(str::to_owned),
                reason: format!("from {address}, which exclude_senders {pattern:?} skips"),
            });
        }
    }

    let date = match root
        .headers
        .iter()
        .find(|h| h.name().eq_ignore_ascii_case("date"))
    {
        // No Date: the newest time a relay stamped on it, else the mbox's postmark.
        None => match message
            .received_all()
            .filter_map(|received| received.date())
            .filter(|date| date.is_valid())
            .map(|date| date.to_timestamp())
            .max()
            .or(postmark_date)
        {
            Some(date) => date,
            None => {
                return Err(invalid(
                    "no Date header (and no Received: date or mbox postmark date)",
                ));
            }
        },
        Some(header) => match header.value() {
            HeaderValue::DateTime(date) if date.is_valid() => date.to_timestamp(),
            _ => {
                let raw = message.header_raw("Date").unwrap_or_default().trim();
                return Err(Rejection::Invalid(format!(
                    "unreadable Date header {raw:?}"
                )));
            }
        },
    };

    let subject = message.subject().map(clean_line).unwrap_or_default();
    let in_reply_to = message
        .in_reply_to()
        .as_text_list()
        .and_then(|ids| ids.first())
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    let references: Vec<String> = message
        .references()
        .as_text_list()
        .map(|ids| {
            ids.iter()
                .map(|id| id.trim().to_owned())
                .filter(|id| !id.is_empty())
                .collect()
        })
        .unwrap_or_default();

    let mut body = readable_text(message.text_bodies(), message.raw_message());
    // A blank text/plain part beside the HTML one (a mailer that writes the HTML only):
    // the HTML is what a reader sees.
    if body.is_empty() {
        body = readable_text(message.html_bodies(), message.raw_message());
    }
    let has_html = message
        .parts
        .iter()
        .any(|p| matches!(p.body, PartType::Html(_)));
    let attachments = message
        .attachments()
        .map(|a| {
            a.attachment_name()
                .map(clean_line)
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "(unnamed)".to_owned())
        })
        .collect();

    Ok(Email {
        message_id: message
            .message_id()
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_owned),
        subject,
        from,
        to: people(message.to(), "recipient"),
        cc: people(message.cc(), "cc"),
        date,
        in_reply_to,
        references,
        body,
        attachments,
        has_html,
        truncated,
    })
}

impl Email {
    /// The title: the subject, or `(no subject)`.
    pub fn title(&self) -> String {
        if self.subject.is_empty() {
            "(no subject)".to_owned()
        } else {
            self.subject.clone()
        }
    }

    /// The readable text: the headers a person looks at, then at most `body_chars`
    /// characters of the body.
    pub fn content(&self, body_chars: usize) -> String {
        let list = |people: &[Participant]| {
            people
                .iter()
                .map(Participant::display)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!("From: {}\n", list(&self.from));
        if !self.to.is_empty() {
            text.push_str(&format!("To: {}\n", list(&self.to)));
        }
        if !self.cc.is_empty() {
            text.push_str(&format!("Cc: {}\n", list(&self.cc)));
        }
        text.push_str(&format!(
            "Date: {}\nSubject: {}",
            rfc3339_utc(self.date),
            self.title()
        ));
        let excerpt = excerpt(&self.body, body_chars);
        if !excerpt.is_empty() {
            text.push_str("\n\n");
            text.push_str(&excerpt);
        }
        text
    }

    /// The thread this message belongs to: its first reference, else what it replies
    /// to, else itself.
    pub fn thread(&self) -> Option<&str> {
        self.references
            .first()
            .or(self.in_reply_to.as_ref())
            .or(self.message_id.as_ref())
            .map(String::as_str)
    }

    /// The item's metadata object.
    pub fn metadata(&self) -> serde_json::Value {
        let list = |people: &[Participant]| -> Vec<String> {
            people.iter().map(Participant::display).collect()
        };
        let mut metadata = serde_json::json!({
            "message_id": self.message_id,
            "in_reply_to": self.in_reply_to,
            "references": self.references,
            "thread": self.thread(),
            "from": list(&self.from).join(", "),
            "to": list(&self.to),
            "cc": list(&self.cc),
            "date": rfc3339_utc(self.date),
            "attachments": self.attachments,
            "has_html": self.has_html,
        });
        // Only on the rare message that is cut off, so that it stands out. Not
        // `truncated`: the host sets that key when it cuts an item's content to fit.
        if let Some(truncated) = &self.truncated {
            metadata["incomplete"] = truncated.as_str().into();
        }
        metadata
    }

    /// Everyone on the message: sender, recipients, cc.
    pub fn people(&self) -> impl Iterator<Item = &Participant> {
        self.from.iter().chain(&self.to).chain(&self.cc)
    }
}

/// The text of `parts` as a person reads it, HTML turned into text, parts a blank line
/// apart; empty when they hold nothing but whitespace.
fn readable_text<'p>(
    parts: impl Iterator<Item = &'p MessagePart<'p>>,
    raw_message: &[u8],
) -> String {
    let mut body = String::new();
    for part in parts {
        let text = match &part.body {
            PartType::Text(text) => charset::read_text(part, text, raw_message),
            PartType::Html(html) => {
                Cow::Owned(html_to_text(&charset::read_text(part, html, raw_message)))
            }
            _ => continue,
        };
        let text = normalise(&text);
        if text.is_empty() {
            continue;
        }
        if !body.is_empty() {
            body.push_str("\n\n");
        }
        body.push_str(&text);
    }
    body
}

fn people(address: Option<&Address<'_>>, role: &'static str) -> Vec<Participant> {
    let Some(address) = address else {
        return Vec::new();
    };
    address
        .iter()
        .filter_map(|a: &Addr<'_>| {
            let name = a.name().map(clean_line).filter(|n| !n.is_empty());
            let email = a
                .address()
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty());
            (name.is_some() || email.is_some()).then_some(Participant { name, email, role })
        })
        .collect()
}

/// One line of header text: whitespace runs (folding, tabs) become one space.
fn clean_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Body text as a person reads it: `\n` line ends, no trailing spaces, no runs of blank
/// lines, no non-breaking spaces.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.replace('\u{a0}', " ");
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

/// At most `chars` characters, cut at a word when one ends near the limit, marked `…`.
pub fn excerpt(text: &str, chars: usize) -> String {
    if chars == 0 {
        return String::new();
    }
    match text.char_indices().nth(chars) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let head = &text[..cut];
            let at_word_end = text[cut..].starts_with(char::is_whitespace);
            let head = match head.rfind(char::is_whitespace) {
                Some(space) if !at_word_end && space > cut * 4 / 5 => &head[..space],
                _ => head,
            };
            format!("{}…", head.trim_end())
        }
    }
}

/// Readable text from HTML: mail-parser's converter (entities, tags), after block
/// elements were given line breaks it does not give them itself, and after what a reader
/// never sees was dropped: `<head>` (with its `<title>`), `<style>`, `<script>`,
/// `<template>`. mail-parser drops those only when the tag has no attributes and its
/// `<head>` is closed, so `<head lang="en"><title>Foo</title>` glued "Foo" to the text
/// and an unclosed `<head>` lost all of it (#17).
pub fn html_to_text(html: &str) -> String {
    const BLOCKS: &[&str] = &[
        "div",
        "p",
        "li",
        "tr",
        "table",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "hr",
        "pre",
        "section",
        "article",
        "header",
        "footer",
    ];
    const HIDDEN: &[&str] = &["head", "title", "style", "script", "template"];
    let mut hidden = Hidden::default();
    let mut marked = String::with_capacity(html.len() + html.len() / 16);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        marked.push_str(&rest[..lt]);
        let tag = &rest[lt + 1..];
        if tag.starts_with("!--") {
            // A comment goes to mail-parser whole: tags inside it are not tags.
            let end = tag.find("-->").map_or(tag.len(), |end| end + 3);
            marked.push('<');
            marked.push_str(&tag[..end]);
            rest = &tag[end..];
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if !tag.starts_with('/') && HIDDEN.contains(&name.as_str()) {
            rest = &html[hidden.end(html, html.len() - tag.len(), &name)..];
            continue;
        }
        if BLOCKS.contains(&name.as_str()) {
            marked.push_str("<br>");
            if name == "li" && !tag.starts_with('/') {
                marked.push_str("- ");
            }
        }
        marked.push('<');
        rest = tag;
    }
    marked.push_str(rest);
    let text = mail_parser::decoders::html::html_to_text(&marked);
    // Block elements give a line each; blank lines would only spend the excerpt.
    normalise(&text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where hidden elements end. The next closing tag of each name is remembered, so that
/// a page of a thousand unclosed `<title>`s is still read in one pass.
#[derive(Default)]
struct Hidden {
    /// Per searched tag (`</title`, `<body`): where it was found last (from where), or
    /// that there is none after that point.
    found: HashMap<String, Option<usize>>,
}

impl Hidden {
    /// Where reading goes on after the hidden element `name` whose tag starts at `at`
    /// (after its `<`): at its closing tag, which is left for mail-parser. An unclosed
    /// `<head>` ends where `<body>` starts, or is only its tag (like an unclosed
    /// `<title>`); an unclosed `<style>`, `<script>` or `<template>` runs to the end, as it
    /// does in a browser.
    fn end(&mut self, html: &str, at: usize, name: &str) -> usize {
        let closing = self.find(html, at, &format!("</{name}"));
        let end = match name {
            "head" => closing.or_else(|| self.find(html, at, "<body")),
            _ => closing,
        };
        match end {
            Some(end) => end,
            None if name == "head" || name == "title" => {
                html[at..].find('>').map_or(html.len(), |gt| at + gt + 1)
            }
            None => html.len(),
        }
    }

    /// The first `open` (`<name` or `</name`, any case, a whole tag name: `</head` is
    /// not in `</header>`) at or after `at`.
    fn find(&mut self, html: &str, at: usize, open: &str) -> Option<usize> {
        match self.found.get(open) {
            Some(None) => return None,
            Some(Some(found)) if *found >= at => return Some(*found),
            _ => {}
        }
        let (bytes, tag) = (html.as_bytes(), open.as_bytes());
        let found = (at..bytes.len().saturating_sub(tag.len() - 1)).find(|&i| {
            bytes[i..i + tag.len()].eq_ignore_ascii_case(tag)
                && !bytes
                    .get(i + tag.len())
                    .is_some_and(u8::is_ascii_alphanumeric)
        });
        self.found.insert(open.to_owned(), found);
        found
    }
}

/// The date of an mbox postmark, `From sender Wed Mar 18 09:30:00 2026` (asctime, UTC;
/// an optional zone after the year is ignored), as Unix seconds.
pub fn postmark_date(line: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let tokens: Vec<&str> = line.split_whitespace().collect();
    // `From`, the sender, then the weekday: the month is the first month name after it.
    let at = tokens
        .iter()
        .enumerate()
        .skip(2)
        .find(|(_, t)| MONTHS.iter().any(|m| t.eq_ignore_ascii_case(m)))?
        .0;
    let month = MONTHS
        .iter()
        .position(|m| tokens[at].eq_ignore_ascii_case(m))? as u32
        + 1;
    let day: u32 = tokens.get(at + 1)?.parse().ok()?;
    let mut clock = tokens.get(at + 2)?.split(':');
    let hour: i64 = clock.next()?.parse().ok()?;
    let minute: i64 = clock.next()?.parse().ok()?;
    let second: i64 = clock.next().map_or(Some(0), |s| s.parse().ok())?;
    let year: i64 = tokens.get(at + 3)?.parse().ok()?;
    if !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// FNV-1a, 64 bits: a hash that never changes between builds (ids and cursors keep it).
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in *part {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // a separator, so ("ab", "c") and ("a", "bc") differ
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `n`th message (1-based) of the fixture mbox, as bytes.
    fn fixture(n: usize) -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/email/inbox.mbox"
        );
        let bytes = std::fs::read(path).unwrap();
        let mut reader = crate::mbox::MboxReader::new(&bytes[..], 0);
        let mut messages = Vec::new();
        while let Some(m) = reader.next_message().unwrap() {
            messages.push(m.bytes);
        }
        messages.swap_remove(n - 1)
    }

    fn parse(raw: &[u8]) -> Email {
        parse_message(raw, &Rules::default()).unwrap()
    }

    #[test]
    fn rfc2047_headers_decode_to_the_exact_strings() {
        let email = parse(&fixture(4));
        assert_eq!(email.subject, "Café ☕ planning — Q2 offsite");
        assert_eq!(email.from[0].name.as_deref(), Some("Renée Dupré"));
        assert_eq!(email.from[0].email.as_deref(), Some("renee@example.fr"));
        assert_eq!(email.to[0].name.as_deref(), Some("Zoë Ångström"));
        let inline = b"Subject: =?utf-8?q?Caf=C3=A9_=E2=98=95?= =?ISO-8859-1?Q?=E0_9h?=\nFrom: =?windows-1252?Q?=93Max=94?= <m@x.org>\nDate: Thu, 05 Mar 2026 16:45:00 +0100\n\nhi\n";
        let email = parse(inline);
        assert_eq!(email.subject, "Café ☕à 9h");
        assert_eq!(email.from[0].name.as_deref(), Some("“Max”"));
    }

    #[test]
    fn latin1_and_windows_1252_bodies_decode() {
        let email = parse(&fixture(4));
        assert!(
            email
                .body
                .starts_with("Bonjour Zoë,\n\nLa réunion de préparation du séminaire aura lieu à Lyon, salle Béatrice."),
            "{}",
            email.body
        );
        assert!(email.body.ends_with("À bientôt,\nRenée"), "{}", email.body);
        let email = parse(&fixture(5));
        assert_eq!(
            email.body,
            "Ada,\n\nAttached is the signed contract – the “final” version, with the € 4,200 monthly cap we agreed on.\n\nLinus"
        );
    }

    #[test]
    fn html_only_mail_becomes_readable_text() {
        let email = parse(&fixture(3));
        assert!(email.has_html);
        assert_eq!(
            email.body,
            "Launch checklist\nThree items are still open before the Atlas launch on 24 March:\n- Load test the search API at 2× peak\n- Sign the vendor contract — Linus\n- Publish the status page & on-call rota\nQuestions? Reply to Ada."
        );
        assert_eq!(
            html_to_text("<p>One&amp;two</p><p>three<br>four</p><script>x()</script>"),
            "One&two\nthree\nfour"
        );
    }

    #[test]
    fn multipart_alternative_keeps_the_plain_part() {
        let email = parse(&fixture(2));
        assert!(email.has_html);
        assert!(
            email
                .body
                .contains("- Ada is waiting on the vendor quotes for the budget review."),
            "the text/plain part, which alone has these words: {}",
            email.body
        );
        assert!(!email.body.contains('<'));
        assert_eq!(email.attachments, Vec::<String>::new());
    }

    #[test]
    fn attachments_are_named_and_replies_keep_their_thread() {
        let email = parse(&fixture(5));
        assert_eq!(email.attachments, ["vendor-contract-signed.pdf"]);
        assert!(!email.has_html);
        let reply = parse(&fixture(7));
        assert_eq!(
            reply.in_reply_to.as_deref(),
            Some("atlas-budget-1@example.com")
        );
        assert_eq!(reply.references, ["atlas-budget-1@example.com"]);
        assert_eq!(reply.thread(), Some("atlas-budget-1@example.com"));
        let metadata = reply.metadata();
        assert_eq!(metadata["message_id"], "re-atlas-budget-1@example.com");
        assert_eq!(metadata["from"], "Grace Hopper <grace@example.com>");
        assert_eq!(metadata["cc"][0], "Linus Pauling <linus@example.org>");
        assert_eq!(metadata["date"], "2026-03-09T15:05:00Z");
        let first = parse(&fixture(1));
        assert_eq!(first.thread(), Some("atlas-budget-1@example.com"));
        assert!(
            first.body.contains("\nFrom the last review:"),
            "mboxrd quoting undone: {}",
            first.body
        );
    }

    #[test]
    fn content_lists_the_headers_then_the_excerpt() {
        let email = parse(&fixture(1));
        assert_eq!(
            email.content(40),
            "From: Ada Lovelace <ada@example.com>\nTo: Grace Hopper <grace@example.com>\nCc: Linus Pauling <linus@example.org>\nDate: 2026-03-02T08:15:00Z\nSubject: Atlas budget review moved to Thursday\n\nHi Grace,\n\nThe Atlas budget review moves…"
        );
        assert!(
            email
                .content(0)
                .ends_with("\nSubject: Atlas budget review moved to Thursday")
        );
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("ééé", 2), "éé…");
        let untitled = parse(b"From: a@b.c\nDate: Mon, 02 Mar 2026 09:15:00 +0100\n\nbody\n");
        assert_eq!(untitled.title(), "(no subject)");
    }

    #[test]
    fn a_message_without_a_date_takes_its_newest_received_date_then_its_postmark() {
        let relayed = b"From: a@b.c\nReceived: from mx1 by mx2; Tue, 03 Mar 2026 10:00:00 +0000\nReceived: from laptop by mx1; Tue, 03 Mar 2026 09:59:00 +0000\nSubject: s\n\nbody\n";
        assert_eq!(rfc3339_utc(parse(relayed).date), "2026-03-03T10:00:00Z");
        let bare = b"From: a@b.c\nSubject: s\n\nbody\n";
        let postmark = postmark_date("From a@b.c Wed Mar 18 09:30:05 2026");
        assert_eq!(
            postmark.map(rfc3339_utc).as_deref(),
            Some("2026-03-18T09:30:05Z")
        );
        let email = parse_message_at(bare, &Rules::default(), postmark).unwrap();
        assert_eq!(rfc3339_utc(email.date), "2026-03-18T09:30:05Z");
        assert_eq!(postmark_date("From a@b.c sometime"), None);
        assert_eq!(
            postmark_date("From MAILER-DAEMON Thu Feb 29 23:59:59 2024 +0100").map(rfc3339_utc),
            Some("2024-02-29T23:59:59Z".to_owned())
        );
    }

    #[test]
    fn an_outlook_msg_file_is_named_as_such() {
        let mut msg = OLE_MAGIC.to_vec();
        msg.extend_from_slice(&[0u8; 504]);
        match parse_message(&msg, &Rules::default()) {
            Err(Rejection::Invalid(message)) => {
                assert!(message.contains("Outlook message (.msg)"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dates_become_utc() {
        for (header, utc) in [
            ("Mon, 09 Mar 2026 08:05:00 -0700", "2026-03-09T15:05:00Z"),
            ("Thu, 05 Mar 2026 16:45:00 +0100", "2026-03-05T15:45:00Z"),
            ("1 Jan 2026 00:30:00 +0200", "2025-12-31T22:30:00Z"),
            ("Thu, 29 Feb 2024 23:59:59 GMT", "2024-02-29T23:59:59Z"),
        ] {
            let raw = format!("From: a@b.c\nSubject: s\nDate: {header}\n\nbody\n");
            assert_eq!(rfc3339_utc(parse(raw.as_bytes()).date), utc, "{header}");
        }
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn automated_senders_are_excluded_case_insensitively() {
        let rules = Rules {
            exclude_senders: vec!["no-reply".into(), "mailer-daemon".into()],
        };
        assert!(matches!(
            parse_message(&fixture(6), &rules),
            Err(Rejection::Excluded { reason, .. }) if reason.contains("exclude_senders")
        ));
        let shouting = b"From: Alerts <NO-REPLY@Example.COM>\nDate: Mon, 02 Mar 2026 09:15:00 +0100\nSubject: x\n\ny\n";
        assert!(matches!(
            parse_message(shouting, &rules),
            Err(Rejection::Excluded { .. })
        ));
        assert!(parse_message(&fixture(1), &rules).is_ok());
        assert!(parse_message(&fixture(6), &Rules::default()).is_ok());
    }

    #[test]
    fn unreadable_messages_are_clear_errors() {
        let invalid = |raw: &[u8]| match parse_message(raw, &Rules::default()) {
            Err(Rejection::Invalid(message)) => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            invalid(&fixture(9)),
            "no Date header (and no Received: date or mbox postmark date)"
        );
        assert_eq!(
            invalid(b"From: a@b.c\nDate: next tuesday\n\nx\n"),
            "unreadable Date header \"next tuesday\""
        );
        assert_eq!(invalid(b""), "empty message");
        assert_eq!(invalid(b"  \r\n"), "empty message");
        assert_eq!(
            invalid(b"just some words\nand more words\n"),
            "not an email: no headers"
        );
        assert_eq!(
            invalid(b"X-Thing: 1\nColor: blue\n\nbody\n"),
            "not an email: no headers"
        );
    }

    /// A fixture file under `fixtures/email/`, as bytes.
    fn fixture_file(path: &str) -> Vec<u8> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/email/");
        std::fs::read(format!("{root}{path}")).unwrap()
    }

    /// The messages of `fixtures/email/charsets.mbox`.
    fn charset_fixtures() -> Vec<Email> {
        let bytes = fixture_file("charsets.mbox");
        let mut reader = crate::mbox::MboxReader::new(&bytes[..], 0);
        let mut messages = Vec::new();
        while let Some(m) = reader.next_message().unwrap() {
            messages.push(parse(&m.bytes));
        }
        messages
    }

    #[test]
    fn legacy_charsets_decode_in_encoded_word_headers_as_in_bodies() {
        let decoded: Vec<(String, String, String)> = charset_fixtures()
            .into_iter()
            .map(|e| (e.subject, e.from[0].name.clone().unwrap(), e.body))
            .collect();
        let expected = [
            // GB2312 headers over a UTF-8 body: the headers were U+FFFD, the body not (#17)
            (
                "阿特拉斯项目周报",
                "李伟",
                "本周阿特拉斯项目完成了搜索接口的压力测试。",
            ),
            (
                "供应商报价",
                "张敏",
                "供应商报价已经收到，请在周四前确认预算。",
            ),
            ("研討會場地確認", "陳宇", "研討會改在台北舉行。"),
            (
                "ローンチの準備について",
                "佐藤健二",
                "ローンチは三月二十四日です。",
            ),
            // Outlook's label for EUC-KR
            ("계약서 서명 완료", "김지수", "계약서에 서명했습니다."),
            (
                "Бюджет на второй квартал",
                "Иван Петров",
                "Бюджет утверждён до апреля.",
            ),
            (
                "Cestovní příkaz – Brno",
                "Jan Novák",
                "Cestovní příkaz pro cestu do Brna je schválen.",
            ),
        ];
        assert_eq!(decoded.len(), expected.len());
        for ((subject, name, body), expected) in decoded.iter().zip(expected) {
            assert_eq!((subject.as_str(), name.as_str(), body.as_str()), expected);
        }
        let inline = "From: =?EUC-JP?B?u7PFxA==?= <y@example.jp>\nDate: Mon, 02 Mar 2026 09:15:00 +0900\nSubject: =?ISO-2022-JP?B?GyRCJUYlOSVIGyhC?= =?gb18030?B?suLK1A==?=\n\nx\n";
        let email = parse(inline.as_bytes());
        assert_eq!(email.subject, "テスト测试");
        assert_eq!(email.from[0].name.as_deref(), Some("山田"));
    }

    #[test]
    fn a_cut_off_multipart_keeps_its_parts_and_says_so() {
        let email = parse(&fixture_file("eml/truncated.eml"));
        assert_eq!(email.subject, "Q1 review slides");
        assert_eq!(email.body, "Slides for the Q1 review are attached.");
        assert_eq!(email.attachments, ["q1-review.pptx"]);
        let note = "multipart boundary \"q1-slides-boundary\" never closes";
        assert_eq!(email.truncated.as_deref(), Some(note));
        assert_eq!(email.metadata()["incomplete"], note);

        // Cut inside a quoted-printable text part, two multiparts deep: the cut part is
        // text up to the cut, decoded, not an unnamed attachment.
        let email = parse(&fixture_file("damaged/cut-off-mid-part.eml"));
        assert_eq!(
            email.body,
            "Ada, my notes from the vendor call are below.\n\nThe vendor agreed to a € 3,900 cap for the first year. Delivery of the racks slips to"
        );
        assert_eq!(email.attachments, Vec::<String>::new());
        assert_eq!(
            email.truncated.as_deref(),
            Some("multipart boundary \"notes-outer\" never closes")
        );
        assert!(parse(&fixture(2)).metadata().get("incomplete").is_none());
    }

    #[test]
    fn the_plain_part_wins_even_when_its_headers_run_into_its_text() {
        // A separator line of whitespace reads as a folded header line: the plain part's
        // text was taken for headers up to the HTML part, which became the body,
        // "Atlas weekly" title and all (#17).
        let email = parse(&fixture_file("damaged/alternative-run-on.eml"));
        assert_eq!(
            email.body,
            "The search API passed its load test at twice the peak."
        );
        assert!(email.has_html);
        let html = "<html><head><title>Foo</title></head><body>HTML here</body></html>";
        for plain_part in [
            "--b1\nPlaintext here.\n",
            "--b1\nContent-Type: text/plain; charset=\"utf-8\"\n\t\nPlaintext here.\n",
            "--b1 \nContent-Type: text/plain\nContent-Disposition: inline\n\nPlaintext here.\n",
        ] {
            for crlf in [false, true] {
                let raw = format!(
                    "From: a@b.c\nDate: Mon, 02 Mar 2026 09:15:00 +0100\nSubject: s\nContent-Type: multipart/alternative; boundary=\"b1\"\n\n{plain_part}--b1\nContent-Type: text/html\n\n{html}\n--b1--\n"
                );
                let raw = if crlf { raw.replace('\n', "\r\n") } else { raw };
                assert_eq!(parse(raw.as_bytes()).body, "Plaintext here.", "{raw:?}");
            }
        }
    }

    #[test]
    fn html_text_never_includes_the_head_style_or_script() {
        let email = parse(&fixture_file("damaged/html-head.eml"));
        assert_eq!(email.body, "The offsite is at the lake house on 2 April.");
        for (html, text) in [
            (
                "<html><head lang=\"en\"><title>Foo</title></head><body>HTML here</body></html>",
                "HTML here",
            ),
            ("<title>Foo</title>HTML here", "HTML here"),
            (
                "<html><head><title>Foo</title><body>HTML here</body>",
                "HTML here",
            ),
            ("<head><title>Foo</title>HTML here", "HTML here"),
            ("<title>Foo HTML here", "Foo HTML here"),
            (
                "<style type=\"text/css\">p {}</style><p>a</p><script async>x()</script><p>b</p>",
                "a\nb",
            ),
            ("<p>kept</p><style>never closed", "kept"),
            ("<header>Top</header><p>Body</p>", "Top\nBody"),
            ("<!-- <style> --><p>after a comment</p>", "after a comment"),
        ] {
            assert_eq!(html_to_text(html), text, "{html}");
        }
        let many = "<title>".repeat(20_000) + "<p>still read</p>";
        assert_eq!(html_to_text(&many), "still read");
    }

    #[test]
    fn a_body_labelled_gb2312_but_written_in_utf8_reads_as_utf8() {
        let head = "From: a@b.c\nDate: Mon, 02 Mar 2026 09:15:00 +0800\nSubject: s\n";
        let single = |transfer: &str, body: &[u8]| {
            let mut raw = format!(
                "{head}Content-Type: text/plain; charset=GB2312\nContent-Transfer-Encoding: {transfer}\n\n"
            )
            .into_bytes();
            raw.extend_from_slice(body);
            parse(&raw).body
        };
        let utf8 = "会议改到周四下午三点，地点不变。";
        assert_eq!(single("8bit", utf8.as_bytes()), utf8);
        assert_eq!(
            single(
                "base64",
                b"6aKE566X6KGo5bey5pu05paw77yM6K+35p+l5pS26ZmE5Lu244CCCg==\n"
            ),
            "预算表已更新，请查收附件。"
        );
        // Real GB2312 stays GB2312; bytes that are neither keep the label's lossy reading.
        assert_eq!(single("8bit", b"\xc4\xe3\xba\xc3\n"), "你好");
        assert_eq!(single("8bit", b"\xc4\xe3\xba\xc3\xff\n"), "你好\u{fffd}");
        // The same in a quoted-printable HTML part of a multipart.
        let raw = format!(
            "{head}Content-Type: multipart/alternative; boundary=\"b\"\n\n--b\nContent-Type: text/html; charset=\"gb2312\"\nContent-Transfer-Encoding: quoted-printable\n\n<p>=E4=BC=9A=E8=AE=AE=E6=94=B9=E5=88=B0=E5=91=A8=E5=9B=9B=E3=80=82</p>\n--b--\n"
        );
        assert_eq!(parse(raw.as_bytes()).body, "会议改到周四。");
    }

    #[test]
    fn a_blank_plain_part_gives_way_to_the_html_part() {
        for plain in ["", " \r\n\r\n\t\r\n", "\u{a0}\r\n"] {
            let raw = format!(
                "From: a@b.c\r\nDate: Mon, 02 Mar 2026 09:15:00 +0100\r\nSubject: s\r\nContent-Type: multipart/alternative; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{plain}\r\n--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body><p>The offsite moves to Friday.</p><p>Bring a coat.</p></body></html>\r\n--b--\r\n"
            );
            let email = parse(raw.as_bytes());
            assert_eq!(
                email.body, "The offsite moves to Friday.\nBring a coat.",
                "{plain:?}"
            );
            assert!(email.has_html);
        }
    }

    #[test]
    fn whitespace_between_adjacent_encoded_words_is_dropped_in_quoted_names_and_file_names() {
        let (start, end) = ("=?UTF-8?Q?Za=C5=BC=C3=B3?=", "=?utf-8?q?=C5=82=C4=87?=");
        let raw = format!(
            "From: \"{start} {end}\" <ewa@example.pl>\r\nTo: \"Ewa {start}\r\n {end} Nowak\" <en@example.pl>\r\nCc: {start} {end} <cc@example.pl>\r\nDate: Mon, 02 Mar 2026 09:15:00 +0100\r\nSubject: Re: {start} {end}\r\nContent-Type: multipart/mixed; boundary=\"m\"\r\n\r\n--m\r\nContent-Type: text/plain\r\n\r\nSee the file.\r\n--m\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment;\r\n filename=\"=?UTF-8?B?YnVkxbxldCBrd2FydGHFgg==?= =?UTF-8?B?bnkucGRm?=\"\r\n\r\nJVBERg==\r\n--m--\r\n"
        );
        let email = parse(raw.as_bytes());
        assert_eq!(email.from[0].name.as_deref(), Some("Zażółć"));
        // next to ordinary text the space is text
        assert_eq!(email.to[0].name.as_deref(), Some("Ewa Zażółć Nowak"));
        assert_eq!(email.cc[0].name.as_deref(), Some("Zażółć"));
        assert_eq!(email.subject, "Re: Zażółć");
        assert_eq!(email.attachments, ["budżet kwartałny.pdf"]);
        assert_eq!(email.body, "See the file.");
        assert_eq!(email.truncated, None);
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let rules = Rules {
            exclude_senders: vec!["noreply".into()],
        };
        // random bytes, random header-ish text
        const PIECES: &[&[u8]] = &[
            b"From: ",
            b"Date: ",
            b"Subject: ",
            b"=?UTF-8?B?",
            b"=?ISO-8859-1?Q?",
            b"?=",
            b"\n",
            b"\r\n",
            b"Content-Type: multipart/mixed; boundary=\"b\"\n",
            b"--b\n",
            b"--b--",
            b"Content-Transfer-Encoding: base64\n",
            b"Content-Transfer-Encoding: quoted-printable\n",
            b"text/html",
            b"<div>",
            b"&amp",
            b"=E9",
            b"=\n",
            b"<",
            b">",
            b"@",
            b"\xff\xfe",
            b"Mon, 02 Mar 2026 09:15:00 +0100",
            b"Content-Type: message/rfc822\n",
            b"\n\n",
        ];
        for round in 0..3000 {
            let len = (next() % 600) as usize;
            let raw: Vec<u8> = if round % 2 == 0 {
                (0..len).map(|_| next() as u8).collect()
            } else {
                let mut raw = Vec::new();
                while raw.len() < len {
                    raw.extend_from_slice(PIECES[(next() % PIECES.len() as u64) as usize]);
                }
                raw
            };
            let _ = parse_message(&raw, &rules);
            let text = String::from_utf8_lossy(&raw);
            let _ = html_to_text(&text);
        }
        // every prefix and a corrupted copy of real messages
        for n in 1..=9 {
            let message = fixture(n);
            for cut in (0..message.len()).step_by(7) {
                let _ = parse_message(&message[..cut], &rules);
                let mut corrupted = message.clone();
                corrupted[cut] = next() as u8;
                let _ = parse_message(&corrupted, &rules);
            }
        }
    }

    #[test]
    fn the_stable_hash_does_not_change() {
        assert_eq!(stable_hash(&[]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(stable_hash(&[b"ab", b"c"]), stable_hash(&[b"a", b"bc"]));
        assert_eq!(
            stable_hash(&[b"inbox.mbox", b"3"]),
            9_394_969_186_087_946_494
        );
    }
}
