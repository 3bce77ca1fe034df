//! Rules for git: options and config keys that run programs, force pushes, history rewrites,
//! discarded work.

use super::env::benign_program;
use super::{has_short, has_short_exact, operands, option_values};
use crate::context::Context;
use crate::git_call::{GitCall, parse_git, split_config};
use crate::judgement::{Effect, Findings, Level};
use crate::targets::write_target;
use acp_gate_shell::paths::is_same_or_ancestor;
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
        return (!benign_program(value)).then_some(Level::Deny);
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

/// Local commands that throw away uncommitted work or commits no branch holds any more: forced
/// checkouts and switches, `-D` deletes, overwriting every file from the index, `stash clear`.
fn discards(f: &mut Findings, cx: &Context, call: &GitCall, sub: &str, args: &[Arg]) {
    let given = |names: &[&str]| {
        args.iter().take_while(|a| !a.is("--")).any(|a| {
            names
                .iter()
                .any(|n| a.is(n) || a.text.starts_with(&format!("{n}=")))
        })
    };
    let reason = match sub {
        "checkout" | "switch" if given(&["-f", "--force", "--discard-changes"]) => {
            Some("a forced checkout discards uncommitted changes")
        }
        "checkout" | "switch" if given(&["-B", "-C", "--force-create"]) => {
            Some("resets an existing branch, which can lose the commits it held")
        }
        "branch" if given(&["-D", "-M", "-C", "-f", "--force"]) => {
            Some("deletes or overwrites a branch that may hold unmerged commits")
        }
        "stash" if args.first().is_some_and(|a| a.is("clear")) => {
            Some("`git stash clear` drops every stash")
        }
        "rm" if given(&["-f", "--force"]) => {
            Some("`git rm --force` deletes files with uncommitted changes")
        }
        "checkout" | "restore" if overwrites_every_file(cx, f.inv, call, sub, args) => {
            Some("overwrites every file with its committed version, discarding uncommitted changes")
        }
        _ => None,
    };
    if let Some(reason) = reason {
        f.ask("git-discard", reason);
    }
}

/// `git checkout .`, `git checkout -- .`, `git restore .` (not `--staged` only): a pathspec
/// naming the whole work tree.
fn overwrites_every_file(
    cx: &Context,
    inv: &Invocation,
    call: &GitCall,
    sub: &str,
    args: &[Arg],
) -> bool {
    let staged_only = args.iter().any(|a| a.is("--staged") || a.is("-S"))
        && !args.iter().any(|a| a.is("--worktree") || a.is("-W"));
    if sub == "restore" && staged_only {
        return false;
    }
    let dashes = args.iter().position(|a| a.is("--"));
    let pathspecs = args.iter().enumerate().filter(|(k, a)| {
        dashes.is_some_and(|d| *k > d)
            || (!a.text.starts_with('-') && a.text.contains(['.', '/', '*', ':']))
    });
    pathspecs.map(|(_, a)| a).any(|a| {
        let text = a.text.as_str();
        a.dynamic
            || matches!(text, ":/" | ":(top)" | "*" | ":/*")
            || call
                .place(text)
                .and_then(|placed| cx.absolute(inv, &placed))
                .is_none_or(|abs| cx.workspaces.iter().any(|w| is_same_or_ancestor(&abs, w)))
    })
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
    discards(f, cx, &call, sub, args);
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
        "reflog"
            if args
                .first()
                .is_some_and(|a| a.is("expire") || a.is("delete")) =>
        {
            f.ask(
                "git-history-rewrite",
                "expires reflog entries, which makes lost commits unrecoverable",
            )
        }
        "reset" if any(&["--hard"]) => f.ask(
            "git-discard",
            "`git reset --hard` discards uncommitted changes",
        ),
        "clean" if any(&["--force"]) || has_short(args, 'f') => {
            f.ask("git-discard", "`git clean -f` deletes untracked files")
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
