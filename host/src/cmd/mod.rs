//! One entry point per command: each parses nothing (clap did, in `cli`) and calls into the
//! library, returning its exit code.

pub mod audit;
pub mod chain;
pub mod check;
pub mod demo;
pub mod distribute;
pub mod doctor;
pub mod hook;
pub mod plugin;
pub mod policy;
pub mod proxy;
pub mod run;
pub mod serve;
pub mod sessions;

use crate::LoadOptions;
use crate::args::PolicyArgs;

/// Where a command's policy comes from, from its arguments.
fn load_options(policy: &PolicyArgs) -> anyhow::Result<LoadOptions> {
    LoadOptions::from_args(policy)
}

/// The runtime of a `plugin` command: compiled plugins cached in the user's cache.
fn runtime() -> anyhow::Result<std::sync::Arc<crate::runtime::Runtime>> {
    crate::runtime::Runtime::new(crate::cache::CompileCache::default_dir())
}

/// A plugin file's bytes, or an error naming it.
fn read(file: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context;
    std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))
}
