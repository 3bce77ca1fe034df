//! Applying patches: `patch`, `git apply`, `git am`. The files a patch changes are in the patch:
//! the host reads its headers (`paths.patch-files`, unified and git diffs only), and each file
//! is judged as the edit, creation or deletion it is, as the path validator judges a tool's.
//! Not known safe: a patch from a pipe or only known at run time, one the host cannot read as
//! a unified or git diff (a context or normal diff, an ed script, which GNU `patch` hands to
//! `ed`), one that makes a symbolic link (a later write could follow it out of the
//! workspace), and the options that pick other files or directories (`-d`, `-o`, `-r`, `-B`,
//! `--directory`) or a file to patch by operand.

use acp_gate_plugin::PatchChange;
use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::Judge;
use crate::git_call::place_in;
use crate::judgement::Effect;
use Value::*;

/// How many leading directories are taken off each name a patch gives.
#[derive(Clone, Copy)]
pub(super) enum Strip {
    /// `-pN`.
    Dirs(usize),
    /// GNU `patch` without `-p`: the base name only.
    All,
}

impl Strip {
    /// The name left: `-pN` takes off the shortest prefix holding N slashes (`-p1` makes
    /// `/etc/x` `etc/x`, as GNU patch does); `None` when nothing is left.
    fn apply(self, name: &str) -> Option<String> {
        let left = match self {
            Strip::All => name.rsplit('/').next().unwrap_or(name),
            Strip::Dirs(n) => {
                let mut rest = name;
                for _ in 0..n {
                    rest = rest[rest.find('/')?..].trim_start_matches('/');
                }
                rest
            }
        };
        (!left.is_empty()).then(|| left.to_owned())
    }
}

/// How the read options `items` apply a patch: the strip (`-p N`, `--strip=N`; `default`
/// without one) and whether in reverse (`-R`); `None` for a strip only known at run time.
pub(super) fn how(items: &[Item], default: Strip) -> Option<(Strip, bool)> {
    let mut strip = default;
    let mut reverse = false;
    for item in items {
        match item {
            Item::Option {
                name: "-p" | "--strip",
                arg: Some(value),
                ..
            } => strip = Strip::Dirs(value.known()?.parse().ok()?),
            Item::Option {
                name: "-R" | "--reverse",
                ..
            } => reverse = true,
            _ => {}
        }
    }
    Some((strip, reverse))
}

/// Judges applying the patch files `sources` (named where the command runs, in the `dirs` git's
/// `-C` reaches): each is read, and each file it names changed. With no source, the patch is
/// the command's standard input, which must be a file it redirects from.
pub(super) fn applies(
    judge: &mut Judge,
    sources: &[&Arg],
    dirs: &[Arg],
    strip: Strip,
    reverse: bool,
) -> bool {
    let redirected: Vec<&Arg> = judge.inv.reads.iter().collect();
    let sources = if sources.is_empty() {
        redirected
    } else {
        sources.to_vec()
    };
    if sources.is_empty() {
        unread(judge, "a patch from a pipe");
        return false;
    }
    sources
        .into_iter()
        .all(|source| patch_file(judge, source, dirs, strip, reverse))
}

/// Says why the files a patch changes are not known.
fn unread(judge: &mut Judge, what: &str) {
    judge.findings().ask(
        "patch-unread",
        format!("applies {what}, whose files the checker cannot know"),
    );
}

fn patch_file(judge: &mut Judge, source: &Arg, dirs: &[Arg], strip: Strip, reverse: bool) -> bool {
    if source.dynamic || source.glob || source.pipe || source.is("-") {
        return false;
    }
    let Some(placed) = place_in(dirs, &source.text) else {
        return false;
    };
    let file = Arg {
        text: placed.clone(),
        ..source.clone()
    };
    if !judge.path(&file, Read) {
        return false;
    }
    let Some(files) = judge.cx.patch_files(judge.inv, &placed) else {
        unread(
            judge,
            &format!("`{}`, not read as a unified or git diff", source.text),
        );
        return false;
    };
    files.iter().all(|f| {
        let Some(name) = strip.apply(&f.path).and_then(|n| place_in(dirs, &n)) else {
            return false;
        };
        let target = Arg::literal(name);
        match (f.change, reverse) {
            (PatchChange::Symlink, _) => {
                judge.findings().ask(
                    "patch-unread",
                    format!(
                        "the patch makes `{}` a symbolic link, which later writes would follow",
                        target.text
                    ),
                );
                false
            }
            (PatchChange::Delete, false) | (PatchChange::Create, true) => {
                judge.change(&target, "deletes, applying a patch,", Effect::Delete)
            }
            _ => judge.change(&target, "patches", Effect::Write),
        }
    })
}

/// GNU patch's options (`patch --help`) that pick nothing but how hunks are matched and what is
/// printed.
const PATCH: &[Opt] = &[
    ("-p", Literal),
    ("--strip", Literal),
    ("-i", Read),
    ("--input", Read),
    ("-R", Flag),
    ("--reverse", Flag),
    ("-N", Flag),
    ("--forward", Flag),
    ("-F", Literal),
    ("--fuzz", Literal),
    ("-l", Flag),
    ("--ignore-whitespace", Flag),
    ("-u", Flag),
    ("--unified", Flag),
    ("-t", Flag),
    ("--batch", Flag),
    ("-f", Flag),
    ("--force", Flag),
    ("-s", Flag),
    ("--silent", Flag),
    ("--quiet", Flag),
    ("--verbose", Flag),
    ("--dry-run", Flag),
    ("-E", Flag),
    ("--remove-empty-files", Flag),
    ("-b", Flag),
    ("--backup", Flag),
    ("--no-backup-if-mismatch", Flag),
    ("-Z", Flag),
    ("--set-utc", Flag),
    ("-T", Flag),
    ("--set-time", Flag),
];

/// `patch [OPTIONS] < FILE`, `patch -i FILE`; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    (name == "patch").then(|| patch(judge, args))
}

fn patch(judge: &mut Judge, args: &[Arg]) -> bool {
    let items = parse(args, &[PATCH], Style::Gnu);
    let Some((strip, reverse)) = how(&items, Strip::All) else {
        return false;
    };
    let mut sources = Vec::new();
    for item in &items {
        match item {
            Item::Option {
                name: "-i" | "--input",
                arg: Some(value),
                ..
            } => sources.push(value),
            Item::Option { .. } => {}
            // An operand names the file to patch, whatever the patch says.
            Item::Operand(_) | Item::Unknown(_) | Item::Missing(_) => return false,
        }
    }
    applies(judge, &sources, &[], strip, reverse)
}
