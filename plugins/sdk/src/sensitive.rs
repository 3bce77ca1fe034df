//! Paths that hold secrets or run code, and the glob matcher the built-in plugins judge them
//! with: one list for the path validator (what a tool touches) and the command checker (what a
//! command reads or writes).
//!
//! Patterns: `~/` is the user's home; a pattern not starting with `/` or `~` matches at any
//! depth (`.env` is `/**/.env`); `**` is any number of segments, `*` and `?` stay within one.

use std::borrow::Cow;

/// Files whose contents are secrets: reading them is as bad as writing them.
pub const SECRETS: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".git-credentials",
    ".netrc",
    "~/.ssh/**",
    "~/.aws/**",
    "~/.gnupg/**",
    "~/.azure/**",
    "~/.kube/**",
    "~/.config/gh/**",
    "~/.config/gcloud/**",
    "~/.docker/config.json",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials*",
    "~/.password-store/**",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d/**",
];

/// Files that run code later (at the next shell, login, git command, agent start or boot) or
/// configure acp-gate itself: reading them is fine, writing them is not.
pub const RUNS_CODE: &[&str] = &[
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.inputrc",
    "~/.login",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.kshrc",
    "~/.xinitrc",
    "~/.xprofile",
    "~/.pam_environment",
    "~/.config/fish/**",
    "~/.config/autostart/**",
    "~/.config/systemd/**",
    "~/.config/git/**",
    "~/.gitconfig",
    "~/.local/bin/**",
    "~/.cargo/config*",
    "~/.docker/**",
    "~/.claude/**",
    "~/.codex/**",
    "~/.gemini/**",
    "~/Library/LaunchAgents/**",
    "/Library/LaunchDaemons/**",
    "/var/spool/cron/**",
    "/etc/**",
    "/boot/**",
    "/usr/**",
    "/bin/**",
    "/sbin/**",
    "/lib/**",
    "/lib64/**",
    ".git/hooks/**",
    ".git/config",
    ".envrc",
    "authorized_keys",
    // acp-gate's policy, plugins, compile cache (native code it runs) and audit log: an agent
    // must not be able to rewrite its own gate.
    ".acp-gate/**",
    "~/.config/acp-gate/**",
    "~/.cache/acp-gate/**",
    "~/.local/state/acp-gate/**",
    "/etc/acp-gate/**",
];

/// Names that match `.env.*` but are, by convention, templates without secrets.
pub const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// Whether `path` names an env template (see [`ENV_TEMPLATES`]), which no pattern makes sensitive.
pub fn is_env_template(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    ENV_TEMPLATES.iter().any(|t| t.eq_ignore_ascii_case(name))
}

/// A glob over absolute paths. Making one allocates nothing for a borrowed pattern: the
/// built-in lists are matched where they are, segment by segment (a fresh plugin instance
/// builds its globs for every request).
#[derive(Clone, Debug)]
pub struct PathGlob<'a> {
    pattern: Cow<'a, str>,
    /// What the pattern's segments follow: the home directory for `~/...`, `**` for a pattern
    /// that matches at any depth, nothing for an absolute one.
    lead: &'a str,
    /// Where the segments after `lead` start in `pattern`.
    rest: usize,
}

/// The rest of `text` after a leading `~`, `$HOME` or `${HOME}`, if it has one.
pub fn strip_home(text: &str) -> Option<&str> {
    ["~", "$HOME", "${HOME}"].into_iter().find_map(|prefix| {
        let rest = text.strip_prefix(prefix)?;
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    })
}

impl<'a> PathGlob<'a> {
    /// The glob `pattern`, with `~` standing for `home`.
    pub fn new(pattern: impl Into<Cow<'a, str>>, home: &'a str) -> PathGlob<'a> {
        let pattern = pattern.into();
        let (lead, rest) = match strip_home(&pattern) {
            Some(rest) => (home, pattern.len() - rest.len()),
            None if pattern.starts_with('/') => ("", 0),
            None => ("**", pattern.len() - pattern.trim_start_matches("./").len()),
        };
        PathGlob {
            pattern,
            lead,
            rest,
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the absolute `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        self.matches_segments(&PathSegments::new(path, false))
    }

    /// Whether `path` matches; split a path once with [`PathSegments::new`] to match it against
    /// many globs. A case-folded path is matched against the case-folded pattern.
    pub fn matches_segments(&self, path: &PathSegments) -> bool {
        let segments = self
            .lead
            .split('/')
            .chain(self.pattern[self.rest..].split('/'))
            .filter(|s| !s.is_empty());
        match_segments(segments, &path.segments, path.folded)
    }
}

/// An absolute path split into segments, optionally case-folded.
pub struct PathSegments {
    segments: Vec<String>,
    folded: bool,
}

impl PathSegments {
    pub fn new(path: &str, fold_case: bool) -> PathSegments {
        let fold = |s: &str| {
            if fold_case {
                s.to_lowercase()
            } else {
                s.to_owned()
            }
        };
        PathSegments {
            segments: path
                .split('/')
                .filter(|s| !s.is_empty())
                .map(fold)
                .collect(),
            folded: fold_case,
        }
    }
}

/// Whether the pattern's segments match the path's; a folded path is compared with the
/// pattern lower-cased.
fn match_segments<'p>(
    mut pattern: impl Iterator<Item = &'p str> + Clone,
    path: &[String],
    folded: bool,
) -> bool {
    match pattern.next() {
        None => path.is_empty(),
        Some("**") => {
            (0..=path.len()).any(|skip| match_segments(pattern.clone(), &path[skip..], folded))
        }
        Some(first) => path.split_first().is_some_and(|(p, tail)| {
            let matched = if folded {
                wildcard(first.to_lowercase().as_bytes(), p.as_bytes())
            } else {
                wildcard(first.as_bytes(), p.as_bytes())
            };
            matched && match_segments(pattern, tail, folded)
        }),
    }
}

/// `*` and `?` matching of one path segment.
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let g = |p: &str, path: &str| PathGlob::new(p, "/h").matches(path);
        assert!(g("~/.ssh/**", "/h/.ssh"));
        assert!(g("~/.ssh/**", "/h/.ssh/id_rsa"));
        assert!(!g("~/.ssh/**", "/h/.sshx"));
        assert!(g(".env*", "/ws/sub/.env.local"));
        assert!(g(".env*", "/.env"));
        assert!(!g(".env*", "/ws/env"));
        assert!(g("**/.git/hooks/**", "/ws/.git/hooks/pre-commit"));
        assert!(g(".git/hooks/**", "/ws/.git/hooks/pre-commit"));
        assert!(g("/etc/**", "/etc/passwd"));
        assert!(g("*.pem", "/a/b/key.pem"));
        assert!(!g("/etc/**", "/home/etc/x"));
        assert!(g("$HOME/.aws/**", "/h/.aws/credentials"));
        let ssh = PathGlob::new("~/.ssh/**", "/h");
        assert!(ssh.matches_segments(&PathSegments::new("/H/.SSH/Id_Rsa", true)));
        assert!(!ssh.matches_segments(&PathSegments::new("/H/.SSH/Id_Rsa", false)));
    }
}
