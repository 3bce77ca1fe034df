//! Commands known to be safe: reading, listing, searching, status and diff, tests and builds.
//! A command is allowed only when every simple command in it is on this list (or in the
//! config's `safe_commands`) and no rule fired.

use crate::config::{Config, matches_prefix};
use crate::extract::Invocation;
use crate::rules::{parse_git, pattern_words};
use crate::words::Arg;

/// Whether `inv` is known to be safe to run without asking.
pub fn is_known_safe(inv: &Invocation, config: &Config) -> bool {
    if inv.writes.iter().any(|w| !is_harmless_sink(w)) {
        return false;
    }
    if inv.argv.is_empty() {
        // A bare assignment, or a redirection into /dev/null.
        return true;
    }
    if inv.name.is_empty() {
        return false;
    }
    let words = pattern_words(inv);
    if config
        .safe_commands
        .iter()
        .any(|s| matches_prefix(&s.split_whitespace().collect::<Vec<_>>(), &words))
    {
        return true;
    }
    let args = inv.args();
    let has = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a.is(n) || a.text.starts_with(&format!("{n}=")))
        })
    };
    match inv.name.as_str() {
        "ls" | "pwd" | "echo" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep"
        | "zgrep" | "tree" | "file" | "stat" | "du" | "df" | "which" | "whereis" | "whoami"
        | "id" | "uname" | "date" | "true" | "false" | ":" | "test" | "[" | "basename"
        | "dirname" | "realpath" | "readlink" | "cut" | "tr" | "diff" | "cmp" | "comm" | "nl"
        | "jq" | "yq" | "printenv" | "seq" | "sleep" | "type" | "column" | "tac" | "rev"
        | "md5sum" | "sha1sum" | "sha256sum" | "sha512sum" | "shasum" | "b2sum" | "cksum"
        | "strings" | "nproc" | "uptime" | "ps" | "expr" | "printf" | "cd" | "pushd" | "popd"
        | "locale" | "groups" | "hostname" | "arch" | "lsb_release" | "wait" | "exit"
        | "return" | "set" | "shopt" | "unset" | "alias" | "hash" | "fold" | "fmt" | "paste"
        | "join" | "expand" | "unexpand" | "od" | "hexdump" | "base64" | "look" | "cal"
        | "free" | "vmstat" | "ulimit" | "umask" | "getconf" | "tty" | "export" | "declare"
        | "typeset" | "local" | "readonly" | "read" | "shift" | "let" | "ag" | "ack" => true,
        "command" => has(&["-v", "-V"]),
        "env" => args.is_empty(),
        "sort" => {
            !has(&["-o", "--output", "--compress-program"])
                && !args.iter().any(|a| a.text.starts_with("-o"))
        }
        "uniq" => args.iter().filter(|a| !a.text.starts_with('-')).count() <= 1,
        "rg" => !has(&["--pre"]),
        "fd" | "fdfind" => !has(&["-x", "--exec", "-X", "--exec-batch"]),
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "sed" => sed_print_only(args),
        "git" => git_safe(inv),
        "cargo" => cargo_safe(args),
        "npm" | "pnpm" | "yarn" | "bun" => js_safe(&inv.name, args),
        "pytest" | "py.test" | "tsc" | "eslint" | "jest" | "vitest" | "mocha" | "mypy"
        | "pyright" | "flake8" | "pylint" | "ctest" | "ninja" | "shellcheck" | "hadolint"
        | "golangci-lint" | "staticcheck" | "tox" | "nox" => true,
        "python" | "python3" => {
            matches!(args, [v] if v.is("--version") || v.is("-V"))
                || (args.first().is_some_and(|a| a.is("-m"))
                    && args.get(1).is_some_and(|m| {
                        matches!(
                            m.text.as_str(),
                            "pytest"
                                | "unittest"
                                | "mypy"
                                | "pyflakes"
                                | "flake8"
                                | "pylint"
                                | "black"
                                | "ruff"
                        )
                    }))
        }
        "ruff" => args
            .first()
            .is_none_or(|a| matches!(a.text.as_str(), "check" | "format" | "--version")),
        "black" | "isort" => has(&["--check", "--diff", "--check-only"]),
        "prettier" => has(&["--check", "-c", "--list-different", "-l"]),
        "gofmt" | "rustfmt" => !has(&["-w"]) && (inv.name == "gofmt" || has(&["--check"])),
        "go" => args.first().is_some_and(|a| {
            matches!(
                a.text.as_str(),
                "test" | "build" | "vet" | "fmt" | "version" | "env" | "list" | "doc"
            )
        }),
        "make" | "gmake" => make_safe(args),
        "mvn" | "gradle" | "gradlew" | "./gradlew" => {
            !args.is_empty()
                && args.iter().filter(|a| !a.text.starts_with('-')).all(|a| {
                    matches!(
                        a.text.as_str(),
                        "test"
                            | "build"
                            | "compile"
                            | "check"
                            | "verify"
                            | "validate"
                            | "package"
                            | "assemble"
                            | "clean"
                            | "lint"
                            | "compileJava"
                            | "compileTestJava"
                    )
                })
        }
        "dotnet" | "swift" => args
            .first()
            .is_some_and(|a| matches!(a.text.as_str(), "build" | "test" | "--version")),
        "cmake" => args
            .first()
            .is_some_and(|a| a.is("--build") || a.is("--version")),
        "deno" => args
            .first()
            .is_some_and(|a| matches!(a.text.as_str(), "test" | "check" | "lint" | "--version")),
        "node" | "rustc" | "rustup" | "gcc" | "clang" | "java" | "javac" | "ruby" | "perl"
        | "php" | "cc" | "c++" | "g++" | "kotlin" | "scala" | "elixir" | "ghc" | "zig" | "bash"
        | "sh" | "zsh" => {
            matches!(args, [v] if v.is("--version") || v.is("-v") || v.is("-V") || v.is("version"))
        }
        _ => false,
    }
}

/// Outputs that do not write a file: `/dev/null`, the standard streams.
fn is_harmless_sink(target: &Arg) -> bool {
    matches!(
        target.text.as_str(),
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) && !target.dynamic
}

/// `sed -n 5p`, `sed -n 1,20p file`: printing lines, nothing else.
fn sed_print_only(args: &[Arg]) -> bool {
    let [n, script, files @ ..] = args else {
        return false;
    };
    let lines = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '$');
    let print = script.text.strip_suffix('p').is_some_and(|range| {
        let mut parts = range.split(',');
        let ok = parts.next().is_some_and(lines) && parts.next().is_none_or(lines);
        ok && parts.next().is_none()
    });
    n.is("-n") && !script.dynamic && print && files.iter().all(|f| !f.text.starts_with('-'))
}

fn git_safe(inv: &Invocation) -> bool {
    let call = parse_git(&inv.argv);
    let Some(sub) = call.subcommand.and_then(Arg::known) else {
        return inv
            .args()
            .iter()
            .any(|a| a.is("--version") || a.is("--help"));
    };
    let args = call.args;
    let has = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a.is(n) || a.text.starts_with(&format!("{n}=")))
        })
    };
    if has(&["--output", "--ext-diff", "--open-files-in-pager", "--exec"])
        || args.iter().any(|a| a.text.starts_with("-O"))
    {
        return false;
    }
    let first = args.first().map(|a| a.text.as_str());
    let flags_only = |allowed: &[&str]| {
        args.iter().all(|a| {
            a.text.starts_with('-')
                && allowed
                    .iter()
                    .any(|f| a.text == *f || a.text.starts_with(&format!("{f}=")))
        })
    };
    match sub {
        "status" | "diff" | "log" | "show" | "blame" | "annotate" | "shortlog" | "describe"
        | "rev-parse" | "ls-files" | "ls-tree" | "cat-file" | "grep" | "rev-list"
        | "merge-base" | "name-rev" | "for-each-ref" | "show-ref" | "count-objects"
        | "check-ignore" | "check-attr" | "whatchanged" | "show-branch" | "version" | "help"
        | "diff-tree" | "diff-files" | "diff-index" | "range-diff" | "cherry" | "var" => true,
        "branch" => flags_only(&[
            "-a",
            "-r",
            "-v",
            "-vv",
            "-l",
            "--list",
            "--all",
            "--remotes",
            "--verbose",
            "--show-current",
            "--merged",
            "--no-merged",
            "--contains",
            "--no-contains",
            "--sort",
            "--format",
            "--color",
            "--no-color",
            "--column",
            "--no-column",
        ]),
        "tag" => args.is_empty() || matches!(first, Some("-l" | "--list")),
        "remote" => {
            args.is_empty() || matches!(first, Some("-v" | "--verbose" | "get-url" | "show"))
        }
        "stash" => matches!(first, Some("list" | "show")),
        "config" => matches!(
            first,
            Some("--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list")
        ),
        "reflog" => first.is_none_or(|f| f == "show" || f.starts_with('-')),
        "worktree" => first == Some("list"),
        "submodule" => first.is_none_or(|f| f == "status"),
        _ => false,
    }
}

/// `cargo build`, `cargo test`, `cargo +nightly clippy`: builds and checks, never `--config`.
fn cargo_safe(args: &[Arg]) -> bool {
    if args
        .iter()
        .any(|a| a.is("--config") || a.text.starts_with("--config=") || a.is("--fix"))
    {
        return false;
    }
    let mut rest = args.iter().skip_while(|a| {
        a.text.starts_with('+')
            || matches!(
                a.text.as_str(),
                "-q" | "--quiet"
                    | "-v"
                    | "-vv"
                    | "--verbose"
                    | "--locked"
                    | "--offline"
                    | "--frozen"
            )
    });
    matches!(
        rest.next().map(|a| a.text.as_str()),
        Some(
            "build"
                | "b"
                | "check"
                | "c"
                | "test"
                | "t"
                | "bench"
                | "clippy"
                | "doc"
                | "d"
                | "fmt"
                | "tree"
                | "metadata"
                | "nextest"
                | "version"
                | "--version"
                | "-V"
                | "search"
                | "locate-project"
                | "pkgid"
                | "verify-project"
                | "help"
                | "--help",
        )
    )
}

/// Script names that build, test or check: `build`, `test:unit`, `lint`, `typecheck`.
fn safe_script(name: &str) -> bool {
    let stem = name.split(':').next().unwrap_or(name);
    matches!(
        stem,
        "build"
            | "test"
            | "tests"
            | "lint"
            | "check"
            | "typecheck"
            | "type-check"
            | "types"
            | "tsc"
            | "compile"
            | "format"
            | "fmt"
            | "prettier"
            | "coverage"
            | "bench"
            | "e2e"
            | "unit"
            | "validate"
            | "verify"
    )
}

fn js_safe(tool: &str, args: &[Arg]) -> bool {
    let mut words = args
        .iter()
        .filter(|a| !a.text.starts_with('-'))
        .map(|a| a.text.as_str());
    let Some(first) = words.next() else {
        return args.iter().any(|a| a.is("--version") || a.is("-v"));
    };
    match first {
        "test" | "t" | "tst" => true,
        "run" | "run-script" => words.next().is_some_and(safe_script),
        "ls" | "list" | "outdated" | "why" | "explain" | "view" | "info" => true,
        script if tool != "npm" => safe_script(script),
        _ => false,
    }
}

fn make_safe(args: &[Arg]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if a.dynamic {
            return false;
        }
        if matches!(t, "-j" | "-l" | "-C") {
            i += 2;
            continue;
        }
        let ok = if t.starts_with('-') {
            !t.starts_with("-f")
                && !t.starts_with("--file")
                && !t.starts_with("--eval")
                && !t.starts_with("-E")
        } else if let Some((name, _)) = t.split_once('=') {
            !matches!(
                name,
                "SHELL" | "MAKEFLAGS" | "MAKE" | ".SHELLFLAGS" | "MAKESHELL"
            )
        } else {
            matches!(
                t,
                "all"
                    | "build"
                    | "test"
                    | "tests"
                    | "check"
                    | "lint"
                    | "fmt"
                    | "format"
                    | "clean"
                    | "doc"
                    | "docs"
                    | "bench"
                    | "debug"
                    | "release"
                    | "unit"
                    | "typecheck"
                    | "vet"
            )
        };
        if !ok {
            return false;
        }
        i += 1;
    }
    true
}
