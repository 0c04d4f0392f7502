//! The `notion` connector: one item per page of the Notion databases the user names, with
//! its properties and block text, over host-policed `wasi:http`.
//!
//! Each `sync` call reads at most one query page (100 pages) of one database, so a run
//! that is stopped resumes where it was; a finished run leaves a cursor with each
//! database's `last_edited_time` high-water mark, and the next run asks only for pages
//! edited on or after it. The host attaches the user's token; this code never sees it.

pub mod api;
pub mod blocks;
pub mod cursor;
pub mod page;
pub mod sync;

#[cfg(target_arch = "wasm32")]
mod component {
    use std::time::{Duration, Instant};

    use levh_connector_sdk::http::{self, HttpError, Response};
    use levh_connector_sdk::{Config, Error, Guest, Level, Manifest, Page};

    use crate::api::Transport;

    struct Notion;

    /// `wasi:http` and the monotonic clock.
    struct Wasi {
        started: Instant,
    }

    impl Transport for Wasi {
        fn send(
            &mut self,
            method: &str,
            url: &str,
            headers: &[(&str, &str)],
            body: Option<&[u8]>,
        ) -> Result<Response, HttpError> {
            http::send(method, url, headers, body)
        }

        fn elapsed(&self) -> Duration {
            self.started.elapsed()
        }

        fn sleep(&mut self, how_long: Duration) {
            std::thread::sleep(how_long);
        }

        fn log(&mut self, message: &str) {
            levh_connector_sdk::log(Level::Info, message);
        }

        fn removed(&mut self, source_id: &str, reason: &str) {
            levh_connector_sdk::removed(source_id, reason);
        }

        fn listing(&mut self, started: bool, complete: bool) {
            levh_connector_sdk::full_listing(started, complete);
        }

        fn unchanged(&mut self, source_id: &str) {
            levh_connector_sdk::unchanged(source_id);
        }
    }

    impl Guest for Notion {
        fn manifest() -> Manifest {
            crate::sync::manifest()
        }

        fn sync(config: Config, cursor: Option<String>) -> Result<Page, Error> {
            let settings = crate::sync::settings(&config)?;
            let mut wasi = Wasi {
                started: Instant::now(),
            };
            crate::sync::run(&mut wasi, &settings, cursor.as_deref())
        }
    }

    levh_connector_sdk::export_connector!(Notion);
}
