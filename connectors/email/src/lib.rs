//! The `email` connector (in progress).
