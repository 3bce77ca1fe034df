//! Archives created, listed or extracted in the workspace: `tar` creating (`-c`), listing
//! (`-t`) or extracting (`-x`), `zip`, `unzip`, and the compressors (`gzip`, `bzip2`, `xz`,
//! `zstd` and their `un`/`cat` forms), with the options of each that run no program and write
//! nowhere else (from their `--help` and manuals). An archive holds the files it reads, so
//! every tree it reads is judged as a recursive read (a tree that may hold secrets is asked
//! about). An archive's member names are unknown, so extracting writes a tree the checker
//! cannot see: it is judged as a directory copied there (`cp -r`), which may not land at the
//! workspace root or in a directory sensitive files are named under. GNU tar and bsdtar strip
//! a leading `/` and skip members with `..` (unless `-P`), and create a symbolic link that
//! leads out only after every file is written; unzip drops `../` and a leading `/` (unless
//! `-:`) and makes its links last: no member is written outside the directory. Not listed, so
//! asked: `-P`/`--absolute-names`, unzip's `-:`/`-^`/`-K`/`-X`, `tar --to-command`/`-I`/
//! `--use-compress-program`/`--checkpoint-action`/`--overwrite`/`--recursive-unlink`/`-p`,
//! `-h` (following links), remote archives (`-f host:file`), `zip -T`/`-TT`/`-m`/`-@`,
//! recursive compression.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::{Judge, Program};
use crate::git_call::place_in;
use crate::judgement::Effect;
use crate::targets::lands_in_guarded_tree;
use Value::*;

/// `tar` options that list (`-t`), create (`-c`), extract (`-x`), or only change how: never
/// run a program, never write outside the directory extracted into.
const TAR: &[Opt] = &[
    ("-t", Flag),
    ("--list", Flag),
    ("-c", Flag),
    ("--create", Flag),
    ("-x", Flag),
    ("--extract", Flag),
    ("--get", Flag),
    // Extracting writes less with these, or changes only names' depth and times.
    ("-k", Flag),
    ("--keep-old-files", Flag),
    ("--skip-old-files", Flag),
    ("--keep-newer-files", Flag),
    ("--strip-components", Literal),
    ("-m", Flag),
    ("--touch", Flag),
    ("--no-same-owner", Flag),
    ("--no-same-permissions", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-z", Flag),
    ("--gzip", Flag),
    ("-j", Flag),
    ("--bzip2", Flag),
    ("-J", Flag),
    ("--xz", Flag),
    ("--zstd", Flag),
    ("-a", Flag),
    ("--auto-compress", Flag),
    ("-f", Literal),
    ("--file", Literal),
    ("-C", Literal),
    ("--directory", Literal),
    ("-O", Flag),
    ("--to-stdout", Flag),
    ("--wildcards", Flag),
    ("--exclude", Literal),
    ("--exclude-vcs", Flag),
    ("--exclude-vcs-ignores", Flag),
    ("--exclude-caches", Flag),
    ("--numeric-owner", Flag),
    ("--owner", Literal),
    ("--group", Literal),
    ("--mtime", Literal),
    ("--sort", Literal),
    ("--full-time", Flag),
    ("-R", Flag),
    ("--block-number", Flag),
];

/// Letters of `tar` that take a value (in the old style `tar cf FILE`, the next words).
const TAR_VALUED: &str = "fCbTXKNLVgHIF";

/// `tar`: listing (`tar tzf F`) or creating (`tar czf out.tgz src`); the files it archives are
/// read whole, relative to the `-C` directory in effect.
fn tar(judge: &mut Judge, args: &[Arg]) -> bool {
    let mut owned: Vec<Arg> = args.to_vec();
    if let Some(first) = owned.first_mut()
        && !first.text.starts_with('-')
        && !first.dynamic
    {
        // The old style (`tar czf F`): its letters' values are the next words, in order; read
        // as getopt reads `-czf F` only when one letter at most takes a value, last.
        let valued = first
            .text
            .chars()
            .filter(|c| TAR_VALUED.contains(*c))
            .count();
        if valued > 1 || (valued == 1 && !first.text.ends_with(|c| TAR_VALUED.contains(c))) {
            return false;
        }
        first.text.insert(0, '-');
    }
    let items = parse(&owned, &[TAR], Style::Gnu);
    let given = |names: &[&str]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if names.contains(name)))
    };
    let (listing, creating, extracting) = (
        given(&["-t", "--list"]),
        given(&["-c", "--create"]),
        given(&["-x", "--extract", "--get"]),
    );
    if usize::from(listing) + usize::from(creating) + usize::from(extracting) != 1 {
        return false;
    }
    let mut dirs: Vec<Arg> = Vec::new();
    // A member named before any `-C` is extracted in the current directory.
    let mut here = false;
    let mut safe = true;
    for item in &items {
        match item {
            Item::Option {
                name: "-C" | "--directory",
                arg: Some(dir),
                ..
            } => {
                safe &= judge.path(dir, Name);
                dirs.push(dir.clone());
            }
            // `-f HOST:FILE` makes tar run a remote shell.
            Item::Option {
                name: "-f" | "--file",
                arg: Some(file),
                ..
            } => {
                let access = if creating { Write } else { Read };
                safe &= !file.text.contains(':') && judge.path(file, access);
            }
            Item::Option { .. } => {}
            Item::Operand(a) if creating => safe &= placed_read(judge, &dirs, a, Tree),
            // Member operands name members of the archive; extracted before any `-C`, they
            // land in the current directory.
            Item::Operand(_) => here |= dirs.is_empty(),
            Item::Unknown(_) | Item::Missing(_) => safe = false,
        }
    }
    // `-O` extracts to standard output: nothing is written.
    if extracting && !given(&["-O", "--to-stdout"]) {
        if here || dirs.is_empty() {
            safe &= extracts_into(judge, &[], &Arg::literal("."));
        }
        // Each `-C` is relative to the one before it.
        for k in 0..dirs.len() {
            safe &= extracts_into(judge, &dirs[..k], &dirs[k]);
        }
    }
    safe
}

/// Whether an archive's members, whose names the checker cannot see, may be extracted into
/// `dir` (placed after the `-C` directories `before`): a tree landing there, as `cp -r` lands
/// one, in the workspace and not at its root or in a directory sensitive files are named under.
fn extracts_into(judge: &mut Judge, before: &[Arg], dir: &Arg) -> bool {
    let Some(placed) = place_in(before, &dir.text).filter(|_| !dir.dynamic && !dir.glob) else {
        return false;
    };
    let at = Arg {
        text: placed,
        ..dir.clone()
    };
    judge.change(&at, "extracts into", Effect::Write)
        && !lands_in_guarded_tree(judge.cx, judge.inv, &at)
}

/// `a` as read from the directory that `dirs` lead to.
fn placed_read(judge: &mut Judge, dirs: &[Arg], a: &Arg, access: Value) -> bool {
    match place_in(dirs, &a.text) {
        Some(placed) => judge.path(
            &Arg {
                text: placed,
                ..a.clone()
            },
            access,
        ),
        None => false,
    }
}

/// `zip`'s options that only choose how entries are stored.
const ZIP: &[Opt] = &[
    ("-r", Flag),
    ("--recurse-paths", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-j", Flag),
    ("--junk-paths", Flag),
    ("-D", Flag),
    ("--no-dir-entries", Flag),
    ("-X", Flag),
    ("--no-extra", Flag),
    ("-y", Flag),
    ("--symlinks", Flag),
    ("-u", Flag),
    ("--update", Flag),
    ("-f", Flag),
    ("--freshen", Flag),
    ("-o", Flag),
    ("--latest-time", Flag),
    ("-d", Flag),
    ("--delete", Flag),
    ("-0", Flag),
    ("-1", Flag),
    ("-2", Flag),
    ("-3", Flag),
    ("-4", Flag),
    ("-5", Flag),
    ("-6", Flag),
    ("-7", Flag),
    ("-8", Flag),
    ("-9", Flag),
    ("-n", Literal),
    ("--suffixes", Literal),
];

/// `zip [OPTIONS] ARCHIVE FILES... [-x PATTERNS...]`: the archive is written; the files (the
/// trees under them with `-r`) are read; `-x` and `-i` take the patterns after them.
fn zip(judge: &mut Judge, args: &[Arg]) -> bool {
    let mut words: Vec<Arg> = Vec::new();
    let mut patterns = false;
    for a in args {
        if a.is("-x") || a.is("--exclude") || a.is("-i") || a.is("--include") {
            patterns = true;
        } else if patterns && (a.dynamic || !a.text.starts_with('-')) {
            if a.dynamic {
                return false;
            }
        } else {
            patterns = false;
            words.push(a.clone());
        }
    }
    let items = parse(&words, &[ZIP], Style::Gnu);
    let recursive = items.iter().any(|i| {
        matches!(
            i,
            Item::Option {
                name: "-r" | "--recurse-paths",
                ..
            }
        )
    });
    // Unless told to store links as links (`-y`), zip stores what they lead to: a link in the
    // workspace to a key puts the key in the archive.
    let follows_links = recursive
        && !(items.iter()).any(|i| {
            matches!(
                i,
                Item::Option {
                    name: "-y" | "--symlinks",
                    ..
                }
            )
        });
    let mut archive = true;
    items.iter().all(|item| match item {
        Item::Option { .. } => true,
        Item::Operand(a) if archive => {
            archive = false;
            judge.path(a, Write)
        }
        Item::Operand(a) if recursive => {
            judge.path(a, Tree) && (!follows_links || judge.links_in(a))
        }
        Item::Operand(a) => judge.path(a, Read),
        Item::Unknown(_) | Item::Missing(_) => false,
    }) && !archive
}

/// `unzip`'s options that list, test or print an archive, or extract it choosing only which
/// members, whether existing files are replaced, and names' case and depth; `-d` is where.
const UNZIP: Program = Program {
    names: &["unzip", "zipinfo"],
    options: &[&[
        ("-l", Flag),
        ("-v", Flag),
        ("-t", Flag),
        ("-z", Flag),
        ("-Z", Flag),
        ("-p", Flag),
        ("-c", Flag),
        ("-q", Flag),
        ("-qq", Flag),
        ("-1", Flag),
        ("-2", Flag),
        ("-s", Flag),
        ("-m", Flag),
        ("-h", Flag),
        ("-T", Flag),
        ("-o", Flag),
        ("-n", Flag),
        ("-u", Flag),
        ("-f", Flag),
        ("-j", Flag),
        ("-L", Flag),
        ("-C", Flag),
        ("-a", Flag),
        ("-aa", Flag),
        ("-D", Flag),
        ("-DD", Flag),
        ("-x", Flag),
        ("-d", Literal),
    ]],
    lead: &[Read],
    rest: Literal,
    style: Style::Words,
};

/// `unzip ARCHIVE [MEMBERS] [-x MEMBERS] [-d DIR]` (options anywhere): listing, testing and
/// printing (`-l`, `-v`, `-t`, `-z`, `-p`, `-c`, and `zipinfo`) write nothing; extracting
/// writes the members into `-d DIR` (the current directory without it).
fn unzip(judge: &mut Judge, name: &str, args: &[Arg]) -> bool {
    let items = parse(args, UNZIP.options, UNZIP.style);
    let reads_only = name == "zipinfo"
        || items.iter().any(|i| {
            matches!(
                i,
                Item::Option {
                    name: "-l" | "-v" | "-t" | "-z" | "-Z" | "-p" | "-c",
                    ..
                }
            )
        });
    let dirs: Vec<&Arg> = items
        .iter()
        .filter_map(|i| match i {
            Item::Option {
                name: "-d",
                arg: Some(dir),
                ..
            } => Some(dir),
            _ => None,
        })
        .collect();
    let here = Arg::literal(".");
    let into = match dirs.as_slice() {
        [] => &here,
        [dir] => dir,
        _ => return false,
    };
    judge.items(&items, &UNZIP) && (reads_only || extracts_into(judge, &[], into))
}

const COMPRESS: &[Opt] = &[
    ("-c", Flag),
    ("--stdout", Flag),
    ("--to-stdout", Flag),
    ("-d", Flag),
    ("--decompress", Flag),
    ("--uncompress", Flag),
    ("-z", Flag),
    ("--compress", Flag),
    ("-f", Flag),
    ("--force", Flag),
    ("-k", Flag),
    ("--keep", Flag),
    ("-l", Flag),
    ("--list", Flag),
    ("-t", Flag),
    ("--test", Flag),
    // Not `-N`: gunzip would name its output as the archive says.
    ("-n", Flag),
    ("--no-name", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-NUM", Flag),
    ("--fast", Flag),
    ("--best", Flag),
    ("-e", Flag),
    ("--extreme", Flag),
    ("-T", Literal),
    ("--threads", Literal),
    ("--rm", Flag),
];

/// The compressors' suffixes, and what a decompressed file is named.
const SUFFIXES: &[(&str, &str)] = &[
    (".gz", ""),
    (".z", ""),
    (".tgz", ".tar"),
    (".bz2", ""),
    (".tbz2", ".tar"),
    (".tbz", ".tar"),
    (".xz", ""),
    (".txz", ".tar"),
    (".lzma", ""),
    (".zst", ""),
    (".tzst", ".tar"),
];

/// A compressor: each file is replaced by its (de)compressed form, next to it; with `-c` (or as
/// `zcat`) it is only read.
fn compress(judge: &mut Judge, name: &str, args: &[Arg]) -> bool {
    let items = parse(args, &[COMPRESS], Style::Gnu);
    let given = |names: &[&str]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if names.contains(name)))
    };
    let reads_only = name.ends_with("cat")
        || given(&[
            "-c",
            "--stdout",
            "--to-stdout",
            "-l",
            "--list",
            "-t",
            "--test",
        ]);
    let decompress = name.starts_with("un")
        || name == "gunzip"
        || name.ends_with("cat")
        || given(&["-d", "--decompress", "--uncompress"]);
    let suffix = match name {
        "gzip" | "gunzip" | "zcat" => ".gz",
        "bzip2" | "bunzip2" | "bzcat" => ".bz2",
        "xz" | "unxz" | "xzcat" => ".xz",
        "lzma" | "unlzma" => ".lzma",
        _ => ".zst",
    };
    let mut any = false;
    let safe = items.iter().all(|item| match item {
        Item::Option { .. } => true,
        Item::Operand(a) if reads_only => {
            any = true;
            judge.path(a, Read)
        }
        Item::Operand(a) => {
            any = true;
            let output = if decompress {
                SUFFIXES.iter().find_map(|(s, to)| {
                    let stem = a.text.strip_suffix(s)?;
                    Some(format!("{stem}{to}"))
                })
            } else {
                Some(format!("{}{suffix}", a.text))
            };
            let Some(output) = output.filter(|_| !a.glob && !a.dynamic) else {
                return false;
            };
            judge.change(a, "replaces", Effect::Write)
                && judge.change(
                    &Arg {
                        text: output,
                        ..(*a).clone()
                    },
                    "writes",
                    Effect::Write,
                )
        }
        Item::Unknown(_) | Item::Missing(_) => false,
    });
    safe && any
}

/// The archivers; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    Some(match name {
        "tar" | "gtar" | "bsdtar" => tar(judge, args),
        "zip" => zip(judge, args),
        "unzip" | "zipinfo" => unzip(judge, name, args),
        "gzip" | "gunzip" | "zcat" | "bzip2" | "bunzip2" | "bzcat" | "xz" | "unxz" | "xzcat"
        | "lzma" | "unlzma" | "zstd" | "unzstd" | "zstdcat" => compress(judge, name, args),
        _ => return None,
    })
}
