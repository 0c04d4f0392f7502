//! Identifier newtypes, so a memory id can never be passed where a session id belongs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Declares a UUIDv7 id newtype: ids sort by creation time and never collide across
/// processes, and each kind of id is its own type.
macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(transparent)]
        pub struct $name(uuid::Uuid);

        impl $name {
            /// A fresh id whose time part is `now`, so ids follow the (injected) clock.
            pub fn new_at(now: crate::Timestamp) -> Self {
                let millis = now.as_millisecond().max(0) as u64;
                let ts = uuid::Timestamp::from_unix(
                    uuid::NoContext,
                    millis / 1000,
                    ((millis % 1000) * 1_000_000) as u32,
                );
                Self(uuid::Uuid::new_v7(ts))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                uuid::Uuid::parse_str(s.trim()).map(Self).map_err(|_| {
                    Error::invalid("id", format!("'{s}' is not {} id (expected a UUID)", $what))
                })
            }
        }
    };
}

uuid_id!(
    /// A memory's id.
    MemoryId,
    "a memory"
);

uuid_id!(
    /// An entity's id (a person, organization, project, event, document or task).
    EntityId,
    "an entity"
);

uuid_id!(
    /// A held candidate's id (content the gate would not judge, waiting for a person).
    HeldId,
    "a held candidate"
);

/// A session's id (one agent conversation or CLI run that groups memories).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    /// Wraps an id as given by the caller.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a short machine name: 1..=64 chars of `a-z 0-9 - _ .`.
/// A new name: [`check_name`], and never one shaped like a secret (a lowercase token fits
/// the alphabet): a name is stored, listed and sent to every client as it is. The secret
/// is not echoed back.
fn check_new_name(field: &'static str, value: &str) -> Result<(), Error> {
    let secrets = crate::gate::secrets::detect(value);
    if !secrets.is_empty() {
        let kinds: Vec<&str> = secrets.iter().map(|r| r.kind.as_str()).collect();
        return Err(Error::invalid(
            field,
            format!(
                "looks like a secret ({}); a {field} is a short name, never a credential",
                kinds.join(", ")
            ),
        ));
    }
    check_name(field, value)
}

fn check_name(field: &'static str, value: &str) -> Result<(), Error> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!(
                "'{value}' is not a valid {field}: use 1-64 characters of a-z, 0-9, '-', '_', '.'"
            ),
        ))
    }
}

/// A workspace: the hard boundary between sets of memories. Nothing of one workspace is
/// ever returned to another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct Workspace(String);

impl Workspace {
    /// The workspace of the local principal when none is named.
    pub const DEFAULT: &'static str = "default";

    /// Validates and wraps a workspace name.
    pub fn new(name: &str) -> Result<Self, Error> {
        check_name("workspace", name)?;
        Ok(Self(name.to_owned()))
    }
    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Self(Self::DEFAULT.to_owned())
    }
}

impl fmt::Display for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a memory is: note, event, email, transcript, document, decision, summary, ...
/// Open-ended, but always a short lowercase name so filters match exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Kind(String);

impl Kind {
    /// The kind of a memory captured without one.
    pub const NOTE: &'static str = "note";

    /// Validates and wraps a kind.
    pub fn new(name: &str) -> Result<Self, Error> {
        check_new_name("kind", name)?;
        Ok(Self(name.to_owned()))
    }

    /// A kind read back from the store: its alphabet checked, not whether it looks like a
    /// secret (a store written before that check still reads; `levh audit-secrets` finds
    /// such a kind and `levh redact-secrets` replaces it).
    pub fn stored(name: &str) -> Result<Self, Error> {
        check_name("kind", name)?;
        Ok(Self(name.to_owned()))
    }
    /// The kind as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Kind {
    fn default() -> Self {
        Self(Self::NOTE.to_owned())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_ids_follow_the_injected_clock() {
        let early = MemoryId::new_at(crate::Timestamp::from_second(1_700_000_000).unwrap());
        let late = MemoryId::new_at(crate::Timestamp::from_second(1_800_000_000).unwrap());
        assert!(early < late);
        assert_eq!(early.to_string().parse::<MemoryId>().unwrap(), early);
    }

    #[test]
    fn a_bad_id_names_itself_in_the_error() {
        let err = "nope".parse::<MemoryId>().unwrap_err();
        assert!(err.to_string().contains("'nope'"), "{err}");
    }

    #[test]
    fn names_are_checked() {
        assert!(Workspace::new("team-a").is_ok());
        assert!(Workspace::new("Team A").is_err());
        assert!(Kind::new("").is_err());
        assert_eq!(Kind::default().as_str(), "note");
    }
}
