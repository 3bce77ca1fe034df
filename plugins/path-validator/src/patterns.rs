//! The sensitive and protected patterns of one request: the SDK's shared lists, adjusted by
//! the config, compiled with the request's home directory.

use std::borrow::Cow;

use acp_gate_plugin::sensitive::{
    Needs, PROJECT_CODE, PROJECT_CODE_NEEDS, PathGlob, PathSegments, RUNS_CODE, RUNS_CODE_NEEDS,
    SECRETS, SECRETS_NEEDS, holds_no_secret, is_env_template,
};
use unicode_normalization::{UnicodeNormalization, is_nfc};

use crate::config::Config;

/// What a matching pattern forbids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// A secret: no access at all.
    Secret,
    /// Runs code or decides what the agent may do: no writes or deletes.
    NoWrite,
    /// A project's own file that runs code later: writes and deletes are a person's to approve.
    ApproveWrite,
}

pub struct Patterns<'a> {
    config: &'a Config,
    home: &'a str,
}

impl<'a> Patterns<'a> {
    pub fn new(config: &'a Config, home: &'a str) -> Result<Patterns<'a>, String> {
        for dropped in &config.allow_sensitive {
            let builtin = [SECRETS, RUNS_CODE, PROJECT_CODE];
            if !builtin.iter().any(|list| list.contains(&dropped.as_str())) {
                return Err(format!(
                    "allow_sensitive: `{dropped}` is not a built-in pattern"
                ));
            }
        }
        Ok(Patterns { config, home })
    }

    /// Every pattern, in order, with what it forbids and what a path needs for it to match:
    /// a fresh instance judges one request, usually one path, so globs are built only for the
    /// patterns that pass their [`Needs`] (the built-in lists' are computed at compile time).
    /// `public`: the path names a public key or certificate, which no built-in secret covers.
    fn patterns(&self, public: bool) -> impl Iterator<Item = (&'a str, Needs, Protection)> + 'a {
        let config = self.config;
        let builtin = move |list: &'static [&'static str], needs: &'static [Needs]| {
            list.iter()
                .copied()
                .zip(needs.iter().copied())
                .filter(move |(p, _)| !config.allow_sensitive.iter().any(|a| a == p))
        };
        let configured = |list: &'a [String]| list.iter().map(|p| (p.as_str(), Needs::of(p)));
        let builtin_secrets = (!public).then(|| builtin(SECRETS, &SECRETS_NEEDS));
        let secrets = builtin_secrets
            .into_iter()
            .flatten()
            .chain(configured(&config.sensitive))
            .map(|(p, needs)| (p, needs, Protection::Secret));
        let no_write = builtin(RUNS_CODE, &RUNS_CODE_NEEDS)
            .chain(configured(&config.protected))
            .map(|(p, needs)| (p, needs, Protection::NoWrite));
        let approve_write = builtin(PROJECT_CODE, &PROJECT_CODE_NEEDS)
            .map(|(p, needs)| (p, needs, Protection::ApproveWrite));
        secrets.chain(no_write).chain(approve_write)
    }

    /// The first pattern the absolute, NFC `path` matches, and what it forbids. An env
    /// template matches none; a public key or certificate only the config's own secrets and
    /// the files that run code.
    pub fn matching(&self, path: &str, fold_case: bool) -> Option<(String, Protection)> {
        if is_env_template(path) {
            return None;
        }
        let segments = PathSegments::new(path, fold_case);
        self.patterns(holds_no_secret(path))
            .filter(|(_, needs, _)| needs.admits(&segments))
            .find_map(|(pattern, needs, protection)| {
                let pattern = match pattern.is_ascii() || is_nfc(pattern) {
                    true => Cow::Borrowed(pattern),
                    false => Cow::Owned(pattern.nfc().collect()),
                };
                let glob = PathGlob::with_needs(pattern, self.home, needs);
                glob.matches_segments(&segments)
                    .then(|| (glob.pattern().to_owned(), protection))
            })
    }
}
