//! The sensitive and protected patterns of one request: the SDK's shared lists, adjusted by
//! the config, compiled with the request's home directory.

use std::borrow::Cow;

use acp_gate_plugin::sensitive::{PathGlob, PathSegments, RUNS_CODE, SECRETS, is_env_template};
use unicode_normalization::{UnicodeNormalization, is_nfc};

use crate::config::Config;

/// What a matching pattern forbids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// A secret: no access at all.
    Secret,
    /// Runs code or configures the gate: no writes or deletes.
    NoWrite,
}

pub struct Patterns<'a> {
    config: &'a Config,
    home: &'a str,
}

impl<'a> Patterns<'a> {
    pub fn new(config: &'a Config, home: &'a str) -> Result<Patterns<'a>, String> {
        for dropped in &config.allow_sensitive {
            if !SECRETS.contains(&dropped.as_str()) && !RUNS_CODE.contains(&dropped.as_str()) {
                return Err(format!(
                    "allow_sensitive: `{dropped}` is not a built-in pattern"
                ));
            }
        }
        Ok(Patterns { config, home })
    }

    /// Every pattern with what it forbids, made as it is tried: a fresh instance judges one
    /// request, usually one path, and most patterns are rejected at once.
    fn globs(&self) -> impl Iterator<Item = (PathGlob<'a>, Protection)> + 'a {
        let config = self.config;
        let home = self.home;
        let builtin = move |list: &'static [&'static str]| {
            list.iter()
                .copied()
                .filter(move |p| !config.allow_sensitive.iter().any(|a| a == p))
        };
        let secrets = builtin(SECRETS)
            .chain(config.sensitive.iter().map(String::as_str))
            .map(|p| (p, Protection::Secret));
        let no_write = builtin(RUNS_CODE)
            .chain(config.protected.iter().map(String::as_str))
            .map(|p| (p, Protection::NoWrite));
        secrets.chain(no_write).map(move |(pattern, protection)| {
            let pattern = match pattern.is_ascii() || is_nfc(pattern) {
                true => Cow::Borrowed(pattern),
                false => Cow::Owned(pattern.nfc().collect()),
            };
            (PathGlob::new(pattern, home), protection)
        })
    }

    /// The first pattern the absolute, NFC `path` matches, and what it forbids.
    pub fn matching(&self, path: &str, fold_case: bool) -> Option<(String, Protection)> {
        if is_env_template(path) {
            return None;
        }
        let segments = PathSegments::new(path, fold_case);
        self.globs()
            .find(|(glob, _)| glob.matches_segments(&segments))
            .map(|(glob, protection)| (glob.pattern().to_owned(), protection))
    }
}
