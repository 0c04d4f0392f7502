//! What was said in a cue line: its markup removed, its speaker told apart.

use super::Format;

/// A cue's text without its markup: tags (`<c.colorE5E5E5>`, `<i>`, `</v>`, inline
/// timestamps `<00:17.500>`, SubRip's `<font color=…>`) removed and the character
/// references WebVTT allows decoded.
///
/// A `<` whose `>` never comes is read by the format's rule. In WebVTT a `<` always starts
/// a tag (a literal one is written `&lt;`), and the tag runs to its `>` or to the end of
/// the text: `<v It's…` and `</c awesome` are markup, not speech. `text` is one line, so
/// a tag left open ends with its line. SubRip and plain text have no such rule, and a lone
/// `<` there is far more often a literal (`supply < demand`, `<3`), so it is kept.
pub(super) fn plain(text: &str, format: Format) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => rest = &rest[open + close + 1..],
            None if format == Format::WebVtt => rest = "",
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&lrm;", "")
        .replace("&rlm;", "")
        .replace("&amp;", "&")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits `<v Name>text</v>` (classes allowed: `<v.loud Joe>`) or `Name: text` into
/// (speaker, words), markup removed.
pub(super) fn speaker(line: &str, format: Format) -> (Option<String>, String) {
    if let Some(rest) = line.strip_prefix("<v")
        && rest.starts_with([' ', '.'])
        && let Some((tag, words)) = rest.split_once('>')
    {
        // `<v.class.other Name>`: the classes end at the first space.
        let name = tag.split_once(' ').map_or("", |(_, name)| name).trim();
        if !name.is_empty() {
            return (Some(plain(name, format)), plain(words, format));
        }
        return (None, plain(words, format));
    }
    let line = plain(line, format);
    if let Some((label, words)) = line.split_once(": ")
        && is_name(label)
        && !words.trim_start().starts_with(QUOTES)
    {
        return (Some(label.trim().to_owned()), words.trim().to_owned());
    }
    (None, line.trim().to_owned())
}

/// Marks that open a quotation. A label followed by one introduces quoted words in running
/// text (`Note: "bring the badge"`, `He said: "no"`); a speaker's label is followed by
/// the words themselves.
const QUOTES: [char; 8] = ['"', '“', '”', '„', '«', '»', '\'', '‘'];

/// Lower-case words that join the parts of a name (`Ursula von der Leyen`), accepted
/// between two capitalised words only.
const NAME_PARTICLES: [&str; 14] = [
    "al", "bin", "da", "de", "del", "der", "di", "du", "la", "le", "ten", "van", "von", "y",
];

/// Whether the text before `: ` reads as a speaker's name: one to four words, at most 40
/// characters, each word a capitalised name (letters, `.`, `'`, `-`: `Dr.`, `O'Neil`,
/// `Jean-Luc`), a number after the first word (`Speaker 2`), or a joining particle
/// inside the name. Words of a script without capitals (`田中`) count as capitalised.
/// So `Ana`, `Dr. Smith` and `SPEAKER 1` are names, and `He said` or `the plan is` are
/// not: running text has lower-case words.
fn is_name(label: &str) -> bool {
    let words: Vec<&str> = label.split_whitespace().collect();
    if words.is_empty() || words.len() > 4 || label.chars().count() > 40 {
        return false;
    }
    let last = words.len() - 1;
    words.iter().enumerate().all(|(at, word)| {
        let capitalised = word
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() && !c.is_lowercase());
        let name_like = word
            .chars()
            .all(|c| c.is_alphabetic() || matches!(c, '.' | '\'' | '’' | '-'));
        let number = at > 0 && word.chars().all(|c| c.is_ascii_digit());
        let particle = at > 0 && at < last && NAME_PARTICLES.contains(word);
        (capitalised && name_like) || number || particle
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unterminated_webvtt_tag_runs_to_the_end_of_its_line() {
        assert_eq!(
            plain("We start <c.yellow at nine", Format::WebVtt),
            "We start"
        );
        assert_eq!(plain("and end </c early today", Format::WebVtt), "and end");
        assert_eq!(
            speaker("<v Maren's…", Format::WebVtt),
            (None, String::new())
        );
    }

    #[test]
    fn a_lone_less_than_sign_outside_webvtt_is_text() {
        assert_eq!(
            plain("prices rise when supply < demand", Format::SubRip),
            "prices rise when supply < demand"
        );
    }

    #[test]
    fn a_speaker_is_a_short_name_before_the_colon() {
        for (line, who, words) in [
            ("Ana: hello", "Ana", "hello"),
            ("Dr. Smith: ok", "Dr. Smith", "ok"),
            ("SPEAKER 2: me too", "SPEAKER 2", "me too"),
            (
                "Ursula von der Leyen: thanks",
                "Ursula von der Leyen",
                "thanks",
            ),
            ("Jean-Luc O'Neil: agreed", "Jean-Luc O'Neil", "agreed"),
            ("田中: はい", "田中", "はい"),
        ] {
            assert_eq!(
                speaker(line, Format::SubRip),
                (Some(who.to_owned()), words.to_owned()),
                "{line}"
            );
        }
    }

    #[test]
    fn running_text_or_a_quotation_after_a_colon_is_no_speaker() {
        for line in [
            "He said: \"no\"",
            "Note: \"bring the badge\"",
            "Mara: “we ship Friday”",
            "the plan is: ship it",
            "Remember the Alamo and the others too: ok",
        ] {
            assert_eq!(
                speaker(line, Format::SubRip),
                (None, line.to_owned()),
                "{line}"
            );
        }
    }
}
