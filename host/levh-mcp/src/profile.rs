//! Tool profiles: cumulative bands that decide which tools a client discovers.
//!
//! A profile filters discovery (and refuses calls to tools outside it) so an agent sees
//! only the tools it should use. It is NOT a security boundary: anyone who can start
//! `levh mcp stdio` can start it with `--profile full`, or run the CLI.

use std::fmt;
use std::str::FromStr;

/// A band of tools. Each includes every band before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Profile {
    /// Store, recall, search, context, stats.
    Minimal,
    /// Everyday tools; nothing destructive but pin and reinforce.
    #[default]
    Work,
    /// Update, forget, feedback, purge, redaction, the held queue, sessions.
    Admin,
    /// Connectors too.
    Full,
}

/// Every tool and the first band that has it, in the order `levh mcp profiles` shows.
pub const TOOL_BANDS: &[(&str, Profile)] = &[
    ("store_memory", Profile::Minimal),
    ("recall_memory", Profile::Minimal),
    ("search_memory", Profile::Minimal),
    ("get_context", Profile::Minimal),
    ("get_memory_stats", Profile::Minimal),
    ("list_memories", Profile::Work),
    ("get_memory", Profile::Work),
    ("upsert_memory", Profile::Work),
    ("record_mistake", Profile::Work),
    ("check_action", Profile::Work),
    ("checkpoint", Profile::Work),
    ("continue_task", Profile::Work),
    ("create_goal", Profile::Work),
    ("update_goal", Profile::Work),
    ("list_goals", Profile::Work),
    ("store_memories", Profile::Work),
    ("reinforce_memory", Profile::Work),
    ("pin_memory", Profile::Work),
    ("unpin_memory", Profile::Work),
    ("set_importance", Profile::Work),
    ("related_memories", Profile::Work),
    ("list_fading_memories", Profile::Work),
    ("list_projects", Profile::Work),
    ("list_sources", Profile::Work),
    ("list_decisions", Profile::Work),
    ("list_commitments", Profile::Work),
    ("list_people", Profile::Work),
    ("list_organizations", Profile::Work),
    ("list_entities", Profile::Work),
    ("about_entity", Profile::Work),
    ("entity_graph", Profile::Work),
    ("timeline", Profile::Work),
    ("ask", Profile::Work),
    ("briefing", Profile::Work),
    ("meeting_prep", Profile::Work),
    ("list_conflicts", Profile::Work),
    ("memory_trust", Profile::Work),
    ("report_recalls", Profile::Full),
    ("report_usage", Profile::Full),
    ("evaluate_admission", Profile::Work),
    ("admit_memory", Profile::Work),
    ("attach_file", Profile::Work),
    ("list_attachments", Profile::Work),
    ("update_memory", Profile::Admin),
    ("forget_memory", Profile::Admin),
    ("memory_feedback", Profile::Admin),
    ("purge_memory", Profile::Admin),
    ("audit_secrets", Profile::Admin),
    ("redact_secrets", Profile::Admin),
    ("list_held_memories", Profile::Admin),
    ("decide_held_memory", Profile::Admin),
    ("list_review_memories", Profile::Admin),
    ("review_memory", Profile::Admin),
    ("create_session", Profile::Admin),
    ("end_session", Profile::Admin),
    ("summarize_session", Profile::Admin),
    ("consolidate", Profile::Admin),
    ("undo_consolidation", Profile::Admin),
    ("list_connectors", Profile::Full),
    ("get_connector_help", Profile::Full),
    ("sync_connector", Profile::Full),
    ("connector_sync_status", Profile::Full),
];

impl Profile {
    /// Every profile, smallest first.
    pub const ALL: [Profile; 4] = [Self::Minimal, Self::Work, Self::Admin, Self::Full];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Work => "work",
            Self::Admin => "admin",
            Self::Full => "full",
        }
    }

    /// What the band adds, in words.
    pub fn description(self) -> &'static str {
        match self {
            Self::Minimal => "store, recall, search, context, stats",
            Self::Work => "everyday tools; nothing destructive but pin and reinforce (the default)",
            Self::Admin => "update, forget, feedback, purge, redaction, held queue, sessions",
            Self::Full => "connectors: list, help, sync, sync status",
        }
    }

    /// The band that first has `tool`, if levh has such a tool.
    pub fn of_tool(tool: &str) -> Option<Profile> {
        TOOL_BANDS
            .iter()
            .find(|(name, _)| *name == tool)
            .map(|(_, band)| *band)
    }

    /// Whether this profile shows `tool`.
    pub fn includes(self, tool: &str) -> bool {
        Self::of_tool(tool).is_some_and(|band| band <= self)
    }

    /// The tools of this profile, in band order.
    pub fn tools(self) -> Vec<&'static str> {
        TOOL_BANDS
            .iter()
            .filter(|(_, band)| *band <= self)
            .map(|(name, _)| *name)
            .collect()
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == text.trim().to_lowercase())
            .ok_or_else(|| format!("'{text}' is not a profile (minimal, work, admin, full)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_cumulative_and_sized_as_documented() {
        let sizes: Vec<usize> = Profile::ALL.iter().map(|p| p.tools().len()).collect();
        assert_eq!(sizes, vec![5, 41, 56, 62]);
        for pair in Profile::ALL.windows(2) {
            let (small, large) = (pair[0].tools(), pair[1].tools());
            assert!(small.iter().all(|tool| large.contains(tool)));
        }
    }

    #[test]
    fn work_has_no_destructive_tool() {
        for tool in [
            "forget_memory",
            "purge_memory",
            "update_memory",
            "redact_secrets",
        ] {
            assert!(!Profile::Work.includes(tool), "{tool}");
            assert!(Profile::Admin.includes(tool), "{tool}");
        }
    }

    #[test]
    fn profile_names_parse_and_unknown_ones_are_refused() {
        assert_eq!("ADMIN".parse::<Profile>(), Ok(Profile::Admin));
        assert_eq!(
            "root".parse::<Profile>().unwrap_err(),
            "'root' is not a profile (minimal, work, admin, full)"
        );
    }
}
