//! Asking a program about itself (issue 27): `NAME --help`, `NAME --version`; the short and
//! word forms only for the programs that mean help or version by them (`-h` is human-readable
//! sizes to `ls` and `du`, no file names to `grep`, dereferencing to `tar`; `hash -p` rebinds a
//! name); a subcommand's help for the CLIs that print it before running anything (`git commit
//! --help`, `cargo test --help`, `docker run --help`: one subcommand word, since `docker run
//! IMAGE --help` hands `--help` to the container); `help`, `man`, `info`, `whatis`, `apropos`,
//! `hash`; and what a toolchain reports of itself (`rustup show`, `rustc --print sysroot`,
//! `docker info`). A program named by a path (`./tool --help`) is the workspace's code, judged
//! as such.

use acp_gate_shell::Arg;

use super::Judge;

/// Programs and the single arguments that make them print their help or version, beyond
/// `--help` and `--version` (from each one's manual).
const ABOUT: &[(&[&str], &[&str])] = &[
    (
        &["cargo", "rustc", "rustup", "rg", "fd", "uv", "ruff", "deno"],
        &["-h", "-V"],
    ),
    (
        &[
            "python", "python3", "pip", "pip3", "pytest", "mypy", "black",
        ],
        &["-h", "-V"],
    ),
    (
        &["node", "npm", "npx", "yarn", "pnpm", "bun"],
        &["-h", "-v"],
    ),
    (&["git"], &["-h", "version", "help"]),
    (&["go"], &["version", "help"]),
    (&["java", "javac"], &["-h", "-version"]),
    (&["mvn", "mvnw", "gradle", "gradlew"], &["-h", "-v"]),
    (&["make", "gmake"], &["-h", "-v"]),
    (&["grep", "egrep", "fgrep"], &["-V"]),
    (
        &["curl", "wget", "jq", "tsc", "eslint", "prettier", "jest"],
        &["-h", "-V"],
    ),
    (&["docker", "kubectl", "helm", "gh"], &["-h", "version"]),
    (
        &["terraform", "tofu"],
        &["-h", "-help", "-v", "-version", "version"],
    ),
    (&["gcc", "g++", "cc", "clang", "clang++"], &["-v"]),
    (&["perl", "php", "elixir"], &["-v"]),
    // Ruby's `-v` alone prints the version and exits (ruby(1)); so do gem's, Bundler's, irb's
    // and Mix's; Rake's is `-V`.
    (&["ruby", "gem", "bundle", "irb", "mix"], &["-v"]),
    (&["rake"], &["-V"]),
    (&["kotlin", "scala", "java"], &["-version"]),
    (&["zig"], &["version"]),
];

/// CLIs that print a subcommand's help for `NAME SUB --help` (or `-h`) without running it.
const SUBCOMMAND_HELP: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "rustup",
    "docker",
    "kubectl",
    "helm",
    "gh",
    "terraform",
    "tofu",
];

/// Whole commands that print what a toolchain is made of or has installed (from each one's
/// manual): the words exactly, `*` standing for one plain word. `rustup show` no longer
/// installs the toolchain a workspace names (rustup 1.28); `npm run` alone lists the scripts.
const INSPECT: &[(&str, &[&str])] = &[
    ("rustup", &["show"]),
    ("rustup", &["show", "*"]),
    ("rustup", &["toolchain", "list"]),
    ("rustup", &["target", "list"]),
    ("rustup", &["target", "list", "--installed"]),
    ("rustup", &["component", "list"]),
    ("rustup", &["component", "list", "--installed"]),
    ("rustc", &["--print", "*"]),
    ("rustc", &["-vV"]),
    ("docker", &["info"]),
    ("podman", &["info"]),
    ("npm", &["run"]),
    ("pnpm", &["run"]),
];

/// Programs whose whole job is showing documentation, with their harmless options.
const MANUALS: &[(&str, &[&str])] = &[
    ("man", &["-a", "-k", "-f", "-w"]),
    ("info", &[]),
    ("whatis", &[]),
    ("apropos", &[]),
    ("help", &["-d", "-s", "-m"]),
];

/// A plain word: a program's, a subcommand's or a manual's name, a section number.
fn plain(a: &Arg) -> bool {
    !a.dynamic
        && !a.glob
        && !a.text.is_empty()
        && a.text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        && !a.text.starts_with('-')
}

/// Whether `name ARGS` only asks the program about itself; `None` when it does not (the
/// other tables judge it).
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    // A program named by a path is the workspace's (or anyone's) code, not a known tool.
    if judge.inv.argv.first().is_some_and(|a| a.text.contains('/')) {
        return None;
    }
    let is = |a: &Arg, forms: &[&str]| forms.iter().any(|f| a.is(f));
    let own = |name: &str| {
        ABOUT
            .iter()
            .filter(|(names, _)| names.contains(&name))
            .flat_map(|(_, forms)| forms.iter().copied())
            .collect::<Vec<_>>()
    };
    let about = match args {
        [one] => is(one, &["--help", "--version"]) || is(one, &own(name)),
        [first, second] => {
            (SUBCOMMAND_HELP.contains(&name) && plain(first) && is(second, &["--help", "-h"]))
                // `git help log`, `go help test`, `npm help install`.
                || (matches!(name, "git" | "go" | "npm" | "cargo" | "pip" | "pip3")
                    && first.is("help")
                    && plain(second))
                || (name == "kubectl" && first.is("version") && second.is("--client"))
        }
        _ => false,
    };
    let inspects = INSPECT.iter().any(|(program, words)| {
        *program == name
            && words.len() == args.len()
            && words
                .iter()
                .zip(args)
                .all(|(w, a)| if *w == "*" { plain(a) } else { a.is(w) })
    });
    if about || inspects {
        return Some(true);
    }
    if let Some((_, options)) = MANUALS.iter().find(|(n, _)| *n == name) {
        let ok = !args.is_empty()
            && args
                .iter()
                .all(|a| plain(a) || options.iter().any(|o| a.is(o)));
        return ok.then_some(true);
    }
    // `hash` prints the remembered programs, `-r` forgets them, `-t` shows one; `-p` and
    // `-d` rebind or drop a name.
    (name == "hash").then(|| {
        args.iter()
            .all(|a| plain(a) || a.is("-r") || a.is("-t") || a.is("-l"))
    })
}
