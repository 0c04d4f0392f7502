//! What was said in a cue line: its markup removed, its speaker told apart.

/// A cue's text without its markup: WebVTT tags (`<c.colorE5E5E5>`, `<i>`, `</v>`, inline
/// timestamps `<00:17.500>`) removed and the character references it allows decoded.
pub(super) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => rest = &rest[open + close + 1..],
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
pub(super) fn speaker(line: &str) -> (Option<String>, String) {
    if let Some(rest) = line.strip_prefix("<v")
        && rest.starts_with([' ', '.'])
        && let Some((tag, words)) = rest.split_once('>')
    {
        // `<v.class.other Name>`: the classes end at the first space.
        let name = tag.split_once(' ').map_or("", |(_, name)| name).trim();
        if !name.is_empty() {
            return (Some(plain(name)), plain(words));
        }
        return (None, plain(words));
    }
    let line = plain(line);
    let line = line.as_str();
    if let Some((name, words)) = line.split_once(": ")
        && !name.is_empty()
        && name.len() <= 40
        && name.split_whitespace().count() <= 4
        && name.chars().next().is_some_and(char::is_uppercase)
    {
        return (Some(name.trim().to_owned()), words.trim().to_owned());
    }
    (None, line.trim().to_owned())
}
