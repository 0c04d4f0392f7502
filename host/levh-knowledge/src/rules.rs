//! The rule files: per language, lines of `+ REGEX` (a signal) and `- REGEX` (a block),
//! `#` comments. A sentence matches when a signal does and no block does; rules are
//! matched case-insensitively.

use regex::RegexSet;

/// A rule file that does not parse: which file, which line, and why.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RuleError {
    /// The file's name.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Signals and blocks, from one or more rule files.
#[derive(Debug, Clone)]
pub struct Rules {
    signals: RegexSet,
    blocks: RegexSet,
}

impl Rules {
    /// Rules from `(file name, text)` pairs, e.g. one file per language.
    pub fn parse(files: &[(&str, &str)]) -> Result<Self, RuleError> {
        let (mut signals, mut blocks) = (Vec::new(), Vec::new());
        for (file, text) in files {
            for (number, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let error = |message: String| RuleError {
                    file: (*file).to_owned(),
                    line: number + 1,
                    message,
                };
                let (list, pattern) = match line.split_at(1) {
                    ("+", pattern) => (&mut signals, pattern.trim()),
                    ("-", pattern) => (&mut blocks, pattern.trim()),
                    _ => {
                        return Err(error(format!(
                            "expected `+ PATTERN` or `- PATTERN`, found {line:?}"
                        )));
                    }
                };
                // Checked one by one, so that the error names the line.
                regex::Regex::new(&format!("(?i){pattern}"))
                    .map_err(|e| error(format!("bad pattern: {e}")))?;
                list.push(format!("(?i){pattern}"));
            }
        }
        let set = |patterns: &[String]| {
            RegexSet::new(patterns).map_err(|e| RuleError {
                file: files.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", "),
                line: 0,
                message: e.to_string(),
            })
        };
        Ok(Self {
            signals: set(&signals)?,
            blocks: set(&blocks)?,
        })
    }

    /// Whether `sentence` matches: a signal does and no block does.
    pub fn matches(&self, sentence: &str) -> bool {
        self.signals.is_match(sentence) && !self.blocks.is_match(sentence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_counts_unless_a_block_matches_and_errors_name_the_line() {
        let rules =
            Rules::parse(&[("t.rules", "# c\n+ \\bdecided\\b\n- \\bnot decided\\b\n")]).unwrap();
        assert!(rules.matches("We DECIDED to wait"));
        assert!(!rules.matches("We have not decided"));
        assert!(!rules.matches("We decide later"));
        let error = Rules::parse(&[("t.rules", "+ ok\n* nope\n")]).unwrap_err();
        assert_eq!((error.file.as_str(), error.line), ("t.rules", 2));
        let error = Rules::parse(&[("t.rules", "+ (unclosed\n")]).unwrap_err();
        assert!(
            error.to_string().starts_with("t.rules:1: bad pattern"),
            "{error}"
        );
    }
}
