//! Events that change no memory — each recall's `recall` event — are appended in batches,
//! not one transaction each. Measured (`cargo bench -p levh-http --bench rest_load`): at
//! 10k memories a search followed by its own commit of one event took 8.8 ms p50 against
//! 5.8 ms for the search alone, because a commit makes every reader connection drop its
//! page cache before its next read. At 100k, batched every 200 ms they still cost 0.31 ms
//! p50 and doubled p99; every second, 0.03 ms and p99 unchanged.
//!
//! When they reach the log:
//! - with the next write transaction of this store, before its own changes (a feedback
//!   on what a recall returned comes after that recall in the log);
//! - before this process reads the log (reports, the live feed, a memory's history);
//! - at most [`WINDOW`] after they were logged, by a thread that waits for them;
//! - when the store is dropped.
//!
//! Each keeps the time it was logged at. An in-memory store (tests) writes each at once.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use levh_core::{Actor, EventKind, Timestamp, Workspace};
use rusqlite::{Connection, TransactionBehavior};

/// The longest an event waits to be written.
pub(crate) const WINDOW: Duration = Duration::from_millis(1000);

/// One event waiting.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) at: Timestamp,
    pub(crate) kind: EventKind,
    pub(crate) workspace: Workspace,
    pub(crate) actor: Actor,
    pub(crate) detail: serde_json::Value,
}

/// The events waiting, and the thread that writes them when nothing else has.
#[derive(Debug, Default)]
pub(crate) struct EventBuffer {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct Shared {
    pending: Mutex<Waiting>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct Waiting {
    events: Vec<Pending>,
    stop: bool,
}

impl EventBuffer {
    /// Adds an event; starts the flushing thread the first time, with the writer.
    pub(crate) fn push(&self, event: Pending, writer: &Arc<Mutex<Connection>>) {
        self.waiting().events.push(event);
        self.shared.wake.notify_one();
        let mut flusher = self.flusher.lock().unwrap_or_else(PoisonError::into_inner);
        if flusher.is_none() {
            let shared = Arc::clone(&self.shared);
            let writer = Arc::clone(writer);
            let spawned = std::thread::Builder::new()
                .name("levh-event-log".into())
                .spawn(move || flush_loop(&shared, &writer));
            match spawned {
                Ok(handle) => *flusher = Some(handle),
                // Without the thread they still go out with the next write or read.
                Err(error) => tracing::warn!(%error, "event log thread not started"),
            }
        }
    }

    /// Takes every event waiting (to write them in a transaction of the caller's).
    pub(crate) fn take(&self) -> Vec<Pending> {
        std::mem::take(&mut self.waiting().events)
    }

    /// Puts back events a transaction that failed did not write, ahead of newer ones.
    pub(crate) fn put_back(&self, mut events: Vec<Pending>) {
        if events.is_empty() {
            return;
        }
        let mut waiting = self.waiting();
        events.append(&mut waiting.events);
        waiting.events = events;
    }

    /// Whether any event waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting().events.is_empty()
    }

    /// Stops the thread after it has written what waits (the store is closing).
    pub(crate) fn stop(&self) {
        self.waiting().stop = true;
        self.shared.wake.notify_one();
        let handle = self
            .flusher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }

    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Appends `events` in `tx`, in the order they were logged.
pub(crate) fn write_all(tx: &Connection, events: &[Pending]) -> rusqlite::Result<()> {
    for e in events {
        crate::events::log_event(
            tx,
            e.at,
            e.kind,
            &e.workspace,
            None,
            &e.actor,
            e.detail.clone(),
        )?;
    }
    Ok(())
}

/// Waits for events, lets more gather for [`WINDOW`], writes them all in one transaction
/// on the store's writer; until stopped.
fn flush_loop(shared: &Shared, writer: &Mutex<Connection>) {
    loop {
        {
            let mut waiting = shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            while waiting.events.is_empty() && !waiting.stop {
                waiting = shared
                    .wake
                    .wait(waiting)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if waiting.stop && waiting.events.is_empty() {
                return;
            }
            if !waiting.stop {
                // Let a burst gather; a stop cuts the wait short.
                waiting = shared
                    .wake
                    .wait_timeout_while(waiting, WINDOW, |w| !w.stop)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            drop(waiting);
        }
        let mut conn = writer.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken under the writer's lock: a write transaction that took them first has
        // written them already.
        let events = std::mem::take(
            &mut shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .events,
        );
        if events.is_empty() {
            continue;
        }
        let written = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .and_then(|tx| {
                write_all(&tx, &events)?;
                tx.commit()
            });
        drop(conn);
        if let Err(error) = written {
            tracing::warn!(%error, count = events.len(), "events not written yet; retrying");
            let mut waiting = shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let mut events = events;
            events.append(&mut waiting.events);
            waiting.events = events;
            let stop = waiting.stop;
            drop(waiting);
            if stop {
                return;
            }
            std::thread::sleep(WINDOW);
        }
    }
}

#[cfg(test)]
mod tests {
    use levh_core::{ServerStore, Store};

    use super::*;
    use crate::SqliteStore;

    fn recall(n: u64) -> serde_json::Value {
        serde_json::json!({ "operation": "search", "returned": [], "words": n })
    }

    fn logged_in_file(path: &std::path::Path) -> Vec<(String, u64)> {
        let conn = Connection::open(path).unwrap();
        let mut statement = conn
            .prepare("SELECT kind, detail FROM events ORDER BY seq")
            .unwrap();
        statement
            .query_map([], |row| {
                let detail: String = row.get(1)?;
                let detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
                Ok((row.get(0)?, detail["words"].as_u64().unwrap_or(0)))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// A buffered event reaches the file by itself within the window; this process's
    /// readers see it at once; a write after it comes after it in the log; closing the
    /// store writes what still waits.
    #[test]
    fn buffered_events_are_written_in_order_read_at_once_and_never_lost_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let store = SqliteStore::open(&path).unwrap();
        let space = Workspace::default();
        let now = Timestamp::from_second(1_780_000_000).unwrap();
        let actor = Actor::cli();
        store
            .log_event(&space, EventKind::Recall, &actor, now, &recall(1))
            .unwrap();
        // Another connection (another process) sees it within the window.
        let start = std::time::Instant::now();
        while logged_in_file(&path).is_empty() {
            assert!(start.elapsed() < WINDOW * 20, "never written");
            std::thread::sleep(Duration::from_millis(20));
        }
        // This process reads it at once.
        store
            .log_event(&space, EventKind::Recall, &actor, now, &recall(2))
            .unwrap();
        let seen = ServerStore::events_after(&store, 0, 10).unwrap();
        assert_eq!(seen.len(), 2);
        // A write after a recall comes after it in the log.
        store
            .log_event(&space, EventKind::Recall, &actor, now, &recall(3))
            .unwrap();
        let record = crate::test_records::record("a note".into(), now, "default", "p", None);
        store.insert(&record, &[], &|_| None, &actor).unwrap();
        store
            .log_event(&space, EventKind::Recall, &actor, now, &recall(4))
            .unwrap();
        drop(store);
        let kinds = logged_in_file(&path);
        assert_eq!(
            kinds,
            [
                ("recall".to_owned(), 1),
                ("recall".to_owned(), 2),
                ("recall".to_owned(), 3),
                ("store".to_owned(), 0),
                ("recall".to_owned(), 4),
            ]
        );
    }
}
