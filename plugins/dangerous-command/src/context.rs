//! What the checker knows about a request beyond its command: the home directory, the working
//! directory, the workspace roots, the config, and the sensitive paths built from them.

use acp_gate_plugin::sensitive::{
    Needs, PathGlob, RUNS_CODE, RUNS_CODE_NEEDS, SECRETS, SECRETS_NEEDS,
};
use acp_gate_shell::Command as Invocation;

use crate::config::Config;
use crate::paths::{absolutize, important_root, normalize};

/// What the checker knows about the request: where home and the workspace are, and the config.
pub struct Context<'a> {
    pub home: &'a str,
    pub cwd: &'a str,
    pub workspaces: Vec<String>,
    pub config: &'a Config,
    /// Secrets and files that run code: no command may write, move or delete them. Built
    /// when first needed (most commands name no path).
    write_sensitive: std::cell::OnceCell<Vec<PathGlob<'a>>>,
    /// Secrets: reading them is asked about. Built when first needed.
    read_sensitive: std::cell::OnceCell<Vec<PathGlob<'a>>>,
    /// Directories that sensitive files are named under, at any depth. Built when first needed.
    guarded_dirs: std::cell::OnceCell<Vec<&'a str>>,
}

impl<'a> Context<'a> {
    pub fn new(
        home: &'a str,
        cwd: &'a str,
        workspace_roots: &[String],
        config: &'a Config,
    ) -> Self {
        let mut workspaces: Vec<String> = workspace_roots
            .iter()
            .filter(|w| w.starts_with('/'))
            .map(|w| normalize(w))
            .collect();
        if workspaces.is_empty() && cwd.starts_with('/') {
            workspaces.push(normalize(cwd));
        }
        Self {
            home,
            cwd,
            workspaces,
            config,
            write_sensitive: std::cell::OnceCell::new(),
            read_sensitive: std::cell::OnceCell::new(),
            guarded_dirs: std::cell::OnceCell::new(),
        }
    }

    /// Secrets and files that run code, and the config's `sensitive_paths`.
    pub(crate) fn write_sensitive(&self) -> &[PathGlob<'a>] {
        self.write_sensitive
            .get_or_init(|| self.globs(&[(SECRETS, &SECRETS_NEEDS), (RUNS_CODE, &RUNS_CODE_NEEDS)]))
    }

    /// Secrets, and the config's `sensitive_paths`.
    pub(crate) fn read_sensitive(&self) -> &[PathGlob<'a>] {
        self.read_sensitive
            .get_or_init(|| self.globs(&[(SECRETS, &SECRETS_NEEDS)]))
    }

    /// The first directory of every sensitive pattern that matches at any depth and names a
    /// file inside a directory (`.git` of `.git/hooks/**`, `.vscode` of `.vscode/tasks.json`):
    /// a tree landing there may make such a file.
    pub(crate) fn guarded_dirs(&self) -> &[&'a str] {
        self.guarded_dirs.get_or_init(|| {
            let builtin = SECRETS.iter().chain(RUNS_CODE).copied();
            let extra = self.config.sensitive_paths.iter().map(String::as_str);
            let mut dirs: Vec<&'a str> = builtin
                .chain(extra)
                .filter(|p| !p.starts_with(['/', '~', '$']))
                .filter_map(|p| p.trim_start_matches("./").split_once('/'))
                .map(|(first, _)| first)
                .filter(|first| !first.contains(['*', '?', '[']) && !first.is_empty())
                .collect();
            dirs.sort_unstable();
            dirs.dedup();
            dirs
        })
    }

    /// The built-in `lists` (with their compile-time [`Needs`]) and the config's own patterns.
    fn globs(&self, lists: &[(&'static [&'static str], &'static [Needs])]) -> Vec<PathGlob<'a>> {
        let builtin = lists.iter().flat_map(|(patterns, needs)| {
            patterns
                .iter()
                .zip(needs.iter())
                .map(|(p, needs)| PathGlob::with_needs(*p, self.home, *needs))
        });
        let extra = self.config.sensitive_paths.iter();
        builtin
            .chain(extra.map(|p| PathGlob::new(p.as_str(), self.home)))
            .collect()
    }

    /// `text` made absolute where `inv` runs; a relative path in an unknown directory is placed
    /// under a directory that matches only patterns that hold at any depth.
    pub(crate) fn absolute_anywhere(&self, inv: &Invocation, text: &str) -> String {
        self.absolute(inv, text)
            .unwrap_or_else(|| absolutize(text, self.home, "/\u{2026}"))
    }

    /// `text` made absolute where `inv` runs; `None` for a relative path in an unknown directory.
    pub(crate) fn absolute(&self, inv: &Invocation, text: &str) -> Option<String> {
        let relative = !(text.starts_with('/')
            || text.starts_with('~')
            || text.starts_with("$HOME")
            || text.starts_with("${HOME}"));
        match inv.cwd.as_str() {
            "" if relative => None,
            "" => Some(absolutize(text, self.home, self.cwd)),
            cwd => Some(absolutize(text, self.home, cwd)),
        }
    }

    pub(crate) fn root(&self, abs: &str) -> Option<&'static str> {
        important_root(abs, self.home, &self.workspaces)
    }
}
