//! The blocks of a timed file and the cues in them.

use super::Format;
use super::speech::speaker;
use super::timing::timing;

/// The blocks of a timed file (lines between blank lines), each line with its number.
pub(super) fn blocks(text: &str) -> Vec<Vec<(usize, &str)>> {
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

/// One block of a WebVTT or SubRip file. WebVTT's header (`WEBVTT` and its `Kind:` /
/// `Language:` lines) and its `NOTE`, `STYLE` and `REGION` blocks say nothing that was
/// spoken; a cue is an optional id (or SRT index), its timing line, and its text — each
/// cue its own utterance, a line without a speaker continuing the cue it is in.
pub(super) fn cue(
    block: &[(usize, &str)],
    format: Format,
    utterances: &mut Vec<(Option<String>, String)>,
    duration: &mut Option<f64>,
) -> Result<(), String> {
    let first = block[0].1;
    if format == Format::WebVtt
        && (first.starts_with("WEBVTT")
            || first == "NOTE"
            || first.starts_with("NOTE ")
            || first == "STYLE"
            || first == "REGION")
    {
        return Ok(());
    }
    let timing_at = block.iter().position(|(_, line)| timing(line).is_some());
    let text = match timing_at {
        Some(at) => {
            let (number, line) = block[at];
            if let Some(result) = timing(line) {
                let (_, end) = result.map_err(|e| format!("line {number}: {e}"))?;
                *duration = Some(end);
            }
            &block[at + 1..]
        }
        // Text outside any cue: kept as speech (files written by hand), never dropped.
        None => block,
    };
    let mut in_cue = false;
    for (_, line) in text {
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
    Ok(())
}
