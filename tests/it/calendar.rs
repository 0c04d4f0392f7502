//! The calendar connector on its fixtures, through `levh sync`.
