//! The built-in rules, each judging one simple command (wrappers are commands of their own),
//! one module per family of programs: `files` (rm, cp, mv, sed -i, chmod, find, dd),
//! `git`, `env` (variables that load code), `network` (exfiltration, reverse shells),
//! `escalation` (sudo and relatives, persistence), `system` (power, disks), `unicode`;
//! `paths` judges the files a command reads or writes.

mod env;
mod escalation;
mod files;
pub mod git;
mod network;
pub(crate) mod paths;
mod system;
mod unicode;

use acp_gate_plugin::sensitive::{
    Needs, PathGlob, RUNS_CODE, RUNS_CODE_NEEDS, SECRETS, SECRETS_NEEDS,
};
use acp_gate_shell::Arg;
use acp_gate_shell::Command as Invocation;

use crate::config::{Config, matches_prefix};
use crate::judgement::{Finding, Level};
use crate::paths::{absolutize, important_root, normalize};

pub use git::parse_git;
pub use unicode::is_deceptive_char;

/// Every rule id, with what it catches. `disable_rules` takes these ids.
pub const RULES: &[(&str, &str)] = &[
    (
        "unparseable",
        "ask: the command (or a word in it) cannot be parsed",
    ),
    ("too-complex", "ask: nested too deeply or too long to check"),
    (
        "dynamic-command",
        "ask: the command word is only known at run time ($CMD, $(...))",
    ),
    (
        "dynamic-code",
        "ask: code run by eval / bash -c / source is only known at run time",
    ),
    (
        "unicode-confusable",
        "ask: invisible characters or look-alike letters in the command",
    ),
    (
        "rm-root",
        "deny: recursive delete of /, ~, the workspace root, system or top-level directories",
    ),
    (
        "rm-dynamic",
        "ask: recursive delete of a path only known at run time",
    ),
    (
        "find-delete",
        "ask: find -delete (deny when it starts at / or the home directory)",
    ),
    (
        "sensitive-write",
        "deny: writes, moves or deletes a sensitive path (~/.ssh, shell start-up files, /etc, .git/hooks, .env*)",
    ),
    (
        "sensitive-read",
        "deny: reads a credential file (~/.ssh, ~/.aws, .env*, ...) or another user's home",
    ),
    (
        "device-write",
        "deny: writes to a disk device (dd of=/dev/sda, > /dev/nvme0n1); ask for other devices",
    ),
    (
        "disk-format",
        "deny: creates file systems or repartitions disks (mkfs, wipefs, fdisk)",
    ),
    (
        "chmod-recursive",
        "deny: recursive chmod/chown of roots or to world-writable; ask for other recursive ones",
    ),
    (
        "fork-bomb",
        "deny: a function that calls itself in a pipeline or in the background",
    ),
    (
        "remote-code",
        "deny: code from the network run by a shell or interpreter (curl | sh, bash <(curl ..))",
    ),
    (
        "decoded-payload",
        "deny: decoded or unpacked bytes run by a shell (base64 -d | sh)",
    ),
    (
        "stdin-script",
        "ask: a shell or interpreter runs code from an input that cannot be checked",
    ),
    (
        "git-force-push",
        "deny: git push --force / -f / --force-with-lease / +refspec / --mirror",
    ),
    ("git-remote-delete", "ask: git push --delete / :branch"),
    (
        "git-history-rewrite",
        "deny: git filter-branch / filter-repo; ask: reflog expire",
    ),
    ("git-discard", "ask: git reset --hard, git clean -f"),
    (
        "git-exec-option",
        "deny: git options that run programs (-c core.sshCommand=, -c alias.x=!.., --upload-pack, --exec-path=)",
    ),
    (
        "privilege-escalation",
        "deny: sudo, su, doas, pkexec, run0, sudoedit, setpriv, ...",
    ),
    (
        "persistence",
        "deny: schedulers and service units (crontab, at, systemctl enable, launchctl load)",
    ),
    (
        "exfiltration",
        "deny: sends a secret file over the network (curl -d @~/.ssh/id_rsa, scp of keys)",
    ),
    (
        "reverse-shell",
        "deny: a shell connected to the network (/dev/tcp, nc -e, socat exec:, python socket + pty)",
    ),
    (
        "outside-write",
        "ask: an option of a known program writes a file outside the workspace",
    ),
    (
        "env-code-injection",
        "deny: variables that load code (LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, NODE_OPTIONS=--require ..); ask for LD_LIBRARY_PATH and the like",
    ),
    ("rg-pre", "ask: rg --pre runs a program on every file"),
    ("system-power", "deny: shutdown, reboot, halt, kill -1"),
    (
        "config-deny",
        "deny: an `extra_deny` pattern from the config matched",
    ),
    (
        "config-ask",
        "ask: an `extra_ask` pattern from the config matched",
    ),
];

/// What the rules know about the request: where home and the workspace are, and the config.
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

/// Judges one invocation, appending what fires to `out`.
pub fn check(inv: &Invocation, cx: &Context, out: &mut Vec<Finding>) {
    let start = out.len();
    let mut f = Findings { out, inv };
    unicode::check(&mut f);
    env::check(&mut f);
    for w in &inv.writes {
        paths::write_target(&mut f, cx, w, "redirects output into");
    }
    for r in &inv.reads {
        paths::read_target(&mut f, cx, r);
    }
    files::check(&mut f, cx);
    git::check(&mut f, cx);
    escalation::check(&mut f);
    network::check(&mut f, cx);
    system::check(&mut f);
    paths::sensitive_operands(&mut f, cx);
    extra_rules(&mut f, cx);
    // Disabled rules drop out here, so every rule above can be switched off by id.
    let kept: Vec<Finding> = f
        .out
        .drain(start..)
        .filter(|x| cx.config.enabled(x.rule))
        .collect();
    f.out.extend(kept);
}

pub(crate) struct Findings<'o, 'i> {
    pub(crate) out: &'o mut Vec<Finding>,
    pub(crate) inv: &'i Invocation,
}

impl Findings<'_, '_> {
    pub(crate) fn push(&mut self, level: Level, rule: &'static str, reason: impl AsRef<str>) {
        let reason = format!("{}: `{}`", reason.as_ref(), self.inv.display());
        self.out.push(Finding {
            level,
            rule,
            reason,
        });
    }

    pub(crate) fn deny(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Deny, rule, reason);
    }

    pub(crate) fn ask(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Ask, rule, reason);
    }
}

/// The arguments that are not options (everything after `--`).
pub(crate) fn operands(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    let mut after_dashes = false;
    args.iter().filter(move |a| {
        if after_dashes {
            return true;
        }
        if a.is("--") {
            after_dashes = true;
            return false;
        }
        a.dynamic || !a.text.starts_with('-') || a.text == "-"
    })
}

/// Whether an option is given: a short letter anywhere in a cluster (`-rf`, `-fr`, `-r -f`) or
/// a long name (`--recursive`, `--force=..`).
pub(crate) fn has_flag(args: &[Arg], short: &[char], long: &[&str]) -> bool {
    for a in args {
        if a.is("--") {
            break;
        }
        if a.dynamic {
            continue;
        }
        if let Some(name) = a.text.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if long.contains(&name) {
                return true;
            }
        } else if let Some(cluster) = a.text.strip_prefix('-')
            && cluster.chars().any(|c| short.contains(&c))
        {
            return true;
        }
    }
    false
}

/// The values given to an option: `-o X`, `-oX`, `--output X`, `--output=X`.
pub(crate) fn option_values(args: &[Arg], short: &str, long: &str) -> Vec<Arg> {
    let mut values = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let value = if a.is(short) || a.is(long) {
            args.get(i + 1).cloned()
        } else if let Some(v) = a.text.strip_prefix(long).and_then(|v| v.strip_prefix('=')) {
            Some(Arg {
                text: v.into(),
                ..a.clone()
            })
        } else {
            a.text
                .strip_prefix(short)
                .filter(|v| !v.is_empty() && !short.starts_with("--") && !a.text.starts_with("--"))
                .map(|v| Arg {
                    text: v.into(),
                    ..a.clone()
                })
        };
        values.extend(value);
    }
    values
}

/// A short option letter given alone or in a cluster (`-f`, `-fu`), not a long option.
pub(crate) fn has_short(args: &[Arg], letter: char) -> bool {
    args.iter().take_while(|a| !a.is("--")).any(|a| {
        !a.dynamic
            && a.text.starts_with('-')
            && !a.text.starts_with("--")
            && a.text[1..].chars().all(|c| c.is_ascii_alphabetic())
            && a.text.contains(letter)
    })
}

pub(crate) fn has_short_exact(args: &[Arg], option: &str) -> bool {
    args.iter().take_while(|a| !a.is("--")).any(|a| {
        a.is(option) || (!a.dynamic && a.text.starts_with(option) && !a.text.starts_with("--"))
    })
}

/// The words config patterns are matched against: the program name, then its arguments; for
/// git, without the global options.
pub fn pattern_words(inv: &Invocation) -> Vec<&str> {
    let mut words = vec![inv.name.as_str()];
    if inv.name == "git" {
        let call = parse_git(&inv.argv);
        words.extend(call.subcommand.map(|a| a.text.as_str()));
        words.extend(call.args.iter().map(|a| a.text.as_str()));
    } else {
        words.extend(inv.args().iter().map(|a| a.text.as_str()));
    }
    words
}

pub(crate) fn extra_rules(f: &mut Findings, cx: &Context) {
    if f.inv.name.is_empty() {
        return;
    }
    let words = pattern_words(f.inv);
    for rule in &cx.config.extra_deny {
        if matches_prefix(&rule.pattern, &words) {
            f.deny("config-deny", &rule.reason);
        }
    }
    for rule in &cx.config.extra_ask {
        if matches_prefix(&rule.pattern, &words) {
            f.ask("config-ask", &rule.reason);
        }
    }
}
