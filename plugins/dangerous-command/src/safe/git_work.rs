//! git's commands that change only the repository and its work tree (issue 27): add, commit,
//! checkout and switch, branch, stash, merge, rebase, cherry-pick and revert, reset (soft and
//! mixed), restore, tag, mv, rm, init, bisect's steps, fetch and pull from a configured remote
//! (git's own store and the work tree, as a merge), `apply --check`/`--stat` (a patch read,
//! nothing applied); with the options of each (from git's manuals) that run no
//! other program (editors, gpg, `--exec`, custom merge strategies), discard no work (`--force`,
//! `-D`, `--hard`, `stash drop`, `stash clear`) and skip no hook (`--no-verify`, which the
//! rules ask about, with every command that throws away what git keeps nowhere else).
//! A file they overwrite, move or delete is judged as the path validator judges an edit of it:
//! in the workspace and not sensitive. A secret is never staged silently. Not listed, so asked:
//! interactive forms (`-p`, `-i`, `-e`), `--pathspec-from-file`, `-f`/`--force`, signing.
//! `git apply` and `git am` are judged by the files their patches change (`super::patches`).

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};
use acp_gate_shell::paths::is_same_or_ancestor;

use super::Judge;
use super::patches::{self, Strip};
use crate::git_call::place_in;
use crate::judgement::Effect;
use crate::targets::{aims_at_secret, is_secret};
use Value::*;

/// What a command's operands are, once its options are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operands {
    /// Names of branches, tags, commits, stashes, or a message: data.
    Refs,
    /// Pathspecs whose contents git stores (`add`, `commit`): in the workspace; a secret among
    /// them is not staged silently.
    Stage,
    /// Pathspecs git only takes out of its index (`reset`, `rm --cached`, `restore --staged`):
    /// in the workspace.
    Index,
    /// Pathspecs of files git overwrites from its index or a commit (`checkout -- f`,
    /// `restore f`); the whole tree at once discards every uncommitted change.
    Overwrite,
    /// Pathspecs of files git deletes (`rm`).
    Delete,
    /// `git mv SOURCE... DEST`: the sources are moved away, the destination written.
    Move,
    /// The directory `git init` makes a repository in.
    Create,
    /// A configured remote by its name, then refspecs (`fetch origin main`): not a URL or a
    /// path, which name a repository the workspace does not configure; no forced (`+`) update.
    Remote,
    /// Revisions, then pathspecs of the kind given (`checkout REV -- PATHS`, `reset REV PATHS`):
    /// after `--`, or (without it) every operand but a first one that does not read as a path.
    RefsThen(&'static Operands),
}

const ADD: &[Opt] = &[
    ("-A", Flag),
    ("--all", Flag),
    ("--no-all", Flag),
    ("-u", Flag),
    ("--update", Flag),
    ("-N", Flag),
    ("--intent-to-add", Flag),
    ("-n", Flag),
    ("--dry-run", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--refresh", Flag),
    ("--ignore-errors", Flag),
    ("--ignore-missing", Flag),
    ("--renormalize", Flag),
    ("--ignore-removal", Flag),
    ("--no-ignore-removal", Flag),
    ("--no-warn-embedded-repo", Flag),
    ("--sparse", Flag),
    ("--chmod", Literal),
];

const COMMIT: &[Opt] = &[
    ("-m", Literal),
    ("--message", Literal),
    ("-F", Read),
    ("--file", Read),
    ("-t", Read),
    ("--template", Read),
    ("-C", Literal),
    ("--reuse-message", Literal),
    ("--fixup", Literal),
    ("--squash", Literal),
    ("--author", Literal),
    ("--date", Literal),
    ("--cleanup", Literal),
    ("--trailer", Literal),
    ("-a", Flag),
    ("--all", Flag),
    ("-i", Flag),
    ("--include", Flag),
    ("-o", Flag),
    ("--only", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--amend", Flag),
    ("--no-edit", Flag),
    ("--allow-empty", Flag),
    ("--allow-empty-message", Flag),
    ("-s", Flag),
    ("--signoff", Flag),
    ("--no-signoff", Flag),
    ("--reset-author", Flag),
    ("--status", Flag),
    ("--no-status", Flag),
    ("--dry-run", Flag),
    ("--short", Flag),
    ("--porcelain", Flag),
    ("--long", Flag),
    ("-z", Flag),
    ("-u", Optional),
    ("--untracked-files", Optional),
    ("--no-gpg-sign", Flag),
    ("--verify", Flag),
];

/// `checkout`'s and `switch`'s options that choose or create a branch (never `-f`, `-B`, `-C`).
const CHECKOUT: &[Opt] = &[
    ("-b", Literal),
    ("--orphan", Literal),
    ("-t", Flag),
    ("--track", Optional),
    ("--no-track", Flag),
    ("--detach", Flag),
    ("--guess", Flag),
    ("--no-guess", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--progress", Flag),
    ("--no-progress", Flag),
    ("-m", Flag),
    ("--merge", Flag),
    ("--conflict", Literal),
    ("--ours", Flag),
    ("--theirs", Flag),
    ("-l", Flag),
    ("--overlay", Flag),
    ("--no-overlay", Flag),
    ("--ignore-skip-worktree-bits", Flag),
    ("--ignore-other-worktrees", Flag),
];

const SWITCH: &[Opt] = &[("-c", Literal), ("--create", Literal), ("-d", Flag)];

/// `branch`'s options that create, rename, copy or delete merged branches, or set upstreams.
const BRANCH: &[Opt] = &[
    ("-d", Flag),
    ("--delete", Flag),
    ("-m", Flag),
    ("--move", Flag),
    ("-c", Flag),
    ("--copy", Flag),
    ("-u", Literal),
    ("--set-upstream-to", Literal),
    ("--unset-upstream", Flag),
    ("-t", Flag),
    ("--track", Optional),
    ("--no-track", Flag),
    ("--create-reflog", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
];

/// `tag`'s options that create a tag (never `-d`, `-f`, or signing).
const TAG: &[Opt] = &[
    ("-a", Flag),
    ("--annotate", Flag),
    ("-m", Literal),
    ("--message", Literal),
    ("-F", Read),
    ("--file", Read),
    ("--cleanup", Literal),
    ("--no-sign", Flag),
    ("--create-reflog", Flag),
];

const STASH_PUSH: &[Opt] = &[
    ("-m", Literal),
    ("--message", Literal),
    ("-u", Flag),
    ("--include-untracked", Flag),
    ("--no-include-untracked", Flag),
    ("-k", Flag),
    ("--keep-index", Flag),
    ("--no-keep-index", Flag),
    ("-S", Flag),
    ("--staged", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
];

const STASH_APPLY: &[Opt] = &[
    ("--index", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-m", Literal),
    ("--message", Literal),
];

/// Options shared by `merge`, `rebase`, `cherry-pick` and `revert`.
const MERGING: &[Opt] = &[
    ("--continue", Flag),
    ("--abort", Flag),
    ("--quit", Flag),
    ("-s", Literal),
    ("--strategy", Literal),
    ("-X", Literal),
    ("--strategy-option", Literal),
    ("--rerere-autoupdate", Flag),
    ("--no-rerere-autoupdate", Flag),
    ("--signoff", Flag),
    ("--no-gpg-sign", Flag),
    ("--allow-empty-message", Flag),
    ("--verify", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--autostash", Flag),
    ("--no-autostash", Flag),
];

const MERGE: &[Opt] = &[
    ("--no-ff", Flag),
    ("--ff", Flag),
    ("--ff-only", Flag),
    ("--squash", Flag),
    ("--no-squash", Flag),
    ("--commit", Flag),
    ("--no-commit", Flag),
    ("-m", Literal),
    ("-F", Read),
    ("--file", Read),
    ("--no-edit", Flag),
    ("--stat", Flag),
    ("-n", Flag),
    ("--no-stat", Flag),
    ("--summary", Flag),
    ("--no-summary", Flag),
    ("--log", Optional),
    ("--no-log", Flag),
    ("--progress", Flag),
    ("--no-progress", Flag),
    ("--allow-unrelated-histories", Flag),
    ("--no-signoff", Flag),
    ("--overwrite-ignore", Flag),
    ("--no-overwrite-ignore", Flag),
    ("--cleanup", Literal),
];

const REBASE: &[Opt] = &[
    ("--onto", Literal),
    ("--skip", Flag),
    ("--autosquash", Flag),
    ("--no-autosquash", Flag),
    ("--keep-base", Flag),
    ("--stat", Flag),
    ("-n", Flag),
    ("--no-stat", Flag),
    ("--fork-point", Flag),
    ("--no-fork-point", Flag),
    ("-r", Flag),
    ("--rebase-merges", Optional),
    ("--no-rebase-merges", Flag),
    ("--root", Flag),
    ("--empty", Literal),
    ("--keep-empty", Flag),
    ("--no-keep-empty", Flag),
    ("--committer-date-is-author-date", Flag),
    ("--ignore-date", Flag),
    ("--reset-author-date", Flag),
    ("--update-refs", Flag),
    ("--no-update-refs", Flag),
    ("--reapply-cherry-picks", Flag),
    ("--no-reapply-cherry-picks", Flag),
    ("--apply", Flag),
    ("-m", Flag),
    ("--merge", Flag),
    ("-C", Literal),
    ("--whitespace", Literal),
    ("--ignore-whitespace", Flag),
];

const PICK: &[Opt] = &[
    ("-n", Flag),
    ("--no-commit", Flag),
    ("-m", Literal),
    ("--mainline", Literal),
    ("-x", Flag),
    ("-s", Flag),
    ("--ff", Flag),
    ("--allow-empty", Flag),
    ("--keep-redundant-commits", Flag),
    ("--empty", Literal),
    ("--skip", Flag),
    ("--no-edit", Flag),
    ("--cleanup", Literal),
];

const RESET: &[Opt] = &[
    ("--soft", Flag),
    ("--mixed", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-N", Flag),
    ("--intent-to-add", Flag),
    ("--refresh", Flag),
    ("--no-refresh", Flag),
];

const RESTORE: &[Opt] = &[
    ("-s", Literal),
    ("--source", Literal),
    ("-S", Flag),
    ("--staged", Flag),
    ("-W", Flag),
    ("--worktree", Flag),
    ("--ours", Flag),
    ("--theirs", Flag),
    ("-m", Flag),
    ("--merge", Flag),
    ("--conflict", Literal),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--progress", Flag),
    ("--no-progress", Flag),
    ("--overlay", Flag),
    ("--no-overlay", Flag),
    ("--ignore-unmerged", Flag),
    ("--ignore-skip-worktree-bits", Flag),
];

const MV: &[Opt] = &[
    ("-f", Flag),
    ("--force", Flag),
    ("-k", Flag),
    ("-n", Flag),
    ("--dry-run", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--sparse", Flag),
];

const RM: &[Opt] = &[
    ("--cached", Flag),
    ("-r", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-n", Flag),
    ("--dry-run", Flag),
    ("--ignore-unmatch", Flag),
    ("--sparse", Flag),
];

const INIT: &[Opt] = &[
    ("-q", Flag),
    ("--quiet", Flag),
    ("-b", Literal),
    ("--initial-branch", Literal),
    ("--bare", Flag),
    ("--object-format", Literal),
    ("--ref-format", Literal),
];

/// `git apply`'s options: how a patch is matched and what is printed; with `--check`, `--stat`,
/// `--numstat` or `--summary` (and no `--apply`) nothing is written.
const APPLY: &[Opt] = &[
    ("--apply", Flag),
    ("--reject", Flag),
    ("--check", Flag),
    ("--stat", Flag),
    ("--numstat", Flag),
    ("--summary", Flag),
    ("--index", Flag),
    ("--cached", Flag),
    ("-3", Flag),
    ("--3way", Flag),
    ("-R", Flag),
    ("--reverse", Flag),
    ("-p", Literal),
    ("-C", Literal),
    ("--recount", Flag),
    ("--allow-empty", Flag),
    ("--ignore-space-change", Flag),
    ("--ignore-whitespace", Flag),
    ("--whitespace", Literal),
    ("--include", Literal),
    ("--exclude", Literal),
    ("--directory", Literal),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-z", Flag),
];

/// `git fetch`'s options (and `git pull`'s for its fetch) that fetch from the configured
/// remotes into git's own store: no `--force`, no `--upload-pack` (a program), no submodules
/// (their URLs are the submodules' own), no writing elsewhere.
const FETCH: &[Opt] = &[
    ("--all", Flag),
    ("-p", Flag),
    ("--prune", Flag),
    ("-P", Flag),
    ("--prune-tags", Flag),
    ("-t", Flag),
    ("--tags", Flag),
    ("--no-tags", Flag),
    ("--depth", Literal),
    ("--deepen", Literal),
    ("--shallow-since", Literal),
    ("--unshallow", Flag),
    ("-j", Literal),
    ("--jobs", Literal),
    ("--dry-run", Flag),
    ("--no-recurse-submodules", Flag),
    ("--progress", Flag),
    ("--no-progress", Flag),
    ("--set-upstream", Flag),
    ("-4", Flag),
    ("-6", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
];

/// `git ls-remote`'s options: which refs of a configured remote are printed, and how.
const LS_REMOTE: &[Opt] = &[
    ("-h", Flag),
    ("--heads", Flag),
    ("-b", Flag),
    ("--branches", Flag),
    ("-t", Flag),
    ("--tags", Flag),
    ("--refs", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--exit-code", Flag),
    ("--get-url", Flag),
    ("--symref", Flag),
    ("--sort", Literal),
];

/// `git pull`'s own options beyond its fetch's and its merge's.
const PULL: &[Opt] = &[("-r", Flag), ("--rebase", Optional), ("--no-rebase", Flag)];

/// `git bisect start`'s options: terms and how commits are checked out.
const BISECT_START: &[Opt] = &[
    ("--term-new", Literal),
    ("--term-bad", Literal),
    ("--term-old", Literal),
    ("--term-good", Literal),
    ("--no-checkout", Flag),
    ("--first-parent", Flag),
];

/// git's own merge strategies: `-s NAME` runs `git-merge-NAME`, a program on the path for any
/// other name.
const STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// `git SUB REST` for the local commands; `None` for another command. `dirs` are the `-C`
/// directories git runs in.
pub(super) fn judge(judge: &mut Judge, sub: &str, rest: &[Arg], dirs: &[Arg]) -> Option<bool> {
    let (tables, operands): (&[&[Opt]], Operands) = match sub {
        "add" => (&[ADD], Operands::Stage),
        "commit" => (&[COMMIT], Operands::Stage),
        "checkout" => (&[CHECKOUT], checkout_operands(rest)),
        "switch" => (&[CHECKOUT, SWITCH], Operands::Refs),
        "branch" => (&[BRANCH], Operands::Refs),
        "tag" => (&[TAG], Operands::Refs),
        "stash" => return Some(stash(judge, rest, dirs)),
        "merge" => (&[MERGING, MERGE], Operands::Refs),
        "rebase" => (&[MERGING, REBASE], Operands::Refs),
        "cherry-pick" | "revert" => (&[MERGING, PICK], Operands::Refs),
        "reset" => (&[RESET], Operands::RefsThen(&Operands::Index)),
        "restore" => {
            let staged_only = rest.iter().any(|a| a.is("--staged") || a.is("-S"))
                && !rest.iter().any(|a| a.is("--worktree") || a.is("-W"));
            let after = if staged_only {
                Operands::Index
            } else {
                Operands::Overwrite
            };
            (&[RESTORE], after)
        }
        "mv" => (&[MV], Operands::Move),
        "rm" => {
            let cached = rest.iter().any(|a| a.is("--cached"));
            (
                &[RM],
                if cached {
                    Operands::Index
                } else {
                    Operands::Delete
                },
            )
        }
        "init" => (&[INIT], Operands::Create),
        "fetch" => (&[FETCH], Operands::Remote),
        "ls-remote" => (&[LS_REMOTE], Operands::Remote),
        // An interactive rebase runs the sequence editor.
        "pull" if rest.iter().any(|a| a.text.starts_with("--rebase=i")) => return Some(false),
        "pull" => (&[FETCH, MERGING, MERGE, PULL], Operands::Remote),
        "apply" => return Some(apply(judge, rest, dirs)),
        "am" => return Some(am(judge, rest, dirs)),
        "bisect" => return Some(bisect(judge, rest)),
        _ => return None,
    };
    let items = parse(rest, tables, Style::Gnu);
    let strategies = matches!(sub, "merge" | "rebase" | "cherry-pick" | "revert" | "pull");
    Some(
        options_safe(judge, &items, strategies)
            && operands_safe(judge, &items, rest, operands, dirs),
    )
}

/// `git checkout`: with `-b`/`--orphan` every operand names a branch or its start; else the
/// operands are a branch, or a revision and pathspecs.
fn checkout_operands(rest: &[Arg]) -> Operands {
    if rest.iter().any(|a| {
        a.is("-b")
            || a.is("--orphan")
            || a.text.starts_with("--orphan=")
            || a.text.starts_with("-b")
    }) {
        Operands::Refs
    } else {
        Operands::RefsThen(&Operands::Overwrite)
    }
}

/// Every option listed, and every value harmless (with `strategies`, a merge strategy of
/// git's own).
fn options_safe(judge: &mut Judge, items: &[Item], strategies: bool) -> bool {
    items.iter().all(|item| match item {
        Item::Option {
            name: "-s" | "--strategy",
            arg: Some(s),
            ..
        } if strategies => !s.dynamic && STRATEGIES.contains(&s.text.as_str()),
        Item::Option {
            value,
            arg: Some(a),
            ..
        } => judge.value(a, *value),
        Item::Option { .. } | Item::Operand(_) => true,
        Item::Unknown(_) | Item::Missing(_) => false,
    })
}

/// The operands of a local command, judged as `kind` says.
fn operands_safe(
    judge: &mut Judge,
    items: &[Item],
    rest: &[Arg],
    kind: Operands,
    dirs: &[Arg],
) -> bool {
    let dashes = rest.iter().position(|a| a.is("--"));
    let after_dashes = |a: &Arg| {
        dashes.is_some_and(|d| {
            rest.iter()
                .position(|r| std::ptr::eq(r, a))
                .is_some_and(|p| p > d)
        })
    };
    let operands: Vec<&Arg> = items.iter().filter_map(Item::operand).collect();
    let last = operands.len().saturating_sub(1);
    operands.iter().enumerate().all(|(k, a)| {
        let kind = match kind {
            // Without `--`, a second operand makes the first a revision; a lone operand is a
            // branch or a path, judged as a path when it reads as one.
            Operands::RefsThen(after)
                if after_dashes(a) || (dashes.is_none() && (k > 0 || looks_like_path(a))) =>
            {
                *after
            }
            Operands::RefsThen(_) => Operands::Refs,
            Operands::Remote => {
                return !a.dynamic
                    && !a.text.starts_with('+')
                    && (k > 0 || !a.text.contains([':', '/', '\\']) && !a.text.starts_with('.'));
            }
            Operands::Move if k == last => Operands::Create,
            kind => kind,
        };
        pathspec(judge, a, kind, dirs)
    })
}

/// A word that names a path rather than a branch: `.`, `src/main.rs`, `Cargo.lock`.
fn looks_like_path(a: &Arg) -> bool {
    a.text.contains(['/', '.']) || a.glob
}

/// One operand of a local command.
fn pathspec(judge: &mut Judge, a: &Arg, kind: Operands, dirs: &[Arg]) -> bool {
    if a.dynamic {
        return false;
    }
    if kind == Operands::Refs {
        return true;
    }
    // Pathspec magic (`:/`, `:(top)`, `:!x`) is not judged here; a glob is only staged.
    if a.text.starts_with(':') || (a.glob && !matches!(kind, Operands::Stage | Operands::Index)) {
        return false;
    }
    let Some(placed) = place_in(dirs, &a.text) else {
        return false;
    };
    let git_glob = a.glob || a.text.contains(['*', '?', '[']);
    let named = Arg {
        text: placed,
        glob: git_glob,
        ..a.clone()
    };
    match kind {
        Operands::Stage => {
            let secret = is_secret(judge.cx, judge.inv, &named)
                || (git_glob && aims_at_secret(judge.cx, &a.text));
            !secret && judge.path(&named, Name)
        }
        Operands::Index => judge.path(&named, Name),
        _ if git_glob => false,
        Operands::Overwrite => {
            !whole_tree(judge, &named) && judge.change(&named, "overwrites", Effect::Write)
        }
        Operands::Delete => {
            !whole_tree(judge, &named) && judge.change(&named, "deletes", Effect::Delete)
        }
        Operands::Move => judge.change(&named, "moves away", Effect::Move),
        Operands::Create => judge.change(&named, "writes", Effect::Write),
        // Remotes and refspecs are judged by `operands_safe`.
        Operands::Refs | Operands::RefsThen(_) | Operands::Remote => true,
    }
}

/// Whether `a` is the workspace root or one of its ancestors: every file at once.
fn whole_tree(judge: &Judge, a: &Arg) -> bool {
    judge.cx.absolute(judge.inv, &a.text).is_none_or(|abs| {
        judge
            .cx
            .workspaces
            .iter()
            .any(|w| is_same_or_ancestor(&abs, w))
    })
}

/// `git stash`, `git stash push|save|pop|apply|branch|create|store` (never `drop` or `clear`,
/// which throw stashed changes away).
fn stash(judge: &mut Judge, rest: &[Arg], dirs: &[Arg]) -> bool {
    let (verb, args) = match rest.first() {
        Some(a) if !a.text.starts_with('-') => (a.text.as_str(), &rest[1..]),
        _ => ("push", rest),
    };
    if rest.first().is_some_and(|a| a.dynamic) {
        return false;
    }
    let (table, kind): (&[Opt], Operands) = match verb {
        "push" => (STASH_PUSH, Operands::Stage),
        "save" => (STASH_PUSH, Operands::Refs),
        "pop" | "apply" | "branch" | "create" | "store" => (STASH_APPLY, Operands::Refs),
        _ => return false,
    };
    let items = parse(args, &[table], Style::Gnu);
    options_safe(judge, &items, false)
        && items.iter().all(|i| match i {
            // `git stash push -- PATHS` saves those changes (as a commit) and reverts the files.
            Item::Operand(a) => pathspec(judge, a, kind, dirs),
            _ => true,
        })
}

/// `git apply --check|--stat|--numstat|--summary PATCH...`: the patch files are read (from
/// the `-C` directory git runs in), nothing is applied.
fn apply(judge: &mut Judge, rest: &[Arg], dirs: &[Arg]) -> bool {
    let items = parse(rest, &[APPLY], Style::Gnu);
    let only_reads = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "--check" | "--stat" | "--numstat" | "--summary",
                ..
            }
        )
    }) && !items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "--apply",
                ..
            }
        )
    });
    if !options_safe(judge, &items, false) {
        return false;
    }
    let operands: Vec<&Arg> = items.iter().filter_map(Item::operand).collect();
    if only_reads {
        return operands.iter().all(|a| {
            place_in(dirs, &a.text).is_some_and(|placed| {
                judge.path(
                    &Arg {
                        text: placed,
                        ..(*a).clone()
                    },
                    Read,
                )
            })
        });
    }
    applying(judge, &items, &operands, dirs)
}

/// `git apply` applying, or `git am`: the files the patches change, judged as their edits
/// (see [`super::patches`]); `--directory` puts them elsewhere, so is not listed for it.
fn applying(judge: &mut Judge, items: &[Item], patches: &[&Arg], dirs: &[Arg]) -> bool {
    let elsewhere = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "--directory",
                ..
            }
        )
    });
    match patches::how(items, Strip::Dirs(1)) {
        Some((strip, reverse)) if !elsewhere => {
            patches::applies(judge, patches, dirs, strip, reverse)
        }
        _ => false,
    }
}

/// `git am`'s options that change how a mail's patch is read and recorded, not which files it
/// changes (no `--directory`, no interactive `-i`, no resuming a run the checker did not see).
const AM: &[Opt] = &[
    ("-3", Flag),
    ("--3way", Flag),
    ("-s", Flag),
    ("--signoff", Flag),
    ("-k", Flag),
    ("--keep", Flag),
    ("--keep-non-patch", Flag),
    ("--keep-cr", Flag),
    ("-c", Flag),
    ("--scissors", Flag),
    ("-m", Flag),
    ("--message-id", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-u", Flag),
    ("--utf8", Flag),
    ("-p", Literal),
    ("-C", Literal),
    ("--whitespace", Literal),
    ("--ignore-whitespace", Flag),
    ("--ignore-space-change", Flag),
    ("--reject", Flag),
    ("--committer-date-is-author-date", Flag),
    ("--ignore-date", Flag),
    ("--no-gpg-sign", Flag),
    ("--empty", Literal),
];

fn am(judge: &mut Judge, rest: &[Arg], dirs: &[Arg]) -> bool {
    let items = parse(rest, &[AM], Style::Gnu);
    let patches: Vec<&Arg> = items.iter().filter_map(Item::operand).collect();
    options_safe(judge, &items, false) && applying(judge, &items, &patches, dirs)
}

/// `git bisect start|good|bad|new|old|skip|reset|log|terms|visualize`: each step checks out a
/// commit as `git checkout REV` does (refusing to overwrite uncommitted changes); `run` is a
/// runner, judged with the command it runs; `replay` (steps read from a file) is not listed.
fn bisect(judge: &mut Judge, rest: &[Arg]) -> bool {
    let Some((verb, args)) = rest.split_first().filter(|(v, _)| !v.dynamic) else {
        return false;
    };
    let table: &[Opt] = match verb.text.as_str() {
        "start" => BISECT_START,
        "good" | "bad" | "new" | "old" | "skip" | "reset" => &[],
        "log" | "terms" | "visualize" | "view" => {
            return args.is_empty()
                || (verb.is("terms")
                    && matches!(args, [a] if a.is("--term-good") || a.is("--term-bad")));
        }
        _ => return false,
    };
    let items = parse(args, &[table], Style::Gnu);
    options_safe(judge, &items, false)
        && items.iter().all(|i| match i {
            // Revisions, and after `--` (start) the paths bisection is limited to: names.
            Item::Operand(a) => !a.dynamic,
            _ => true,
        })
}
