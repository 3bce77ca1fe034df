//! JavaScript: npm/pnpm/yarn/bun scripts that build, test or check (and these tools run by
//! name: `yarn jest`, `pnpm vitest`), `npm pkg get`, and eslint, tsc, prettier, jest, vitest,
//! mocha (options from their `--help`). Not listed, so asked:
//! installs, `npm exec`/`npx`, `--prefix` elsewhere, eslint `--rulesdir`/`--plugin`/`-f`,
//! `--init`, prettier `--plugin`, mocha `--require`, jest `--clearCache`.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::{Judge, Program};
use Value::*;

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

/// Options of the package managers when running a script or listing.
const PACKAGE_MANAGER: &[Opt] = &[
    ("-s", Flag),
    ("--silent", Flag),
    ("-w", Literal),
    ("--workspace", Literal),
    ("--workspaces", Flag),
    ("--if-present", Flag),
    ("--json", Flag),
    ("--depth", Literal),
    ("--all", Flag),
    ("-a", Flag),
    ("--long", Flag),
    ("--parseable", Flag),
    ("-r", Flag),
    ("--recursive", Flag),
    ("--filter", Literal),
    ("--prefix", Name),
    ("-C", Name),
    ("--dir", Name),
    ("--cwd", Name),
    ("--loglevel", Literal),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--color", Literal),
    ("--no-color", Flag),
    ("--stream", Flag),
    ("--parallel", Flag),
    ("-v", Flag),
    ("--version", Flag),
];

/// Arguments passed through to a test, build or lint script: test names and a few switches
/// (the linters' and test runners' own: fix what can be fixed in the workspace, update
/// snapshots).
const PASSED: &[Opt] = &[
    ("--fix", Flag),
    ("--write", Flag),
    ("--check", Flag),
    ("-u", Flag),
    ("--updateSnapshot", Flag),
    ("--coverage", Flag),
    ("--verbose", Flag),
    ("--silent", Flag),
    ("--runInBand", Flag),
    ("-i", Flag),
    ("--ci", Flag),
    ("--passWithNoTests", Flag),
    ("--bail", Flag),
    ("--run", Flag),
    ("--watch", Literal),
    ("--watchAll", Literal),
    ("--no-coverage", Flag),
];

/// Options of an install from the lockfile that only change what it prints or skip work.
const LOCKFILE_INSTALL: &[&str] = &[
    "ci",
    "install",
    "i",
    "--frozen-lockfile",
    "--immutable",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    "--offline",
    "--ignore-scripts",
    "--silent",
    "--no-progress",
    "--production",
    "--prod",
];

fn package_manager(judge: &mut Judge, tool: &str, args: &[Arg]) -> bool {
    if crate::rules::lockfile_install(tool, args) {
        return args
            .iter()
            .all(|a| !a.dynamic && LOCKFILE_INSTALL.contains(&a.text.as_str()));
    }
    let (before, after) = match args.iter().position(|a| a.is("--")) {
        Some(d) => (&args[..d], &args[d + 1..]),
        None => (args, &[][..]),
    };
    // yarn, pnpm and bun hand the words after the script's name to the script; npm reads
    // them as its own options (`npm test --foo=x` sets its config `foo`).
    let style = if tool == "npm" {
        Style::Gnu
    } else {
        Style::Posix
    };
    let items = parse(before, &[PACKAGE_MANAGER], style);
    let mut operands: Vec<&Arg> = Vec::new();
    for item in &items {
        match item {
            Item::Option {
                value: Name,
                arg: Some(a),
                ..
            } => {
                if !judge.path(a, Name) {
                    return false;
                }
            }
            Item::Option { .. } => {}
            Item::Operand(a) if !a.dynamic => operands.push(a),
            _ => return false,
        }
    }
    let passed = Program {
        names: &[],
        options: &[PASSED],
        lead: &[],
        rest: Literal,
        style: Style::Gnu,
    };
    let words: Vec<&str> = operands.iter().map(|a| a.text.as_str()).collect();
    let (known, script_words) = match words.as_slice() {
        [] => (
            items.iter().any(|i| {
                matches!(
                    i,
                    Item::Option {
                        name: "-v" | "--version",
                        ..
                    }
                )
            }),
            0,
        ),
        ["test" | "t" | "tst", ..] => (true, 1),
        ["run" | "run-script", script, ..] => (safe_script(script), 2),
        // Listing what is installed, or why: package names.
        ["ls" | "list" | "outdated" | "why" | "explain", ..] => (true, 1),
        // `npm pkg get [FIELD...]` prints fields of package.json.
        ["pkg", "get", ..] if tool == "npm" => (true, 3),
        // yarn, pnpm and bun run an installed tool of the workspace by its name when no
        // script has it (`yarn jest`): judged as that tool is, with the words it is handed.
        [bin, ..] if tool != "npm" && tool_table(bin).is_some() => {
            let rest: Vec<Arg> = operands[1..].iter().map(|a| (*a).clone()).collect();
            return run_tool(judge, bin, &rest) == Some(true) && judge.program(after, &passed);
        }
        [script, ..] if tool != "npm" => (safe_script(script), 1),
        _ => (false, 0),
    };
    let handed: Vec<Arg> = operands
        .iter()
        .skip(script_words)
        .map(|a| (*a).clone())
        .collect();
    let handed_safe = tool == "npm" || judge.program(&handed, &passed);
    known && handed_safe && judge.program(after, &passed)
}

pub(super) const PROGRAMS: &[Program] = &[
    Program {
        names: &["eslint"],
        options: &[&[
            ("--ext", Literal),
            ("-c", Read),
            ("--config", Read),
            ("--fix", InPlace),
            ("--fix-dry-run", Flag),
            ("--fix-type", Literal),
            ("--max-warnings", Literal),
            ("-o", Write),
            ("--output-file", Write),
            ("--quiet", Flag),
            ("--cache", Flag),
            ("--cache-location", Write),
            ("--cache-strategy", Literal),
            ("--no-eslintrc", Flag),
            ("--no-config-lookup", Flag),
            ("--report-unused-disable-directives", Flag),
            ("--no-error-on-unmatched-pattern", Flag),
            ("--color", Flag),
            ("--no-color", Flag),
            ("--ignore-pattern", Literal),
            ("--no-ignore", Flag),
            ("--ignore-path", Read),
            ("--debug", Flag),
            ("-v", Flag),
            ("--version", Flag),
            ("--print-config", Read),
            ("--env", Literal),
            ("--global", Literal),
            ("--parser", Literal),
            ("--stats", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["tsc", "vue-tsc"],
        options: &[&[
            ("--noEmit", Flag),
            ("-p", Read),
            ("--project", Read),
            ("-b", Flag),
            ("--build", Flag),
            ("--pretty", Flag),
            ("--listFiles", Flag),
            ("--strict", Flag),
            ("--incremental", Flag),
            ("--outDir", Write),
            ("--declaration", Flag),
            ("--skipLibCheck", Flag),
            ("--target", Literal),
            ("--module", Literal),
            ("-v", Flag),
            ("--version", Flag),
            ("--showConfig", Flag),
            ("--extendedDiagnostics", Flag),
            ("--diagnostics", Flag),
            ("--traceResolution", Flag),
            ("--noEmitOnError", Flag),
            ("--emitDeclarationOnly", Flag),
            ("--jsx", Literal),
            ("--lib", Literal),
            ("--moduleResolution", Literal),
            ("--verbose", Flag),
            ("--dry", Flag),
            ("--force", Flag),
            ("--clean", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["prettier"],
        options: &[&[
            ("--check", Flag),
            ("-c", Flag),
            ("--list-different", Flag),
            ("-l", Flag),
            ("--write", InPlace),
            ("-w", InPlace),
            ("--config", Read),
            ("--no-config", Flag),
            ("--ignore-path", Read),
            ("--log-level", Literal),
            ("--cache", Flag),
            ("--no-cache", Flag),
            ("--cache-location", Write),
            ("--ignore-unknown", Flag),
            ("-u", Flag),
            ("--no-error-on-unmatched-pattern", Flag),
            ("--parser", Literal),
            ("--print-width", Literal),
            ("--tab-width", Literal),
            ("--use-tabs", Flag),
            ("--single-quote", Flag),
            ("--no-semi", Flag),
            ("--trailing-comma", Literal),
            ("--end-of-line", Literal),
            ("-v", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["jest"],
        options: &[&[
            ("--coverage", Flag),
            ("--ci", Flag),
            ("--runInBand", Flag),
            ("-i", Flag),
            ("--watchAll", Literal),
            ("--passWithNoTests", Flag),
            ("--silent", Flag),
            ("--verbose", Flag),
            ("-t", Literal),
            ("--testNamePattern", Literal),
            ("--bail", Optional),
            ("-b", Flag),
            ("--maxWorkers", Literal),
            ("-w", Literal),
            ("--config", Read),
            ("-c", Read),
            ("--outputFile", Write),
            ("--json", Flag),
            ("--testPathPattern", Literal),
            ("-u", Flag),
            ("--updateSnapshot", Flag),
            ("--detectOpenHandles", Flag),
            ("--forceExit", Flag),
            ("--no-cache", Flag),
            ("--listTests", Flag),
            ("--changedSince", Literal),
            ("-o", Flag),
            ("--onlyChanged", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Literal,
        style: Style::Gnu,
    },
    Program {
        names: &["vitest"],
        options: &[&[
            ("--run", Flag),
            ("--coverage", Flag),
            ("-t", Literal),
            ("--testNamePattern", Literal),
            ("--bail", Literal),
            ("--config", Read),
            ("-c", Read),
            ("--root", Name),
            ("-r", Name),
            ("--dir", Name),
            ("--silent", Flag),
            ("--passWithNoTests", Flag),
            ("--changed", Optional),
            ("-u", Flag),
            ("--update", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Literal,
        style: Style::Gnu,
    },
    Program {
        names: &["mocha"],
        options: &[&[
            ("--timeout", Literal),
            ("-t", Literal),
            ("--grep", Literal),
            ("-g", Literal),
            ("--recursive", Flag),
            ("--exit", Flag),
            ("--bail", Flag),
            ("-b", Flag),
            ("--spec", Read),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
];

/// The table of a JavaScript tool a package manager may run by name (`yarn jest`).
fn tool_table(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.names.contains(&name))
}

/// A JavaScript tool of [`PROGRAMS`] run with `args` (`vitest run` is vitest); `None` for
/// another program.
fn run_tool(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    let args = match args.first() {
        Some(a) if name == "vitest" && a.is("run") => &args[1..],
        _ => args,
    };
    Some(judge.program(args, tool_table(name)?))
}

/// JavaScript tools; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    match name {
        "npm" | "pnpm" | "yarn" | "bun" => Some(package_manager(judge, name, args)),
        // `npx jest`: the tool by its name (whether npx would fetch it instead is the
        // `fetched-code` rule's to say).
        "npx" | "bunx" => match args.split_first() {
            Some((tool, rest)) if !tool.dynamic && !tool.text.starts_with('-') => {
                run_tool(judge, &tool.text, rest)
            }
            _ => None,
        },
        _ => run_tool(judge, name, args),
    }
}
