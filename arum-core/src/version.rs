//! arum's version with the commit it was built from (see build.rs).

/// `0.1.0 (3f2a9c1d8e4b 2026-11-22)`, or `0.1.0 (commit unknown)` when built without git.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("ARUM_GIT_COMMIT"),
    ")"
);
