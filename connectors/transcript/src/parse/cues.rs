//! The blocks of a timed file and the cues in them, read the way WebVTT's parser reads
//! them (<https://www.w3.org/TR/webvtt1/#file-parsing>); SubRip and SBV are read by the
//! same rules, which they follow in practice.

use super::Format;
use super::timing::{is_timing, timing};

/// A piece of a timed file.
#[derive(Debug, PartialEq)]
pub(super) enum Piece<'a> {
    /// A cue: the line its timing is on, the timing as read (an error when it cannot be),
    /// and its text lines.
    Cue {
        line: usize,
        timing: Result<(f64, f64), String>,
        text: Vec<&'a str>,
    },
    /// A SubRip cue number with no timing line after it: a cue whose timing is lost.
    Untimed { line: usize },
    /// Lines outside any cue.
    Loose(Vec<&'a str>),
}

/// The pieces of a timed file, in order. WebVTT's header, its `NOTE`, `STYLE` and
/// `REGION` blocks are no pieces at all: they say nothing that was spoken.
pub(super) fn pieces(text: &str, format: Format) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    for (at, block) in blocks(text).into_iter().enumerate() {
        let block = match format {
            // The first block of a .vtt file is its header (`WEBVTT`, checked by the
            // caller, with `Kind:`, `Language:` or old-style `Region:` lines); it ends
            // early at a timing line, which opens the first cue.
            Format::WebVtt if at == 0 => {
                let Some(cue_at) = block.iter().position(|(_, line)| is_timing(line, format))
                else {
                    continue;
                };
                &block[cue_at..]
            }
            Format::WebVtt if is_not_a_cue(block[0].1) => continue,
            _ => &block[..],
        };
        for segment in cues(block, format) {
            pieces.push(piece(segment, format));
        }
    }
    pieces
}

/// WebVTT blocks that are never cues, even with a timing line in them: comments, style
/// sheets and region definitions (`NOTE` is followed by a space, a tab or its line end).
fn is_not_a_cue(first_line: &str) -> bool {
    first_line == "NOTE"
        || first_line.starts_with("NOTE ")
        || first_line.starts_with("NOTE\t")
        || first_line == "STYLE"
        || first_line == "REGION"
}

/// The blocks of a timed file (lines between blank lines), each line with its number.
fn blocks(text: &str) -> Vec<Vec<(usize, &str)>> {
    let mut blocks = Vec::new();
    let mut current = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
        } else {
            current.push((number + 1, line.trim()));
        }
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}

/// A block cut before every timing line that does not open it, as WebVTT's parser cuts:
/// a timing line is a cue's own when it is the block's first line, or its second after
/// an identifier; any later one starts the next cue, so a file that leaves out the blank
/// line between two cues still has two cues, not one with a timestamp in its text.
fn cues<'b, 'a>(block: &'b [(usize, &'a str)], format: Format) -> Vec<&'b [(usize, &'a str)]> {
    let mut segments = Vec::new();
    let mut start = 0;
    for at in 1..block.len() {
        if !is_timing(block[at].1, format) {
            continue;
        }
        if at == start + 1 && !is_timing(block[start].1, format) {
            continue;
        }
        // A cue number just before the timing line is that cue's (`2` in SubRip without
        // blank lines), not the last words of the cue before. WebVTT's parser would keep
        // it as text; a bare number said as a whole line is far rarer than a lost blank line.
        let cut = if at - 1 > start && is_cue_number(block[at - 1].1) {
            at - 1
        } else {
            at
        };
        segments.push(&block[start..cut]);
        start = cut;
    }
    segments.push(&block[start..]);
    segments
}

fn is_cue_number(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
}

/// One segment as a cue (an optional identifier, its timing line, its text), a SubRip
/// number that lost its timing, or loose lines.
fn piece<'a>(segment: &[(usize, &'a str)], format: Format) -> Piece<'a> {
    let timing_at = match segment {
        [(_, first), ..] if is_timing(first, format) => Some(0),
        [_, (_, second), ..] if is_timing(second, format) => Some(1),
        _ => None,
    };
    match timing_at {
        Some(at) => {
            let (line, timing_line) = segment[at];
            Piece::Cue {
                line,
                timing: timing(timing_line, format)
                    .unwrap_or_else(|| Err(format!("bad timestamp: {timing_line:?}"))),
                text: segment[at + 1..].iter().map(|(_, text)| *text).collect(),
            }
        }
        None if format == Format::SubRip && is_cue_number(segment[0].1) => {
            Piece::Untimed { line: segment[0].0 }
        }
        None => Piece::Loose(segment.iter().map(|(_, text)| *text).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(line: usize, start: f64, end: f64, text: &[&'static str]) -> Piece<'static> {
        Piece::Cue {
            line,
            timing: Ok((start, end)),
            text: text.to_vec(),
        }
    }

    #[test]
    fn a_second_timing_line_in_a_block_starts_a_new_cue() {
        let vtt = "WEBVTT\n\nopening\n00:00:01.000 --> 00:00:02.000\nfirst words\n00:00:02.000 --> 00:00:03.000\nsecond words\n3\n00:00:03.000 --> 00:00:04.000\nthird words\n";
        assert_eq!(
            pieces(vtt, Format::WebVtt),
            [
                cue(4, 1.0, 2.0, &["first words"]),
                cue(6, 2.0, 3.0, &["second words"]),
                cue(9, 3.0, 4.0, &["third words"]),
            ]
        );
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nfirst words\n2\n00:00:02,000 --> 00:00:03,000\nsecond words\n";
        assert_eq!(
            pieces(srt, Format::SubRip),
            [
                cue(2, 1.0, 2.0, &["first words"]),
                cue(5, 2.0, 3.0, &["second words"]),
            ]
        );
    }

    #[test]
    fn webvtt_header_note_style_and_region_blocks_are_no_pieces() {
        let vtt = "WEBVTT\nKind: captions\nRegion: id=left width=40%\n\nREGION\nid:right\nwidth:40%\n\nSTYLE\n::cue { color: lime }\n\nNOTE\tSpeaker: \"nobody\"\n00:00:00.000 --> 00:00:01.000\n\nRegion: id=stray lines=3\n\n00:00:01.000 --> 00:00:02.000\nonly this\n";
        assert_eq!(
            pieces(vtt, Format::WebVtt),
            [
                Piece::Loose(vec!["Region: id=stray lines=3"]),
                cue(17, 1.0, 2.0, &["only this"]),
            ]
        );
    }

    #[test]
    fn a_subrip_number_without_its_timing_line_is_an_untimed_cue() {
        let srt = "1\nsome text\n\n2\n00:00:02,000 --> 00:00:03,000\ntimed\n";
        assert_eq!(
            pieces(srt, Format::SubRip),
            [Piece::Untimed { line: 1 }, cue(5, 2.0, 3.0, &["timed"])]
        );
    }
}
