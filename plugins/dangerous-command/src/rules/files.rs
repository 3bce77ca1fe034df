//! Rules for programs that delete, copy, move, edit or change files: rm, cp/mv/install/ln,
//! sed -i, chmod/chown, find -delete.

use super::{has_flag, operands, option_values};
use crate::context::Context;
use crate::judgement::{Effect, Findings, Level};
use crate::targets::write_target;
use acp_gate_shell::Arg;

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    match inv.name.as_str() {
        "rm" | "srm" => rm(f, cx),
        "rmdir" | "unlink" | "truncate" | "shred" => {
            for t in operands(args) {
                write_target(f, cx, t, "deletes or overwrites", Effect::Delete);
            }
        }
        "tee" => {
            for t in operands(args) {
                write_target(f, cx, t, "writes", Effect::Write);
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => copy(f, cx),
        "dd" => {
            for a in args {
                if let Some(target) = a.text.strip_prefix("of=") {
                    let target = Arg {
                        text: target.into(),
                        ..a.clone()
                    };
                    write_target(f, cx, &target, "writes", Effect::Write);
                }
            }
        }
        "curl" | "wget" | "sort" => {
            let (short, long) = if inv.name == "wget" {
                ("-O", "--output-document")
            } else {
                ("-o", "--output")
            };
            for t in option_values(args, short, long) {
                if !t.is("-") {
                    write_target(f, cx, &t, "writes", Effect::Write);
                }
            }
        }
        "sed" => sed(f, cx),
        "chmod" | "chown" | "chgrp" => chmod(f, cx),
        "find" => find(f, cx),
        "rg" if args
            .iter()
            .any(|a| a.is("--pre") || a.text.starts_with("--pre=")) =>
        {
            f.ask(
                "rg-pre",
                "`rg --pre` runs a program on every file it searches",
            );
        }
        _ => {}
    }
}

pub(crate) fn rm(f: &mut Findings, cx: &Context) {
    let args = f.inv.args();
    let recursive = has_flag(args, &['r', 'R'], &["recursive"]);
    if has_flag(args, &[], &["no-preserve-root"]) {
        f.deny(
            "rm-root",
            "`--no-preserve-root` lets rm delete the whole file system",
        );
    }
    for t in operands(args) {
        let Some(text) = t.known() else {
            if recursive {
                f.ask(
                    "rm-dynamic",
                    format!(
                        "recursively deletes `{}`, which is only known when it runs",
                        t.text
                    ),
                );
            }
            continue;
        };
        if recursive {
            match cx.absolute(f.inv, text) {
                None => {
                    f.ask(
                        "rm-dynamic",
                        format!(
                            "recursively deletes `{text}` in a directory only known when it runs"
                        ),
                    );
                    continue;
                }
                Some(abs) => {
                    // `rm -r link/` deletes what the link leads to.
                    let real = cx.real(f.inv, text, false).filter(|r| r.linked);
                    let found = cx
                        .root(&abs)
                        .map(|what| (what, abs.clone()))
                        .or_else(|| real.and_then(|r| cx.root(&r.path).map(|what| (what, r.path))));
                    if let Some((what, abs)) = found {
                        f.push_about(
                            Level::Deny,
                            "rm-root",
                            format!("recursive delete of {what}"),
                            &abs,
                            Effect::Delete,
                        );
                        continue;
                    }
                }
            }
        }
        write_target(f, cx, t, "deletes", Effect::Delete);
    }
}

pub(crate) fn copy(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let mut targets = option_values(args, "-t", "--target-directory");
    let ops: Vec<&Arg> = operands(args).collect();
    if targets.is_empty() && ops.len() >= 2 {
        targets.push(ops[ops.len() - 1].clone());
    }
    for t in &targets {
        if !(matches!(inv.name.as_str(), "rsync" | "scp") && t.text.contains(':')) {
            write_target(f, cx, t, "writes into", Effect::Write);
        }
    }
    if inv.name == "mv" {
        for s in ops.iter().take(ops.len().saturating_sub(1)) {
            write_target(f, cx, s, "moves away", Effect::Move);
        }
    }
}

pub(crate) fn sed(f: &mut Findings, cx: &Context) {
    let args = f.inv.args();
    let in_place = args.iter().any(|a| {
        !a.dynamic
            && (a.text.starts_with("-i")
                || a.text.starts_with("--in-place")
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('i')))
    });
    if !in_place {
        return;
    }
    let script_given = args.iter().any(|a| {
        a.is("-e")
            || a.is("-f")
            || a.text.starts_with("--expression")
            || a.text.starts_with("--file")
    });
    for (i, t) in operands(args).enumerate() {
        if i > 0 || script_given {
            write_target(f, cx, t, "edits in place", Effect::Write);
        }
    }
}

pub(crate) fn chmod(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let recursive = has_flag(args, &['R'], &["recursive"]);
    let reference = args.iter().any(|a| a.text.starts_with("--reference"));
    let ops: Vec<&Arg> = operands(args).collect();
    // `chmod -w file`: a mode that looks like an option.
    let dash_mode = args.iter().filter(|_| inv.name == "chmod").find(|a| {
        a.text.starts_with('-')
            && a.text.len() > 1
            && a.text[1..].chars().all(|c| "rwxXst".contains(c))
    });
    let (mode, targets): (Option<&Arg>, &[&Arg]) = match (reference, dash_mode) {
        (true, _) => (None, &ops),
        (false, Some(m)) => (Some(m), &ops),
        (false, None) => (ops.first().copied(), ops.get(1..).unwrap_or_default()),
    };
    let what = if inv.name == "chmod" {
        "permissions"
    } else {
        "ownership"
    };
    let world_writable = inv.name == "chmod" && mode.is_some_and(|m| world_writable(&m.text));
    let mut fired = false;
    for t in targets {
        let Some(text) = t.known() else { continue };
        if let Some(root) = cx.absolute(inv, text).and_then(|abs| cx.root(&abs))
            && (recursive || world_writable)
        {
            f.deny("chmod-recursive", format!("changes the {what} of {root}"));
            fired = true;
        }
    }
    if fired || !recursive {
        return;
    }
    if world_writable {
        f.deny(
            "chmod-recursive",
            "recursively makes files writable by everyone",
        );
    } else {
        f.ask("chmod-recursive", format!("recursively changes {what}"));
    }
}

/// `777`, `0666`, `o+w`, `a=rwx`, `+w`: modes that let every user write.
pub(crate) fn world_writable(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|d| d & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let who_end = clause.find(['+', '=']).unwrap_or(clause.len());
        let (who, rest) = clause.split_at(who_end);
        (who.is_empty() || who.contains('o') || who.contains('a'))
            && rest.len() > 1
            && rest[1..].contains('w')
    })
}

pub(crate) fn find(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let starts: Vec<&Arg> = args
        .iter()
        .take_while(|a| !(a.text.starts_with('-') || a.text == "(" || a.text == "!"))
        .collect();
    for (i, a) in args.iter().enumerate() {
        if matches!(
            a.text.as_str(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls"
        ) && let Some(target) = args.get(i + 1)
        {
            write_target(f, cx, target, "writes", Effect::Write);
        }
    }
    if !args.iter().any(|a| a.is("-delete")) {
        return;
    }
    let dangerous = starts.iter().any(|s| {
        s.known()
            .and_then(|t| cx.absolute(inv, t))
            .and_then(|abs| cx.root(&abs))
            .is_some_and(|what| what != "the workspace root")
    });
    if dangerous {
        f.deny("find-delete", "`find -delete` from a root directory");
    } else {
        f.ask(
            "find-delete",
            "`find -delete` deletes every file it matches",
        );
    }
}
