//! Scripts of the workspace, run by their interpreter (`python tools/gen.py`, `node
//! scripts/x.js`, `bash ./scripts/check.sh`) or directly (`./scripts/build.sh`): the project's
//! own code, the same class of trust as `cargo test` (issue 27). Allowed unless an option, a
//! variable or a path says otherwise: interpreter options that run other code (`-c`, `-e`,
//! `-m` other than the known tools, `-r`/`--require`, `--import`, `-i`, `--inspect`), a script
//! outside the workspace or among its secrets, a script argument naming a secret or a place
//! outside the workspace, a word only known at run time. (Variables that load code are judged
//! for every command, `PYTHONPATH`, `NODE_OPTIONS` included.)

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::Judge;
use Value::*;

const PYTHON: &[Opt] = &[
    ("-u", Flag),
    ("-B", Flag),
    ("-O", Flag),
    ("-OO", Flag),
    ("-E", Flag),
    ("-s", Flag),
    ("-S", Flag),
    ("-I", Flag),
    ("-P", Flag),
    ("-q", Flag),
    ("-b", Flag),
    ("-bb", Flag),
    ("-W", Literal),
    ("-X", Literal),
];

/// `-X` settings of Python that only change what it reports or how strictly it runs (not
/// `presite`, which imports a module, nor `pycache_prefix`, which writes elsewhere).
const PYTHON_X: &[&str] = &[
    "dev",
    "utf8",
    "utf8=0",
    "utf8=1",
    "importtime",
    "tracemalloc",
    "faulthandler",
    "warn_default_encoding",
    "no_debug_ranges",
    "showrefcount",
    "frozen_modules=on",
    "frozen_modules=off",
];

const NODE: &[Opt] = &[
    ("--enable-source-maps", Flag),
    ("--no-warnings", Flag),
    ("--trace-warnings", Flag),
    ("--no-deprecation", Flag),
    ("--trace-deprecation", Flag),
    ("--trace-uncaught", Flag),
    ("--unhandled-rejections", Literal),
    ("--max-old-space-size", Literal),
    ("--stack-size", Literal),
    ("--experimental-vm-modules", Flag),
    ("--experimental-strip-types", Flag),
    ("--experimental-transform-types", Flag),
    ("--test", Flag),
    ("--test-only", Flag),
    ("--test-name-pattern", Literal),
    ("--test-reporter", Literal),
    ("--test-concurrency", Literal),
    ("--test-timeout", Literal),
];

/// `--test-reporter` values that are node's own (any other is a module it loads).
const NODE_REPORTERS: &[&str] = &["spec", "tap", "dot", "junit", "lcov"];

/// `-I DIR` puts a directory on the load path: the code there is the workspace's only when the
/// directory is in it (judged as a read).
const RUBY: &[Opt] = &[
    ("-w", Flag),
    ("-W0", Flag),
    ("-W1", Flag),
    ("-W2", Flag),
    ("-I", Read),
];

const PERL: &[Opt] = &[("-w", Flag), ("-W", Flag), ("-X", Flag), ("-I", Read)];

/// A shell's options for a script: stricter or louder (`-n` only reads it).
const SHELL: &[Opt] = &[
    ("-e", Flag),
    ("-u", Flag),
    ("-x", Flag),
    ("-v", Flag),
    ("-n", Flag),
    ("-f", Flag),
    ("-E", Flag),
    ("-o", Literal),
    ("--norc", Flag),
    ("--noprofile", Flag),
    ("--posix", Flag),
];

/// `set -o` names a script may be run with.
const SHELL_O: &[&str] = &[
    "errexit", "nounset", "pipefail", "xtrace", "verbose", "noglob",
];

/// The interpreter `name` runs scripts as, and its harmless options.
fn interpreter(name: &str) -> Option<&'static [Opt]> {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "python" => PYTHON,
        "node" | "nodejs" => NODE,
        "ruby" => RUBY,
        "perl" => PERL,
        "bash" | "sh" | "dash" | "zsh" | "ksh" | "ash" | "mksh" => SHELL,
        _ => return None,
    })
}

/// A script of the workspace run by its interpreter, or run directly; `None` for another
/// program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    let program = judge.inv.argv.first()?;
    let Some(options) = interpreter(name) else {
        // The program itself is a file: the workspace's code when it is in the workspace,
        // not a dependency's or a tool's kept there (`node_modules/.bin/x`, `.venv/bin/x`,
        // `target/debug/x`: `cargo run` is asked too).
        let own = program.text.contains('/')
            && !program.text.split('/').any(|s| {
                (s.starts_with('.') && s != "." && s != "..")
                    || matches!(s, "node_modules" | "vendor" | "site-packages" | "target")
            });
        return own.then(|| script(judge, program) && script_args(judge, args));
    };
    let items = parse(args, &[options], Style::Posix);
    let mut safe = true;
    let mut operands = Vec::new();
    for item in &items {
        match item {
            Item::Option {
                name: option,
                arg: Some(value),
                ..
            } => {
                safe &= !value.dynamic
                    && match *option {
                        // A warning filter naming a category `module.Class` imports `module`.
                        "-W" => !value.text.contains('.'),
                        "-I" => judge.path(value, Read),
                        "-X" => PYTHON_X.contains(&value.text.as_str()),
                        "-o" => SHELL_O.contains(&value.text.as_str()),
                        "--test-reporter" => NODE_REPORTERS.contains(&value.text.as_str()),
                        _ => true,
                    };
            }
            Item::Option { .. } => {}
            Item::Operand(a) => operands.push(*a),
            Item::Unknown(_) | Item::Missing(_) => safe = false,
        }
    }
    let testing = items
        .iter()
        .any(|i| matches!(i, Item::Option { name: "--test", .. }));
    Some(match operands.first() {
        Some(file) => {
            // The script's own arguments: every word after it.
            let at = args
                .iter()
                .position(|a| std::ptr::eq(a, *file))
                .map_or(args.len(), |p| p + 1);
            safe && script(judge, file) && script_args(judge, &args[at..])
        }
        // `node --test` runs the project's test files.
        None => safe && testing,
    })
}

/// The script file: a static path in the workspace, not a secret, not code read from input.
fn script(judge: &mut Judge, file: &Arg) -> bool {
    !file.glob && !file.dynamic && !file.is("-") && judge.path(file, Read)
}

/// A script's arguments are data for it, but a path among them is the script's to read or
/// write: it must be in the workspace and not a secret (`python parse.py .env` is denied).
pub(super) fn script_args(judge: &mut Judge, args: &[Arg]) -> bool {
    args.iter().all(|a| {
        if a.dynamic {
            return false;
        }
        let value = match a.text.split_once('=') {
            Some((option, value)) if option.starts_with('-') => value,
            _ => a.text.as_str(),
        };
        let path_like = value.contains('/') || value.starts_with(['~', '.']);
        !path_like
            || judge.path(
                &Arg {
                    text: value.to_owned(),
                    ..a.clone()
                },
                Read,
            )
    })
}
