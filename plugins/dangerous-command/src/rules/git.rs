//! Rules for git: options and config keys that run programs, force pushes, history rewrites,
//! and what a local command throws away that git keeps nowhere else.

use super::{has_short, has_short_exact, operands, option_values};
use crate::context::Context;
use crate::git_call::{GitCall, parse_git, split_config};
use crate::judgement::{Effect, Findings, Level};
use crate::targets::write_target;
use acp_gate_shell::environment::viewer;
use acp_gate_shell::{Arg, Command as Invocation};

/// Whether a git config key makes git run a program; and how sure that is.
pub(crate) fn git_config_runs_code(key: &str, value: &Arg) -> Option<Level> {
    let parts: Vec<&str> = key.split('.').collect();
    let (section, last) = (parts[0], parts[parts.len() - 1]);
    let pager_like = matches!(
        key,
        "core.pager" | "core.editor" | "sequence.editor" | "interactive.difffilter"
    ) || section == "pager";
    if pager_like {
        return (!viewer(value)).then_some(Level::Deny);
    }
    if section == "alias" {
        return Some(
            if value.text.trim_start().starts_with('!') || value.dynamic {
                Level::Deny
            } else {
                Level::Ask
            },
        );
    }
    let exact = matches!(
        key,
        "core.sshcommand"
            | "core.gitproxy"
            | "core.askpass"
            | "core.fsmonitor"
            | "core.hookspath"
            | "core.alternaterefscommand"
            | "core.worktree"
            | "credential.helper"
            | "diff.external"
            | "gpg.program"
            | "uploadpack.packobjectshook"
            | "include.path"
            | "web.browser"
            | "init.templatedir"
            | "sendemail.smtpserver"
            | "merge.tool"
            | "diff.tool"
            | "protocol.ext.allow"
            | "core.sshcommand.program"
            | "receive.procreceiverefs"
            | "ssh.variant"
    );
    let patterned = parts.len() >= 3
        && matches!(
            (section, last),
            ("diff", "textconv" | "command")
                | ("filter", "clean" | "smudge" | "process")
                | ("merge", "driver")
                | ("difftool" | "mergetool" | "browser" | "man", "cmd" | "path")
                | ("credential", "helper")
                | ("gpg", "program")
                | ("remote", "uploadpack" | "receivepack" | "proxy" | "vcs")
                | ("includeif", "path")
        );
    let submodule_command =
        section == "submodule" && last == "update" && value.text.starts_with('!');
    (exact || patterned || submodule_command).then_some(Level::Deny)
}

/// `commit`'s options that take a value as the next word: a `-n` there is a message.
const COMMIT_VALUED_SHORT: &str = "mFCctu";
const COMMIT_VALUED_LONG: &[&str] = &[
    "--message",
    "--file",
    "--template",
    "--reuse-message",
    "--reedit-message",
    "--fixup",
    "--squash",
    "--author",
    "--date",
    "--cleanup",
    "--trailer",
    "--pathspec-from-file",
];

/// Whether `git SUB ARGS` skips the hooks: `--no-verify` (`-n` for `commit`).
fn skips_hooks(sub: &str, args: &[Arg]) -> bool {
    if !matches!(sub, "commit" | "merge" | "rebase" | "am" | "push" | "pull") {
        return false;
    }
    let mut words = args.iter().take_while(|a| !a.is("--"));
    while let Some(a) = words.next() {
        if a.dynamic {
            continue;
        }
        let t = a.text.as_str();
        if t == "--no-verify" {
            return true;
        }
        if t.starts_with("--") {
            if COMMIT_VALUED_LONG.contains(&t) {
                words.next();
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|_| sub == "commit") else {
            continue;
        };
        for (k, c) in cluster.char_indices() {
            if c == 'n' {
                return true;
            }
            if COMMIT_VALUED_SHORT.contains(c) {
                if k + 1 == cluster.len() {
                    words.next();
                }
                break;
            }
        }
    }
    false
}

/// Whether `git SUB` is given one of these options: a short letter in a cluster (`-df`; a
/// letter of `valued` takes the rest of its cluster as its value), a long name or any
/// abbreviation of one (git takes an unambiguous one: `--har` is `--hard`), with or without
/// `=value`.
fn given(args: &[Arg], short: &str, valued: &str, long: &[&str]) -> bool {
    args.iter()
        .take_while(|a| !a.is("--"))
        .filter(|a| !a.dynamic)
        .any(|a| match a.text.strip_prefix("--") {
            Some(name) => {
                let name = name.split('=').next().unwrap_or(name);
                !name.is_empty() && long.iter().any(|l| l.starts_with(name))
            }
            None => a.text.strip_prefix('-').is_some_and(|cluster| {
                let letters = cluster
                    .find(|c| valued.contains(c))
                    .map_or(cluster, |at| &cluster[..=at]);
                letters.chars().any(|c| short.contains(c))
            }),
        })
}

/// The pathspecs of `git checkout` or `git restore`, whose files git overwrites from the
/// index or a commit: every operand after `--`; for `restore` every operand; for `checkout`
/// (not creating a branch) every operand after a first (the revision), or a lone one that
/// names a path rather than a branch: one that is there, a glob, pathspec magic, `.` or `..`.
fn overwritten<'a>(
    cx: &Context,
    inv: &Invocation,
    call: &GitCall,
    sub: &str,
    args: &'a [Arg],
) -> Vec<&'a Arg> {
    let valued = [
        "-b",
        "-B",
        "--orphan",
        "-s",
        "--source",
        "--conflict",
        "-c",
        "-C",
    ];
    let (mut operands, mut after_dashes, mut skip) = (Vec::new(), false, false);
    for a in args {
        if after_dashes {
            operands.push((a, true));
        } else if a.is("--") {
            after_dashes = true;
        } else if std::mem::take(&mut skip) {
        } else if a.text.starts_with('-') && !a.dynamic {
            skip = valued.contains(&a.text.as_str());
        } else {
            operands.push((a, false));
        }
    }
    if sub == "restore" || operands.iter().any(|(_, after)| *after) {
        return operands
            .into_iter()
            .filter(|(_, after)| sub == "restore" || *after)
            .map(|(a, _)| a)
            .collect();
    }
    match operands.as_slice() {
        [_, rest @ ..] if !rest.is_empty() => rest.iter().map(|(a, _)| *a).collect(),
        [(a, _)]
            if a.dynamic
                || a.glob
                || a.text.starts_with(':')
                || a.text.split('/').all(|s| matches!(s, "" | "." | ".."))
                || call
                    .place(&a.text)
                    .and_then(|placed| cx.real(inv, &placed, true))
                    .is_some_and(|r| r.exists) =>
        {
            vec![*a]
        }
        _ => Vec::new(),
    }
}

/// What a local git command throws away that git keeps nowhere else, so that it can never give
/// it back: uncommitted changes and untracked files, commits that only a deleted or moved
/// branch, tag or ref held, a stash, reflog entries, unreachable objects. The reason, if it
/// throws something away.
fn discarded(
    cx: &Context,
    inv: &Invocation,
    call: &GitCall,
    sub: &str,
    args: &[Arg],
) -> Option<String> {
    let first = args.first().and_then(Arg::known);
    let reason = match sub {
        "checkout" | "switch" if given(args, "f", "bBc", &["force", "discard-changes"]) => {
            "a forced checkout discards uncommitted changes"
        }
        "checkout" | "switch" if given(args, "BC", "bc", &["force-create"]) => {
            "resets an existing branch, which can lose the commits it held"
        }
        "checkout" | "restore"
            if !(sub == "restore" && given(args, "S", "s", &["staged"]))
                || given(args, "W", "s", &["worktree"]) =>
        {
            let paths = overwritten(cx, inv, call, sub, args);
            let shown: Vec<&str> = paths.iter().map(|a| a.text.as_str()).collect();
            return (!paths.is_empty()).then(|| {
                format!(
                    "overwrites `{}` with the committed version, discarding uncommitted changes that git keeps nowhere",
                    shown.join(" ")
                )
            });
        }
        "reset" if given(args, "", "", &["hard"]) => {
            "`git reset --hard` discards uncommitted changes"
        }
        "clean" if given(args, "f", "e", &["force"]) => "`git clean -f` deletes untracked files",
        "rm" if given(args, "f", "", &["force"]) => {
            "`git rm --force` deletes files with uncommitted changes"
        }
        "worktree" if first == Some("remove") && given(args, "f", "", &["force"]) => {
            "removes a worktree with its uncommitted changes and untracked files"
        }
        "branch" if given(args, "DMCf", "u", &["force"]) => {
            "deletes or overwrites a branch that may hold unmerged commits"
        }
        "tag" if given(args, "df", "mFu", &["delete", "force"]) => {
            "deletes or moves a tag, which may be the only name of its commits"
        }
        "update-ref" => "moves or deletes a ref directly, which can drop the commits it held",
        "stash" if matches!(first, Some("drop" | "clear")) => {
            "drops stashed changes, which nothing else keeps"
        }
        "reflog" if matches!(first, Some("expire" | "delete" | "drop")) => {
            "expires reflog entries, which makes lost commits unrecoverable"
        }
        "gc" if given(args, "", "", &["prune"])
            || call
                .config
                .iter()
                .any(|(key, _)| key.starts_with("gc.") && key.contains("expire")) =>
        {
            "prunes unreachable objects sooner than git would: commits only the reflog held are lost"
        }
        "prune" => "deletes unreachable objects: commits only the reflog held are lost",
        "repack" if given(args, "a", "", &[]) && given(args, "d", "", &[]) => {
            "drops unreachable objects from the repository's packs"
        }
        _ => return None,
    };
    Some(reason.to_owned())
}

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings, cx: &Context) {
    if f.inv.name != "git" {
        return;
    }
    let call = parse_git(&f.inv.argv);
    for (key, value) in &call.config {
        if let Some(level) = git_config_runs_code(key, value) {
            f.push(
                level,
                "git-exec-option",
                format!("`git -c {key}=…` makes git run a program"),
            );
        }
    }
    if call.exec_path {
        f.deny(
            "git-exec-option",
            "`git --exec-path=…` runs git commands from another directory",
        );
    }
    let Some(sub) = call.subcommand.and_then(Arg::known) else {
        return;
    };
    let args = call.args;
    let any = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a.is(n) || a.text.starts_with(&format!("{n}=")))
        })
    };
    for out in option_values(args, "--output", "--output") {
        write_target(f, cx, &out, "writes", Effect::Write);
    }
    if skips_hooks(sub, args) {
        f.ask(
            "git-no-verify",
            "`--no-verify` skips the repository's hooks (its checks before a commit or push)",
        );
    }
    if let Some(reason) = discarded(cx, f.inv, &call, sub, args) {
        f.ask("git-discard", reason);
    }
    match sub {
        "push" => {
            let force = any(&[
                "--force",
                "--force-with-lease",
                "--force-if-includes",
                "--mirror",
            ]) || has_short(args, 'f')
                || operands(args).any(|a| a.text.starts_with('+'));
            if force {
                f.deny(
                    "git-force-push",
                    "force-pushes, which can overwrite history on the remote",
                );
            }
            if any(&["--delete"])
                || has_short(args, 'd')
                || operands(args).any(|a| a.text.starts_with(':') && a.text.len() > 1)
            {
                f.ask("git-remote-delete", "deletes a branch or tag on the remote");
            }
            if any(&["--receive-pack", "--exec"]) {
                f.deny(
                    "git-exec-option",
                    "`--receive-pack` / `--exec` run a program",
                );
            }
        }
        "filter-branch" | "filter-repo" => {
            f.deny("git-history-rewrite", "rewrites the repository's history")
        }
        "fetch" | "pull" | "clone" | "ls-remote" | "archive" | "submodule" => {
            if any(&["--upload-pack", "--exec", "--receive-pack"])
                || (sub == "clone" && has_short_exact(args, "-u"))
            {
                f.deny(
                    "git-exec-option",
                    "`--upload-pack` / `--exec` run a program",
                );
            }
            for v in option_values(args, "-c", "--config") {
                let (key, value) = split_config(&v, false);
                if let Some(level) = git_config_runs_code(&key, &value) {
                    f.push(
                        level,
                        "git-exec-option",
                        format!("`--config {key}=…` makes git run a program"),
                    );
                }
            }
            if sub == "clone" && any(&["--template"]) {
                f.ask(
                    "git-exec-option",
                    "`git clone --template` can install hooks",
                );
            }
        }
        "config" => {
            let reading = any(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--unset",
                "--unset-all",
                "--remove-section",
                "--show-origin",
                "--name-only",
            ]);
            let ops: Vec<&Arg> = operands(args).collect();
            let ops = match ops.first() {
                Some(first) if matches!(first.text.as_str(), "set") => &ops[1..],
                Some(first)
                    if matches!(
                        first.text.as_str(),
                        "get" | "list" | "unset" | "edit" | "rename-section" | "remove-section"
                    ) =>
                {
                    &ops[..0]
                }
                _ => &ops[..],
            };
            if !reading && ops.len() >= 2 {
                let key = ops[0].text.to_lowercase();
                if let Some(level) = git_config_runs_code(&key, ops[1]) {
                    f.push(
                        level,
                        "git-exec-option",
                        format!("sets `{key}`, which makes git run a program"),
                    );
                }
            }
        }
        "rebase" if any(&["--exec"]) || has_short_exact(args, "-x") => {
            f.ask("git-exec-option", "`git rebase --exec` runs a command")
        }
        "difftool" | "mergetool"
            if any(&["--extcmd", "--tool"])
                || has_short_exact(args, "-x")
                || has_short_exact(args, "-t") =>
        {
            f.ask("git-exec-option", "runs an external diff or merge tool")
        }
        "grep"
            if any(&["--open-files-in-pager"]) || args.iter().any(|a| a.text.starts_with("-O")) =>
        {
            f.ask("git-exec-option", "`git grep -O` runs a pager program")
        }
        _ => {}
    }
}
