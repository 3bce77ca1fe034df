//! Builds and tests: cargo, make, go, mvn/gradle, cmake, dotnet, and compilers' `--version`
//! (options from `cargo help`, GNU make's, go's and cmake's manuals). `cargo run` runs the
//! project's program, trusted as its tests are. Not listed, so asked: `cargo --config`, `-Z`,
//! `cargo install`, `--fix`, `doc --open`, `make -f`/`--eval`/variable overrides, `go test
//! -exec`/`-toolexec`, `-ldflags`/`-gcflags`, `go env -w`, `go mod tidy`/`edit`, cmake cache entries
//! that name a program.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::{Judge, Program};
use Value::*;

/// `cargo`'s own options, before the command.
const CARGO_GLOBAL: &[Opt] = &[
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("-vv", Flag),
    ("--verbose", Flag),
    ("--locked", Flag),
    ("--offline", Flag),
    ("--frozen", Flag),
    ("--color", Literal),
    ("-V", Flag),
    ("--version", Flag),
    ("--list", Flag),
    ("-h", Flag),
    ("--help", Flag),
];

/// Options shared by cargo's build commands.
const CARGO_COMPILE: &[Opt] = &[
    ("-p", Literal),
    ("--package", Literal),
    ("--workspace", Flag),
    ("--all", Flag),
    ("--exclude", Literal),
    ("--lib", Flag),
    ("--bins", Flag),
    ("--bin", Literal),
    ("--examples", Flag),
    ("--example", Literal),
    ("--tests", Flag),
    ("--test", Literal),
    ("--benches", Flag),
    ("--bench", Literal),
    ("--all-targets", Flag),
    ("-F", Literal),
    ("--features", Literal),
    ("--all-features", Flag),
    ("--no-default-features", Flag),
    ("-j", Literal),
    ("--jobs", Literal),
    ("-r", Flag),
    ("--release", Flag),
    ("--profile", Literal),
    ("--target", Literal),
    ("--target-dir", Write),
    ("--manifest-path", Read),
    ("--ignore-rust-version", Flag),
    ("--locked", Flag),
    ("--offline", Flag),
    ("--frozen", Flag),
    ("--message-format", Literal),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("-vv", Flag),
    ("--verbose", Flag),
    ("--color", Literal),
    ("--keep-going", Flag),
    ("--timings", Optional),
    ("--future-incompat-report", Flag),
    ("-h", Flag),
    ("--help", Flag),
];

/// What each cargo command takes beyond `CARGO_COMPILE`; its operands; what follows `--`.
const CARGO_COMMANDS: &[(&[&str], &[Opt], Value, Tail)] = &[
    (&["build", "b", "check", "c"], &[], Flag, Tail::None),
    // What `build` would download first, as Cargo.lock pins it (or resolves it, as `build`
    // does without one): no build script or code of a crate runs.
    (&["fetch"], &[], Flag, Tail::None),
    (
        &["test", "t", "bench"],
        &[
            ("--no-run", Flag),
            ("--no-fail-fast", Flag),
            ("--doc", Flag),
        ],
        Literal,
        Tail::Harness,
    ),
    (&["clippy"], &[("--no-deps", Flag)], Flag, Tail::Lints),
    // The project's own program, as trusted as its tests; its arguments judged as a script's.
    (&["run", "r"], &[], Flag, Tail::Program),
    (
        &["doc", "d"],
        &[("--no-deps", Flag), ("--document-private-items", Flag)],
        Flag,
        Tail::None,
    ),
    (
        &["fmt"],
        &[
            ("--all", Flag),
            ("--check", Flag),
            ("--message-format", Literal),
        ],
        Flag,
        Tail::Rustfmt,
    ),
    (
        &["tree"],
        &[
            ("-e", Literal),
            ("--edges", Literal),
            ("-i", Literal),
            ("--invert", Literal),
            ("--prefix", Literal),
            ("--no-dedupe", Flag),
            ("-d", Flag),
            ("--duplicates", Flag),
            ("--charset", Literal),
            ("-f", Literal),
            ("--format", Literal),
            ("--depth", Literal),
            ("--prune", Literal),
        ],
        Flag,
        Tail::None,
    ),
    (
        &["metadata"],
        &[
            ("--format-version", Literal),
            ("--no-deps", Flag),
            ("--filter-platform", Literal),
        ],
        Flag,
        Tail::None,
    ),
    (
        &["nextest"],
        &[
            ("-E", Literal),
            ("--filterset", Literal),
            ("--no-fail-fast", Flag),
            ("--test-threads", Literal),
            ("--retries", Literal),
            ("--no-capture", Flag),
            ("--run-ignored", Literal),
            ("--status-level", Literal),
            ("--final-status-level", Literal),
            ("--failure-output", Literal),
            ("--success-output", Literal),
            ("--hide-progress-bar", Flag),
        ],
        Literal,
        Tail::Harness,
    ),
    (
        &["locate-project", "pkgid", "verify-project", "version"],
        &[("--workspace", Flag), ("--plain", Flag)],
        Literal,
        Tail::None,
    ),
];

/// What may follow `--` on a cargo command line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    None,
    /// The test harness's options (`cargo test -- --nocapture`).
    Harness,
    /// Lint levels for clippy (`-- -D warnings`).
    Lints,
    /// rustfmt's check flags.
    Rustfmt,
    /// The arguments of the project's program (`cargo run -- input.txt`), judged as a
    /// workspace script's.
    Program,
}

const HARNESS: &[Opt] = &[
    ("--nocapture", Flag),
    ("--no-capture", Flag),
    ("--show-output", Flag),
    ("--test-threads", Literal),
    ("--ignored", Flag),
    ("--include-ignored", Flag),
    ("--exact", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--list", Flag),
    ("--skip", Literal),
    ("--color", Literal),
    ("--format", Literal),
    ("--test", Flag),
    ("--bench", Flag),
    ("--shuffle", Flag),
    ("--shuffle-seed", Literal),
    ("--report-time", Flag),
    ("--force-run-in-process", Flag),
];

const LINTS: &[Opt] = &[
    ("-D", Literal),
    ("--deny", Literal),
    ("-W", Literal),
    ("--warn", Literal),
    ("-A", Literal),
    ("--allow", Literal),
    ("-F", Literal),
    ("--forbid", Literal),
    ("--no-deps", Flag),
];

const RUSTFMT: &[Opt] = &[
    ("--check", Flag),
    ("--edition", Literal),
    ("-v", Flag),
    ("-q", Flag),
];

fn cargo(judge: &mut Judge, args: &[Arg]) -> bool {
    let args = match args.first() {
        // `+TOOLCHAIN`: a toolchain's name, never a path.
        Some(a) if a.text.starts_with('+') => {
            let name_only = a.text[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
            if a.dynamic || !name_only {
                return false;
            }
            &args[1..]
        }
        _ => args,
    };
    let items = parse(args, &[CARGO_GLOBAL], Style::Posix);
    let Some(pos) = items.iter().position(|i| matches!(i, Item::Operand(_))) else {
        return items.iter().all(|i| matches!(i, Item::Option { .. }));
    };
    if items[..pos]
        .iter()
        .any(|i| !matches!(i, Item::Option { .. }))
    {
        return false;
    }
    let Item::Operand(sub) = items[pos] else {
        return false;
    };
    let Some(&(_, own, operands, tail)) = CARGO_COMMANDS
        .iter()
        .find(|(names, ..)| !sub.dynamic && names.contains(&sub.text.as_str()))
    else {
        return false;
    };
    let at = args
        .iter()
        .position(|a| std::ptr::eq(a, sub))
        .map_or(args.len(), |p| p + 1);
    let mut rest = &args[at..];
    // `cargo nextest run|list`: never `self update` or `archive`.
    if sub.is("nextest") {
        match rest.first() {
            Some(a) if a.is("run") || a.is("r") || a.is("list") => rest = &rest[1..],
            _ => return false,
        }
    }
    let (before, after) = match rest.iter().position(|a| a.is("--")) {
        Some(d) => (&rest[..d], &rest[d + 1..]),
        None => (rest, &[][..]),
    };
    let program = Program {
        names: &[],
        options: &[],
        lead: &[],
        rest: operands,
        style: Style::Gnu,
    };
    let items = parse(before, &[CARGO_COMPILE, own], Style::Gnu);
    // `--target` names a triple, or a target spec file, whose `linker` cargo runs: a file
    // is judged as a read.
    let spec_files = items.iter().all(|i| match i {
        Item::Option {
            name: "--target",
            arg: Some(t),
            ..
        } if t.text.contains('/') || t.text.ends_with(".json") => judge.path(t, Read),
        _ => true,
    });
    let own_safe = spec_files && judge.items(&items, &program);
    let table = match tail {
        Tail::None => return after.is_empty() && own_safe,
        Tail::Harness => HARNESS,
        Tail::Lints => LINTS,
        Tail::Rustfmt => RUSTFMT,
        Tail::Program => return own_safe && super::scripts::script_args(judge, after),
    };
    let tail_program = Program {
        names: &[],
        options: &[],
        lead: &[],
        rest: if tail == Tail::Harness { Literal } else { Flag },
        style: Style::Gnu,
    };
    own_safe && judge.items(&parse(after, &[table], Style::Gnu), &tail_program)
}

/// Targets of a workspace's build file (make, rake, ninja) that build, test or check.
const BUILD_TARGETS: &[&str] = &[
    "all",
    "build",
    "test",
    "tests",
    "check",
    "lint",
    "fmt",
    "format",
    "clean",
    "doc",
    "docs",
    "bench",
    "debug",
    "release",
    "unit",
    "typecheck",
    "vet",
    "coverage",
    "compile",
    "install-deps",
    "spec",
    "default",
    "rubocop",
    "features",
];

/// Whether `name` is a target that builds, tests or checks; a namespaced one (`test:unit`,
/// rake's `spec:models`) by its first part.
pub(super) fn build_target(name: &str) -> bool {
    BUILD_TARGETS.contains(&name.split(':').next().unwrap_or(name))
}

const MAKE: &[Opt] = &[
    ("-j", Optional),
    ("--jobs", Optional),
    ("-l", Optional),
    ("--load-average", Optional),
    ("-k", Flag),
    ("--keep-going", Flag),
    ("-s", Flag),
    ("--silent", Flag),
    ("--quiet", Flag),
    ("-w", Flag),
    ("--print-directory", Flag),
    ("--no-print-directory", Flag),
    ("-C", Name),
    ("--directory", Name),
    ("-B", Flag),
    ("--always-make", Flag),
    ("-O", Optional),
    ("--output-sync", Optional),
    ("-r", Flag),
    ("--no-builtin-rules", Flag),
    ("-R", Flag),
    ("--no-builtin-variables", Flag),
    ("-S", Flag),
    ("--no-keep-going", Flag),
    ("--warn-undefined-variables", Flag),
    ("-q", Flag),
    ("--question", Flag),
    // Printing what would run, and the rules: the makefile is read (and its `$(shell ...)`
    // run) as for a build.
    ("-n", Flag),
    ("--dry-run", Flag),
    ("--just-print", Flag),
    ("--recon", Flag),
    ("-p", Flag),
    ("--print-data-base", Flag),
];

fn make(judge: &mut Judge, args: &[Arg]) -> bool {
    let items = parse(args, &[MAKE], Style::Gnu);
    items.iter().all(|item| match item {
        Item::Option {
            value: Name,
            arg: Some(a),
            ..
        } => judge.path(a, Name),
        Item::Option { .. } => true,
        // `VAR=value` overrides what the makefile runs (`CC=...`, `SHELL=...`).
        Item::Operand(a) => !a.dynamic && build_target(&a.text),
        Item::Unknown(_) | Item::Missing(_) => false,
    })
}

const GO_BUILD: &[Opt] = &[
    ("-v", Flag),
    ("-x", Flag),
    ("-n", Flag),
    ("-a", Flag),
    ("-race", Flag),
    ("-msan", Flag),
    ("-asan", Flag),
    ("-cover", Flag),
    ("-covermode", Literal),
    ("-coverpkg", Literal),
    ("-p", Literal),
    ("-tags", Literal),
    ("-trimpath", Flag),
    ("-mod", Literal),
    ("-modcacherw", Flag),
    ("-buildvcs", Literal),
    ("-work", Flag),
    ("-o", Write),
    ("-json", Flag),
    ("-run", Literal),
    ("-skip", Literal),
    ("-bench", Literal),
    ("-benchtime", Literal),
    ("-benchmem", Flag),
    ("-count", Literal),
    ("-cpu", Literal),
    ("-failfast", Flag),
    ("-list", Literal),
    ("-parallel", Literal),
    ("-short", Flag),
    ("-timeout", Literal),
    ("-shuffle", Literal),
    ("-coverprofile", Write),
    ("-vet", Literal),
    ("-fullpath", Flag),
    ("-m", Flag),
    ("-f", Literal),
    ("-e", Flag),
    ("-deps", Flag),
    ("-test", Flag),
    ("-find", Flag),
    ("-compiled", Flag),
    ("-export", Flag),
    ("-all", Flag),
    ("-u", Flag),
    ("-versions", Flag),
    ("-retracted", Flag),
    ("-l", Flag),
    ("-d", Flag),
    ("-s", Flag),
    ("-h", Flag),
    ("-help", Flag),
];

fn go(judge: &mut Judge, args: &[Arg]) -> bool {
    let Some(sub) = args.first().filter(|a| !a.dynamic) else {
        return false;
    };
    // The module commands that fetch only what go.mod and go.sum declare, as `go build` does,
    // or print; never `tidy` (it picks new dependencies for imports go.mod lacks), `edit` (a
    // `-replace` may point anywhere) or `vendor`.
    if sub.is("mod") {
        return match args.get(1) {
            Some(m)
                if ["download", "verify", "graph", "why"]
                    .iter()
                    .any(|c| m.is(c)) =>
            {
                args[2..].iter().all(|a| {
                    !a.dynamic
                        && (!a.text.starts_with('-')
                            || ["-v", "-x", "-m", "-e", "-json", "-vendor"]
                                .iter()
                                .any(|o| a.is(o)))
                })
            }
            _ => false,
        };
    }
    if sub.is("run") {
        return go_run(judge, &args[1..]);
    }
    if !matches!(
        sub.text.as_str(),
        "test" | "build" | "vet" | "fmt" | "version" | "list" | "doc"
    ) {
        // `go env` prints; `go env -w` writes the config.
        return sub.is("env") && args[1..].iter().all(|a| !a.text.starts_with('-'));
    }
    let program = Program {
        names: &[],
        options: &[GO_BUILD],
        lead: &[],
        rest: Literal,
        style: Style::Single,
    };
    judge.program(&args[1..], &program)
}

/// `go run [build flags] PACKAGE [ARGS]`: the workspace's own program (a directory of it, its
/// `.go` files, or a package its `go.mod` requires), as `cargo run` is; its arguments judged as
/// a script's. A `PACKAGE@version` fetches what the workspace does not pin, and `-exec` runs
/// another program: neither is listed.
fn go_run(judge: &mut Judge, args: &[Arg]) -> bool {
    // go's flags stop at the package; the words after it are the program's.
    let mut at = 0;
    while let Some(a) = args.get(at).filter(|a| a.text.starts_with('-')) {
        let name = a.text.trim_start_matches('-');
        let name = name.split('=').next().unwrap_or(name);
        let Some((_, value)) = GO_BUILD.iter().find(|(n, _)| n[1..] == *name) else {
            return false;
        };
        at += if value.takes_value() && !a.text.contains('=') {
            2
        } else {
            1
        };
    }
    let files = args[at.min(args.len())..]
        .iter()
        .take_while(|a| a.text.ends_with(".go"))
        .count();
    let end = (at + files.max(1)).min(args.len());
    if at >= end {
        return false;
    }
    let program = Program {
        names: &[],
        options: &[GO_BUILD],
        lead: &[],
        rest: Read,
        style: Style::Single,
    };
    let pinned = args[at..end]
        .iter()
        .all(|p| !p.dynamic && !p.glob && !p.text.contains('@'));
    // A package by its import path is one `go.mod` requires; one by its path is read as code.
    let paths: Vec<Arg> = args[at..end]
        .iter()
        .filter(|p| p.text.starts_with(['.', '/']) || p.text.ends_with(".go"))
        .cloned()
        .collect();
    pinned
        && judge.program(&args[..at], &program)
        && paths.iter().all(|p| judge.path(p, Read))
        && super::scripts::script_args(judge, &args[end..])
}

/// `cmake -S SRC -B BUILD`, `cmake ..`: configuring a build of the workspace runs its
/// `CMakeLists.txt`, the project's code, as a build does. Cache entries only from a list that
/// names no program (`CMAKE_C_COMPILER`, `CMAKE_*_LAUNCHER` and toolchain files run one).
pub(super) fn cmake_configure(judge: &mut Judge, args: &[Arg]) -> bool {
    const ENTRIES: &[&str] = &[
        "CMAKE_BUILD_TYPE",
        "CMAKE_EXPORT_COMPILE_COMMANDS",
        "BUILD_TESTING",
        "BUILD_SHARED_LIBS",
        "CMAKE_COLOR_DIAGNOSTICS",
    ];
    let mut dirs = 0;
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a.dynamic || a.glob {
            return false;
        }
        let text = a.text.as_str();
        let ok = match text {
            "-S" | "-B" => words.next().is_some_and(|d| {
                dirs += 1;
                !d.dynamic && !d.glob && judge.path(d, Name)
            }),
            "-G" => words.next().is_some_and(|g| !g.dynamic),
            "--fresh" | "-Wno-dev" | "-Wdev" => true,
            _ if text.starts_with("-D") => text[2..]
                .split_once('=')
                .is_some_and(|(name, _)| ENTRIES.contains(&name.split(':').next().unwrap_or(name))),
            _ if text.starts_with("-S") || text.starts_with("-B") => {
                dirs += 1;
                judge.path(
                    &Arg {
                        text: text[2..].to_owned(),
                        ..a.clone()
                    },
                    Name,
                )
            }
            _ if text.starts_with('-') => false,
            _ => {
                dirs += 1;
                judge.path(a, Name)
            }
        };
        if !ok {
            return false;
        }
    }
    dirs > 0
}

const JVM_TASKS: &[&str] = &[
    "test",
    "build",
    "compile",
    "check",
    "verify",
    "validate",
    "package",
    "assemble",
    "clean",
    "lint",
    "compileJava",
    "compileTestJava",
    "dependencies",
    "tasks",
    "projects",
    // Maven's `install` copies the artifacts into its own cache (`~/.m2`), as builds fill
    // theirs.
    "install",
];

/// Maven plugin goals that only print what the build is made of.
const JVM_GOALS: &[&str] = &["dependency:tree", "dependency:list", "help:effective-pom"];

/// System properties (`-DNAME[=VALUE]`) a JVM build may be run with: skipping or choosing
/// tests and checks.
const JVM_PROPERTIES: &[&str] = &[
    "skipTests",
    "test",
    "it.test",
    "skipITs",
    "maven.test.skip",
    "maven.javadoc.skip",
    "maven.source.skip",
    "checkstyle.skip",
    "spotless.check.skip",
    "jacoco.skip",
    "gpg.skip",
    "enforcer.skip",
    "failIfNoTests",
    "surefire.failIfNoSpecifiedTests",
];

/// `mvn` / `gradle` and their wrappers: tasks from the list, a few flags, properties from the
/// list, `--tests PATTERN` and `-x TASK` (gradle), `-pl MODULES` (maven).
fn jvm(args: &[Arg]) -> bool {
    const FLAGS: &[&str] = &[
        "-q",
        "--quiet",
        "-B",
        "--batch-mode",
        "--offline",
        "-o",
        "--info",
        "--stacktrace",
        "-am",
        "--also-make",
        "--no-daemon",
        "--console=plain",
        "--parallel",
        "--continue",
        "--rerun-tasks",
    ];
    let mut words = args.iter();
    let mut any_task = false;
    while let Some(a) = words.next() {
        if a.dynamic {
            return false;
        }
        let t = a.text.as_str();
        let property = |p: &str| JVM_PROPERTIES.contains(&p.split_once('=').map_or(p, |(n, _)| n));
        // A task of one project (`:app:test`) is that task.
        let task = t.rsplit(':').next().unwrap_or(t);
        let ok = if JVM_TASKS.contains(&task) || JVM_GOALS.contains(&t) {
            any_task = true;
            true
        } else if FLAGS.contains(&t) {
            true
        } else if let Some(p) = t.strip_prefix("-D").filter(|p| !p.is_empty()) {
            property(p)
        } else if t.starts_with("--tests=") {
            true
        } else if matches!(
            t,
            "--tests" | "-x" | "--exclude-task" | "-pl" | "--projects"
        ) {
            words.next().is_some_and(|v| !v.dynamic)
        } else {
            false
        };
        if !ok {
            return false;
        }
    }
    any_task
}

/// `gofmt`: lists, shows or rewrites (`-w`) the Go files it is given.
const GOFMT: Program = Program {
    names: &["gofmt"],
    options: &[&[
        ("-l", Flag),
        ("-d", Flag),
        ("-s", Flag),
        ("-e", Flag),
        ("-w", InPlace),
        ("-r", Literal),
    ]],
    lead: &[],
    rest: Read,
    style: Style::Single,
};

/// Formatters of other toolchains: each shows, checks or rewrites the files it is given.
const FORMATTERS: &[Program] = &[
    // `rustfmt` rewrites its operands unless told to check or print.
    Program {
        names: &["rustfmt"],
        options: &[&[
            ("--check", Flag),
            ("--emit", Literal),
            ("--backup", Flag),
            ("--config-path", Read),
            ("--edition", Literal),
            ("--style-edition", Literal),
            ("--color", Literal),
            ("--config", Literal),
            ("-l", Flag),
            ("--files-with-diff", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-V", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Write,
        style: Style::Gnu,
    },
    // `clang-format` prints the formatted files unless `-i`.
    Program {
        names: &["clang-format"],
        options: &[&[
            ("-i", InPlace),
            ("-n", Flag),
            ("-dry-run", Flag),
            ("-Werror", Flag),
            ("-style", Literal),
            ("-fallback-style", Literal),
            ("-assume-filename", Literal),
            ("-lines", Literal),
            ("-offset", Literal),
            ("-length", Literal),
            ("-sort-includes", Flag),
            ("-verbose", Flag),
            ("-version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Single,
    },
    // `shfmt` prints the formatted scripts unless `-w`.
    Program {
        names: &["shfmt"],
        options: &[&[
            ("-w", InPlace),
            ("-write", InPlace),
            ("-l", Flag),
            ("-list", Flag),
            ("-d", Flag),
            ("-diff", Flag),
            ("-s", Flag),
            ("-simplify", Flag),
            ("-i", Literal),
            ("-indent", Literal),
            ("-ln", Literal),
            ("-language-dialect", Literal),
            ("-bn", Flag),
            ("-ci", Flag),
            ("-sr", Flag),
            ("-kp", Flag),
            ("-fn", Flag),
            ("-mn", Flag),
            ("-p", Flag),
            ("-version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Single,
    },
];

/// Builds and tests; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    Some(match name {
        "cargo" => cargo(judge, args),
        "make" | "gmake" => make(judge, args),
        "go" => go(judge, args),
        "mvn" | "gradle" | "gradlew" | "mvnw" => jvm(args),
        "gofmt" => judge.program(args, &GOFMT),
        _ => judge.program(args, FORMATTERS.iter().find(|p| p.names.contains(&name))?),
    })
}
