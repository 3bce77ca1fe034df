//! Shell builtins, wrappers (`timeout`, `env`, `nice`, `xargs`, ...) and shells running a
//! script (`bash -c`): what of each is harmless. The command a wrapper or a shell runs is
//! judged as a command of its own.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Style, Value};

use super::{Judge, Program};
use Value::*;
use acp_gate_shell::environment::{is_inert, is_shell_variable};
use acp_gate_shell::wrappers::runner;

/// Wrappers, by the options of their own that are harmless (from their manuals).
const WRAPPERS: &[Program] = &[
    Program {
        names: &["timeout"],
        options: &[&[
            ("-s", Literal),
            ("--signal", Literal),
            ("-k", Literal),
            ("--kill-after", Literal),
            ("--foreground", Flag),
            ("--preserve-status", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
        ]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["nice"],
        options: &[&[("-n", Literal), ("--adjustment", Literal)]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["nohup", "builtin", "setsid", "busybox", "toybox"],
        options: &[],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["time"],
        options: &[&[
            ("-p", Flag),
            ("--portability", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-f", Literal),
            ("--format", Literal),
            ("-o", Write),
            ("--output", Write),
            ("-a", Flag),
            ("--append", Flag),
        ]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["stdbuf"],
        options: &[&[
            ("-i", Literal),
            ("-o", Literal),
            ("-e", Literal),
            ("--input", Literal),
            ("--output", Literal),
            ("--error", Literal),
        ]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["env"],
        options: &[&[
            ("-i", Flag),
            ("--ignore-environment", Flag),
            ("-u", Literal),
            ("--unset", Literal),
            ("-0", Flag),
            ("--null", Flag),
            ("-v", Flag),
            ("--debug", Flag),
        ]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["command"],
        options: &[&[("-p", Flag)]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    Program {
        names: &["xargs"],
        options: &[&[
            ("-0", Flag),
            ("--null", Flag),
            ("-r", Flag),
            ("--no-run-if-empty", Flag),
            ("-n", Literal),
            ("--max-args", Literal),
            ("-P", Literal),
            ("--max-procs", Literal),
            ("-L", Literal),
            ("--max-lines", Literal),
            ("-I", Literal),
            ("--replace", Literal),
            ("-d", Literal),
            ("--delimiter", Literal),
            ("-s", Literal),
            ("--max-chars", Literal),
            ("-t", Flag),
            ("--verbose", Flag),
            ("-x", Flag),
            ("--exit", Flag),
            ("-E", Literal),
            ("-a", Read),
            ("--arg-file", Read),
        ]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
    // Reachable only when the `privilege-escalation` rule is switched off.
    Program {
        names: &["sudo", "doas"],
        options: &[&[
            ("-u", Literal),
            ("--user", Literal),
            ("-g", Literal),
            ("--group", Literal),
            ("-n", Flag),
            ("--non-interactive", Flag),
            ("-H", Flag),
            ("--set-home", Flag),
        ]],
        lead: &[],
        rest: Flag,
        style: Style::Posix,
    },
];

/// Toolchains' sub-commands that run a command in the workspace's environment
/// ([`acp_gate_shell::wrappers::RUNNERS`]), by the options of theirs that neither fetch code
/// the workspace does not pin (`uv run --with PKG`, `--index`), nor read a secret
/// (`--env-file .env`), nor pick another project or interpreter; the sub-command's words lead.
const RUNNERS: &[Program] = &[
    Program {
        names: &["bundle"],
        options: &[&[("--gemfile", Read), ("--keep-file-descriptors", Flag)]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["poetry"],
        options: &[&[
            ("-q", Flag),
            ("--quiet", Flag),
            ("-v", Flag),
            ("-vv", Flag),
            ("--verbose", Flag),
            ("-n", Flag),
            ("--no-interaction", Flag),
            ("--ansi", Flag),
            ("--no-ansi", Flag),
            ("--no-plugins", Flag),
        ]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["uv"],
        options: &[&[
            ("--frozen", Flag),
            ("--locked", Flag),
            ("--offline", Flag),
            ("--no-sync", Flag),
            ("--exact", Flag),
            ("--all-extras", Flag),
            ("--extra", Literal),
            ("--group", Literal),
            ("--only-group", Literal),
            ("--no-group", Literal),
            ("--dev", Flag),
            ("--no-dev", Flag),
            ("--only-dev", Flag),
            ("--package", Literal),
            ("--all-packages", Flag),
            ("--no-project", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("--color", Literal),
            ("--no-progress", Flag),
        ]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["pdm"],
        options: &[&[
            ("-v", Flag),
            ("--verbose", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
        ]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["pipenv", "rye"],
        options: &[],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["hatch"],
        options: &[&[("-e", Literal), ("--env", Literal)]],
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    // `git bisect run CMD`: the command is judged as a command; git runs it at each step.
    Program {
        names: &["git"],
        options: &[],
        lead: &[Literal, Literal],
        rest: Flag,
        style: Style::Gnu,
    },
];

/// Shells running a script given with `-c`: options that only set shell flags.
const SHELLS: Program = Program {
    names: &[
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash",
    ],
    options: &[&[
        ("-c", Flag),
        ("-e", Flag),
        ("-u", Flag),
        ("-x", Flag),
        ("-v", Flag),
        ("-f", Flag),
        ("-E", Flag),
        ("-l", Flag),
        ("-r", Flag),
        ("-o", Literal),
        ("--login", Flag),
        ("--norc", Flag),
        ("--noprofile", Flag),
        ("--posix", Flag),
        ("--restricted", Flag),
    ]],
    lead: &[],
    rest: Literal,
    style: Style::Posix,
};

/// Builtins and tiny programs whose words are all data: nothing they take reads, writes or
/// runs anything.
const INERT: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "pwd",
    "exit",
    "return",
    "shift",
    "wait",
    "sleep",
    "seq",
    "expr",
    "let",
    "type",
    "which",
    "whereis",
    "whoami",
    "id",
    "uname",
    "nproc",
    "uptime",
    "arch",
    "groups",
    "tty",
    "locale",
    "getconf",
    "printenv",
    "basename",
    "dirname",
    "cd",
    "pushd",
    "popd",
    "jobs",
    "dirs",
    "eval",
    "unset",
    "yes",
    "logname",
    "free",
    "vmstat",
    "lsb_release",
    "cal",
    "ulimit",
    "ps",
    "pgrep",
    "pstree",
    "lsof",
    "top",
];

/// `set` options that only make the script stricter or louder.
const SET_OPTIONS: &[&str] = &[
    "errexit",
    "nounset",
    "pipefail",
    "xtrace",
    "verbose",
    "noclobber",
    "noglob",
    "errtrace",
    "posix",
];

/// A wrapper's own words. A runner loads the project it runs in (`pyproject.toml`, the
/// `Gemfile`), so it runs only in the workspace.
pub(super) fn wrapper(judge: &mut Judge, name: &str, own: &[Arg]) -> bool {
    if runner(name, own).is_some() {
        return RUNNERS
            .iter()
            .find(|p| p.names.contains(&name))
            .is_some_and(|p| judge.program(own, p))
            && judge.runs_in_workspace();
    }
    WRAPPERS
        .iter()
        .find(|p| p.names.contains(&name))
        .is_some_and(|p| judge.program(own, p))
}

/// A shell or `eval` running a script, whose commands are judged on their own.
pub(super) fn script(judge: &mut Judge, name: &str, args: &[Arg]) -> bool {
    match name {
        "eval" => true,
        _ if SHELLS.names.contains(&name) => judge.program(args, &SHELLS),
        _ => false,
    }
}

/// Builtins; `None` for a name that is not one.
pub(super) fn judge(_: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    let static_words = || args.iter().all(|a| !a.dynamic);
    Some(match name {
        _ if INERT.contains(&name) => true,
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            let exported = name == "export"
                || args
                    .iter()
                    .any(|a| a.text.starts_with('-') && a.text.contains('x'));
            static_words()
                && args.iter().all(|a| {
                    if a.text.starts_with('-') || a.text.starts_with('+') {
                        {
                            // `export -f` hands a function to every later program.
                            let flags = if name == "export" {
                                "np"
                            } else {
                                "xrgaAfFpilnut"
                            };
                            a.text[1..].chars().all(|c| flags.contains(c))
                        }
                    } else if let Some((n, v)) = a.assignment() {
                        if exported {
                            is_inert(&n, &v)
                        } else {
                            is_shell_variable(&n, &v)
                        }
                    } else {
                        true
                    }
                })
        }
        "set" => {
            static_words() && {
                let mut ok = true;
                let mut i = 0;
                while let Some(a) = args.get(i) {
                    let t = a.text.as_str();
                    if t == "--" {
                        break;
                    }
                    if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
                        ok &= flags.chars().all(|c| "euxvfCnoE".contains(c));
                        if flags.ends_with('o') {
                            i += 1;
                            ok &= args
                                .get(i)
                                .is_none_or(|o| SET_OPTIONS.contains(&o.text.as_str()));
                        }
                    } else {
                        ok = false;
                    }
                    i += 1;
                }
                ok
            }
        }
        "read" => static_words() && !args.iter().any(|a| a.is("-u")),
        "alias" | "trap" | "enable" | "complete" => {
            // Printing only: definitions change what a later name runs, or when code runs.
            args.iter()
                .all(|a| matches!(a.text.as_str(), "-p" | "-l" | "-t"))
        }
        "shopt" => {
            static_words()
                && args.iter().all(|a| {
                    matches!(
                        a.text.as_str(),
                        "-s" | "-u"
                            | "-p"
                            | "-q"
                            | "nullglob"
                            | "globstar"
                            | "extglob"
                            | "failglob"
                            | "nocaseglob"
                            | "pipefail"
                    )
                })
        }
        "umask" => args.iter().all(|a| a.is("-S") || a.is("-p")),
        // `command -v NAME` looks a name up; `env` alone prints the environment.
        "command" => args.first().is_some_and(|a| a.is("-v") || a.is("-V")) && static_words(),
        "env" | "printenv" => {
            args.iter()
                .all(|a| a.is("-0") || a.is("--null") || !a.text.starts_with('-'))
                && static_words()
        }
        _ => return None,
    })
}
