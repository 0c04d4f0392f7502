//! The `calendar` connector (in progress).
