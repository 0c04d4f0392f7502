//! Cue timing lines: `00:00:01.000 --> 00:00:04.000` (WebVTT, SubRip).

/// `HH:MM:SS.mmm` (VTT) or `HH:MM:SS,mmm` (SRT); hours optional in VTT. The seconds
/// must be written in full (`SS.mmm`), so a truncated timestamp is refused.
fn seconds(text: &str) -> Option<f64> {
    let text = text.trim().replace(',', ".");
    let full_seconds = text.rsplit(':').next().is_some_and(|s| {
        s.len() == 6
            && s.as_bytes()[2] == b'.'
            && s.bytes()
                .enumerate()
                .all(|(i, b)| i == 2 || b.is_ascii_digit())
    });
    if !full_seconds {
        return None;
    }
    let parts: Vec<&str> = text.split(':').collect();
    let (h, m, s) = match parts.as_slice() {
        [h, m, s] => (
            h.parse::<f64>().ok()?,
            m.parse::<f64>().ok()?,
            s.parse::<f64>().ok()?,
        ),
        [m, s] => (0.0, m.parse::<f64>().ok()?, s.parse::<f64>().ok()?),
        _ => return None,
    };
    (m < 60.0 && s < 60.0 && h >= 0.0).then_some(h * 3600.0 + m * 60.0 + s)
}

/// Reads a cue timing line: `None` when `line` is not one, an error when it is one whose
/// times cannot be read (the cue is then dropped, as WebVTT's parser drops it).
pub(super) fn timing(line: &str) -> Option<Result<(f64, f64), String>> {
    let (start, rest) = line.split_once("-->")?;
    let end = rest.split_whitespace().next().unwrap_or("");
    Some(match (seconds(start), seconds(end)) {
        (Some(a), Some(b)) if b >= a => Ok((a, b)),
        (Some(_), Some(_)) => Err(format!("cue ends before it starts: {line:?}")),
        _ => Err(format!("bad timestamp: {line:?}")),
    })
}

/// Whether `line` is a cue timing line, readable or not.
pub(super) fn is_timing(line: &str) -> bool {
    timing(line).is_some()
}
