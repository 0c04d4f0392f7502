//! Walking a directory into text items, a page at a time.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::json;

/// What to take.
#[derive(Debug, Clone)]
pub struct Options {
    /// Globs of files to take (relative paths).
    pub include: Vec<String>,
    /// Globs of files to leave out.
    pub exclude: Vec<String>,
    /// Larger files are skipped.
    pub max_bytes: u64,
}

/// One text file.
#[derive(Debug, Clone, PartialEq)]
pub struct TextFile {
    /// Path relative to the directory, with `/` separators: the stable source id.
    pub relative_path: String,
    /// The file name.
    pub title: String,
    /// Its text.
    pub content: String,
    /// Modification time, RFC 3339 (UTC).
    pub modified: Option<String>,
    /// Path and size.
    pub metadata: serde_json::Value,
}

/// A page of results.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// Files read.
    pub files: Vec<TextFile>,
    /// (location, message) of files that could not be read or were skipped.
    pub errors: Vec<(String, String)>,
    /// Where to continue.
    pub next_cursor: Option<String>,
    /// Whether the walk is complete.
    pub done: bool,
}

/// Files per page: keeps a page well under the host's output cap.
pub const PAGE_FILES: usize = 100;

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(Glob::new(pattern).map_err(|e| format!("bad glob {pattern:?}: {e}"))?);
    }
    builder.build().map_err(|e| e.to_string())
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<(String, String)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push((relative(dir, root), format!("cannot list: {e}")));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, root, out, errors);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Reads the files after `cursor` (the last relative path of the previous page), a page
/// at a time, in path order. Binary files (a NUL byte or invalid UTF-8) and files over the
/// size limit are reported in `errors` and skipped.
pub fn scan(root: &Path, options: &Options, cursor: Option<&str>) -> Result<Scan, String> {
    if !root.is_dir() {
        return Err(format!("`directory` {} is not a directory", root.display()));
    }
    let include = globs(&options.include)?;
    let exclude = globs(&options.exclude)?;
    let mut paths = Vec::new();
    let mut errors = Vec::new();
    walk(root, root, &mut paths, &mut errors);
    let mut candidates: Vec<(String, PathBuf)> = paths
        .into_iter()
        .map(|p| (relative(&p, root), p))
        .filter(|(rel, _)| include.is_match(rel) && !exclude.is_match(rel))
        .filter(|(rel, _)| cursor.is_none_or(|c| rel.as_str() > c))
        .collect();
    candidates.sort();
    let done = candidates.len() <= PAGE_FILES;
    candidates.truncate(PAGE_FILES);
    let next_cursor = if done {
        None
    } else {
        candidates.last().map(|(rel, _)| rel.clone())
    };

    let mut files = Vec::new();
    for (rel, path) in candidates {
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if size > options.max_bytes {
            errors.push((
                rel,
                format!(
                    "skipped: {size} bytes is over max_bytes {}",
                    options.max_bytes
                ),
            ));
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                errors.push((rel, format!("cannot read: {e}")));
                continue;
            }
        };
        if bytes.iter().take(8192).any(|b| *b == 0) {
            errors.push((rel, "skipped: binary file".into()));
            continue;
        }
        let content = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                errors.push((
                    rel,
                    format!(
                        "skipped: not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                ));
                continue;
            }
        };
        if content.trim().is_empty() {
            errors.push((rel, "skipped: empty file".into()));
            continue;
        }
        let modified = levh_connector_sdk::modified_at(&path);
        let title = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| rel.clone());
        files.push(TextFile {
            metadata: json!({ "path": rel, "bytes": size }),
            relative_path: rel,
            title,
            content,
            modified,
        });
    }
    Ok(Scan {
        files,
        errors,
        next_cursor,
        done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            include: vec!["**/*".into()],
            exclude: vec![],
            max_bytes: 1000,
        }
    }

    #[test]
    fn reads_text_files_and_reports_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# Alpha\nnotes").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "beta").unwrap();
        std::fs::write(dir.path().join("bin.dat"), [0u8, 1, 2]).unwrap();
        std::fs::write(dir.path().join("latin1.txt"), [0x63, 0x61, 0x66, 0xe9]).unwrap();
        std::fs::write(dir.path().join("big.txt"), "x".repeat(2000)).unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let scan = scan(dir.path(), &options(), None).unwrap();
        let ids: Vec<&str> = scan
            .files
            .iter()
            .map(|f| f.relative_path.as_str())
            .collect();
        assert_eq!(ids, ["a.md", "sub/b.txt"]);
        assert_eq!(scan.errors.len(), 4, "{:?}", scan.errors);
        assert!(
            scan.errors
                .iter()
                .any(|(l, m)| l == "latin1.txt" && m.contains("UTF-8"))
        );
        assert!(scan.done);
        assert!(scan.files[0].modified.as_deref().unwrap().ends_with('Z'));
    }

    #[test]
    fn pages_continue_after_the_cursor_and_globs_filter() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(PAGE_FILES + 5) {
            std::fs::write(dir.path().join(format!("n{i:04}.md")), format!("note {i}")).unwrap();
        }
        std::fs::write(dir.path().join("skip.log"), "log").unwrap();
        let options = Options {
            exclude: vec!["*.log".into()],
            ..options()
        };
        let first = scan(dir.path(), &options, None).unwrap();
        assert_eq!(first.files.len(), PAGE_FILES);
        assert!(!first.done);
        let second = scan(dir.path(), &options, first.next_cursor.as_deref()).unwrap();
        assert_eq!(second.files.len(), 5);
        assert!(second.done);
        assert!(
            scan(
                dir.path(),
                &Options {
                    include: vec!["[".into()],
                    ..options
                },
                None
            )
            .is_err()
        );
    }
}
