//! levh-builtins: the connectors and scorers that ship inside `levh`, as component
//! bytes compiled at build time by `build.rs`.

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// A built-in connector's component bytes by id.
pub fn connector(id: &str) -> Option<&'static [u8]> {
    CONNECTORS
        .iter()
        .find(|(name, _)| *name == id)
        .map(|(_, bytes)| *bytes)
}

/// A built-in scorer's component bytes by id.
pub fn scorer(id: &str) -> Option<&'static [u8]> {
    SCORERS
        .iter()
        .find(|(name, _)| *name == id)
        .map(|(_, bytes)| *bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_is_a_webassembly_component() {
        assert!(!super::CONNECTORS.is_empty());
        assert!(super::scorer("recency").is_some());
        for (id, bytes) in super::CONNECTORS.iter().chain(super::SCORERS) {
            assert_eq!(
                &bytes[..8],
                b"\0asm\x0d\x00\x01\x00",
                "{id} is not a component"
            );
        }
    }
}
