//! Mutated copies of recorded files, for property tests that a connector's parser never
//! panics: a panic aborts the whole sync in the component (`panic = "abort"`), where bad
//! input must be one item error.
//!
//! A mutation is what damaged real files look like: a flipped byte, a file cut short, a
//! range repeated or lost, and syntax pasted where it does not belong. Each parser passes
//! its own `tokens` (its format's delimiters), which find more than random bytes: most
//! random bytes only make the text invalid UTF-8, refused before any parsing.

use proptest::prelude::*;
use proptest::sample::Index;

/// One of the repository's fixtures, embedded: `fixture!("calendar", "team.ics")` is
/// `("team.ics", bytes of fixtures/calendar/team.ics)`, the pair [`mutated`] takes. The
/// path is the calling crate's (`connectors/<name>`), two levels below the repository.
#[macro_export]
macro_rules! fixture {
    ($folder:literal, $name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/",
                $folder,
                "/",
                $name
            ))
            .as_slice(),
        )
    };
}

/// One change to a file's bytes. Positions are fractions of the length at the time the
/// change is applied, so any mutation fits any file.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// XOR one byte with a mask.
    Flip { at: Index, mask: u8 },
    /// Cut the file at a position.
    Truncate { at: Index },
    /// Copy a range (up to 64 bytes) and insert the copy at another position.
    Duplicate {
        start: Index,
        length: usize,
        to: Index,
    },
    /// Remove a range (up to 64 bytes).
    Remove { start: Index, length: usize },
    /// Insert one of the parser's tokens.
    Insert { at: Index, token: Index },
}

fn position(at: &Index, length: usize) -> usize {
    // `Index::index` wants a non-empty range; an empty file has one position.
    at.index(length + 1)
}

impl Mutation {
    /// Applies the change to `bytes`, with `tokens` for [`Mutation::Insert`].
    pub fn apply(&self, bytes: &mut Vec<u8>, tokens: &[&str]) {
        match self {
            Mutation::Flip { at, mask } => {
                if !bytes.is_empty() {
                    let at = at.index(bytes.len());
                    bytes[at] ^= mask;
                }
            }
            Mutation::Truncate { at } => bytes.truncate(position(at, bytes.len())),
            Mutation::Duplicate { start, length, to } => {
                let start = position(start, bytes.len());
                let end = (start + length).min(bytes.len());
                let copy = bytes[start..end].to_vec();
                let to = position(to, bytes.len());
                bytes.splice(to..to, copy);
            }
            Mutation::Remove { start, length } => {
                let start = position(start, bytes.len());
                let end = (start + length).min(bytes.len());
                bytes.drain(start..end);
            }
            Mutation::Insert { at, token } => {
                if !tokens.is_empty() {
                    let token = tokens[token.index(tokens.len())].as_bytes();
                    let at = position(at, bytes.len());
                    bytes.splice(at..at, token.iter().copied());
                }
            }
        }
    }
}

/// Any one mutation.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 1..=u8::MAX).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        (any::<Index>(), 1..=64usize, any::<Index>())
            .prop_map(|(start, length, to)| Mutation::Duplicate { start, length, to }),
        (any::<Index>(), 1..=64usize)
            .prop_map(|(start, length)| Mutation::Remove { start, length }),
        (any::<Index>(), any::<Index>()).prop_map(|(at, token)| Mutation::Insert { at, token }),
    ]
}

/// One of `fixtures` (name, bytes) with one to eight mutations applied, and its name.
pub fn mutated(
    fixtures: &'static [(&'static str, &'static [u8])],
    tokens: &'static [&'static str],
) -> impl Strategy<Value = (&'static str, Vec<u8>)> {
    (
        0..fixtures.len(),
        proptest::collection::vec(mutation(), 1..=8),
    )
        .prop_map(move |(which, mutations)| {
            let (name, original) = fixtures[which];
            let mut bytes = original.to_vec();
            for mutation in &mutations {
                mutation.apply(&mut bytes, tokens);
            }
            (name, bytes)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest! {
        #[test]
        fn a_mutation_fits_any_file_even_an_empty_one(
            original in proptest::collection::vec(any::<u8>(), 0..4),
            mutation in mutation(),
        ) {
            let mut bytes = original.clone();
            mutation.apply(&mut bytes, &["[[", "é"]);
            if let Mutation::Truncate { .. } | Mutation::Remove { .. } = mutation {
                prop_assert!(bytes.len() <= original.len());
            }
        }
    }
}
