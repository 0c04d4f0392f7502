//! WebVTT, SubRip and plain-text transcripts into one meeting.
//!
//! Hand-written: both formats are a few line-based rules, and the subtitle crates on the
//! registry either pull in heavy dependencies or stop at the first bad cue, where a
//! memory layer wants a clear error naming the line.

use std::collections::HashMap;

mod cues;
mod speech;
mod timing;

use cues::{blocks, cue};
use speech::speaker;

/// A parsed meeting.
#[derive(Debug, Clone, PartialEq)]
pub struct Meeting {
    /// Speakers in order of first appearance.
    pub speakers: Vec<String>,
    /// The spoken text, one utterance per line (`Speaker: words`).
    pub text: String,
    /// The most representative sentences.
    pub summary: String,
    /// Number of cues (utterances).
    pub cues: usize,
    /// End of the last cue, for timed formats.
    pub duration_seconds: Option<f64>,
}

/// The longest summary kept: three sentences, not a subtitle file run together.
const MAX_SUMMARY_CHARS: usize = 600;

/// A transcript format, told by the file's extension (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `.vtt`: a `WEBVTT` header, then cues; read by the WebVTT parsing rules.
    WebVtt,
    /// `.srt`: numbered cues, `00:00:01,000 --> 00:00:04,000`.
    SubRip,
    /// `.txt`: one `Name: text` utterance a line.
    Plain,
}

impl Format {
    fn of(name: &str) -> Option<Format> {
        match extension(name)?.as_str() {
            "vtt" => Some(Format::WebVtt),
            "srt" => Some(Format::SubRip),
            "txt" => Some(Format::Plain),
            _ => None,
        }
    }
}

/// Whether a file name is one of the transcript formats (any case).
pub fn is_transcript(name: &str) -> bool {
    Format::of(name).is_some()
}

fn extension(name: &str) -> Option<String> {
    let (_, extension) = name.rsplit_once('.')?;
    (!extension.contains('/')).then(|| extension.to_ascii_lowercase())
}

/// Parses a transcript; `name` picks the format by extension. An error names the line.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Meeting, String> {
    let Some(format) = Format::of(name) else {
        return Err(match extension(name) {
            Some(other) => {
                format!("unsupported format .{other}: levh reads .vtt, .srt and .txt transcripts")
            }
            None => "unsupported format (no extension): levh reads .vtt, .srt and .txt transcripts"
                .into(),
        });
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Err("empty transcript".into());
    }
    if format == Format::WebVtt && !text.trim_start().starts_with("WEBVTT") {
        return Err("line 1: a .vtt file must start with WEBVTT".into());
    }
    let mut utterances: Vec<(Option<String>, String)> = Vec::new();
    let mut duration = None;
    if format != Format::Plain {
        for block in blocks(text) {
            cue(&block, format, &mut utterances, &mut duration)?;
        }
    } else {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (who, words) = speaker(line, format);
            if !words.is_empty() {
                utterances.push((who, words));
            }
        }
    }
    if utterances.is_empty() {
        return Err("no spoken text found".into());
    }
    let mut speakers: Vec<String> = Vec::new();
    for name in utterances.iter().filter_map(|(who, _)| who.clone()) {
        if !speakers.contains(&name) {
            speakers.push(name);
        }
    }
    let text = utterances
        .iter()
        .map(|(who, words)| match who {
            Some(who) => format!("{who}: {words}"),
            None => words.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    // Each line of the summary keeps who said it, as the excerpt does: a promise quoted
    // there without its speaker read as the user's own, and as a second promise.
    let chosen = representative(
        &utterances
            .iter()
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>(),
        3,
    );
    let mut summary = chosen
        .into_iter()
        .map(|i| match &utterances[i].0 {
            Some(who) => format!("{who}: {}", utterances[i].1),
            None => utterances[i].1.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    if summary.chars().count() > MAX_SUMMARY_CHARS {
        summary = summary.chars().take(MAX_SUMMARY_CHARS).collect::<String>() + "…";
    }
    Ok(Meeting {
        speakers,
        text,
        summary,
        cues: utterances.len(),
        duration_seconds: duration,
    })
}

/// The `count` utterances whose words are most frequent in the whole meeting, in their
/// original order: a plain extractive summary that needs no model.
pub fn summarise(utterances: &[&str], count: usize) -> String {
    representative(utterances, count)
        .into_iter()
        .map(|i| utterances[i])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which utterances [`summarise`] picks, in their original order.
fn representative(utterances: &[&str], count: usize) -> Vec<usize> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 3)
            .map(str::to_lowercase)
            .collect()
    };
    let mut frequency: HashMap<String, usize> = HashMap::new();
    for utterance in utterances {
        for word in words(utterance) {
            *frequency.entry(word).or_default() += 1;
        }
    }
    let mut scored: Vec<(usize, f64)> = utterances
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let w = words(u);
            let score = if w.is_empty() {
                0.0
            } else {
                w.iter().map(|x| frequency[x] as f64).sum::<f64>() / (w.len() as f64).sqrt()
            };
            (i, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<usize> = scored.into_iter().take(count).map(|(i, _)| i).collect();
    chosen.sort();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webvtt_with_voices() {
        let vtt = "WEBVTT\n\n1\n00:00:01.000 --> 00:00:04.000\n<v Ada>We ship the billing worker on Friday.</v>\n\n2\n00:00:04.500 --> 00:01:02.250\n<v Grace>Then the billing worker needs a rollback plan.\n";
        let m = parse("sync.vtt", vtt.as_bytes()).unwrap();
        assert_eq!(m.speakers, ["Ada", "Grace"]);
        assert_eq!(m.cues, 2);
        assert_eq!(m.duration_seconds, Some(62.25));
        assert!(m.text.starts_with("Ada: We ship"));
    }

    #[test]
    fn subrip_with_name_prefixes_and_continuations() {
        let srt = "1\n00:00:01,000 --> 00:00:03,000\nAda: Budget review is next week.\n\n2\n00:00:03,500 --> 00:00:06,000\nBob: I will send the numbers\nby Monday.\n";
        let m = parse("review.srt", srt.as_bytes()).unwrap();
        assert_eq!(m.speakers, ["Ada", "Bob"]);
        assert!(m.text.contains("Bob: I will send the numbers by Monday."));
    }

    #[test]
    fn webvtt_is_read_by_its_structure() {
        let vtt = "WEBVTT\nKind: captions\nLanguage: en\n\nSTYLE\n::cue { color: yellow }\n\nREGION\nid:fred width:40%\n\nNOTE this is a comment\nthat spans two lines\n\nintro\n00:00:01.000 --> 00:00:04.000 align:start\n<v.loud Joe>We <i>ship</i> on <00:00:02.500>Friday &amp; celebrate.</v>\n\n00:00:05.000 --> 00:00:07.000\n<c.colorE5E5E5>The second cue</c>\nhas two lines.\n\n00:00:08.000 --> 00:00:09.000\nA third cue.\n";
        let m = parse("captions.vtt", vtt.as_bytes()).unwrap();
        assert_eq!(m.speakers, ["Joe"]);
        assert_eq!(
            m.text,
            "Joe: We ship on Friday & celebrate.\nThe second cue has two lines.\nA third cue."
        );
        assert_eq!(m.cues, 3);
        assert_eq!(m.duration_seconds, Some(9.0));
    }

    #[test]
    fn a_long_subtitle_without_speakers_keeps_its_cues_and_a_short_summary() {
        let mut srt = String::new();
        for n in 0..200 {
            srt.push_str(&format!(
                "{}\n00:{:02}:{:02},000 --> 00:{:02}:{:02},500\nThis is subtitle line number {n} about the harbour crossing.\n\n",
                n + 1,
                n / 60,
                n % 60,
                n / 60,
                n % 60
            ));
        }
        let m = parse("film.SRT", srt.as_bytes()).unwrap();
        assert_eq!(m.cues, 200);
        assert!(
            m.summary.chars().count() <= MAX_SUMMARY_CHARS + 1,
            "{}",
            m.summary.len()
        );
    }

    #[test]
    fn plain_text_transcripts() {
        let m = parse("call.txt", b"Ada: hello there\nBob: hi Ada\n").unwrap();
        assert_eq!(m.speakers, ["Ada", "Bob"]);
        assert_eq!(m.duration_seconds, None);
    }

    #[test]
    fn bad_input_is_one_clear_error_naming_the_line() {
        let bad_time = "WEBVTT\n\n00:00:01.000 --> 00:00:xx.000\n<v Ada>hi\n";
        assert_eq!(
            parse("bad.vtt", bad_time.as_bytes()).unwrap_err(),
            "line 3: bad timestamp: \"00:00:01.000 --> 00:00:xx.000\""
        );
        let backwards = "1\n00:00:05,000 --> 00:00:01,000\nAda: hi\n";
        assert!(
            parse("b.srt", backwards.as_bytes())
                .unwrap_err()
                .contains("ends before it starts")
        );
        assert!(
            parse("x.vtt", b"00:00:01.000 --> 00:00:02.000\nhi")
                .unwrap_err()
                .contains("must start with WEBVTT")
        );
        assert_eq!(parse("e.txt", b"").unwrap_err(), "empty transcript");
        assert!(
            parse("u.txt", &[0x41, 0xff, 0x42])
                .unwrap_err()
                .contains("not UTF-8")
        );
        assert_eq!(
            parse("n.vtt", b"WEBVTT\n\n").unwrap_err(),
            "no spoken text found"
        );
    }

    #[test]
    fn the_summary_keeps_the_most_representative_lines_in_order() {
        let lines = [
            "hello",
            "the billing worker rollback plan",
            "lunch",
            "billing worker deploy on friday",
            "bye",
        ];
        let summary = summarise(&lines, 2);
        assert_eq!(
            summary,
            "the billing worker rollback plan billing worker deploy on friday"
        );
    }
}

/// The parser on damaged copies of the fixture transcripts: never a panic (a panic aborts
/// the whole sync in the component), every failure one error message.
#[cfg(test)]
mod mutated {
    use levh_connector_sdk::fixture;
    use levh_connector_sdk::mutations::mutated;
    use proptest::prelude::*;

    use super::parse;

    static FIXTURES: &[(&str, &[u8])] = &[
        fixture!("transcripts", "standup.vtt"),
        fixture!("transcripts", "budget-review.srt"),
        fixture!("transcripts", "atlas-call.txt"),
        fixture!("transcripts", "bad-timestamps.vtt"),
        fixture!("transcripts", "truncated.vtt"),
        fixture!("transcripts", "empty.vtt"),
        fixture!("transcripts", "not-utf8.txt"),
    ];

    /// The formats' delimiters, and text that is more than one byte a character (a slice at
    /// a byte offset inside one panics).
    static TOKENS: &[&str] = &[
        "WEBVTT\n",
        "\n\n",
        "\r\n",
        " --> ",
        "-->",
        "00:00:01.000",
        "00:00:01,000",
        ":",
        ".",
        ",",
        "<v ",
        "<v.loud ",
        ">",
        "<",
        "</v>",
        "&amp;",
        "&",
        "NOTE ",
        "STYLE\n",
        ": ",
        "1\n",
        "\u{feff}",
        "é",
        "日本",
        "🦀",
        "99:99:99.999",
        "-1:00.000",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn damaged_transcripts_never_panic((name, bytes) in mutated(FIXTURES, TOKENS)) {
            match parse(name, &bytes) {
                Ok(meeting) => prop_assert!(meeting.cues > 0),
                Err(message) => prop_assert!(!message.trim().is_empty()),
            }
        }
    }
}
