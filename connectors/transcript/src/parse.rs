//! WebVTT, SubRip, SBV and plain-text transcripts into one meeting.
//!
//! Hand-written: the formats are a few line-based rules, and the subtitle crates on the
//! registry either pull in heavy dependencies or stop at the first bad cue, where a
//! memory layer wants a clear error naming the line.

use std::collections::HashMap;

mod cues;
mod speech;
mod timing;

use cues::{Piece, pieces};
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
    /// Cues left out because their timing could not be read; the rest of the file is
    /// read all the same.
    pub dropped: Vec<DroppedCue>,
}

/// A cue left out of a meeting, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedCue {
    /// The line its timing is on (or its number, when the timing line is missing).
    pub line: usize,
    /// Why, e.g. `bad timestamp: "00:00:01.000 --> 00:00:xx.000"`.
    pub reason: String,
}

impl std::fmt::Display for DroppedCue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Adds a cue's lines to the meeting: each cue its own utterance, a line without a
/// speaker continuing it, a line with one starting the next (two speakers in one cue).
fn utter(lines: &[&str], format: Format, utterances: &mut Vec<(Option<String>, String)>) {
    let mut in_cue = false;
    for line in lines {
        let (who, words) = speaker(line, format);
        if words.is_empty() {
            continue;
        }
        match (who, utterances.last_mut()) {
            (None, Some(last)) if in_cue => {
                last.1.push(' ');
                last.1.push_str(&words);
            }
            (who, _) => utterances.push((who, words)),
        }
        in_cue = true;
    }
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
    /// `.sbv`: YouTube's captions, cues timed `0:00:01.000,0:00:04.000`.
    Sbv,
    /// `.txt`: one `Name: text` utterance a line.
    Plain,
}

impl Format {
    fn of(name: &str) -> Option<Format> {
        match extension(name)?.as_str() {
            "vtt" => Some(Format::WebVtt),
            "srt" => Some(Format::SubRip),
            "sbv" => Some(Format::Sbv),
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
                format!("unsupported format .{other}: levh reads .vtt, .srt, .sbv and .txt transcripts")
            }
            None => "unsupported format (no extension): levh reads .vtt, .srt, .sbv and .txt transcripts"
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
    let mut dropped = Vec::new();
    if format == Format::Plain {
        for line in text.lines() {
            utter(&[line.trim()], format, &mut utterances);
        }
    } else {
        let pieces = pieces(text, format);
        let untimed = !pieces.iter().any(|p| matches!(p, Piece::Cue { .. }));
        // A subtitle file without a single timing line is not one: a transcript or
        // another format saved as .srt. Read as text it would store its cue numbers as
        // speech ("1 some text"), so it is refused, saying how to have it read. (A .vtt
        // file without cues is valid WebVTT, only empty: "no spoken text found" below.)
        let expected_timing = match format {
            Format::SubRip => Some(("`00:00:01,000 --> 00:00:04,000`", "a SubRip")),
            Format::Sbv => Some(("`0:00:01.000,0:00:04.000`", "an SBV")),
            Format::WebVtt | Format::Plain => None,
        };
        if untimed && let Some((timing, a_format)) = expected_timing {
            return Err(format!(
                "no cue timing found ({timing}): not {a_format} file; \
                 rename it .txt to read it as a plain transcript"
            ));
        }
        for piece in pieces {
            match piece {
                Piece::Cue {
                    timing: Ok((_, end)),
                    text,
                    ..
                } => {
                    duration = Some(end);
                    utter(&text, format, &mut utterances);
                }
                // The cue is dropped and the rest read, as WebVTT's parser does.
                Piece::Cue {
                    line,
                    timing: Err(reason),
                    ..
                } => dropped.push(DroppedCue { line, reason }),
                Piece::Untimed { line } => dropped.push(DroppedCue {
                    line,
                    reason: "a cue number without its timing line".into(),
                }),
                // WebVTT has no text outside cues: its parser skips such a block (a
                // stray `Region:` line, an unmarked comment).
                Piece::Loose(_) if format == Format::WebVtt => {}
                // SubRip or SBV text outside a cue is kept as speech: usually a cue's
                // text after a blank line in a file written by hand.
                Piece::Loose(text) => utter(&text, format, &mut utterances),
            }
        }
    }
    if utterances.is_empty() {
        // Every cue dropped: the file as a whole is the error, named by its first cue.
        return Err(match dropped.as_slice() {
            [] => "no spoken text found".into(),
            [only] => only.to_string(),
            [first, rest @ ..] => format!("{first} (and {} more cues unreadable)", rest.len()),
        });
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
        dropped,
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
    fn a_timing_line_inside_a_cue_starts_the_next_cue() {
        let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nAda: the draft is ready\n00:00:02.000 --> 00:00:05.000\nand it goes out tonight\n";
        let m = parse("run-on.vtt", vtt.as_bytes()).unwrap();
        assert_eq!(m.text, "Ada: the draft is ready\nand it goes out tonight");
        assert_eq!(m.cues, 2);
        assert_eq!(m.duration_seconds, Some(5.0));
    }

    #[test]
    fn a_subrip_file_without_any_cue_timing_is_refused() {
        let srt = "1\nsome text\n\n2\nmore text\n";
        assert_eq!(
            parse("untimed.srt", srt.as_bytes()).unwrap_err(),
            "no cue timing found (`00:00:01,000 --> 00:00:04,000`): not a SubRip file; \
             rename it .txt to read it as a plain transcript"
        );
    }

    #[test]
    fn webvtt_region_style_and_note_blocks_are_never_speech() {
        let vtt = "WEBVTT\n\nRegion: id=fred width=40%\n\nSTYLE\n::cue(v[voice=\"Ana\"]) { color: red }\n\nNOTE\tSpeaker: hidden\n\n00:00:01.000 --> 00:00:02.000\nAda: hello\n";
        let m = parse("blocks.vtt", vtt.as_bytes()).unwrap();
        assert_eq!(m.speakers, ["Ada"]);
        assert_eq!(m.text, "Ada: hello");
    }

    #[test]
    fn a_cue_with_a_bad_timestamp_is_dropped_and_the_rest_kept() {
        let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ada>Kickoff at ten.\n\n00:00:02.000 --> 00:00:0x.000\n<v Bo>Lost words.\n\n00:00:09.000 --> 00:00:08.000\n<v Bo>Backwards words.\n\n00:00:10.000 --> 00:00:12.000\n<v Cy>Room four.\n";
        let m = parse("gaps.vtt", vtt.as_bytes()).unwrap();
        assert_eq!(m.text, "Ada: Kickoff at ten.\nCy: Room four.");
        assert_eq!(m.speakers, ["Ada", "Cy"]);
        assert_eq!(m.duration_seconds, Some(12.0));
        assert_eq!(
            m.dropped
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "line 6: bad timestamp: \"00:00:02.000 --> 00:00:0x.000\"",
                "line 9: cue ends before it starts: \"00:00:09.000 --> 00:00:08.000\"",
            ]
        );
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nAda: one\n\n2\nAda: lost its timing\n\n3\n00:00:03,000 --> 00:00:04,000\nAda: three\n";
        let m = parse("gaps.srt", srt.as_bytes()).unwrap();
        assert_eq!(m.text, "Ada: one\nAda: three");
        assert_eq!(
            m.dropped[0].to_string(),
            "line 5: a cue number without its timing line"
        );
    }

    #[test]
    fn sbv_captions_are_read() {
        let sbv = "0:00:00.500,0:00:03.000\nMara: The ferry leaves at noon.\n\n0:00:03.000,0:00:0x.000\nLost words.\n\n0:00:04.000,0:00:06.250\nJonas: I will bring the tickets\nfor everyone.\n";
        let m = parse("Harbour.SBV", sbv.as_bytes()).unwrap();
        assert_eq!(m.speakers, ["Mara", "Jonas"]);
        assert_eq!(
            m.text,
            "Mara: The ferry leaves at noon.\nJonas: I will bring the tickets for everyone."
        );
        assert_eq!(m.duration_seconds, Some(6.25));
        assert_eq!(
            m.dropped[0].to_string(),
            "line 4: bad timestamp: \"0:00:03.000,0:00:0x.000\""
        );
        assert!(is_transcript("captions/harbour.sbv"));
        assert!(
            parse("plain.sbv", b"Mara: no timing here\n")
                .unwrap_err()
                .starts_with("no cue timing found (`0:00:01.000,0:00:04.000`): not an SBV file")
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
