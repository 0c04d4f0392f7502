//! Walking a directory into text items, a page at a time.
//!
//! Nothing under the directory is left out without a word, except what the person's own
//! `include`/`exclude` globs leave out: a file is read (an item), passed over on purpose
//! (`skipped`, with the reason — binary, over `max_bytes`, a symbolic link, a socket), or
//! could not be read (an error: not UTF-8, empty, an I/O error).

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
    /// (relative path, reason) of what was passed over on purpose; the host names each in
    /// the sync report as skipped, not failed.
    pub skipped: Vec<(String, String)>,
    /// (location, message) of what could not be read or listed.
    pub errors: Vec<(String, String)>,
    /// Where to continue.
    pub next_cursor: Option<String>,
    /// Whether the walk is complete.
    pub done: bool,
}

/// Files per page: keeps a page well under the host's output cap.
pub const PAGE_FILES: usize = 100;

/// How far into a file the NUL-byte test for binary content looks.
const BINARY_PROBE_BYTES: usize = 8 * 1024;

/// Why a symbolic link is passed over. Not following is a choice, and the same natively
/// and in the component: a link to a path inside the folder points at something read under
/// its own path already (following it would store a duplicate, or loop on a link to a
/// parent), and WASI's path resolution fails with `not-permitted` on any link that leaves
/// the preopened folder or names an absolute path, so following those could only fail.
pub const SYMBOLIC_LINK: &str = "a symbolic link; levh does not follow links (what it points \
     to inside the folder is read under its own path, and nothing outside the folder is granted)";

/// Why a socket, pipe or device node is passed over: reading one can block or never end.
pub const NOT_A_REGULAR_FILE: &str = "not a regular file (a socket, pipe or device)";

/// What the walk met at a path; directories are walked into, never listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Found {
    File,
    SymbolicLink,
    /// A socket, FIFO or device node.
    Special,
}

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(Glob::new(pattern).map_err(|e| format!("bad glob {pattern:?}: {e}"))?);
    }
    builder.build().map_err(|e| e.to_string())
}

fn walk(
    dir: &Path,
    root: &Path,
    out: &mut Vec<(PathBuf, Found)>,
    errors: &mut Vec<(String, String)>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push((relative(dir, root), format!("cannot list: {e}")));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // `file_type` does not follow links, natively and under WASI alike (the preopen's
        // directory entries carry their own type), so a link is seen as a link.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, root, out, errors);
        } else if kind.is_file() {
            out.push((path, Found::File));
        } else if kind.is_symlink() {
            out.push((path, Found::SymbolicLink));
        } else {
            out.push((path, Found::Special));
        }
    }
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Whether the person's globs take this path. A link to a folder (or to something the
/// sandbox cannot see) is named unless `exclude` leaves it out: `include` globs describe
/// files, and whether the folder holds any that match cannot be known without following.
fn asked_for(rel: &str, path: &Path, found: Found, include: &GlobSet, exclude: &GlobSet) -> bool {
    if exclude.is_match(rel) {
        return false;
    }
    match found {
        Found::File | Found::Special => include.is_match(rel),
        Found::SymbolicLink => {
            include.is_match(rel) || !std::fs::metadata(path).is_ok_and(|m| m.is_file())
        }
    }
}

/// `1234567` → `1,234,567`.
fn grouped(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A size as a person reads it, in decimal units as `max_bytes` counts them.
fn readable_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let value = format!("{:.1}", bytes as f64 / unit as f64);
            return format!("{} {name}", value.trim_end_matches(".0"));
        }
    }
    format!("{bytes} bytes")
}

/// Why a file over the cap is passed over; exact bytes too, since a file just over the
/// cap rounds to the cap's own size.
fn over_the_cap(size: u64, cap: u64) -> String {
    format!(
        "{} ({} bytes), over the cap of {} bytes set by max_bytes",
        readable_size(size),
        grouped(size),
        grouped(cap)
    )
}

/// What became of one regular file.
enum Read {
    Text(TextFile),
    Skipped(String),
    Failed(String),
}

fn read_file(rel: &str, path: &Path, max_bytes: u64) -> Read {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > max_bytes {
        return Read::Skipped(over_the_cap(size, max_bytes));
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return Read::Failed(format!("cannot read: {e}")),
    };
    if bytes.iter().take(BINARY_PROBE_BYTES).any(|b| *b == 0) {
        return Read::Skipped("binary file (a NUL byte in the first 8 KiB)".into());
    }
    // Without a NUL byte the file claims to be text; text that is not UTF-8 is an error a
    // person can fix (re-save it as UTF-8), not a choice levh made.
    let content = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            return Read::Failed(format!("not UTF-8 text (invalid byte at offset {offset})"));
        }
    };
    if content.trim().is_empty() {
        return Read::Failed("empty file, nothing to store".into());
    }
    let title = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| rel.to_owned());
    Read::Text(TextFile {
        metadata: json!({ "path": rel, "bytes": size }),
        relative_path: rel.to_owned(),
        title,
        content,
        modified: levh_connector_sdk::modified_at(path),
    })
}

/// Reads the entries after `cursor` (the last relative path of the previous page), a page
/// at a time, in path order. Binary files, files over `max_bytes`, symbolic links and
/// special files are `skipped` by name with the reason; files that cannot be read as
/// text are `errors`.
pub fn scan(root: &Path, options: &Options, cursor: Option<&str>) -> Result<Scan, String> {
    if !root.is_dir() {
        return Err(format!("`directory` {} is not a directory", root.display()));
    }
    let include = globs(&options.include)?;
    let exclude = globs(&options.exclude)?;
    let mut found = Vec::new();
    let mut errors = Vec::new();
    walk(root, root, &mut found, &mut errors);
    let mut candidates: Vec<(String, PathBuf, Found)> = found
        .into_iter()
        .map(|(path, kind)| (relative(&path, root), path, kind))
        .filter(|(rel, path, kind)| asked_for(rel, path, *kind, &include, &exclude))
        .filter(|(rel, _, _)| cursor.is_none_or(|c| rel.as_str() > c))
        .collect();
    candidates.sort();
    let done = candidates.len() <= PAGE_FILES;
    candidates.truncate(PAGE_FILES);
    let next_cursor = if done {
        None
    } else {
        candidates.last().map(|(rel, _, _)| rel.clone())
    };

    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (rel, path, kind) in candidates {
        match kind {
            Found::SymbolicLink => skipped.push((rel, SYMBOLIC_LINK.into())),
            Found::Special => skipped.push((rel, NOT_A_REGULAR_FILE.into())),
            Found::File => match read_file(&rel, &path, options.max_bytes) {
                Read::Text(file) => files.push(file),
                Read::Skipped(reason) => skipped.push((rel, reason)),
                Read::Failed(message) => errors.push((rel, message)),
            },
        }
    }
    Ok(Scan {
        files,
        skipped,
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

    /// Every relative path a scan names, whatever became of it, in order.
    fn named(scan: &Scan) -> Vec<String> {
        let mut names: Vec<String> = scan
            .files
            .iter()
            .map(|f| f.relative_path.clone())
            .chain(scan.skipped.iter().map(|(path, _)| path.clone()))
            .chain(scan.errors.iter().map(|(path, _)| path.clone()))
            .collect();
        names.sort();
        names
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
        // The binary and the oversize file are passed over on purpose, not failed.
        assert_eq!(scan.errors.len(), 2, "{:?}", scan.errors);
        assert_eq!(scan.skipped.len(), 2, "{:?}", scan.skipped);
        assert!(
            scan.errors
                .iter()
                .any(|(l, m)| l == "latin1.txt" && m.contains("UTF-8"))
        );
        assert!(
            scan.errors
                .iter()
                .any(|(l, m)| l == "empty.txt" && m.contains("empty file"))
        );
        assert!(scan.done);
        assert!(scan.files[0].modified.as_deref().unwrap().ends_with('Z'));
    }

    #[test]
    fn binary_and_oversize_files_are_skipped_with_why_not_failed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("note.md"), "kept").unwrap();
        std::fs::write(dir.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
        std::fs::write(dir.path().join("big.txt"), "x".repeat(2500)).unwrap();
        let scan = scan(dir.path(), &options(), None).unwrap();
        assert_eq!(scan.files.len(), 1);
        assert_eq!(scan.errors, [], "nothing here failed");
        assert_eq!(
            scan.skipped,
            [
                (
                    "big.txt".to_owned(),
                    "2.5 kB (2,500 bytes), over the cap of 1,000 bytes set by max_bytes".to_owned()
                ),
                (
                    "logo.png".to_owned(),
                    "binary file (a NUL byte in the first 8 KiB)".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn sizes_read_as_a_person_reads_them() {
        assert_eq!(readable_size(999), "999 bytes");
        assert_eq!(readable_size(1_000_000), "1 MB");
        assert_eq!(readable_size(12_345_678), "12.3 MB");
        assert_eq!(
            over_the_cap(1_000_001, 1_000_000),
            "1 MB (1,000,001 bytes), over the cap of 1,000,000 bytes set by max_bytes"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_named_as_skipped_and_never_followed() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "outside the grant").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.md"), "alpha").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.md"), "beta").unwrap();
        symlink("a.md", root.join("inside.md")).unwrap();
        symlink(outside.path().join("secret.md"), root.join("outside.md")).unwrap();
        symlink("sub", root.join("folder")).unwrap();
        symlink(outside.path(), root.join("away")).unwrap();
        symlink("..", root.join("sub/parent")).unwrap();
        symlink("missing.md", root.join("dangling.md")).unwrap();
        let options = Options {
            include: vec!["**/*.md".into()],
            ..options()
        };
        let scan = scan(root, &options, None).unwrap();
        let read: Vec<&str> = scan
            .files
            .iter()
            .map(|f| f.relative_path.as_str())
            .collect();
        assert_eq!(read, ["a.md", "sub/b.md"], "no link is followed");
        let links: Vec<&str> = scan.skipped.iter().map(|(path, _)| path.as_str()).collect();
        // Links to folders are named though `include` asks for `.md` files: what they hold
        // cannot be known without following them.
        assert_eq!(
            links,
            [
                "away",
                "dangling.md",
                "folder",
                "inside.md",
                "outside.md",
                "sub/parent"
            ]
        );
        assert!(
            scan.skipped.iter().all(|(_, why)| why == SYMBOLIC_LINK),
            "{:?}",
            scan.skipped
        );
        assert_eq!(scan.errors, []);
    }

    #[cfg(unix)]
    #[test]
    fn only_the_persons_globs_leave_something_out_without_a_word() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.md"), "alpha").unwrap();
        std::fs::write(root.join("build.log"), "log").unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(root.join("agent.sock")).unwrap();
        symlink("build.log", root.join("latest.log")).unwrap();
        symlink("a.md", root.join("notes.txt")).unwrap();
        symlink(".", root.join("docs")).unwrap();

        // Asked for nothing in particular: everything is named, whatever became of it.
        let everything = scan(root, &options(), None).unwrap();
        assert_eq!(
            named(&everything),
            [
                "a.md",
                "agent.sock",
                "build.log",
                "docs",
                "latest.log",
                "notes.txt"
            ]
        );
        assert!(
            everything
                .skipped
                .contains(&("agent.sock".into(), NOT_A_REGULAR_FILE.into()))
        );

        // What the globs leave out is the person's choice, and stays out of the report.
        let chosen = Options {
            include: vec!["**/*.md".into()],
            exclude: vec!["*.log".into()],
            ..options()
        };
        let scan = scan(root, &chosen, None).unwrap();
        assert_eq!(named(&scan), ["a.md", "docs"]);
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
