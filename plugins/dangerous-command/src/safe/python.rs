//! Python's test runners and linters: pytest (also as `python -m pytest`), unittest, mypy,
//! flake8, pylint, ruff, black, isort (options from their `--help`). Not listed, so asked:
//! `pytest -p` (loads a plugin), `--basetemp` (deletes a directory), `-o`/`--override-ini`,
//! `--pdb`; `pylint --load-plugins`/`--init-hook`/`--output-format`; `mypy --install-types`.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::{Judge, Program};
use Value::*;

/// pytest, also run as `python -m pytest`.
const PYTEST: Program = Program {
    names: &["pytest", "py.test"],
    options: &[&[
        ("-q", Flag),
        ("--quiet", Flag),
        ("-v", Flag),
        ("-vv", Flag),
        ("--verbose", Flag),
        ("-x", Flag),
        ("--exitfirst", Flag),
        ("--maxfail", Literal),
        ("-k", Literal),
        ("-m", Literal),
        ("-s", Flag),
        ("--capture", Literal),
        ("-l", Flag),
        ("--showlocals", Flag),
        ("--tb", Literal),
        ("-r", Optional),
        ("--lf", Flag),
        ("--last-failed", Flag),
        ("--ff", Flag),
        ("--failed-first", Flag),
        ("--nf", Flag),
        ("--new-first", Flag),
        ("--sw", Flag),
        ("--stepwise", Flag),
        ("--stepwise-skip", Flag),
        ("--durations", Literal),
        ("--durations-min", Literal),
        ("--co", Flag),
        ("--collect-only", Flag),
        ("--no-header", Flag),
        ("--no-summary", Flag),
        ("--disable-warnings", Flag),
        ("--strict-markers", Flag),
        ("--strict-config", Flag),
        ("--runxfail", Flag),
        ("--color", Literal),
        ("--code-highlight", Literal),
        ("--junitxml", Write),
        ("--junit-xml", Write),
        ("-c", Read),
        ("--config-file", Read),
        ("--rootdir", Name),
        ("--confcutdir", Name),
        ("--import-mode", Literal),
        ("--doctest-modules", Flag),
        ("--setup-show", Flag),
        ("--setup-plan", Flag),
        ("--fixtures", Flag),
        ("--markers", Flag),
        ("--log-level", Literal),
        ("--log-cli-level", Literal),
        ("--timeout", Literal),
        ("-n", Literal),
        ("--numprocesses", Literal),
        ("--cov", Optional),
        ("--cov-report", Literal),
        ("--cov-fail-under", Literal),
        ("--no-cov", Flag),
        ("--ignore", Name),
        ("--ignore-glob", Literal),
        ("--deselect", Literal),
        ("--version", Flag),
        ("-V", Flag),
        ("-h", Flag),
        ("--help", Flag),
    ]],
    lead: &[],
    rest: Read,
    style: Style::Gnu,
};

/// `-v`, `--verbose`, `--version`: what many of these tools share.
const VERBOSITY: &[Opt] = &[("-v", Flag), ("--verbose", Flag), ("--version", Flag)];

pub(super) const PROGRAMS: &[Program] = &[
    PYTEST,
    Program {
        names: &["mypy", "dmypy"],
        options: &[&[
            ("--strict", Flag),
            ("--ignore-missing-imports", Flag),
            ("--show-error-codes", Flag),
            ("--hide-error-codes", Flag),
            ("--pretty", Flag),
            ("--no-error-summary", Flag),
            ("--config-file", Read),
            ("--python-version", Literal),
            ("--follow-imports", Literal),
            ("--check-untyped-defs", Flag),
            ("--disallow-untyped-defs", Flag),
            ("--warn-unused-ignores", Flag),
            ("--no-incremental", Flag),
            ("--explicit-package-bases", Flag),
            ("--namespace-packages", Flag),
            ("--exclude", Literal),
            ("-p", Literal),
            ("--package", Literal),
            ("-m", Literal),
            ("--module", Literal),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-V", Flag),
            ("--version", Flag),
            ("--no-color-output", Flag),
            ("--show-column-numbers", Flag),
            ("--warn-return-any", Flag),
            ("--no-implicit-optional", Flag),
            ("--junit-xml", Write),
            ("--cache-dir", Write),
            ("--no-site-packages", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["flake8", "pyflakes", "pycodestyle"],
        options: &[&[
            ("--max-line-length", Literal),
            ("--max-complexity", Literal),
            ("--select", Literal),
            ("--ignore", Literal),
            ("--extend-ignore", Literal),
            ("--extend-select", Literal),
            ("--exclude", Literal),
            ("--extend-exclude", Literal),
            ("--count", Flag),
            ("--statistics", Flag),
            ("--show-source", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("--output-file", Write),
            ("--config", Read),
            ("--append-config", Read),
            ("--isolated", Flag),
            ("--exit-zero", Flag),
            ("-j", Literal),
            ("--jobs", Literal),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["pylint"],
        options: &[
            &[
                ("--disable", Literal),
                ("-d", Literal),
                ("--enable", Literal),
                ("-e", Literal),
                ("-j", Literal),
                ("--jobs", Literal),
                ("--rcfile", Read),
                ("--output", Write),
                ("--recursive", Literal),
                ("--score", Literal),
                ("-s", Literal),
                ("--reports", Literal),
                ("-r", Literal),
                ("-E", Flag),
                ("--errors-only", Flag),
                ("--exit-zero", Flag),
                ("--ignore", Literal),
                ("--ignore-paths", Literal),
                ("--ignore-patterns", Literal),
                ("--max-line-length", Literal),
                ("--fail-under", Literal),
            ],
            VERBOSITY,
        ],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    // pyright's `--pythonpath` runs the interpreter it names, and `--watch` never ends.
    Program {
        names: &["pyright", "basedpyright"],
        options: &[
            &[
                ("-p", Read),
                ("--project", Read),
                ("--outputjson", Flag),
                ("--level", Literal),
                ("--pythonversion", Literal),
                ("--pythonplatform", Literal),
                ("--stats", Flag),
                ("--warnings", Flag),
                ("--threads", Optional),
                ("--skipunannotated", Flag),
            ],
            VERBOSITY,
        ],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["bandit"],
        options: &[
            &[
                ("-r", Recurse),
                ("--recursive", Recurse),
                ("-l", Flag),
                ("-ll", Flag),
                ("-lll", Flag),
                ("-i", Flag),
                ("-ii", Flag),
                ("-iii", Flag),
                ("--severity-level", Literal),
                ("--confidence-level", Literal),
                ("-f", Literal),
                ("--format", Literal),
                ("-o", Write),
                ("--output", Write),
                ("-q", Flag),
                ("--quiet", Flag),
                ("-s", Literal),
                ("--skip", Literal),
                ("-t", Literal),
                ("--tests", Literal),
                ("-x", Literal),
                ("--exclude", Literal),
                ("-c", Read),
                ("--configfile", Read),
                ("-n", Literal),
                ("--number", Literal),
            ],
            VERBOSITY,
        ],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    // `autopep8` and `yapf` print the formatted files unless told to rewrite them in place.
    Program {
        names: &["autopep8", "yapf"],
        options: &[
            &[
                ("-i", InPlace),
                ("--in-place", InPlace),
                ("-r", Recurse),
                ("--recursive", Recurse),
                ("-d", Flag),
                ("--diff", Flag),
                ("-a", Flag),
                ("--aggressive", Flag),
                ("--max-line-length", Literal),
                ("--select", Literal),
                ("--ignore", Literal),
                ("--style", Literal),
                ("-e", Literal),
                ("--exclude", Literal),
                ("-p", Flag),
                ("--parallel", Flag),
                ("-q", Flag),
                ("--quiet", Flag),
            ],
            VERBOSITY,
        ],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["black", "isort"],
        options: &[&[
            ("--check", Flag),
            ("--check-only", Flag),
            ("-c", Flag),
            ("--diff", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-l", Literal),
            ("--line-length", Literal),
            ("-t", Literal),
            ("--target-version", Literal),
            ("--config", Read),
            ("--settings-path", Read),
            ("--exclude", Literal),
            ("--extend-exclude", Literal),
            ("--include", Literal),
            ("--color", Flag),
            ("--no-color", Flag),
            ("--profile", Literal),
            ("--fast", Flag),
            ("--skip-string-normalization", Flag),
            ("-S", Flag),
            ("--preview", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        // They rewrite their operands unless told to check.
        rest: Write,
        style: Style::Gnu,
    },
];

/// `ruff check` / `ruff format` options.
const RUFF: Program = Program {
    names: &["ruff"],
    options: &[&[
        ("--select", Literal),
        ("--ignore", Literal),
        ("--extend-select", Literal),
        ("--extend-ignore", Literal),
        ("--output-format", Literal),
        ("-o", Write),
        ("--output-file", Write),
        ("--config", Literal),
        ("--no-cache", Flag),
        ("--cache-dir", Write),
        ("--statistics", Flag),
        ("-q", Flag),
        ("--quiet", Flag),
        ("-v", Flag),
        ("--verbose", Flag),
        ("--diff", Flag),
        ("--check", Flag),
        ("--show-fixes", Flag),
        ("--exit-zero", Flag),
        ("--target-version", Literal),
        ("--line-length", Literal),
        ("--fix", Flag),
        ("--no-fix", Flag),
        ("--unsafe-fixes", Flag),
        ("-e", Flag),
        ("--exit-non-zero-on-fix", Flag),
        ("--exclude", Literal),
        ("--extend-exclude", Literal),
        ("--preview", Flag),
        ("--no-preview", Flag),
    ]],
    lead: &[],
    // `ruff format` and `--fix` rewrite their operands.
    rest: Write,
    style: Style::Gnu,
};

/// `pip list` / `show` / `freeze` / `check`: reading what is installed.
const PIP_READ: Program = Program {
    names: &["pip", "pip3"],
    options: &[&[
        ("--format", Literal),
        ("-o", Flag),
        ("--outdated", Flag),
        ("-u", Flag),
        ("--uptodate", Flag),
        ("-l", Flag),
        ("--local", Flag),
        ("--user", Flag),
        ("--not-required", Flag),
        ("-v", Flag),
        ("--verbose", Flag),
        ("-f", Flag),
        ("--files", Flag),
        ("--all", Flag),
        ("-e", Flag),
        ("--editable", Flag),
        ("--exclude-editable", Flag),
        ("-q", Flag),
        ("--quiet", Flag),
        ("--disable-pip-version-check", Flag),
        ("--no-color", Flag),
    ]],
    lead: &[],
    rest: Literal,
    style: Style::Gnu,
};

fn pip(judge: &mut Judge, args: &[Arg]) -> bool {
    match args.first() {
        Some(c) if ["list", "show", "freeze", "check"].iter().any(|w| c.is(w)) => {
            judge.program(&args[1..], &PIP_READ)
        }
        Some(v) => args.len() == 1 && (v.is("--version") || v.is("-V")),
        None => false,
    }
}

/// Modules of the standard library `python -m` runs that only read and write files they are
/// given, or run the workspace's tests: `json.tool` (a file in, a file out), `venv` (a
/// directory made; never `--clear`, which empties one, nor `--upgrade-deps`, which downloads),
/// `unittest` (the tests of a start directory in the workspace, by name or pattern).
const MODULES: &[Program] = &[
    Program {
        names: &["unittest"],
        options: &[
            &[
                ("-q", Flag),
                ("--quiet", Flag),
                ("-f", Flag),
                ("--failfast", Flag),
                ("-b", Flag),
                ("--buffer", Flag),
                ("-c", Flag),
                ("--catch", Flag),
                ("--locals", Flag),
                ("--durations", Literal),
                ("-k", Literal),
                ("-s", Read),
                ("--start-directory", Read),
                ("-p", Literal),
                ("--pattern", Literal),
                ("-t", Read),
                ("--top-level-directory", Read),
            ],
            VERBOSITY,
        ],
        lead: &[],
        // `discover`, test modules, classes and methods by their dotted names.
        rest: Literal,
        style: Style::Gnu,
    },
    Program {
        names: &["json.tool"],
        options: &[&[
            ("--sort-keys", Flag),
            ("--indent", Literal),
            ("--tab", Flag),
            ("--compact", Flag),
            ("--no-ensure-ascii", Flag),
            ("--json-lines", Flag),
        ]],
        lead: &[Read, Write],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["venv"],
        options: &[&[
            ("--system-site-packages", Flag),
            ("--symlinks", Flag),
            ("--copies", Flag),
            ("--without-pip", Flag),
            ("--prompt", Literal),
        ]],
        lead: &[],
        rest: Write,
        style: Style::Gnu,
    },
];

/// coverage.py's `run` options (`coverage help run`): what is measured and where it is kept.
const COVERAGE_RUN: Program = Program {
    names: &[],
    options: &[&[
        ("-a", Flag),
        ("--append", Flag),
        ("--branch", Flag),
        ("--concurrency", Literal),
        ("--context", Literal),
        ("--data-file", Write),
        ("--include", Literal),
        ("--omit", Literal),
        ("--source", Literal),
        ("-p", Flag),
        ("--parallel-mode", Flag),
        ("--rcfile", Read),
        ("--timid", Flag),
    ]],
    lead: &[],
    rest: Flag,
    style: Style::Gnu,
};

/// coverage.py's reports (`report`, `html`, `xml`, `json`, `lcov`), `combine` and `erase`:
/// the data file read, a report written.
const COVERAGE_REPORT: Program = Program {
    names: &[],
    options: &[&[
        ("-m", Flag),
        ("--show-missing", Flag),
        ("--skip-covered", Flag),
        ("--skip-empty", Flag),
        ("--fail-under", Literal),
        ("--precision", Literal),
        ("--format", Literal),
        ("--sort", Literal),
        ("-i", Flag),
        ("--ignore-errors", Flag),
        ("--include", Literal),
        ("--omit", Literal),
        ("--data-file", Read),
        ("--rcfile", Read),
        ("-d", Write),
        ("--directory", Write),
        ("-o", Write),
        ("-q", Flag),
        ("--quiet", Flag),
        ("--pretty-print", Flag),
        ("--title", Literal),
        ("-a", Flag),
        ("--append", Flag),
        ("--keep", Flag),
    ]],
    // The source files reported on, or the data files combined.
    lead: &[],
    rest: Read,
    style: Style::Gnu,
};

/// `coverage run [OPTIONS] (-m MODULE | SCRIPT) ARGS`: the module or script judged as `python`
/// running it is; the reports and data commands by their options.
fn coverage(judge: &mut Judge, args: &[Arg]) -> bool {
    let Some((sub, rest)) = args.split_first().filter(|(s, _)| !s.dynamic) else {
        return false;
    };
    match sub.text.as_str() {
        "run" => {
            let at = rest
                .iter()
                .position(|a| a.is("-m") || !a.text.starts_with('-'))
                .unwrap_or(rest.len());
            at < rest.len()
                && judge.program(&rest[..at], &COVERAGE_RUN)
                && if rest[at].is("-m") {
                    super::python::judge(judge, "python", &rest[at..]) == Some(true)
                } else {
                    super::scripts::judge(judge, "python", &rest[at..]) == Some(true)
                }
        }
        "report" | "html" | "xml" | "json" | "lcov" | "combine" | "erase" => {
            judge.program(rest, &COVERAGE_REPORT)
        }
        _ => false,
    }
}

/// Modules `python -m` runs that are one of the programs above (or of the standard library).
fn module_program(module: &str) -> Option<&'static Program> {
    PROGRAMS
        .iter()
        .chain(MODULES)
        .find(|p| p.names.contains(&module))
}

/// `pytest --cov-report=KIND[:DEST]`: a report written to DEST, which must be in the workspace.
fn coverage_reports(judge: &mut Judge, args: &[Arg]) -> bool {
    let items = parse(args, PYTEST.options, Style::Gnu);
    items.iter().all(|i| match i {
        Item::Option {
            name: "--cov-report",
            arg: Some(report),
            ..
        } => match report.text.split_once(':') {
            Some((_, dest)) => judge.path(
                &Arg {
                    text: dest.to_owned(),
                    ..report.clone()
                },
                Write,
            ),
            None => !report.dynamic,
        },
        _ => true,
    })
}

/// Python's test runners and linters; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    if let Some(program) = PROGRAMS.iter().find(|p| p.names.contains(&name)) {
        let reports = !program.names.contains(&"pytest") || coverage_reports(judge, args);
        return Some(reports && judge.program(args, program));
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match stem {
        "pip" => Some(pip(judge, args)),
        "coverage" => Some(coverage(judge, args)),
        "ruff" => Some(
            args.first()
                .is_some_and(|a| a.is("check") || a.is("format"))
                && judge.program(&args[1..], &RUFF)
                || matches!(args, [v] if v.is("--version")),
        ),
        "python" => {
            let [m, module, rest @ ..] = args else {
                return None;
            };
            if !m.is("-m") || module.dynamic {
                return None;
            }
            if module.is("pip") {
                return Some(pip(judge, rest));
            }
            let program = module_program(&module.text)?;
            let reports = !program.names.contains(&"pytest") || coverage_reports(judge, rest);
            Some(reports && judge.program(rest, program))
        }
        _ => None,
    }
}
