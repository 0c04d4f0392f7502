//! The live activity feed. Every process on the store (`levh capture` in a terminal,
//! `levh mcp stdio` under an agent, a sync) appends to the event log; the first feed
//! subscriber starts one tailer that polls the log and broadcasts new rows. Each socket
//! forwards only its principal's workspace, after the workspace's recent history (so a feed
//! opened on a quiet store is not empty). Events name ids, never content.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Extension, State};
use axum::response::Response;
use levh_core::{Principal, ServerStore};
use tokio::sync::{OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use crate::{ApiError, AppState};

/// One event as the feed sends it (a row of the event log).
pub type FeedEvent = levh_core::LoggedEvent;

/// How often the tailer looks for new rows. A write in another process shows up within
/// this plus the time to read it.
const POLL: Duration = Duration::from_millis(150);
/// Rows read per poll; a burst larger than this is spread over several polls.
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
                let last = tokio::task::spawn_blocking(move || store.last_event_seq())
                    .await
                    .map_err(ApiError::internal)?
                    .map_err(ApiError::internal)?;
                tokio::spawn(tail(
                    self.store.clone(),
                    self.sender.clone(),
                    last,
                    shutdown,
                ));
                Ok(())
            })
            .await
            .map(|_| ())
    }
}

async fn tail(
    store: Arc<dyn ServerStore>,
    sender: broadcast::Sender<Arc<FeedEvent>>,
    mut last: i64,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        let reader = store.clone();
        let read = tokio::task::spawn_blocking(move || reader.events_after(last, BATCH)).await;
        match read {
            Ok(Ok(events)) => {
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
