//! The built-in plugins embedded in the binary (built from `plugins/` by `build.rs`) and the
//! built-in default chain. They load through the same runtime path as any plugin file.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;

use crate::config::{Policy, Tier, parse_layer};
use crate::runtime::{Grant, default_grants};

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The default chain's `handlers.toml`, shown by `acp-gate check` as `<builtin>`.
pub const DEFAULT_CHAIN: &str = include_str!("default-chain.toml");

/// The canonical name of a built-in plugin, if there is one called `name`.
pub fn find(name: &str) -> Option<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).find(|n| *n == name)
}

pub fn names() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).collect()
}

/// The component bytes of a built-in plugin.
pub fn bytes(name: &str) -> Option<&'static [u8]> {
    EMBEDDED.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// What a built-in plugin is granted when its entry has no `imports`.
pub fn grants(name: &str) -> BTreeSet<Grant> {
    let mut grants = default_grants();
    if name == "path-validator" {
        grants.insert(Grant::Paths);
    }
    grants
}

/// The built-in default chain as a policy layer of its own.
pub fn default_chain() -> Result<Policy> {
    parse_layer(
        Tier::Builtin,
        Path::new("<builtin default chain>"),
        DEFAULT_CHAIN,
    )
}
