//! Cue timing lines: `00:00:01.000 --> 00:00:04.000` (WebVTT, SubRip) and
//! `0:00:01.000,0:00:04.000` (SBV, YouTube's caption format).

use super::Format;

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
pub(super) fn timing(line: &str, format: Format) -> Option<Result<(f64, f64), String>> {
    let (start, end) = match format {
        Format::Sbv => sbv_times(line)?,
        _ => {
            let (start, rest) = line.split_once("-->")?;
            (start, rest.split_whitespace().next().unwrap_or(""))
        }
    };
    Some(match (seconds(start), seconds(end)) {
        (Some(a), Some(b)) if b >= a => Ok((a, b)),
        (Some(_), Some(_)) => Err(format!("cue ends before it starts: {line:?}")),
        _ => Err(format!("bad timestamp: {line:?}")),
    })
}

/// Whether `line` is a cue timing line, readable or not.
pub(super) fn is_timing(line: &str, format: Format) -> bool {
    timing(line, format).is_some()
}

/// The two times of an SBV timing line: one word, `start,end`, each side starting with a
/// digit and holding a `:`. Loose on purpose, so that a damaged time (`0:00:0x.000`) is
/// still seen as a timing line and its cue dropped, not read as speech.
fn sbv_times(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    if line.contains(char::is_whitespace) {
        return None;
    }
    let (start, end) = line.split_once(',')?;
    let time_like =
        |side: &str| side.starts_with(|c: char| c.is_ascii_digit()) && side.contains(':');
    (time_like(start) && time_like(end)).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbv_timing_lines_are_read() {
        assert_eq!(
            timing("0:00:01.000,0:00:04.500", Format::Sbv),
            Some(Ok((1.0, 4.5)))
        );
        assert_eq!(
            timing("0:00:01.000,0:00:0x.000", Format::Sbv),
            Some(Err("bad timestamp: \"0:00:01.000,0:00:0x.000\"".into()))
        );
        // Speech with a comma and a colon is no timing line, and SBV's form is not
        // SubRip's.
        assert_eq!(timing("Ana: one, two: three", Format::Sbv), None);
        assert_eq!(timing("0:00:01.000,0:00:04.500", Format::SubRip), None);
    }
}
