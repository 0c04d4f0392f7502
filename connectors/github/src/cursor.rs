//! Where a sync continues: which repository, which stage, which API page, and the
//! high-water marks that make the next run incremental.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What is being fetched for a repository.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Issues and pull requests (GitHub lists both at `/issues`).
    #[default]
    Issues,
    /// Releases.
    Releases,
}

/// The saved position. Serialised as JSON in the host's sync state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// Index into the configured repositories.
    #[serde(default)]
    pub repo: usize,
    /// The repository at that index when the cursor was saved: a run with another
    /// `repos` list must not continue this one's pages under a different name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_name: Option<String>,
    #[serde(default)]
    pub stage: Stage,
    /// The next API page (from the `Link` header); none: the stage's first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Per repository: issues updated at or after this were not yet seen by a complete
    /// run (`since` of the next run).
    #[serde(default)]
    pub since: BTreeMap<String, String>,
    /// Per repository: the newest `updated_at` seen by this run so far.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seen: BTreeMap<String, String>,
    /// This pass lists every issue (no `since`), begun at these Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<u64>,
    /// When the last full pass began (Unix seconds); none: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_full: Option<u64>,
}

impl Cursor {
    /// Parses a saved cursor.
    pub fn decode(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The text the host saves.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Notes an issue's `updated_at` (RFC 3339 UTC strings compare in time order).
    pub fn saw(&mut self, repo: &str, updated_at: &str) {
        let newest = self.seen.entry(repo.to_owned()).or_default();
        if updated_at > newest.as_str() {
            *newest = updated_at.to_owned();
        }
    }

    /// Starts the pass over if it was saved for another list of repositories (the
    /// high-water marks are per repository name and stay).
    pub fn for_repos(self, repos: &[String]) -> Self {
        match &self.repo_name {
            Some(name) if repos.get(self.repo) != Some(name) => Self {
                since: self.since,
                last_full: self.last_full,
                ..Self::default()
            },
            _ => self,
        }
    }

    /// The cursor for the next run, once every repository was fetched: this run's
    /// high-water marks become the next run's `since`.
    pub fn finished(mut self) -> Self {
        for (repo, newest) in std::mem::take(&mut self.seen) {
            let since = self.since.entry(repo).or_default();
            if newest > *since {
                *since = newest;
            }
        }
        Self {
            since: self.since,
            last_full: self.full.or(self.last_full),
            ..Self::default()
        }
    }

    /// At the start of a pass (first repository, its issues, first page).
    pub fn at_start(&self) -> bool {
        self.repo == 0 && self.stage == Stage::Issues && self.next.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_a_finished_run_moves_since_forward() {
        let mut c = Cursor {
            repo: 1,
            stage: Stage::Releases,
            next: Some("https://api.github.com/repos/a/b/releases?page=2".into()),
            ..Cursor::default()
        };
        c.saw("a/b", "2026-03-01T10:00:00Z");
        c.saw("a/b", "2026-02-01T10:00:00Z");
        c.saw("a/b", "2026-03-05T08:00:00Z");
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        let next = c.finished();
        assert_eq!(next.repo, 0);
        assert_eq!(next.stage, Stage::Issues);
        assert_eq!(next.next, None);
        assert_eq!(next.since["a/b"], "2026-03-05T08:00:00Z");
        assert!(next.seen.is_empty());
        assert!(Cursor::decode("{not json").is_err());
    }
}
