//! Rules for git: options and config keys that run programs, force pushes, history rewrites,
//! discarded work.

use super::env::benign_program;
use super::{has_short, has_short_exact, operands, option_values};
use crate::context::Context;
use crate::git_call::{parse_git, split_config};
use crate::judgement::{Effect, Findings, Level};
use crate::targets::write_target;
use acp_gate_shell::Arg;

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
