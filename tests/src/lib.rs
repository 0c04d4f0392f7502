//! levh's integration tests live in it/.
