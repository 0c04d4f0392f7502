//! The sync cursor: where the next `sync` call continues, and how far each database has
//! been read (its `last_edited_time` high-water mark).
//!
//! It is JSON, saved by the host after every stored page. A run that ends (`done`) leaves
//! a cursor with only the marks in it; the next run starts from there and asks Notion only
//! for pages edited on or after each database's mark.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The format version written into every cursor.
const VERSION: u32 = 1;

/// Where a sync stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// Format version.
    pub v: u32,
    /// Per database id: the newest `last_edited_time` of a page already returned.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub marks: BTreeMap<String, String>,
    /// The database being read, when a run is under way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<Pass>,
    /// When the last full listing began (Unix seconds); none: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_full: Option<u64>,
}

impl Default for Cursor {
    fn default() -> Self {
        Self {
            v: VERSION,
            marks: BTreeMap::new(),
            pass: None,
            last_full: None,
        }
    }
}

/// One database being read, one API page at a time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    /// Its position in `database_ids` when the cursor was written.
    pub index: usize,
    /// The database id, as configured.
    pub db: String,
    /// The filter of this pass: pages edited on or after this time (the database's mark
    /// when the pass began); none on a first run. Fixed for the pass, because Notion's
    /// `start_cursor` belongs to one query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Notion's `start_cursor` for the next query page; none for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Pages of that query page already returned (a call that ran out of time stops in
    /// the middle of one; the next call asks for the same page and skips these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<String>,
    /// This run lists every page of every database (no filter; pages not edited since
    /// `since` are named, not read), begun at these Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<u64>,
}

impl Pass {
    /// The start of a pass over the database at `index`.
    pub fn begin(index: usize, db: &str, marks: &BTreeMap<String, String>) -> Self {
        Self {
            index,
            db: db.to_owned(),
            since: marks.get(db).cloned(),
            start: None,
            skip: Vec::new(),
            full: None,
        }
    }
}

impl Cursor {
    /// The cursor as saved text.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    /// Reads a saved cursor.
    pub fn decode(text: &str) -> Result<Self, String> {
        let cursor: Self = serde_json::from_str(text).map_err(|e| format!("unreadable: {e}"))?;
        if cursor.v != VERSION {
            return Err(format!(
                "format {} (this connector writes {VERSION})",
                cursor.v
            ));
        }
        Ok(cursor)
    }

    /// Raises a database's mark to `time` if it is newer. Notion writes every time in one
    /// shape (`2026-03-02T10:15:00.000Z`), so text order is time order.
    pub fn raise_mark(&mut self, db: &str, time: &str) {
        let mark = self.marks.entry(db.to_owned()).or_default();
        if time > mark.as_str() {
            *mark = time.to_owned();
        }
    }

    /// The pass to run now over `databases`: the saved one when its database is still
    /// configured, else a fresh pass over the first database.
    pub fn current_pass(&self, databases: &[String]) -> Pass {
        if let Some(pass) = &self.pass {
            if databases.get(pass.index) == Some(&pass.db) {
                return pass.clone();
            }
            if let Some(index) = databases.iter().position(|d| d == &pass.db) {
                return Pass {
                    index,
                    ..pass.clone()
                };
            }
        }
        Pass::begin(0, &databases[0], &self.marks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dbs(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_cursor_round_trips() {
        let mut cursor = Cursor::default();
        cursor.raise_mark("db1", "2026-03-02T10:15:00.000Z");
        cursor.pass = Some(Pass {
            index: 1,
            db: "db2".into(),
            since: Some("2026-01-01T00:00:00.000Z".into()),
            start: Some("4f1c-cursor".into()),
            skip: vec!["page-a".into()],
            full: Some(1_772_445_600),
        });
        let text = cursor.encode();
        assert_eq!(Cursor::decode(&text).unwrap(), cursor);
        let done = Cursor {
            pass: None,
            ..cursor
        };
        assert_eq!(
            done.encode(),
            r#"{"v":1,"marks":{"db1":"2026-03-02T10:15:00.000Z"}}"#
        );
        assert_eq!(Cursor::decode(&done.encode()).unwrap(), done);
    }

    #[test]
    fn unreadable_or_foreign_cursors_are_refused() {
        assert!(Cursor::decode("").is_err());
        assert!(Cursor::decode("page-2").is_err());
        assert!(
            Cursor::decode(r#"{"v":9}"#)
                .unwrap_err()
                .contains("format 9")
        );
    }

    #[test]
    fn marks_only_move_forward() {
        let mut cursor = Cursor::default();
        cursor.raise_mark("db", "2026-03-02T10:15:00.000Z");
        cursor.raise_mark("db", "2026-03-01T10:15:00.000Z");
        assert_eq!(cursor.marks["db"], "2026-03-02T10:15:00.000Z");
        cursor.raise_mark("db", "2026-03-02T10:16:00.000Z");
        assert_eq!(cursor.marks["db"], "2026-03-02T10:16:00.000Z");
    }

    #[test]
    fn a_saved_pass_follows_its_database_when_the_list_changes() {
        let mut cursor = Cursor::default();
        cursor.raise_mark("a", "2026-03-02T10:15:00.000Z");
        let fresh = cursor.current_pass(&dbs(&["a", "b"]));
        assert_eq!((fresh.index, fresh.db.as_str()), (0, "a"));
        assert_eq!(fresh.since.as_deref(), Some("2026-03-02T10:15:00.000Z"));

        cursor.pass = Some(Pass {
            start: Some("c2".into()),
            ..Pass::begin(1, "b", &cursor.marks)
        });
        let same = cursor.current_pass(&dbs(&["a", "b"]));
        assert_eq!((same.index, same.start.as_deref()), (1, Some("c2")));
        let moved = cursor.current_pass(&dbs(&["b", "a"]));
        assert_eq!((moved.index, moved.start.as_deref()), (0, Some("c2")));
        let gone = cursor.current_pass(&dbs(&["a", "c"]));
        assert_eq!((gone.index, gone.db.as_str(), gone.start), (0, "a", None));
    }
}
