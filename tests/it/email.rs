//! The email connector on its fixtures, through `levh sync`.
