//! git's read commands (status, diff, log, show, blame, grep, ls-files, branch and tag
//! listings, ..., and `format-patch`, which writes what `log -p` prints into patch files in
//! the workspace), with the options of each that only change what is printed (from git's
//! manuals). Not listed, so asked: `--output`, `--ext-diff`, `--textconv`, `--no-index`,
//! `-O`, `--open-files-in-pager`, `--show-signature` (runs gpg), `git help` (runs a viewer),
//! `-c` with any key but a few display ones, `--exec-path`, and every command that writes.
//! A revision's path (`HEAD:.env`) or a pathspec that names a secret is a secret read.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::{Judge, Program, git_work};
use crate::git_call::place_in;
use crate::judgement::{Effect, Level};
use crate::targets::{aims_at_secret, is_secret};
use Value::*;

/// git's own options before the command.
const GLOBAL: &[Opt] = &[
    ("-C", Name),
    ("-c", Literal),
    ("--no-pager", Flag),
    ("-P", Flag),
    ("--no-optional-locks", Flag),
    ("--literal-pathspecs", Flag),
    ("--glob-pathspecs", Flag),
    ("--noglob-pathspecs", Flag),
    ("--icase-pathspecs", Flag),
    ("--no-replace-objects", Flag),
    ("--no-advice", Flag),
    ("--git-dir", Name),
    ("--work-tree", Name),
    ("--version", Flag),
];

/// Config settings `git -c KEY=VALUE` may make: display only (a pager only when it prints).
fn display_setting(setting: &str) -> bool {
    let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
    let key = key.to_ascii_lowercase();
    if key == "core.pager" || key.starts_with("pager.") {
        return matches!(value.trim(), "" | "cat" | "false");
    }
    key.starts_with("color.")
        || key.starts_with("advice.")
        || key.starts_with("column.")
        || matches!(
            key.as_str(),
            "core.quotepath"
                | "core.abbrev"
                | "log.date"
                | "log.decorate"
                | "log.abbrevcommit"
                | "diff.renames"
                | "diff.noprefix"
                | "diff.algorithm"
                | "diff.context"
                | "format.pretty"
                | "i18n.logoutputencoding"
                | "status.short"
                | "status.branch"
                | "status.showuntrackedfiles"
        )
}

/// Options of the commands that print history and differences (diff, log, show, ...).
const DIFF_LOG: &[Opt] = &[
    ("-p", Flag),
    ("-u", Flag),
    ("--patch", Flag),
    ("-s", Flag),
    ("--no-patch", Flag),
    ("-U", Literal),
    ("--unified", Literal),
    ("--output-indicator-new", Literal),
    ("--output-indicator-old", Literal),
    ("--output-indicator-context", Literal),
    ("--raw", Flag),
    ("--patch-with-raw", Flag),
    ("-t", Flag),
    ("--indent-heuristic", Flag),
    ("--no-indent-heuristic", Flag),
    ("--minimal", Flag),
    ("--patience", Flag),
    ("--histogram", Flag),
    ("--anchored", Literal),
    ("--diff-algorithm", Literal),
    ("--stat", Optional),
    ("--stat-width", Literal),
    ("--stat-name-width", Literal),
    ("--stat-count", Literal),
    ("--compact-summary", Flag),
    ("--numstat", Flag),
    ("--shortstat", Flag),
    ("-X", Optional),
    ("--dirstat", Optional),
    ("--cumulative", Flag),
    ("--dirstat-by-file", Optional),
    ("--summary", Flag),
    ("--patch-with-stat", Flag),
    ("-z", Flag),
    ("--name-only", Flag),
    ("--name-status", Flag),
    ("--submodule", Optional),
    ("--color", Optional),
    ("--no-color", Flag),
    ("--color-moved", Optional),
    ("--no-color-moved", Flag),
    ("--color-moved-ws", Literal),
    ("--no-color-moved-ws", Flag),
    ("--word-diff", Optional),
    ("--word-diff-regex", Literal),
    ("--color-words", Optional),
    ("--no-renames", Flag),
    ("--rename-empty", Flag),
    ("--no-rename-empty", Flag),
    ("--check", Flag),
    ("--ws-error-highlight", Literal),
    ("--full-index", Flag),
    ("--binary", Flag),
    ("--abbrev", Optional),
    ("-B", Optional),
    ("--break-rewrites", Optional),
    ("-M", Optional),
    ("--find-renames", Optional),
    ("-C", Optional),
    ("--find-copies", Optional),
    ("--find-copies-harder", Flag),
    ("-D", Flag),
    ("--irreversible-delete", Flag),
    ("-l", Optional),
    ("--diff-filter", Literal),
    ("-S", Optional),
    ("-G", Optional),
    ("--find-object", Literal),
    ("--pickaxe-all", Flag),
    ("--pickaxe-regex", Flag),
    ("-R", Flag),
    ("--relative", Optional),
    ("--no-relative", Flag),
    ("-a", Flag),
    ("--text", Flag),
    ("--ignore-cr-at-eol", Flag),
    ("--ignore-space-at-eol", Flag),
    ("-b", Flag),
    ("--ignore-space-change", Flag),
    ("-w", Flag),
    ("--ignore-all-space", Flag),
    ("--ignore-blank-lines", Flag),
    ("-I", Optional),
    ("--ignore-matching-lines", Literal),
    ("--inter-hunk-context", Literal),
    ("-W", Flag),
    ("--function-context", Flag),
    ("--exit-code", Flag),
    ("--quiet", Flag),
    ("--no-ext-diff", Flag),
    ("--no-textconv", Flag),
    ("--ignore-submodules", Optional),
    ("--src-prefix", Literal),
    ("--dst-prefix", Literal),
    ("--no-prefix", Flag),
    ("--default-prefix", Flag),
    ("--line-prefix", Literal),
    ("--ita-invisible-in-index", Flag),
    ("--ita-visible-in-index", Flag),
    ("--cached", Flag),
    ("--staged", Flag),
    ("--merge-base", Flag),
    ("-1", Flag),
    ("-2", Flag),
    ("-3", Flag),
    ("-0", Flag),
    ("--base", Flag),
    ("--ours", Flag),
    ("--theirs", Flag),
    // log and show
    ("-n", Literal),
    ("--max-count", Literal),
    ("-NUM", Flag),
    ("--skip", Literal),
    ("--since", Literal),
    ("--after", Literal),
    ("--since-as-filter", Literal),
    ("--until", Literal),
    ("--before", Literal),
    ("--author", Literal),
    ("--committer", Literal),
    ("--grep-reflog", Literal),
    ("--grep", Literal),
    ("--all-match", Flag),
    ("--invert-grep", Flag),
    ("-i", Flag),
    ("--regexp-ignore-case", Flag),
    ("--basic-regexp", Flag),
    ("-E", Flag),
    ("--extended-regexp", Flag),
    ("-F", Flag),
    ("--fixed-strings", Flag),
    ("-P", Flag),
    ("--perl-regexp", Flag),
    ("--remove-empty", Flag),
    ("--merges", Flag),
    ("--no-merges", Flag),
    ("--min-parents", Literal),
    ("--max-parents", Literal),
    ("--no-min-parents", Flag),
    ("--no-max-parents", Flag),
    ("--first-parent", Flag),
    ("--exclude-first-parent-only", Flag),
    ("--not", Flag),
    ("--all", Flag),
    ("--branches", Optional),
    ("--tags", Optional),
    ("--remotes", Optional),
    ("--glob", Literal),
    ("--exclude", Literal),
    ("--reflog", Flag),
    ("--alternate-refs", Flag),
    ("--single-worktree", Flag),
    ("--ignore-missing", Flag),
    ("--bisect", Flag),
    ("--cherry-mark", Flag),
    ("--cherry-pick", Flag),
    ("--left-only", Flag),
    ("--right-only", Flag),
    ("--cherry", Flag),
    ("-g", Flag),
    ("--walk-reflogs", Flag),
    ("--merge", Flag),
    ("--boundary", Flag),
    ("--simplify-by-decoration", Flag),
    ("--show-pulls", Flag),
    ("--full-history", Flag),
    ("--dense", Flag),
    ("--sparse", Flag),
    ("--simplify-merges", Flag),
    ("--ancestry-path", Optional),
    ("--date-order", Flag),
    ("--author-date-order", Flag),
    ("--topo-order", Flag),
    ("--reverse", Flag),
    ("--no-walk", Optional),
    ("--do-walk", Flag),
    ("--pretty", Optional),
    ("--format", Literal),
    ("--abbrev-commit", Flag),
    ("--no-abbrev-commit", Flag),
    ("--oneline", Flag),
    ("--encoding", Literal),
    ("--expand-tabs", Optional),
    ("--no-expand-tabs", Flag),
    ("--notes", Optional),
    ("--no-notes", Flag),
    ("--show-notes-by-default", Flag),
    ("--show-linear-break", Optional),
    ("--relative-date", Flag),
    ("--date", Literal),
    ("--parents", Flag),
    ("--children", Flag),
    ("--left-right", Flag),
    ("--graph", Flag),
    ("--decorate", Optional),
    ("--no-decorate", Flag),
    ("--decorate-refs", Literal),
    ("--decorate-refs-exclude", Literal),
    ("--clear-decorations", Flag),
    ("--source", Flag),
    ("--mailmap", Flag),
    ("--no-mailmap", Flag),
    ("--use-mailmap", Flag),
    ("--no-use-mailmap", Flag),
    ("--full-diff", Flag),
    ("--log-size", Flag),
    ("--follow", Flag),
    ("-m", Flag),
    ("-c", Flag),
    ("--cc", Flag),
    ("--dd", Flag),
    ("--remerge-diff", Flag),
    ("--no-diff-merges", Flag),
    ("--diff-merges", Literal),
    ("--combined-all-paths", Flag),
    ("-r", Flag),
    ("--root", Flag),
    ("--no-standard-notes", Flag),
    ("--standard-notes", Flag),
    ("--count", Flag),
    ("-q", Flag),
    ("--stdin", Flag),
];

/// `git format-patch`: the commits chosen, and how each patch file is named and headed; `-o`
/// is the directory the files are written in (the current one without it).
const FORMAT_PATCH: &[Opt] = &[
    ("-o", Write),
    ("--output-directory", Write),
    ("--stdout", Flag),
    ("-n", Flag),
    ("--numbered", Flag),
    ("-N", Flag),
    ("--no-numbered", Flag),
    ("--start-number", Literal),
    ("-k", Flag),
    ("--keep-subject", Flag),
    ("-s", Flag),
    ("--signoff", Flag),
    ("--cover-letter", Flag),
    ("--no-cover-letter", Flag),
    ("-v", Literal),
    ("--reroll-count", Literal),
    ("--subject-prefix", Literal),
    ("--rfc", Optional),
    ("--base", Literal),
    ("--root", Flag),
    ("--no-stat", Flag),
    ("--stat", Optional),
    ("--numbered-files", Flag),
    ("--suffix", Literal),
    ("--zero-commit", Flag),
    ("--to", Literal),
    ("--cc", Literal),
    ("--from", Optional),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--no-binary", Flag),
    ("-M", Optional),
    ("-C", Optional),
    ("--find-renames", Optional),
    ("-U", Literal),
    ("--unified", Literal),
    ("--progress", Flag),
    ("-1", Flag),
    ("-2", Flag),
    ("-3", Flag),
    ("-4", Flag),
    ("-5", Flag),
    ("-6", Flag),
    ("-7", Flag),
    ("-8", Flag),
    ("-9", Flag),
];

/// Pathspecs and revisions: a word after `--` or that names a path.
const PATHS: &[Value] = &[];

/// The read-only git commands: their own options beyond `DIFF_LOG` where they take those.
const COMMANDS: &[(&[&str], Program)] = &[
    (
        &[
            "diff",
            "log",
            "show",
            "whatchanged",
            "diff-tree",
            "diff-files",
            "diff-index",
            "rev-list",
            "reflog",
        ],
        Program {
            names: &[],
            options: &[DIFF_LOG],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["status"],
        Program {
            names: &[],
            options: &[&[
                ("-s", Flag),
                ("--short", Flag),
                ("-b", Flag),
                ("--branch", Flag),
                ("--show-stash", Flag),
                ("--porcelain", Optional),
                ("--long", Flag),
                ("-v", Flag),
                ("--verbose", Flag),
                ("-u", Optional),
                ("--untracked-files", Optional),
                ("--ignore-submodules", Optional),
                ("--ignored", Optional),
                ("-z", Flag),
                ("--column", Optional),
                ("--no-column", Flag),
                ("--ahead-behind", Flag),
                ("--no-ahead-behind", Flag),
                ("--renames", Flag),
                ("--no-renames", Flag),
                ("--find-renames", Optional),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["blame", "annotate"],
        Program {
            names: &[],
            options: &[&[
                ("-b", Flag),
                ("--root", Flag),
                ("--show-stats", Flag),
                ("-L", Literal),
                ("-l", Flag),
                ("-t", Flag),
                ("-S", Read),
                ("--reverse", Literal),
                ("--first-parent", Flag),
                ("-p", Flag),
                ("--porcelain", Flag),
                ("--line-porcelain", Flag),
                ("--incremental", Flag),
                ("--encoding", Literal),
                ("--contents", Read),
                ("--date", Literal),
                ("--progress", Flag),
                ("--no-progress", Flag),
                ("-M", Optional),
                ("-C", Optional),
                ("--ignore-rev", Literal),
                ("--ignore-revs-file", Read),
                ("--color-lines", Flag),
                ("--color-by-age", Flag),
                ("--minimal", Flag),
                ("-s", Flag),
                ("-e", Flag),
                ("--show-email", Flag),
                ("-w", Flag),
                ("--abbrev", Optional),
                ("-c", Flag),
                ("-f", Flag),
                ("--show-name", Flag),
                ("-n", Flag),
                ("--show-number", Flag),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["grep"],
        Program {
            names: &[],
            options: &[&[
                ("--cached", Flag),
                ("--untracked", Flag),
                ("--no-index", Flag),
                ("--no-exclude-standard", Flag),
                ("--exclude-standard", Flag),
                ("--recurse-submodules", Flag),
                ("-a", Flag),
                ("--text", Flag),
                ("-i", Flag),
                ("--ignore-case", Flag),
                ("-I", Flag),
                ("--max-depth", Literal),
                ("-r", Flag),
                ("--recursive", Flag),
                ("--no-recursive", Flag),
                ("-w", Flag),
                ("--word-regexp", Flag),
                ("-v", Flag),
                ("--invert-match", Flag),
                ("-h", Flag),
                ("-H", Flag),
                ("--full-name", Flag),
                ("-E", Flag),
                ("--extended-regexp", Flag),
                ("-G", Flag),
                ("--basic-regexp", Flag),
                ("-P", Flag),
                ("--perl-regexp", Flag),
                ("-F", Flag),
                ("--fixed-strings", Flag),
                ("-n", Flag),
                ("--line-number", Flag),
                ("--column", Flag),
                ("-l", Flag),
                ("--files-with-matches", Flag),
                ("--name-only", Flag),
                ("-L", Flag),
                ("--files-without-match", Flag),
                ("-z", Flag),
                ("--null", Flag),
                ("-o", Flag),
                ("--only-matching", Flag),
                ("-c", Flag),
                ("--count", Flag),
                ("--color", Optional),
                ("--no-color", Flag),
                ("--break", Flag),
                ("--heading", Flag),
                ("-p", Flag),
                ("--show-function", Flag),
                ("-A", Literal),
                ("--after-context", Literal),
                ("-B", Literal),
                ("--before-context", Literal),
                ("-C", Literal),
                ("--context", Literal),
                ("-NUM", Flag),
                ("--threads", Literal),
                ("-W", Flag),
                ("--function-context", Flag),
                ("-m", Literal),
                ("--max-count", Literal),
                ("-f", PatternFile),
                ("-e", Pattern),
                ("--and", Flag),
                ("--or", Flag),
                ("--not", Flag),
                ("--all-match", Flag),
                ("-q", Flag),
                ("--quiet", Flag),
            ]],
            lead: &[Pattern],
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["ls-files"],
        Program {
            names: &[],
            options: &[&[
                ("-c", Flag),
                ("--cached", Flag),
                ("-d", Flag),
                ("--deleted", Flag),
                ("-m", Flag),
                ("--modified", Flag),
                ("-o", Flag),
                ("--others", Flag),
                ("-i", Flag),
                ("--ignored", Flag),
                ("-s", Flag),
                ("--stage", Flag),
                ("-u", Flag),
                ("--unmerged", Flag),
                ("-k", Flag),
                ("--killed", Flag),
                ("--directory", Flag),
                ("--no-empty-directory", Flag),
                ("--eol", Flag),
                ("--deduplicate", Flag),
                ("-x", Literal),
                ("--exclude", Literal),
                ("-X", Read),
                ("--exclude-from", Read),
                ("--exclude-per-directory", Literal),
                ("--exclude-standard", Flag),
                ("--error-unmatch", Flag),
                ("--full-name", Flag),
                ("--recurse-submodules", Flag),
                ("--abbrev", Optional),
                ("--format", Literal),
                ("-t", Flag),
                ("-v", Flag),
                ("-f", Flag),
                ("-z", Flag),
                ("--sparse", Flag),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["ls-tree"],
        Program {
            names: &[],
            options: &[&[
                ("-d", Flag),
                ("-r", Flag),
                ("-t", Flag),
                ("-l", Flag),
                ("--long", Flag),
                ("-z", Flag),
                ("--name-only", Flag),
                ("--name-status", Flag),
                ("--object-only", Flag),
                ("--full-name", Flag),
                ("--full-tree", Flag),
                ("--abbrev", Optional),
                ("--format", Literal),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["cat-file"],
        Program {
            names: &[],
            options: &[&[
                ("-t", Flag),
                ("-s", Flag),
                ("-e", Flag),
                ("-p", Flag),
                ("--allow-unknown-type", Flag),
                ("--use-mailmap", Flag),
                ("--mailmap", Flag),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["rev-parse"],
        Program {
            names: &[],
            options: &[&[
                ("--show-toplevel", Flag),
                ("--show-cdup", Flag),
                ("--show-prefix", Flag),
                ("--git-dir", Flag),
                ("--git-common-dir", Flag),
                ("--absolute-git-dir", Flag),
                ("--is-inside-work-tree", Flag),
                ("--is-inside-git-dir", Flag),
                ("--is-bare-repository", Flag),
                ("--is-shallow-repository", Flag),
                ("--abbrev-ref", Optional),
                ("--short", Optional),
                ("--verify", Flag),
                ("-q", Flag),
                ("--quiet", Flag),
                ("--symbolic", Flag),
                ("--symbolic-full-name", Flag),
                ("--all", Flag),
                ("--branches", Optional),
                ("--tags", Optional),
                ("--remotes", Optional),
                ("--show-superproject-working-tree", Flag),
                ("--path-format", Literal),
                ("--sq", Flag),
                ("--default", Literal),
                ("--revs-only", Flag),
                ("--no-revs", Flag),
                ("--flags", Flag),
                ("--no-flags", Flag),
                ("--show-object-format", Optional),
                ("--local-env-vars", Flag),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &["shortlog"],
        Program {
            names: &[],
            options: &[
                &[
                    ("-n", Flag),
                    ("--numbered", Flag),
                    ("-s", Flag),
                    ("--summary", Flag),
                    ("-e", Flag),
                    ("--email", Flag),
                    ("--group", Literal),
                    ("-c", Flag),
                    ("--committer", Flag),
                    ("-w", Optional),
                ],
                DIFF_LOG,
            ],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
    (
        &[
            "describe",
            "name-rev",
            "merge-base",
            "show-ref",
            "for-each-ref",
            "count-objects",
            "show-branch",
            "check-ignore",
            "check-attr",
            "cherry",
            "var",
            "version",
        ],
        Program {
            names: &[],
            options: &[&[
                ("--tags", Flag),
                ("--all", Flag),
                ("--long", Flag),
                ("--abbrev", Optional),
                ("--always", Flag),
                ("--dirty", Optional),
                ("--broken", Optional),
                ("--exact-match", Flag),
                ("--match", Literal),
                ("--exclude", Literal),
                ("--contains", Optional),
                ("--first-parent", Flag),
                ("--candidates", Literal),
                ("--name-only", Flag),
                ("--refs", Literal),
                ("--is-ancestor", Flag),
                ("--octopus", Flag),
                ("--independent", Flag),
                ("--fork-point", Flag),
                ("--heads", Flag),
                ("--branches", Flag),
                ("-d", Flag),
                ("--dereference", Flag),
                ("-s", Flag),
                ("--hash", Optional),
                ("--verify", Flag),
                ("-q", Flag),
                ("--quiet", Flag),
                ("--head", Flag),
                ("--format", Literal),
                ("--sort", Literal),
                ("--count", Literal),
                ("--merged", Optional),
                ("--no-merged", Optional),
                ("--no-contains", Optional),
                ("--points-at", Literal),
                ("--shell", Flag),
                ("--python", Flag),
                ("--tcl", Flag),
                ("--perl", Flag),
                ("-v", Flag),
                ("--verbose", Flag),
                ("-H", Flag),
                ("--human-readable", Flag),
                ("-r", Flag),
                ("-a", Flag),
                ("--list", Flag),
                ("--current", Flag),
                ("--topo-order", Flag),
                ("--date-order", Flag),
                ("--sparse", Flag),
                ("--more", Optional),
                ("--no-name", Flag),
                ("--sha1-name", Flag),
                ("--color", Optional),
                ("-n", Flag),
                ("--non-matching", Flag),
                ("--no-index", Flag),
                ("-z", Flag),
                ("--cached", Flag),
                ("--build-options", Flag),
                ("-l", Flag),
            ]],
            lead: PATHS,
            rest: Literal,
            style: Style::Gnu,
        },
    ),
];

/// `git branch` and `git tag` listing, `git stash list/show`, `git remote -v`, `git config
/// --get`, `git worktree list`: the forms of commands that also write which only print.
const LISTING: &[Opt] = &[
    ("-a", Flag),
    ("--all", Flag),
    ("-r", Flag),
    ("--remotes", Flag),
    ("-v", Flag),
    ("-vv", Flag),
    ("--verbose", Flag),
    ("-l", Flag),
    ("--list", Flag),
    ("--show-current", Flag),
    ("--merged", Optional),
    ("--no-merged", Optional),
    ("--contains", Optional),
    ("--no-contains", Optional),
    ("--points-at", Literal),
    ("--sort", Literal),
    ("--format", Literal),
    ("--color", Optional),
    ("--no-color", Flag),
    ("--column", Optional),
    ("--no-column", Flag),
    ("-n", Optional),
    ("-i", Flag),
    ("--ignore-case", Flag),
    ("--omit-empty", Flag),
    ("--abbrev", Optional),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--porcelain", Flag),
    ("-z", Flag),
    ("--get", Flag),
    ("--get-all", Flag),
    ("--get-regexp", Flag),
    ("--global", Flag),
    ("--local", Flag),
    ("--system", Flag),
    ("--worktree", Flag),
    ("--show-origin", Flag),
    ("--show-scope", Flag),
    ("--name-only", Flag),
    ("--null", Flag),
    ("--type", Literal),
    ("--default", Literal),
    ("--includes", Flag),
    ("--no-includes", Flag),
    ("-p", Flag),
    ("--patch", Flag),
    ("--stat", Flag),
    ("--oneline", Flag),
    ("-s", Flag),
    ("--name-status", Flag),
];

/// Whether a git operand (a revision, `REV:path`, or a pathspec) is harmless: a secret whose
/// contents the command prints (`git show HEAD:.env`, `git log -p -- .env`) is a secret read;
/// a secret it only names (`git log --oneline -- .env`, `git ls-files .env`) is not.
fn operand(judge: &mut Judge, a: &Arg, prints_content: bool) -> bool {
    if a.dynamic {
        return false;
    }
    let (path, from_revision) = match a.text.split_once(':') {
        Some((_, p)) => (p, true),
        None => (a.text.as_str(), false),
    };
    let path = path.trim_start_matches("./");
    if path.is_empty() || !(prints_content || from_revision) {
        return true;
    }
    // git's pathspecs are globs of its own, whose `*` also matches a leading dot.
    let wildcard = path.contains(['*', '?', '[']);
    let named = Arg {
        text: path.to_owned(),
        glob: wildcard,
        ..a.clone()
    };
    if is_secret(judge.cx, judge.inv, &named) || (wildcard && aims_at_secret(judge.cx, path)) {
        let abs = judge.cx.absolute_anywhere(judge.inv, path);
        judge.findings().push_about(
            Level::Deny,
            "sensitive-read",
            format!("reads the credential file `{path}` out of git"),
            &abs,
            Effect::Read,
        );
        return false;
    }
    true
}

/// Options that make git print the changes themselves (file contents), not only names,
/// counts or commit lines; `-S` and `-G` search the contents, which answers questions about
/// them.
const PATCH: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "-U",
    "--unified",
    "--patch-with-raw",
    "--patch-with-stat",
    "--word-diff",
    "--word-diff-regex",
    "--color-words",
    "--cc",
    "-c",
    "--dd",
    "--remerge-diff",
    "-W",
    "--function-context",
    "--check",
    "-S",
    "-G",
    "--binary",
    "--full-diff",
];

/// Options after which `diff` and `show` print no patch.
const NO_PATCH: &[&str] = &[
    "-s",
    "--no-patch",
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--raw",
    "--summary",
    "--dirstat",
    "-X",
    "--compact-summary",
    "--quiet",
];

/// Whether `git grep` searches files git ignores: `--no-index` (a directory searched as
/// `grep -r` does, unless `--exclude-standard`), `--untracked --no-exclude-standard`.
fn searches_ignored_files(items: &[Item]) -> bool {
    let given = |n: &str| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if *name == n))
    };
    (given("--no-index") && !given("--exclude-standard")) || given("--no-exclude-standard")
}

/// Whether the read-only command `sub`, with its options, prints the contents of the files it
/// names.
fn prints_content(sub: &str, items: &[Item]) -> bool {
    let given = |names: &[&str]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if names.contains(name)))
    };
    match sub {
        "status" | "ls-files" | "ls-tree" | "rev-parse" | "describe" | "name-rev"
        | "merge-base" | "show-ref" | "for-each-ref" | "count-objects" | "show-branch"
        | "check-ignore" | "check-attr" | "cherry" | "var" | "version" => false,
        "diff" | "show" | "diff-tree" | "diff-files" | "diff-index" => {
            given(PATCH) || !given(NO_PATCH)
        }
        "log" | "whatchanged" | "rev-list" | "reflog" | "shortlog" => given(PATCH),
        _ => true,
    }
}

/// `git format-patch [-o DIR] RANGE [-- PATHS]`: one patch file per commit, named by git
/// (`0001-subject.patch`), in DIR or the current directory (from the `-C` directories `dirs`);
/// a patch holds the contents of the files it changes, as `git log -p` prints them, so a
/// pathspec naming a secret is a secret read.
fn format_patch(judge: &mut Judge, rest: &[Arg], dirs: &[Arg]) -> bool {
    let items = parse(rest, &[FORMAT_PATCH], Style::Gnu);
    let dashes = rest.iter().position(|a| a.is("--"));
    let stdout = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "--stdout",
                ..
            }
        )
    });
    let into_option = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "-o" | "--output-directory",
                ..
            }
        )
    });
    let here = stdout
        || into_option
        || place_in(dirs, ".").is_some_and(|placed| {
            judge.change(&Arg::literal(&placed), "writes patches into", Effect::Write)
        });
    let after = |a: &Arg| {
        rest.iter()
            .position(|r| std::ptr::eq(r, a))
            .is_some_and(|p| Some(p) > dashes)
    };
    let mut safe = here;
    for item in &items {
        safe &= match item {
            Item::Option { value, arg, .. } => arg.as_ref().is_none_or(|a| judge.value(a, *value)),
            Item::Operand(a) => operand(judge, a, after(a)),
            Item::Unknown(_) | Item::Missing(_) => false,
        };
    }
    safe
}

/// `git ...`; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str) -> Option<bool> {
    if name != "git" {
        return None;
    }
    let args = judge.inv.args();
    let items = parse(args, &[GLOBAL], Style::Posix);
    let mut safe = true;
    let mut command: Option<usize> = None;
    // `-C DIR`: where git runs; `--git-dir`, `--work-tree`: another repository or tree.
    let mut dirs: Vec<Arg> = Vec::new();
    let mut elsewhere = false;
    for (k, item) in items.iter().enumerate() {
        match item {
            Item::Option {
                name: "-c",
                arg: Some(a),
                ..
            } => safe &= !a.dynamic && display_setting(&a.text),
            Item::Option {
                name,
                value: Name,
                arg: Some(a),
                ..
            } => {
                safe &= judge.path(a, Name);
                if *name == "-C" {
                    dirs.push(a.clone());
                } else {
                    elsewhere = true;
                }
            }
            Item::Option { .. } => {}
            Item::Operand(_) => {
                command = Some(k);
                break;
            }
            Item::Unknown(_) | Item::Missing(_) => safe = false,
        }
    }
    let Some(k) = command else {
        // `git --version`, or nothing.
        return Some(safe && args.iter().any(|a| a.is("--version")));
    };
    let Item::Operand(sub) = items[k] else {
        return Some(false);
    };
    if !safe || sub.dynamic {
        return Some(false);
    }
    // The words after the command.
    let at = args
        .iter()
        .position(|a| std::ptr::eq(a, sub))
        .map_or(args.len(), |p| p + 1);
    let rest = &args[at..];
    let sub = sub.text.as_str();
    // `git reflog expire` / `delete` / `drop` rewrite the reflog.
    if sub == "reflog"
        && rest
            .first()
            .is_some_and(|a| !a.text.starts_with('-') && !a.is("show") && !a.text.contains('@'))
    {
        return Some(false);
    }
    if sub == "format-patch" {
        return Some(format_patch(judge, rest, &dirs) && !elsewhere);
    }
    if let Some((_, program)) = COMMANDS.iter().find(|(names, _)| names.contains(&sub)) {
        let items = parse(rest, program.options, program.style);
        let content = prints_content(sub, &items);
        if sub == "grep" && searches_ignored_files(&items) {
            // Like `grep -r`: every file of the tree, ignored ones (`.env`) too.
            let trees: Vec<&Arg> = items
                .iter()
                .filter_map(Item::operand)
                .skip(usize::from(!items.iter().any(|i| {
                    matches!(
                        i,
                        Item::Option {
                            value: Pattern | PatternFile,
                            ..
                        }
                    )
                })))
                .collect();
            let here = Arg::literal(".");
            let trees = if trees.is_empty() { vec![&here] } else { trees };
            if !trees.into_iter().all(|t| judge.path(t, Tree)) {
                return Some(false);
            }
        }
        let mut safe = true;
        let mut first = program.lead.first() == Some(&Pattern)
            && !items.iter().any(|i| {
                matches!(
                    i,
                    Item::Option {
                        value: Pattern | PatternFile,
                        ..
                    }
                )
            });
        for item in &items {
            match item {
                Item::Option { value, arg, .. } => {
                    if let Some(a) = arg {
                        safe &= judge.value(a, *value);
                    }
                }
                Item::Operand(_) if first => first = false,
                Item::Operand(a) => safe &= operand(judge, a, content),
                Item::Unknown(_) | Item::Missing(_) => safe = false,
            }
        }
        return Some(safe);
    }
    let words: Vec<&str> = rest.iter().map(|a| a.text.as_str()).collect();
    let listing = |judge: &mut Judge, words: &[Arg]| {
        let program = Program {
            names: &[],
            options: &[LISTING],
            lead: &[],
            rest: Literal,
            style: Style::Gnu,
        };
        let items = parse(words, &[LISTING], Style::Gnu);
        judge.items(&items, &program)
    };
    // `--contains`, `--merged` and their kin imply `--list` (git-branch(1), git-tag(1)); their
    // commit may be the next word.
    let lists = |w: &[&str]| {
        w.iter().any(|w| {
            let name = w.split('=').next().unwrap_or(w);
            matches!(
                name,
                "-l" | "--list"
                    | "--contains"
                    | "--no-contains"
                    | "--merged"
                    | "--no-merged"
                    | "--points-at"
            )
        })
    };
    let listed = match sub {
        "branch" | "tag" => {
            let operands = rest.iter().filter(|a| !a.text.starts_with('-')).count();
            (operands == 0 || lists(&words)) && listing(judge, rest)
        }
        "stash" => matches!(words.first(), Some(&("list" | "show"))),
        _ => false,
    };
    if !listed && let Some(safe) = git_work::judge(judge, sub, rest, &dirs) {
        return Some(safe && !elsewhere);
    }
    Some(match sub {
        "branch" | "tag" => listed,
        "stash" | "worktree" | "remote" | "submodule" => match words.first() {
            Some(&("list" | "show" | "get-url" | "status")) => listing(judge, &rest[1..]),
            None => true,
            Some(w) if w.starts_with('-') && sub == "remote" => listing(judge, rest),
            _ => false,
        },
        "config" => {
            let reading = words.iter().any(|w| {
                matches!(
                    *w,
                    "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
                )
            });
            let rest = match words.first() {
                Some(&("get" | "list")) => &rest[1..],
                _ => rest,
            };
            // `git config KEY` alone prints the key's value.
            let one_key = matches!(rest, [key] if !key.dynamic && !key.text.starts_with('-'));
            (reading || one_key) && listing(judge, rest)
        }
        // `git clean -n` only lists what `-f` would delete.
        "clean" => {
            let dry = rest.iter().any(|a| a.is("-n") || a.is("--dry-run"));
            dry && rest.iter().all(|a| {
                !a.dynamic
                    && matches!(
                        a.text.as_str(),
                        "-n" | "--dry-run" | "-d" | "-x" | "-X" | "-q" | "--quiet"
                    )
            })
        }
        _ => false,
    })
}
