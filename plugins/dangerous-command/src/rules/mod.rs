//! The built-in rules, each judging one simple command (wrappers are commands of their own),
//! one module per family of programs: `files` (rm, cp, mv, sed -i, chmod, find, dd),
//! `git`, `env` (variables that load code), `network` (exfiltration, reverse shells),
//! `escalation` (sudo and relatives, persistence), `system` (power, disks), `unicode`,
//! `leaks` (the environment and secret variables printed), `globs` (globs that may become
//! options);
//! `operands` finds secrets named by programs the positive model has no table for. The files a
//! command reads or writes are judged by [`crate::targets`].

mod env;
mod escalation;
mod files;
mod git;
mod globs;
mod leaks;
mod network;
mod operands;
mod system;
mod unicode;

use acp_gate_shell::Arg;
use acp_gate_shell::Command as Invocation;

use crate::config::{matches_prefix, pattern_words};
use crate::context::Context;
use crate::judgement::{Effect, Finding, Findings};
use crate::targets::{read_target, write_target};

pub(crate) use network::lockfile_install;
pub use unicode::is_deceptive_char;

/// Judges one invocation, appending what fires to `out`; `tabled` when the positive model
/// judges its operands with the access each one has (so they are not all taken as reads).
pub fn check(inv: &Invocation, cx: &Context, tabled: bool, out: &mut Vec<Finding>) {
    let start = out.len();
    let mut f = Findings { out, inv };
    unicode::check(&mut f);
    env::check(&mut f, cx);
    leaks::check(&mut f);
    globs::check(&mut f, cx);
    for w in &inv.writes {
        write_target(&mut f, cx, w, "redirects output into", Effect::Write);
    }
    for r in &inv.reads {
        read_target(&mut f, cx, r);
    }
    files::check(&mut f, cx);
    git::check(&mut f, cx);
    escalation::check(&mut f);
    network::check(&mut f, cx);
    system::check(&mut f);
    operands::sensitive_operands(&mut f, cx, tabled);
    extra_rules(&mut f, cx);
    // Disabled rules drop out here, so every rule above can be switched off by id.
    let kept: Vec<Finding> = f
        .out
        .drain(start..)
        .filter(|x| cx.config.enabled(x.rule))
        .collect();
    f.out.extend(kept);
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
