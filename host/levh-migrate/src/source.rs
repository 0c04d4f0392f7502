//! The personal store being moved: its SQLite file opened read-only, read in one
//! transaction, a keyset page of one table at a time.

use std::path::PathBuf;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::steps::{NOT_MOVED, STEPS, Step, source_table};
use crate::{ModelVectors, MoveError, NotMoved, Row};

/// The source store, open read-only inside one read transaction.
pub(crate) struct Source {
    pub path: PathBuf,
    connection: Connection,
    pub schema_version: i64,
    /// What names this store in the target's progress table, wherever its file is: a
    /// digest of its first event (its time in microseconds, kind and memory id), which an
    /// append-only log never changes. A store with no event yet is named by its path.
    pub fingerprint: String,
}

impl Source {
    pub fn open(path: &std::path::Path) -> Result<Self, MoveError> {
        let path = crate::store_file(path);
        if !path.is_file() {
            return Err(MoveError::Source(format!(
                "no levh store at {}: give the personal store's levh.db, or the home folder that holds it",
                path.display()
            )));
        }
        let sqlite = |error| MoveError::Sqlite {
            path: path.clone(),
            error,
        };
        // Read-only: the move never changes the person's store.
        let connection = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(sqlite)?;
        let schema_version: i64 = connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(sqlite)?;
        let known = levh_store::latest_schema_version();
        if schema_version > known {
            return Err(MoveError::Source(format!(
                "{} is a levh store of schema version {schema_version}, newer than this levh knows \
                 ({known}); move it with a levh at least as new as the one that wrote it",
                path.display()
            )));
        }
        let is_store: bool = connection
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'memories'",
                [],
                |row| row.get(0),
            )
            .map_err(sqlite)?;
        if schema_version == 0 || !is_store {
            return Err(MoveError::Source(format!(
                "{} is not a levh store (no levh schema in it)",
                path.display()
            )));
        }
        if schema_version < known {
            return Err(MoveError::Source(format!(
                "{} is a levh store of schema version {schema_version}, older than this levh's \
                 ({known}); run any levh command on it once (e.g. `levh --home {} stats`) to bring \
                 it up to date, then move it",
                path.display(),
                path.parent()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )));
        }
        // One snapshot for the whole move: what other processes write meanwhile is not
        // half-read (a later move brings it).
        connection.execute_batch("BEGIN").map_err(sqlite)?;
        let first_event: Option<(i64, i64, String, Option<String>)> = connection
            .query_row(
                "SELECT seq, at, kind, memory_id FROM events ORDER BY seq LIMIT 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .optional()
            .map_err(sqlite)?;
        let fingerprint = match first_event {
            Some((seq, at, kind, memory)) => {
                let digest =
                    Sha256::digest(format!("{seq}|{at}|{kind}|{}", memory.unwrap_or_default()));
                let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                format!("sqlite:{hex}")
            }
            None => format!("sqlite-path:{}", path.display()),
        };
        Ok(Self {
            path,
            connection,
            schema_version,
            fingerprint,
        })
    }

    fn error(&self, error: rusqlite::Error) -> MoveError {
        MoveError::Sqlite {
            path: self.path.clone(),
            error,
        }
    }

    fn filtered(step: &Step, extra: Option<String>) -> String {
        let mut conditions: Vec<String> = Vec::new();
        if !step.filter.is_empty() {
            conditions.push(step.filter.to_owned());
        }
        conditions.extend(extra);
        if conditions.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conditions.join(" AND "))
        }
    }

    /// `(k1, k2) > (?1, ?2)`: SQLite's row values compare a keyset in one condition.
    fn key_condition(step: &Step, operator: &str) -> String {
        let placeholders: Vec<String> = (1..=step.key.len()).map(|i| format!("?{i}")).collect();
        format!(
            "({}) {operator} ({})",
            step.key.join(", "),
            placeholders.join(", ")
        )
    }

    /// Rows of the step in the source.
    pub fn count(&self, step: &Step) -> Result<u64, MoveError> {
        let sql = format!(
            "SELECT count(*) FROM {}{}",
            step.from,
            Self::filtered(step, None)
        );
        let count: i64 = self
            .connection
            .query_row(&sql, [], |row| row.get(0))
            .map_err(|e| self.error(e))?;
        Ok(count.max(0) as u64)
    }

    /// Rows of the step up to (and including) a cursor.
    pub fn count_up_to(&self, step: &Step, cursor: &serde_json::Value) -> Result<u64, MoveError> {
        let sql = format!(
            "SELECT count(*) FROM {}{}",
            step.from,
            Self::filtered(step, Some(Self::key_condition(step, "<=")))
        );
        let values = cursor_values(cursor);
        let count: i64 = self
            .connection
            .query_row(&sql, rusqlite::params_from_iter(values.iter()), |row| {
                row.get(0)
            })
            .map_err(|e| self.error(e))?;
        Ok(count.max(0) as u64)
    }

    /// The next `size` rows of the step after `cursor`, in key order.
    pub fn page(
        &self,
        step: &Step,
        cursor: Option<&serde_json::Value>,
        size: usize,
    ) -> Result<Vec<Row>, MoveError> {
        let columns: Vec<&str> = step
            .key
            .iter()
            .copied()
            .chain(step.columns.iter().map(|(_, expression, _)| *expression))
            .collect();
        let condition = cursor.map(|_| Self::key_condition(step, ">"));
        let sql = format!(
            "SELECT {} FROM {}{} ORDER BY {} LIMIT {size}",
            columns.join(", "),
            step.from,
            Self::filtered(step, condition),
            step.key.join(", ")
        );
        let values = cursor.map(cursor_values).unwrap_or_default();
        let mut statement = self
            .connection
            .prepare_cached(&sql)
            .map_err(|e| self.error(e))?;
        let keys = step.key.len();
        let width = columns.len();
        let rows = statement
            .query_map(rusqlite::params_from_iter(values.iter()), |row| {
                let mut all = Vec::with_capacity(width);
                for index in 0..width {
                    all.push(row.get::<_, Value>(index)?);
                }
                let values = all.split_off(keys);
                Ok(Row { key: all, values })
            })
            .map_err(|e| self.error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(e))?;
        Ok(rows)
    }

    /// The vectors of the store, by model.
    pub fn vectors(&self) -> Result<Vec<ModelVectors>, MoveError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT model, dimension, count(*) FROM memory_embeddings
                  GROUP BY model, dimension ORDER BY model, dimension",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(ModelVectors {
                    model: row.get(0)?,
                    dimension: row.get(1)?,
                    vectors: row.get::<_, i64>(2)?.max(0) as u64,
                })
            })
            .map_err(|e| self.error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(e))?;
        Ok(rows)
    }

    /// Every table of the source that no step reads, with why.
    pub fn not_moved(&self) -> Vec<NotMoved> {
        let tables: Vec<String> = self
            .connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()
            })
            .unwrap_or_default();
        not_moved_of(&tables)
    }

    /// The bytes of an attached file, from the `attachments/` folder beside the store.
    pub fn attachment_file(&self, sha256: &str) -> Option<Vec<u8>> {
        let folder = self.path.with_file_name("attachments");
        let path = folder.join(sha256.get(..2).unwrap_or("00")).join(sha256);
        std::fs::read(path).ok()
    }
}

/// The tables of `tables` that no step reads, each with why.
pub(crate) fn not_moved_of(tables: &[String]) -> Vec<NotMoved> {
    tables
        .iter()
        .filter(|table| {
            !STEPS
                .iter()
                .any(|step| source_table(step) == table.as_str())
        })
        .map(|table| NotMoved {
            table: table.clone(),
            reason: NOT_MOVED
                .iter()
                .find(|(name, _)| *name == table.as_str())
                .map(|(_, why)| (*why).to_owned())
                .unwrap_or_else(|| "unknown to this levh: not moved".to_owned()),
        })
        .collect()
}

fn cursor_values(cursor: &serde_json::Value) -> Vec<Value> {
    cursor
        .as_array()
        .map(|values| {
            values
                .iter()
                .map(|value| match value {
                    serde_json::Value::Number(n) => match n.as_i64() {
                        Some(i) => Value::Integer(i),
                        None => Value::Real(n.as_f64().unwrap_or_default()),
                    },
                    serde_json::Value::String(s) => Value::Text(s.clone()),
                    _ => Value::Null,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new table in a SQLite migration must be moved, or named with why it is not.
    #[test]
    fn every_sqlite_table_is_moved_or_named_here() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("levh.db");
        drop(levh_store::SqliteStore::open(&path).unwrap());
        let connection = Connection::open(&path).unwrap();
        let tables: Vec<String> = connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let unknown: Vec<NotMoved> = not_moved_of(&tables)
            .into_iter()
            .filter(|n| n.reason.starts_with("unknown"))
            .collect();
        assert!(
            unknown.is_empty(),
            "tables neither moved nor explained: {unknown:?}"
        );
        for step in STEPS {
            assert!(
                tables.iter().any(|t| t == source_table(step)),
                "the step {} reads a table the store does not have",
                step.name
            );
        }
    }

    #[test]
    fn a_newer_store_is_refused_naming_both_versions() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("levh.db");
        drop(levh_store::SqliteStore::open(&path).unwrap());
        let newer = levh_store::latest_schema_version() + 1;
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", newer)
            .unwrap();
        let Err(error) = Source::open(home.path()) else {
            panic!("a newer store was opened");
        };
        let text = error.to_string();
        assert!(text.contains(&format!("schema version {newer}")), "{text}");
        assert!(text.contains("newer than this levh knows"), "{text}");
    }
}
