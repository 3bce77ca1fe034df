//! Searching and finding: grep and its relatives, rg, ag, ack, find, fd (options from GNU
//! grep's and findutils' `--help` and the manuals of ripgrep and fd). Not listed, so asked:
//! `rg --pre`, `rg -z`, `find -execdir/-ok/-delete/-fprint`, `fd -x/-X`, following symlinks
//! out. `find -exec CMD {} +` lists, and its command is judged on its own.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Style, Value, parse};

use crate::judgement::Finding;
use crate::targets::{aims_at_secret, is_secret, names_secrets};

use super::{Judge, Program, names_a_kind};
use Value::*;

pub(super) const PROGRAMS: &[Program] = &[
    Program {
        names: &["grep", "egrep", "fgrep", "zgrep"],
        options: &[&[
            ("-E", Flag),
            ("--extended-regexp", Flag),
            ("-F", Flag),
            ("--fixed-strings", Flag),
            ("-G", Flag),
            ("--basic-regexp", Flag),
            ("-P", Flag),
            ("--perl-regexp", Flag),
            ("-e", Pattern),
            ("--regexp", Pattern),
            ("-f", PatternFile),
            ("--file", PatternFile),
            ("-i", Flag),
            ("-y", Flag),
            ("--ignore-case", Flag),
            ("--no-ignore-case", Flag),
            ("-w", Flag),
            ("--word-regexp", Flag),
            ("-x", Flag),
            ("--line-regexp", Flag),
            ("-z", Flag),
            ("--null-data", Flag),
            ("-s", Flag),
            ("--no-messages", Flag),
            ("-v", Flag),
            ("--invert-match", Flag),
            ("-V", Flag),
            ("--version", Flag),
            ("--help", Flag),
            ("-m", Literal),
            ("--max-count", Literal),
            ("-b", Flag),
            ("--byte-offset", Flag),
            ("-n", Flag),
            ("--line-number", Flag),
            ("--line-buffered", Flag),
            ("-H", Flag),
            ("--with-filename", Flag),
            ("-h", Flag),
            ("--no-filename", Flag),
            ("--label", Literal),
            ("-o", Flag),
            ("--only-matching", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--silent", Flag),
            ("--binary-files", Literal),
            ("-a", Flag),
            ("--text", Flag),
            ("-I", Flag),
            ("-r", Recurse),
            ("--recursive", Recurse),
            ("--include", Literal),
            ("--exclude", Literal),
            ("--exclude-from", Read),
            ("--exclude-dir", Literal),
            ("-L", Flag),
            ("--files-without-match", Flag),
            ("-l", Flag),
            ("--files-with-matches", Flag),
            ("-c", Flag),
            ("--count", Flag),
            ("-T", Flag),
            ("--initial-tab", Flag),
            ("-Z", Flag),
            ("--null", Flag),
            ("-A", Literal),
            ("--after-context", Literal),
            ("-B", Literal),
            ("--before-context", Literal),
            ("-C", Literal),
            ("--context", Literal),
            ("-NUM", Flag),
            ("--group-separator", Literal),
            ("--no-group-separator", Flag),
            ("--color", Optional),
            ("--colour", Optional),
            ("-U", Flag),
            ("--binary", Flag),
        ]],
        lead: &[Pattern],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["rg"],
        options: &[&[
            ("-e", Pattern),
            ("--regexp", Pattern),
            ("-f", PatternFile),
            ("--file", PatternFile),
            ("--files", NoPattern),
            ("--type-list", NoPattern),
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-S", Flag),
            ("--smart-case", Flag),
            ("-s", Flag),
            ("--case-sensitive", Flag),
            ("-w", Flag),
            ("--word-regexp", Flag),
            ("-x", Flag),
            ("--line-regexp", Flag),
            ("-F", Flag),
            ("--fixed-strings", Flag),
            ("-v", Flag),
            ("--invert-match", Flag),
            ("-n", Flag),
            ("--line-number", Flag),
            ("-N", Flag),
            ("--no-line-number", Flag),
            ("-l", Flag),
            ("--files-with-matches", Flag),
            ("--files-without-match", Flag),
            ("-c", Flag),
            ("--count", Flag),
            ("--count-matches", Flag),
            ("-o", Flag),
            ("--only-matching", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-A", Literal),
            ("--after-context", Literal),
            ("-B", Literal),
            ("--before-context", Literal),
            ("-C", Literal),
            ("--context", Literal),
            ("-m", Literal),
            ("--max-count", Literal),
            ("-d", Literal),
            ("--max-depth", Literal),
            ("-g", Literal),
            ("--glob", Literal),
            ("--iglob", Literal),
            ("--glob-case-insensitive", Flag),
            ("-t", Literal),
            ("--type", Literal),
            ("-T", Literal),
            ("--type-not", Literal),
            ("--hidden", Flag),
            ("-.", Flag),
            ("--no-hidden", Flag),
            ("--no-ignore", Flag),
            ("--no-ignore-vcs", Flag),
            ("--no-ignore-dot", Flag),
            ("--no-ignore-parent", Flag),
            ("--ignore-file", Read),
            ("-u", Flag),
            ("--unrestricted", Flag),
            ("-j", Literal),
            ("--threads", Literal),
            ("--json", Flag),
            ("--vimgrep", Flag),
            ("--heading", Flag),
            ("--no-heading", Flag),
            ("-H", Flag),
            ("--with-filename", Flag),
            ("-I", Flag),
            ("--no-filename", Flag),
            ("--color", Literal),
            ("--colors", Literal),
            ("-p", Flag),
            ("--pretty", Flag),
            ("--sort", Literal),
            ("--sortr", Literal),
            ("--stats", Flag),
            ("--trim", Flag),
            ("--column", Flag),
            ("--no-column", Flag),
            ("-0", Flag),
            ("--null", Flag),
            ("-U", Flag),
            ("--multiline", Flag),
            ("--multiline-dotall", Flag),
            ("-P", Flag),
            ("--pcre2", Flag),
            ("--engine", Literal),
            ("--no-messages", Flag),
            ("-M", Literal),
            ("--max-columns", Literal),
            ("--max-columns-preview", Flag),
            ("--max-filesize", Literal),
            ("--one-file-system", Flag),
            ("-a", Flag),
            ("--text", Flag),
            ("--binary", Flag),
            ("-E", Literal),
            ("--encoding", Literal),
            ("-r", Literal),
            ("--replace", Literal),
            ("--passthru", Flag),
            ("-b", Flag),
            ("--byte-offset", Flag),
            ("--crlf", Flag),
            ("--debug", Flag),
            ("-V", Flag),
            ("--version", Flag),
            ("-h", Flag),
            ("--help", Flag),
        ]],
        lead: &[Pattern],
        rest: Tree,
        style: Style::Gnu,
    },
    Program {
        names: &["ag"],
        options: &[&[
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-s", Flag),
            ("--case-sensitive", Flag),
            ("-S", Flag),
            ("--smart-case", Flag),
            ("-w", Flag),
            ("--word-regexp", Flag),
            ("-Q", Flag),
            ("--literal", Flag),
            ("-v", Flag),
            ("--invert-match", Flag),
            ("-l", Flag),
            ("--files-with-matches", Flag),
            ("-L", Flag),
            ("--files-without-matches", Flag),
            ("-c", Flag),
            ("--count", Flag),
            ("-o", Flag),
            ("--only-matching", Flag),
            ("-A", Literal),
            ("-B", Literal),
            ("-C", Literal),
            ("--nocolor", Flag),
            ("--noheading", Flag),
            ("--nogroup", Flag),
            ("-G", Literal),
            ("--ignore", Literal),
            ("--ignore-dir", Literal),
            ("-m", Literal),
            ("--max-count", Literal),
            ("--column", Flag),
            ("--hidden", Flag),
            ("-t", Flag),
            ("--stats", Flag),
        ]],
        lead: &[Pattern],
        rest: Tree,
        style: Style::Gnu,
    },
    Program {
        names: &["find"],
        options: &[&[
            ("-H", Flag),
            ("-P", Flag),
            ("-O0", Flag),
            ("-O1", Flag),
            ("-O2", Flag),
            ("-O3", Flag),
            ("(", Flag),
            (")", Flag),
            ("!", Flag),
            (",", Flag),
            ("-not", Flag),
            ("-a", Flag),
            ("-and", Flag),
            ("-o", Flag),
            ("-or", Flag),
            ("-name", Literal),
            ("-iname", Literal),
            ("-path", Literal),
            ("-ipath", Literal),
            ("-wholename", Literal),
            ("-iwholename", Literal),
            ("-regex", Literal),
            ("-iregex", Literal),
            ("-regextype", Literal),
            ("-lname", Literal),
            ("-ilname", Literal),
            ("-type", Literal),
            ("-xtype", Literal),
            ("-size", Literal),
            ("-empty", Flag),
            ("-mtime", Literal),
            ("-mmin", Literal),
            ("-atime", Literal),
            ("-amin", Literal),
            ("-ctime", Literal),
            ("-cmin", Literal),
            ("-used", Literal),
            ("-newer", Name),
            ("-anewer", Name),
            ("-cnewer", Name),
            ("-newermt", Literal),
            ("-newerct", Literal),
            ("-newerat", Literal),
            ("-samefile", Name),
            ("-user", Literal),
            ("-group", Literal),
            ("-uid", Literal),
            ("-gid", Literal),
            ("-nouser", Flag),
            ("-nogroup", Flag),
            ("-perm", Literal),
            ("-links", Literal),
            ("-inum", Literal),
            ("-readable", Flag),
            ("-writable", Flag),
            ("-executable", Flag),
            ("-fstype", Literal),
            ("-maxdepth", Literal),
            ("-mindepth", Literal),
            ("-depth", Flag),
            ("-d", Flag),
            ("-xdev", Flag),
            ("-mount", Flag),
            ("-daystart", Flag),
            ("-noleaf", Flag),
            ("-ignore_readdir_race", Flag),
            ("-noignore_readdir_race", Flag),
            ("-nowarn", Flag),
            ("-warn", Flag),
            ("-true", Flag),
            ("-false", Flag),
            ("-prune", Flag),
            ("-quit", Flag),
            ("-print", Flag),
            ("-print0", Flag),
            ("-printf", Literal),
            ("-ls", Flag),
            ("-help", Flag),
            ("--help", Flag),
            ("-version", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Words,
    },
    Program {
        names: &["fd", "fdfind"],
        options: &[&[
            ("-H", Flag),
            ("--hidden", Flag),
            ("-I", Flag),
            ("--no-ignore", Flag),
            ("--no-ignore-vcs", Flag),
            ("-u", Flag),
            ("--unrestricted", Flag),
            ("-s", Flag),
            ("--case-sensitive", Flag),
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-g", Flag),
            ("--glob", Flag),
            ("--regex", Flag),
            ("-F", Flag),
            ("--fixed-strings", Flag),
            ("-a", Flag),
            ("--absolute-path", Flag),
            ("-l", Flag),
            ("--list-details", Flag),
            ("-p", Flag),
            ("--full-path", Flag),
            ("-0", Flag),
            ("--print0", Flag),
            ("-d", Literal),
            ("--max-depth", Literal),
            ("--min-depth", Literal),
            ("--exact-depth", Literal),
            ("-E", Literal),
            ("--exclude", Literal),
            ("-t", Literal),
            ("--type", Literal),
            ("-e", Literal),
            ("--extension", Literal),
            ("-S", Literal),
            ("--size", Literal),
            ("--changed-within", Literal),
            ("--changed-before", Literal),
            ("-o", Literal),
            ("--owner", Literal),
            ("-c", Literal),
            ("--color", Literal),
            ("-j", Literal),
            ("--threads", Literal),
            ("--max-results", Literal),
            ("-1", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--show-errors", Flag),
            ("--strip-cwd-prefix", Optional),
            ("--prune", Flag),
            ("--one-file-system", Flag),
            ("--base-directory", Name),
            ("-h", Flag),
            ("--help", Flag),
            ("-V", Flag),
            ("--version", Flag),
        ]],
        lead: &[Pattern],
        rest: Name,
        style: Style::Gnu,
    },
];

/// Options that choose which files a recursive search reads.
const FILE_GLOBS: &[&str] = &["--include", "-g", "--glob", "--iglob", "-G"];

/// The search tools; `None` for a name that is none of them. A file glob naming secrets
/// (`grep -r x --include=.env .`, `rg -g '*.pem'`) is a secret read; one that may match them
/// among others (`--include='*.json'` takes in `secrets.json`) narrows nothing.
/// `find`'s words without its `-exec CMD ... ;` (or `+`) actions: the reader reports the command
/// each runs on its own, where it is judged (a file found is a path under the directory
/// searched); what is left lists.
fn without_exec(args: &[Arg]) -> Vec<Arg> {
    let mut kept = Vec::with_capacity(args.len());
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a.is("-exec") {
            let mut rest = words.clone();
            if rest.any(|w| w.is(";") || w.is("+")) {
                words = rest;
                continue;
            }
        }
        kept.push(a.clone());
    }
    kept
}

pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    let program = PROGRAMS.iter().find(|p| p.names.contains(&name))?;
    let listed;
    let args = if name == "find" {
        listed = without_exec(args);
        &listed[..]
    } else {
        args
    };
    let items = parse(args, program.options, program.style);
    // Whether every file glob that chooses files (not `!x`, which leaves some out) names a
    // kind of file no secret is: then a recursive search reads nothing else.
    let mut narrowed: Option<bool> = None;
    for item in &items {
        let Item::Option {
            name: option,
            arg: Some(glob),
            ..
        } = item
        else {
            continue;
        };
        if !FILE_GLOBS.contains(option) || glob.text.starts_with('!') {
            continue;
        }
        // Named by a secret pattern as it is written (`.env`, `*.pem`, `id_rsa*`), or naming
        // secrets (`.env*`): the files it takes in are secrets.
        let as_name = Arg {
            glob: false,
            ..glob.clone()
        };
        if !glob.dynamic
            && (is_secret(judge.cx, judge.inv, &as_name) || names_secrets(judge.cx, &glob.text))
        {
            judge.out.push(Finding::deny(
                "sensitive-read",
                format!(
                    "searches files named like secrets (`{}`): `{}`",
                    glob.text,
                    judge.inv.display()
                ),
            ));
            return Some(false);
        }
        let kind =
            !glob.dynamic && names_a_kind(&glob.text) && !aims_at_secret(judge.cx, &glob.text);
        narrowed = Some(narrowed.unwrap_or(true) && kind);
    }
    let given = |names: &[&str]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if names.contains(name)))
    };
    // rg and ag skip hidden and ignored files (`.env`, keys under `.ssh`) unless told not to.
    let unrestricted = given(&[
        "--hidden",
        "-.",
        "-u",
        "--unrestricted",
        "--no-ignore",
        "--no-ignore-vcs",
        "--no-ignore-dot",
        "--no-ignore-parent",
    ]);
    let skips_hidden = matches!(name, "rg" | "ag") && !unrestricted;
    // Told to read files of one kind only (`--include='*.py'`, `-g '*.rs'`), or names only.
    let narrowed = given(&["--files"]) || narrowed == Some(true);
    judge.filtered_trees = skips_hidden || narrowed;
    let recursive = program.rest == Tree || given(&["-r", "--recursive"]);
    let patterns_given = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                value: Pattern | PatternFile | NoPattern,
                ..
            }
        )
    });
    let operands = items
        .iter()
        .filter(|i| matches!(i, Item::Operand(_)))
        .count();
    let paths = operands.saturating_sub(usize::from(!patterns_given));
    let mut safe = judge.items(&items, program);
    // With no path, a recursive search reads the directory it runs in.
    if recursive && paths == 0 {
        safe &= judge.path(&Arg::literal("."), Tree);
    }
    judge.filtered_trees = false;
    Some(safe)
}
