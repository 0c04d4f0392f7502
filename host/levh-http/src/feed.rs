//! The live activity feed. Every process on the store (`levh capture` in a terminal,
//! `levh mcp stdio` under an agent, a sync, another `levh serve` on the team database)
//! appends to the event log; the first feed subscriber starts one tailer that reads the
//! log's new rows and broadcasts them: when the store says the log grew (PostgreSQL's
//! `LISTEN`), or by polling a store that cannot say (a SQLite file). Each socket
//! forwards only its principal's workspace, after the workspace's recent history (so a feed
//! opened on a quiet store is not empty). Events name ids, never content.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Extension, State};
use axum::response::Response;
use levh_core::{EventSignal, Principal, ServerStore};
use tokio::sync::{Notify, OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use crate::{ApiError, AppState};

/// One event as the feed sends it (a row of the event log).
pub type FeedEvent = levh_core::LoggedEvent;

/// How often the tailer looks for new rows of a store that cannot say when its log grew
/// (SQLite). A write in another process shows up within this plus the time to read it.
const POLL: Duration = Duration::from_millis(150);
/// How often it looks anyway when the store says when its log grows (PostgreSQL's
/// `LISTEN`, [`ServerStore::event_signal`]): a notice lost while the listening
/// connection was replaced delays an event by this at most.
const POLL_WHEN_TOLD: Duration = Duration::from_secs(2);
/// How long the listening thread waits for a notice before it looks at the shutdown.
const LISTEN_TURN: Duration = Duration::from_secs(1);
/// Rows read per poll; a burst larger than this is read in several reads, one after
/// another.
const BATCH: usize = 500;

#[derive(Clone)]
pub(crate) struct Feed {
    store: Arc<dyn ServerStore>,
    sender: broadcast::Sender<Arc<FeedEvent>>,
    started: Arc<OnceCell<()>>,
}

impl Feed {
    pub(crate) fn new(store: Arc<dyn ServerStore>) -> Self {
        Self {
            store,
            sender: broadcast::channel(1024).0,
            started: Arc::default(),
        }
    }

    /// Starts the tailer once, from the log's current end.
    async fn ensure_started(&self, shutdown: CancellationToken) -> Result<(), ApiError> {
        self.started
            .get_or_try_init(|| async {
                let store = self.store.clone();
                let (last, signal) = tokio::task::spawn_blocking(move || {
                    Ok::<_, levh_core::StoreError>((store.last_event_seq()?, store.event_signal()?))
                })
                .await
                .map_err(ApiError::internal)?
                .map_err(ApiError::internal)?;
                let told = signal.map(|signal| {
                    let told = Arc::new(Notify::new());
                    let (store, notify, shutdown) =
                        (self.store.clone(), told.clone(), shutdown.clone());
                    std::thread::spawn(move || listen(signal, store, &notify, &shutdown));
                    told
                });
                tokio::spawn(tail(
                    self.store.clone(),
                    self.sender.clone(),
                    last,
                    told,
                    shutdown,
                ));
                Ok(())
            })
            .await
            .map(|_| ())
    }
}

/// Waits for the store's notices on a thread of its own (the wait blocks) and passes
/// each on to the tailer, until the server shuts down. A lost connection is replaced.
fn listen(
    mut signal: Box<dyn EventSignal>,
    store: Arc<dyn ServerStore>,
    told: &Notify,
    shutdown: &CancellationToken,
) {
    while !shutdown.is_cancelled() {
        match signal.wait(LISTEN_TURN) {
            Ok(true) => told.notify_one(),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, "feed: listening for new events failed; listening again");
                std::thread::sleep(LISTEN_TURN);
                match store.event_signal() {
                    Ok(Some(again)) => signal = again,
                    Ok(None) => return,
                    Err(error) => tracing::warn!(%error, "feed: listening again failed"),
                }
            }
        }
    }
}

/// Reads the rows appended to the log and broadcasts them: when told by the store (and
/// every [`POLL_WHEN_TOLD`] anyway), or every [`POLL`] from a store that cannot tell.
async fn tail(
    store: Arc<dyn ServerStore>,
    sender: broadcast::Sender<Arc<FeedEvent>>,
    mut last: i64,
    told: Option<Arc<Notify>>,
    shutdown: CancellationToken,
) {
    let poll = if told.is_some() { POLL_WHEN_TOLD } else { POLL };
    let mut more = false;
    loop {
        if !more {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(poll) => {}
                () = notified(told.as_deref()) => {}
            }
        }
        let reader = store.clone();
        let read = tokio::task::spawn_blocking(move || reader.events_after(last, BATCH)).await;
        more = false;
        match read {
            Ok(Ok(events)) => {
                more = events.len() == BATCH;
                for event in events {
                    last = event.seq;
                    // No subscriber right now is not an error.
                    let _ = sender.send(Arc::new(event));
                }
            }
            Ok(Err(error)) => tracing::warn!(%error, "feed: reading the event log failed"),
            Err(error) => tracing::warn!(%error, "feed: the reader task failed"),
        }
    }
}

/// The next notice, or never for a store that gives none.
async fn notified(told: Option<&Notify>) {
    match told {
        Some(told) => told.notified().await,
        None => std::future::pending().await,
    }
}

/// `GET /api/ws`: upgrades to a WebSocket that receives one JSON message per event in
/// the caller's workspace.
pub(crate) async fn socket(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    state.feed.ensure_started(state.shutdown.clone()).await?;
    // Subscribed before the history is read, so nothing falls between the two; what
    // both hold is sent once (by seq).
    let receiver = state.feed.sender.subscribe();
    let store = state.feed.store.clone();
    let workspace = principal.workspace.clone();
    let history = tokio::task::spawn_blocking(move || recent(store.as_ref(), &workspace))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    let shutdown = state.shutdown.clone();
    Ok(upgrade.on_upgrade(move |socket| forward(socket, history, receiver, principal, shutdown)))
}

/// Events a new subscriber sees first, oldest first: the workspace's latest
/// [`HISTORY`] among the log's last [`HISTORY_SCAN`] rows (a bounded read, whatever the
/// log's size; a workspace quiet while others were busy shows less).
pub(crate) const HISTORY: usize = 50;
const HISTORY_SCAN: usize = 1_000;

fn recent(
    store: &dyn ServerStore,
    workspace: &levh_core::Workspace,
) -> Result<Vec<FeedEvent>, levh_core::StoreError> {
    let last = store.last_event_seq()?;
    let from = last.saturating_sub(HISTORY_SCAN as i64).max(0);
    let mut events: Vec<FeedEvent> = store
        .events_after(from, HISTORY_SCAN)?
        .into_iter()
        .filter(|e| &e.workspace == workspace)
        .collect();
    let skip = events.len().saturating_sub(HISTORY);
    events.drain(..skip);
    Ok(events)
}

async fn forward(
    mut socket: WebSocket,
    history: Vec<FeedEvent>,
    mut receiver: broadcast::Receiver<Arc<FeedEvent>>,
    principal: Principal,
    shutdown: CancellationToken,
) {
    let mut sent_through = 0;
    for event in &history {
        sent_through = event.seq;
        let Ok(text) = serde_json::to_string(event) else {
            continue;
        };
        if socket.send(Message::Text(text.into())).await.is_err() {
            return;
        }
    }
    loop {
        let message = tokio::select! {
            () = shutdown.cancelled() => break,
            incoming = socket.recv() => match incoming {
                // The client speaks only to close; anything else is ignored.
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => continue,
            },
            event = receiver.recv() => match event {
                Ok(event) if event.workspace == principal.workspace && event.seq > sent_through => {
                    match serde_json::to_string(&*event) {
                        Ok(text) => text,
                        Err(error) => {
                            tracing::warn!(%error, "feed: event not serialisable");
                            continue;
                        }
                    }
                }
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    serde_json::json!({ "kind": "lagged", "missed": missed }).to_string()
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
        };
        if socket.send(Message::Text(message.into())).await.is_err() {
            break;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}
