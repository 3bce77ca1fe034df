//! Programs that create, copy, move, link, delete and edit files: touch, mkdir, rmdir, rm, cp,
//! mv, ln, chmod of modes that grant no one else a write or a set-id, and `perl -pi` substitutions (options from GNU coreutils' and perl's `--help`). Every
//! path is judged as the path validator judges an edit of it: in the workspace, not sensitive.
//! Where a file lands in a directory (`cp f DIR/`), the file it becomes is judged too; where
//! what lands is a whole tree the checker cannot see (`cp -r`, `mv`, a link), it may not land
//! where a sensitive file would be made (the workspace root, `.git`, `.vscode`, ...). Not
//! listed, so asked: hard-linking copies (`cp -l`), following links (`-L`, `-H`), backups
//! whose suffix names another directory, `rm` of globs or of `.git`, perl's other code.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::inline::perl_script_is_pure;
use super::{Judge, Program, names_a_kind};
use crate::judgement::Effect;
use crate::targets::lands_in_guarded_tree;
use Value::*;

pub(super) const PROGRAMS: &[Program] = &[
    Program {
        names: &["touch"],
        options: &[&[
            ("-a", Flag),
            ("-c", Flag),
            ("--no-create", Flag),
            ("-d", Literal),
            ("--date", Literal),
            ("-f", Flag),
            ("-h", Flag),
            ("--no-dereference", Flag),
            ("-m", Flag),
            ("-r", Name),
            ("--reference", Name),
            ("-t", Literal),
            ("--time", Literal),
        ]],
        lead: &[],
        rest: Write,
        style: Style::Gnu,
    },
    Program {
        names: &["rmdir"],
        options: &[&[
            ("-v", Flag),
            ("--verbose", Flag),
            ("--ignore-fail-on-non-empty", Flag),
        ]],
        lead: &[],
        rest: Write,
        style: Style::Gnu,
    },
];

/// `rm` and `mkdir` inside the workspace (`rm -rf ./build`, `rm -- *.o`): every operand a
/// static path in the workspace, or a glob of a kind of file (not `*`, not `src/*`), not git's
/// own directory. Deleting a root is denied by the rules.
const RM_MKDIR: Program = Program {
    names: &["rm", "mkdir"],
    options: &[&[
        ("-r", Flag),
        ("-R", Flag),
        ("--recursive", Flag),
        ("-f", Flag),
        ("--force", Flag),
        ("-v", Flag),
        ("--verbose", Flag),
        ("-d", Flag),
        ("--dir", Flag),
        ("--one-file-system", Flag),
        ("--preserve-root", Flag),
        ("-p", Flag),
        ("--parents", Flag),
    ]],
    lead: &[],
    rest: Write,
    style: Style::Gnu,
};

fn rm_or_mkdir(judge: &mut Judge, name: &str, args: &[Arg]) -> bool {
    let items = parse(args, RM_MKDIR.options, RM_MKDIR.style);
    let plain = items.iter().all(|i| match i {
        Item::Operand(a) => {
            let text = a.text.trim_end_matches('/');
            (!a.glob || names_a_kind(text))
                && !text.is_empty()
                && text != "."
                && text != ".."
                && !text.split('/').any(|s| s == ".git" || s == "..")
        }
        _ => true,
    });
    if !plain || !items.iter().any(|i| matches!(i, Item::Operand(_))) {
        return false;
    }
    if name == "mkdir" {
        return judge.items(&items, &RM_MKDIR);
    }
    // `rm link` deletes the link, not what it leads to.
    items.iter().all(|i| match i {
        Item::Operand(a) => judge.change(a, "deletes", Effect::Delete),
        Item::Option { .. } => true,
        Item::Unknown(_) | Item::Missing(_) => false,
    })
}

/// `chmod MODE FILE...` on files of the workspace, each judged as an edit, not recursive: the
/// mode only sets read and execute bits, or write for the owner and group (`+x`, `u+w`, `644`,
/// `go-w`), never a write for others nor a set-id or sticky bit.
fn chmod(judge: &mut Judge, args: &[Arg]) -> bool {
    const QUIET: &[Opt] = &[
        ("-v", Flag),
        ("--verbose", Flag),
        ("-c", Flag),
        ("--changes", Flag),
        ("-f", Flag),
        ("--silent", Flag),
        ("--quiet", Flag),
    ];
    // A mode such as `-w` reads as an option: only the plain forms are understood.
    let items = parse(args, &[QUIET], Style::Gnu);
    let mut operands = items.iter().filter_map(Item::operand);
    let understood = items
        .iter()
        .all(|i| matches!(i, Item::Option { .. } | Item::Operand(_)));
    let Some(mode) = operands.next() else {
        return false;
    };
    let files: Vec<&Arg> = operands.collect();
    understood
        && !mode.dynamic
        && harmless_mode(&mode.text)
        && !files.is_empty()
        && files
            .iter()
            .all(|f| !f.glob && judge.change(f, "changes the mode of", Effect::Write))
}

/// A mode that grants no write to others and no set-id or sticky bit (see [`chmod`]).
fn harmless_mode(mode: &str) -> bool {
    if !mode.is_empty() && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        // A fourth digit sets set-id and sticky bits unless it is 0; others never write.
        let bits = if mode.len() == 4 {
            mode.strip_prefix('0').unwrap_or("7777")
        } else {
            mode
        };
        let others = bits.bytes().last().map_or(0, |b| b - b'0');
        return bits.len() <= 3 && others & 2 == 0;
    }
    mode.split(',').all(|clause| {
        let Some(at) = clause.find(['+', '-', '=']) else {
            return false;
        };
        let (who, rest) = clause.split_at(at);
        let (op, perms) = rest.split_at(1);
        let adds = op != "-";
        who.bytes().all(|b| b"ugo".contains(&b))
            && !perms.is_empty()
            && perms.bytes().all(|b| b"rwxX".contains(&b))
            // A write added for others, or for everyone (`+w` with no one named is the umask's
            // business, so it is refused too).
            && !(adds && perms.contains('w') && (who.is_empty() || who.contains('o')))
    })
}

/// Options of `cp`, `mv` and `ln` that only choose how the copy, move or link is made.
const COMMON: &[Opt] = &[
    ("-f", Flag),
    ("--force", Flag),
    ("-i", Flag),
    ("--interactive", Flag),
    ("-n", Flag),
    ("--no-clobber", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-b", Flag),
    ("--backup", Optional),
    ("-S", Literal),
    ("--suffix", Literal),
    ("-t", Write),
    ("--target-directory", Write),
    ("-T", Flag),
    ("--no-target-directory", Flag),
];

const CP: &[Opt] = &[
    ("-a", Flag),
    ("--archive", Flag),
    ("-r", Flag),
    ("-R", Flag),
    ("--recursive", Flag),
    ("-d", Flag),
    ("-P", Flag),
    ("--no-dereference", Flag),
    ("-p", Flag),
    ("--preserve", Optional),
    ("--no-preserve", Literal),
    ("--reflink", Optional),
    ("--remove-destination", Flag),
    ("--sparse", Literal),
    ("--strip-trailing-slashes", Flag),
    ("-u", Flag),
    ("--update", Optional),
    ("-x", Flag),
    ("--one-file-system", Flag),
    ("--attributes-only", Flag),
];

const MV: &[Opt] = &[
    ("-u", Flag),
    ("--update", Optional),
    ("--strip-trailing-slashes", Flag),
    ("--no-copy", Flag),
];

const LN: &[Opt] = &[
    ("-s", Flag),
    ("--symbolic", Flag),
    ("-r", Flag),
    ("--relative", Flag),
    ("-n", Flag),
    ("--no-dereference", Flag),
];

/// `cp`, `mv` and `ln`: sources, and where each lands.
fn copy_move_link(judge: &mut Judge, name: &str, args: &[Arg]) -> bool {
    let own: &[Opt] = match name {
        "cp" => CP,
        "mv" => MV,
        _ => LN,
    };
    let items = parse(args, &[COMMON, own], Style::Gnu);
    let given = |names: &[&str]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Option { name, .. } if names.contains(name)))
    };
    let mut safe = true;
    let mut into: Option<Arg> = None;
    let mut operands: Vec<&Arg> = Vec::new();
    for item in &items {
        match item {
            // A backup suffix with `/` places the backup copy in another directory.
            Item::Option {
                name: "-S" | "--suffix",
                arg: Some(s),
                ..
            } => safe &= !s.dynamic && !s.text.contains('/'),
            Item::Option {
                name: "-t" | "--target-directory",
                arg: Some(dir),
                ..
            } => into = Some(dir.clone()),
            Item::Option { .. } => {}
            Item::Operand(a) => operands.push(a),
            Item::Unknown(_) | Item::Missing(_) => safe = false,
        }
    }
    let symbolic = name == "ln" && given(&["-s", "--symbolic"]);
    // The whole tree under a source lands with it (a directory moved, copied with `-r`, or
    // reached through a link).
    let tree = name == "mv" || symbolic || given(&["-a", "--archive", "-r", "-R", "--recursive"]);
    let no_target_dir = given(&["-T", "--no-target-directory"]);
    let (sources, dest): (Vec<&Arg>, Option<Arg>) = match (into, operands.as_slice()) {
        (Some(dir), _) => (operands.clone(), Some(dir)),
        // `ln TARGET` links it into the current directory under its own name.
        (None, [only]) if name == "ln" => (vec![*only], Some(Arg::literal("."))),
        (None, [sources @ .., last]) if !sources.is_empty() => {
            (sources.to_vec(), Some((*last).clone()))
        }
        _ => return false,
    };
    let Some(dest) = dest else { return false };
    if sources.len() > 1 && no_target_dir {
        return false;
    }
    // A source that is itself refused is the news; where it would land is not said again.
    let mut refused = Vec::new();
    for source in &sources {
        let before = judge.out.len();
        safe &= match name {
            "mv" => judge.change(source, "moves away", Effect::Move),
            "ln" => link_target(judge, source, &dest, symbolic, no_target_dir),
            _ => judge.path(source, Read),
        };
        refused.push(judge.out.len() > before);
    }
    // Where each source lands: DEST itself, or (DEST being a directory) DEST/NAME.
    let dest_is_dir = sources.len() > 1
        || items.iter().any(|i| {
            matches!(
                i,
                Item::Option {
                    name: "-t" | "--target-directory",
                    ..
                }
            )
        })
        || dest.text.ends_with('/')
        || matches!(dest.text.as_str(), "." | "..");
    let mut landings = Vec::new();
    if !dest_is_dir {
        landings.push(dest.clone());
    }
    if !no_target_dir {
        for (source, _) in sources
            .iter()
            .zip(&refused)
            .filter(|(_, refused)| !**refused)
        {
            let base = source
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            // `cp -r src/. dest/`: the contents land in DEST itself.
            if base == "." && tree && !source.dynamic {
                landings.push(dest.clone());
                continue;
            }
            if base.is_empty() || base == "." || base == ".." || source.dynamic {
                safe = false;
                continue;
            }
            landings.push(Arg {
                text: format!("{}/{base}", dest.text.trim_end_matches('/')),
                ..dest.clone()
            });
        }
    }
    for landing in &landings {
        if landing.glob {
            safe = false;
            continue;
        }
        safe &= judge.change(landing, "writes", Effect::Write);
        if tree {
            safe &= !lands_in_guarded_tree(judge.cx, judge.inv, landing);
        }
    }
    safe
}

/// What a link points to: in the workspace, no file that may not be written (writing through
/// the link writes it), not a directory that holds such files. A relative symbolic link is
/// resolved from the directory the link is in: DEST's when DEST names the link, DEST itself
/// when it is a directory (either may be).
fn link_target(judge: &mut Judge, target: &Arg, dest: &Arg, symbolic: bool, to_name: bool) -> bool {
    if target.dynamic || target.glob {
        return false;
    }
    let text = target.text.as_str();
    let mut placements = Vec::new();
    if symbolic && !(text.starts_with('/') || text.starts_with('~')) {
        let dest = dest.text.as_str();
        if !dest.ends_with('/') {
            let parent = dest.rsplit_once('/').map_or(".", |(dir, _)| dir);
            placements.push(format!("{parent}/{text}"));
        }
        if !to_name {
            placements.push(format!("{}/{text}", dest.trim_end_matches('/')));
        }
    } else {
        placements.push(text.to_owned());
    }
    placements.into_iter().all(|placed| {
        let placed = Arg {
            text: placed,
            ..target.clone()
        };
        judge.change(&placed, "links to", Effect::Write)
            && !lands_in_guarded_tree(judge.cx, judge.inv, &placed)
    })
}

/// perl's command-line switches that make it a stream editor (`perl -pi -e 's/a/b/g' f`); any
/// other (`-M`, `-I`, `-x`, `-d`, ...) loads or runs more code. `None` when perl is given no
/// code (`perl script.pl`: a script).
fn perl(judge: &mut Judge, args: &[Arg]) -> Option<bool> {
    if !args
        .iter()
        .take_while(|a| a.text.starts_with('-'))
        .any(|a| a.text.contains(['e', 'E']) && !a.text.starts_with("--"))
    {
        return None;
    }
    Some(perl_editing(judge, args))
}

fn perl_editing(judge: &mut Judge, args: &[Arg]) -> bool {
    let mut scripts: Vec<&str> = Vec::new();
    let mut in_place = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a.dynamic {
            return false;
        }
        let t = a.text.as_str();
        if t == "--" {
            break;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
            i -= 1;
            break;
        };
        for (k, c) in cluster.char_indices() {
            let rest = &cluster[k + c.len_utf8()..];
            match c {
                'p' | 'n' | 'a' | 'w' => {}
                // `-l`, `-0` take an octal number glued to them.
                'l' | '0' => {
                    if !rest.chars().all(|d| d.is_ascii_digit()) {
                        return false;
                    }
                    break;
                }
                // `-i.bak`: the backup suffix (a `/` or `*` puts it elsewhere).
                'i' => {
                    in_place = true;
                    if rest.contains(['/', '*']) {
                        return false;
                    }
                    break;
                }
                'e' | 'E' => {
                    let script = if rest.is_empty() {
                        match args.get(i) {
                            Some(s) if !s.dynamic => {
                                i += 1;
                                s.text.as_str()
                            }
                            _ => return false,
                        }
                    } else {
                        rest
                    };
                    scripts.push(script);
                    break;
                }
                _ => return false,
            }
        }
    }
    if scripts.is_empty() || !scripts.iter().all(|s| perl_script_is_pure(s)) {
        return false;
    }
    let access = if in_place { Write } else { Read };
    let files = &args[i..];
    !files.is_empty() && files.iter().all(|f| judge.path(f, access))
}

/// The file tools of this module; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    Some(match name {
        "rm" | "mkdir" => rm_or_mkdir(judge, name, args),
        "cp" | "mv" | "ln" => copy_move_link(judge, name, args),
        "chmod" => chmod(judge, args),
        "perl" => return perl(judge, args),
        _ => {
            let program = PROGRAMS.iter().find(|p| p.names.contains(&name))?;
            judge.program(args, program)
        }
    })
}
