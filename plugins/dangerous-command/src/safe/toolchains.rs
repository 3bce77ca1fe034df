//! The toolchains of other ecosystems, by their sub-commands that build, test, lint or format
//! the workspace, or print what it is made of (tox, nox, Hatch, Poetry, uv, PDM, Rake, RSpec,
//! RuboCop, Mix, Zig, Meson, Ninja, CTest, `cmake --build`, .NET, Swift, golangci-lint,
//! staticcheck, shellcheck, sbt, Leiningen, Cabal, Stack, Dune, rebar3, Bazel, Buck2, Pants, PHPUnit,
//! Composer, Deno, Rails, pre-commit; the linters of Dockerfiles, CI workflows, spelling, Markdown,
//! Helm charts and Terraform files; options from each one's `--help` and manual), and the read-only listings
//! of Docker and Podman (`ps`, `images`). These run the workspace's own
//! code and fetch what its manifest or lockfile declares, as `cargo test` does (`uv sync`,
//! `dotnet restore`, `swift build` do what the build does first). Not listed, so asked:
//! installing or adding what the workspace does not declare (`poetry add`, `bundle install`,
//! `mix deps.get`, `uv tool`, `uvx`), options that load code or configuration from elsewhere
//! (`rspec -r`, `rubocop --require`, `rake -e`, `dotnet -p:Prop=..`, `meson --native-file`,
//! `-D` settings of a compiler), publishing, and sub-commands that reach a network service.

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};

use super::build::{build_target, cmake_configure};
use super::{Judge, Program};
use Value::*;

/// What a sub-command's operands are.
#[derive(Clone, Copy)]
enum Operands {
    /// Each is judged as this kind of value (test names, files read or rewritten).
    Of(Value),
    /// Targets of the workspace's build file, by name (`rake test`, `ninja all`).
    Targets,
}

/// A sub-command (or what the program does alone), with its harmless options.
struct Sub {
    names: &'static [&'static str],
    options: &'static [Opt],
    rest: Operands,
}

/// A toolchain: options it takes anywhere, its sub-commands, what it does alone (`tox`,
/// `rspec`), and whether words after `--` are handed to the workspace's own commands (tox's
/// and nox's `posargs`; only plain words are, no options).
struct Toolchain {
    names: &'static [&'static str],
    global: &'static [Opt],
    commands: &'static [Sub],
    bare: Option<Sub>,
    tail: bool,
    style: Style,
}

const QUIET_LOUD: &[Opt] = &[
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("-vv", Flag),
    ("--verbose", Flag),
];

const TOX: &[Opt] = &[
    ("-e", Literal),
    ("-m", Literal),
    ("-f", Literal),
    ("-p", Optional),
    ("--parallel", Optional),
    ("-r", Flag),
    ("--recreate", Flag),
    ("--skip-missing-interpreters", Optional),
    ("--develop", Flag),
    ("--no-recreate-pkg", Flag),
    ("--skip-pkg-install", Flag),
    ("--notest", Flag),
    ("-c", Read),
    ("--conf", Read),
    ("--colored", Literal),
    ("--parallel-no-spinner", Flag),
];

const NOX: &[Opt] = &[
    ("-s", Literal),
    ("-e", Literal),
    ("--session", Literal),
    ("--sessions", Literal),
    ("-k", Literal),
    ("-t", Literal),
    ("--tags", Literal),
    ("-p", Literal),
    ("--python", Literal),
    ("-r", Flag),
    ("-R", Flag),
    ("--reuse-existing-virtualenvs", Flag),
    ("--no-reuse-existing-virtualenvs", Flag),
    ("--reuse-venv", Literal),
    ("-l", Flag),
    ("--list", Flag),
    ("-x", Flag),
    ("--stop-on-first-error", Flag),
    ("--error-on-missing-interpreters", Flag),
    ("--no-error-on-missing-interpreters", Flag),
    ("-f", Read),
    ("--noxfile", Read),
    ("--non-interactive", Flag),
    ("--no-color", Flag),
    ("--force-color", Flag),
];

const HATCH: &[Opt] = &[
    ("-a", Flag),
    ("--all", Flag),
    ("-p", Flag),
    ("--parallel", Flag),
    ("-r", Flag),
    ("--randomize", Flag),
    ("-c", Flag),
    ("--cover", Flag),
    ("--cover-quiet", Flag),
    ("-py", Literal),
    ("--python", Literal),
    ("-i", Literal),
    ("--include", Literal),
    ("-x", Literal),
    ("--exclude", Literal),
    ("--show", Flag),
    ("--retries", Literal),
    ("-t", Literal),
    ("--target", Literal),
    ("--check", Flag),
    ("--linter", Flag),
    ("-l", Flag),
    ("--formatter", Flag),
];

const POETRY: &[Opt] = &[
    ("-n", Flag),
    ("--no-interaction", Flag),
    ("--ansi", Flag),
    ("--no-ansi", Flag),
    ("--no-plugins", Flag),
    ("--tree", Flag),
    ("--only", Literal),
    ("--with", Literal),
    ("--without", Literal),
    ("--top-level", Flag),
    ("-T", Flag),
    ("--latest", Flag),
    ("-l", Flag),
    ("--outdated", Flag),
    ("-o", Flag),
    ("--lock", Flag),
    ("--strict", Flag),
    ("-f", Literal),
    ("--format", Literal),
    ("--output", Write),
];

const UV: &[Opt] = &[
    ("--frozen", Flag),
    ("--locked", Flag),
    ("--offline", Flag),
    ("--check", Flag),
    ("--exact", Flag),
    ("--inexact", Flag),
    ("--all-extras", Flag),
    ("--extra", Literal),
    ("--group", Literal),
    ("--only-group", Literal),
    ("--no-group", Literal),
    ("--all-groups", Flag),
    ("--dev", Flag),
    ("--no-dev", Flag),
    ("--only-dev", Flag),
    ("--package", Literal),
    ("--all-packages", Flag),
    ("--no-install-project", Flag),
    ("--color", Literal),
    ("--no-progress", Flag),
    ("--depth", Literal),
    ("-d", Literal),
    ("--invert", Flag),
    ("--outdated", Flag),
    ("--sdist", Flag),
    ("--wheel", Flag),
    ("-o", Write),
    ("--out-dir", Write),
    ("--dry-run", Flag),
    // `uv pip list|show|freeze`.
    ("--format", Literal),
    ("--files", Flag),
    ("--exclude-editable", Flag),
];

const RAKE: &[Opt] = &[
    ("-T", Optional),
    ("--tasks", Optional),
    ("-D", Optional),
    ("--describe", Optional),
    ("-W", Optional),
    ("--where", Optional),
    ("-P", Flag),
    ("--prereqs", Flag),
    ("-A", Flag),
    ("--all", Flag),
    ("-t", Flag),
    ("--trace", Flag),
    ("-n", Flag),
    ("--dry-run", Flag),
    ("-m", Flag),
    ("--multitask", Flag),
    ("-j", Optional),
    ("--jobs", Optional),
    ("-s", Flag),
    ("--silent", Flag),
    ("-f", Read),
    ("--rakefile", Read),
];

const RSPEC: &[Opt] = &[
    ("-f", Literal),
    ("--format", Literal),
    ("-o", Write),
    ("--out", Write),
    ("-t", Literal),
    ("--tag", Literal),
    ("-e", Literal),
    ("--example", Literal),
    ("-E", Literal),
    ("--example-matches", Literal),
    ("--fail-fast", Optional),
    ("--only-failures", Flag),
    ("-n", Flag),
    ("--next-failure", Flag),
    ("--order", Literal),
    ("--seed", Literal),
    ("--bisect", Optional),
    ("-b", Flag),
    ("--backtrace", Flag),
    ("-c", Flag),
    ("--color", Flag),
    ("--no-color", Flag),
    ("--force-color", Flag),
    ("-p", Optional),
    ("--profile", Optional),
    ("--dry-run", Flag),
    ("-w", Flag),
    ("--warnings", Flag),
    ("-P", Literal),
    ("--pattern", Literal),
    ("--exclude-pattern", Literal),
    ("--default-path", Name),
    ("-O", Read),
    ("--options", Read),
];

const RUBOCOP: &[Opt] = &[
    ("-a", InPlace),
    ("--autocorrect", InPlace),
    ("-A", InPlace),
    ("--autocorrect-all", InPlace),
    ("-x", InPlace),
    ("--fix-layout", InPlace),
    ("-f", Literal),
    ("--format", Literal),
    ("-o", Write),
    ("--out", Write),
    ("--only", Literal),
    ("--except", Literal),
    ("-c", Read),
    ("--config", Read),
    ("-D", Flag),
    ("--display-cop-names", Flag),
    ("-E", Flag),
    ("--extra-details", Flag),
    ("-S", Flag),
    ("--display-style-guide", Flag),
    ("-P", Flag),
    ("--parallel", Flag),
    ("--no-parallel", Flag),
    ("--fail-level", Literal),
    ("-F", Flag),
    ("--fail-fast", Flag),
    ("-l", Flag),
    ("--lint", Flag),
    ("-L", Flag),
    ("--list-target-files", Flag),
    ("--force-exclusion", Flag),
    ("--display-only-failed", Flag),
    ("--cache", Literal),
    ("--no-color", Flag),
];

const MIX_TEST: &[Opt] = &[
    ("--cover", Flag),
    ("--failed", Flag),
    ("--stale", Flag),
    ("--trace", Flag),
    ("--seed", Literal),
    ("--only", Literal),
    ("--exclude", Literal),
    ("--include", Literal),
    ("--max-failures", Literal),
    ("--max-cases", Literal),
    ("--slowest", Literal),
    ("--partitions", Literal),
    ("--warnings-as-errors", Flag),
    ("--all-warnings", Flag),
    ("--force", Flag),
    ("--color", Flag),
    ("--no-color", Flag),
    ("--check-formatted", Flag),
    ("--dry-run", Flag),
    ("--no-deps-check", Flag),
    ("--no-compile", Flag),
    ("--strict", Flag),
    ("--format", Literal),
];

const ZIG: &[Opt] = &[
    ("-D", Literal),
    ("--release", Optional),
    ("--summary", Literal),
    ("-j", Literal),
    ("--color", Literal),
    ("--verbose", Flag),
    ("-freference-trace", Optional),
    ("--check", Flag),
    ("--ast-check", Flag),
    ("--exclude", Literal),
    ("--test-filter", Literal),
    ("-O", Literal),
    ("--prefix", Write),
    ("-p", Write),
];

const MESON: &[Opt] = &[
    ("-C", Name),
    ("-j", Literal),
    ("--jobs", Literal),
    ("--clean", Flag),
    ("--buildtype", Literal),
    ("--reconfigure", Flag),
    ("--wipe", Flag),
    ("--werror", Flag),
    ("--suite", Literal),
    ("--no-suite", Literal),
    ("--print-errorlogs", Flag),
    ("--num-processes", Literal),
    ("--no-rebuild", Flag),
    ("--list", Flag),
    ("--repeat", Literal),
    ("--timeout-multiplier", Literal),
];

const NINJA: &[Opt] = &[
    ("-C", Name),
    ("-j", Literal),
    ("-k", Literal),
    ("-l", Literal),
    ("-n", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--quiet", Flag),
];

const CTEST: &[Opt] = &[
    ("--test-dir", Name),
    ("--output-on-failure", Flag),
    ("-V", Flag),
    ("-VV", Flag),
    ("--verbose", Flag),
    ("--extra-verbose", Flag),
    ("-Q", Flag),
    ("--quiet", Flag),
    ("-j", Literal),
    ("--parallel", Literal),
    ("-R", Literal),
    ("--tests-regex", Literal),
    ("-E", Literal),
    ("--exclude-regex", Literal),
    ("-L", Literal),
    ("--label-regex", Literal),
    ("-LE", Literal),
    ("--label-exclude", Literal),
    ("-C", Literal),
    ("--build-config", Literal),
    ("--rerun-failed", Flag),
    ("--stop-on-failure", Flag),
    ("--timeout", Literal),
    ("--repeat", Literal),
    ("--repeat-until-fail", Literal),
    ("-N", Flag),
    ("--show-only", Optional),
    ("--schedule-random", Flag),
    ("--no-tests", Optional),
    ("--progress", Flag),
    ("--output-junit", Write),
    ("-O", Write),
    ("--output-log", Write),
];

const CMAKE_BUILD: &[Opt] = &[
    ("--build", Name),
    ("-j", Literal),
    ("--parallel", Literal),
    ("-t", Literal),
    ("--target", Literal),
    ("--config", Literal),
    ("--clean-first", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
];

const DOTNET_RUN: &[Opt] = &[
    ("--project", Read),
    ("-c", Literal),
    ("--configuration", Literal),
    ("-f", Literal),
    ("--framework", Literal),
    ("--no-build", Flag),
    ("--no-restore", Flag),
    ("--launch-profile", Literal),
    ("--no-launch-profile", Flag),
    ("-v", Literal),
    ("--verbosity", Literal),
];

const DOTNET: &[Opt] = &[
    ("--nologo", Flag),
    ("-c", Literal),
    ("--configuration", Literal),
    ("-f", Literal),
    ("--framework", Literal),
    ("-r", Literal),
    ("--runtime", Literal),
    ("-a", Literal),
    ("--arch", Literal),
    ("--os", Literal),
    ("-v", Literal),
    ("--verbosity", Literal),
    ("--no-restore", Flag),
    ("--no-build", Flag),
    ("--no-dependencies", Flag),
    ("--no-incremental", Flag),
    ("--filter", Literal),
    ("--blame", Flag),
    ("--blame-hang", Flag),
    ("--collect", Literal),
    ("--list-tests", Flag),
    ("-t", Flag),
    ("-o", Write),
    ("--output", Write),
    ("--results-directory", Write),
    ("--verify-no-changes", Flag),
    ("--severity", Literal),
    ("--include", Literal),
    ("--exclude", Literal),
    ("--locked-mode", Flag),
    ("--tl", Optional),
    ("--include-transitive", Flag),
    ("--outdated", Flag),
    ("--vulnerable", Flag),
];

const SWIFT: &[Opt] = &[
    ("-c", Literal),
    ("--configuration", Literal),
    ("--filter", Literal),
    ("--skip", Literal),
    ("--parallel", Flag),
    ("--no-parallel", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--product", Literal),
    ("--target", Literal),
    ("-j", Literal),
    ("--jobs", Literal),
    ("--enable-code-coverage", Flag),
    ("--skip-build", Flag),
    ("--build-tests", Flag),
    ("--build-path", Write),
    ("--scratch-path", Write),
];

const GOLANGCI: &[Opt] = &[
    ("-c", Read),
    ("--config", Read),
    ("--fix", Flag),
    ("--timeout", Literal),
    ("-E", Literal),
    ("--enable", Literal),
    ("-D", Literal),
    ("--disable", Literal),
    ("--enable-only", Literal),
    ("--fast", Flag),
    ("--fast-only", Flag),
    ("-n", Flag),
    ("--new", Flag),
    ("--new-from-rev", Literal),
    ("--whole-files", Flag),
    ("-j", Literal),
    ("--concurrency", Literal),
    ("--build-tags", Literal),
    ("--tests", Optional),
    ("--max-issues-per-linter", Literal),
    ("--max-same-issues", Literal),
    ("--issues-exit-code", Literal),
    ("--show-stats", Optional),
    ("--allow-parallel-runners", Flag),
    ("--color", Literal),
    ("-d", Flag),
    ("--diff", Flag),
];

const STATICCHECK: &[Opt] = &[
    ("-checks", Literal),
    ("-f", Literal),
    ("-tags", Literal),
    ("-go", Literal),
    ("-tests", Optional),
    ("-fail", Literal),
    ("-show-ignored", Flag),
];

/// shellcheck's options (`shellcheck --help`): none runs anything; `-x` follows the scripts'
/// `source` lines to files it reads.
const SHELLCHECK: &[Opt] = &[
    ("-a", Flag),
    ("--check-sourced", Flag),
    ("-C", Optional),
    ("--color", Optional),
    ("-i", Literal),
    ("--include", Literal),
    ("-e", Literal),
    ("--exclude", Literal),
    ("--extended-analysis", Literal),
    ("-f", Literal),
    ("--format", Literal),
    ("--list-optional", Flag),
    ("--norc", Flag),
    ("--rcfile", Read),
    ("-o", Literal),
    ("--enable", Literal),
    ("-P", Literal),
    ("--source-path", Literal),
    ("-s", Literal),
    ("--shell", Literal),
    ("-S", Literal),
    ("--severity", Literal),
    ("-W", Literal),
    ("--wiki-link-count", Literal),
    ("-x", Flag),
    ("--external-sources", Flag),
];

const TOOLCHAINS: &[Toolchain] = &[
    Toolchain {
        names: &["tox"],
        global: QUIET_LOUD,
        commands: &[
            Sub {
                names: &["run", "r", "run-parallel", "p"],
                options: TOX,
                rest: Operands::Of(Flag),
            },
            Sub {
                names: &["list", "l"],
                options: &[("-d", Flag), ("--no-desc", Flag)],
                rest: Operands::Of(Flag),
            },
        ],
        bare: Some(Sub {
            names: &[],
            options: TOX,
            rest: Operands::Of(Flag),
        }),
        tail: true,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["nox"],
        global: QUIET_LOUD,
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: NOX,
            rest: Operands::Of(Literal),
        }),
        tail: true,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["hatch"],
        global: QUIET_LOUD,
        commands: &[Sub {
            names: &["test", "build", "fmt"],
            options: HATCH,
            rest: Operands::Of(Read),
        }],
        bare: None,
        tail: true,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["poetry"],
        global: QUIET_LOUD,
        commands: &[Sub {
            names: &["build", "check", "show"],
            options: POETRY,
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["uv"],
        global: QUIET_LOUD,
        commands: &[
            // `uv run` syncs the environment as `uv sync` does, and locks as `uv lock` does.
            Sub {
                names: &["sync", "lock", "build", "tree"],
                options: UV,
                rest: Operands::Of(Flag),
            },
            Sub {
                names: &["pip"],
                options: UV,
                rest: Operands::Targets,
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["pdm"],
        global: QUIET_LOUD,
        commands: &[Sub {
            names: &["build", "list"],
            options: &[("--no-sdist", Flag), ("--no-wheel", Flag), ("--tree", Flag)],
            rest: Operands::Of(Flag),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["rake"],
        global: QUIET_LOUD,
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: RAKE,
            rest: Operands::Targets,
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["rspec"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: RSPEC,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["rubocop"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: RUBOCOP,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["mix"],
        global: &[],
        commands: &[
            Sub {
                names: &["test", "compile", "credo", "dialyzer", "docs", "deps.tree"],
                options: MIX_TEST,
                rest: Operands::Of(Read),
            },
            // The dependencies mix.exs declares, and their status: nothing fetched.
            Sub {
                names: &["deps"],
                options: &[],
                rest: Operands::Of(Flag),
            },
            // `mix format FILES` rewrites them.
            Sub {
                names: &["format"],
                options: MIX_TEST,
                rest: Operands::Of(Write),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["zig"],
        global: &[],
        commands: &[
            // The steps of the workspace's `build.zig`: `test`, `run`, `install` (into its
            // `zig-out`).
            Sub {
                names: &["build"],
                options: ZIG,
                rest: Operands::Of(Literal),
            },
            Sub {
                names: &["test"],
                options: ZIG,
                rest: Operands::Of(Read),
            },
            Sub {
                names: &["fmt"],
                options: ZIG,
                rest: Operands::Of(Write),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["meson"],
        global: &[],
        commands: &[Sub {
            // `meson setup BUILDDIR [SOURCEDIR]`: directories the build is made in.
            names: &["setup", "compile", "test"],
            options: MESON,
            rest: Operands::Of(Name),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["ninja"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: NINJA,
            rest: Operands::Targets,
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["ctest"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: CTEST,
            rest: Operands::Of(Flag),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["dotnet"],
        global: &[],
        commands: &[
            Sub {
                // `restore` is what `build` does first.
                names: &["build", "test", "format", "restore", "clean", "list"],
                options: DOTNET,
                rest: Operands::Of(Read),
            },
            // The workspace's own program, as `cargo run` is; its arguments after `--`.
            Sub {
                names: &["run"],
                options: DOTNET_RUN,
                rest: Operands::Of(Flag),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["swift"],
        global: &[],
        commands: &[Sub {
            names: &["build", "test"],
            options: SWIFT,
            rest: Operands::Of(Flag),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["golangci-lint"],
        global: &[("-v", Flag), ("--verbose", Flag)],
        commands: &[
            Sub {
                names: &["run", "linters"],
                options: GOLANGCI,
                rest: Operands::Of(Read),
            },
            Sub {
                names: &["fmt"],
                options: GOLANGCI,
                rest: Operands::Of(Write),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["shellcheck"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: SHELLCHECK,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["staticcheck"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: STATICCHECK,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Single,
    },
];

const SBT: &[Opt] = &[
    ("-batch", Flag),
    ("--batch", Flag),
    ("-no-colors", Flag),
    ("--no-colors", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--client", Flag),
];

const HASKELL: &[Opt] = &[
    ("-j", Optional),
    ("--jobs", Optional),
    ("-v", Optional),
    ("--verbose", Optional),
    ("--enable-tests", Flag),
    ("--enable-benchmarks", Flag),
    ("--fast", Flag),
    ("--test", Flag),
    ("--bench", Flag),
    ("--pedantic", Flag),
    ("--test-show-details", Literal),
    ("--ta", Literal),
    ("--test-arguments", Literal),
];

const DUNE: &[Opt] = &[
    ("-j", Literal),
    ("--display", Literal),
    ("--profile", Literal),
    ("--release", Flag),
    ("-w", Flag),
    ("--watch", Flag),
    ("--force", Flag),
    ("-f", Flag),
];

const REBAR3: &[Opt] = &[
    ("--module", Literal),
    ("--suite", Literal),
    ("--dir", Read),
    ("--cover", Flag),
    ("-c", Flag),
    ("--verbose", Flag),
    ("-v", Flag),
];

const BAZEL: &[Opt] = &[
    ("-k", Flag),
    ("--keep_going", Flag),
    ("--jobs", Literal),
    ("-j", Literal),
    ("--config", Literal),
    ("--test_output", Literal),
    ("--test_filter", Literal),
    ("--test_tag_filters", Literal),
    ("--build_tests_only", Flag),
    ("--nocache_test_results", Flag),
    ("-c", Literal),
    ("--compilation_mode", Literal),
    ("--output", Literal),
];

const PHPUNIT: &[Opt] = &[
    ("--filter", Literal),
    ("--testsuite", Literal),
    ("--group", Literal),
    ("--exclude-group", Literal),
    ("--stop-on-failure", Flag),
    ("--stop-on-error", Flag),
    ("--testdox", Flag),
    ("--colors", Optional),
    ("--no-coverage", Flag),
    ("-c", Read),
    ("--configuration", Read),
    ("--display-deprecations", Flag),
];

const COMPOSER: &[Opt] = &[
    ("--no-interaction", Flag),
    ("-n", Flag),
    ("--strict", Flag),
    ("--ansi", Flag),
    ("--no-ansi", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
];

/// `deno test|lint|check` and `deno fmt --check`: Deno grants a program nothing it is not given
/// on the command line, and no `--allow-*` option is here, so the workspace's tests run in
/// its sandbox.
const RAILS: &[Opt] = &[
    ("-v", Flag),
    ("--verbose", Flag),
    ("-n", Literal),
    ("--name", Literal),
    ("-f", Flag),
    ("--fail-fast", Flag),
    ("-b", Flag),
    ("--backtrace", Flag),
    ("--seed", Literal),
    ("-e", Literal),
    ("--environment", Literal),
    ("-g", Literal),
];

const PRE_COMMIT: &[Opt] = &[
    ("-a", Flag),
    ("--all-files", Flag),
    ("--files", Read),
    ("--hook-stage", Literal),
    ("--show-diff-on-failure", Flag),
    ("--from-ref", Literal),
    ("-s", Literal),
    ("--source", Literal),
    ("--to-ref", Literal),
    ("-o", Literal),
    ("--origin", Literal),
    ("-v", Flag),
    ("--verbose", Flag),
    ("--color", Literal),
];

const DENO_FMT: &[Opt] = &[
    ("--check", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--ext", Literal),
    ("--ignore", Literal),
    ("--line-width", Literal),
    ("--indent-width", Literal),
    ("--single-quote", Flag),
    ("--use-tabs", Flag),
    ("--no-semicolons", Flag),
    ("--prose-wrap", Literal),
];

const DENO: &[Opt] = &[
    ("-q", Flag),
    ("--quiet", Flag),
    ("--no-check", Flag),
    ("--parallel", Flag),
    ("--fail-fast", Optional),
    ("--filter", Literal),
    ("--doc", Flag),
    ("--check", Flag),
    ("--config", Read),
    ("-c", Read),
];

/// `docker ps`, `docker images` (and Podman's): the containers and images the daemon has.
/// Nothing before the sub-command is taken (`-H`, `--context` choose another daemon).
const CONTAINERS: &[Opt] = &[
    ("-a", Flag),
    ("--all", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--no-trunc", Flag),
    ("-s", Flag),
    ("--size", Flag),
    ("-l", Flag),
    ("--latest", Flag),
    ("-n", Literal),
    ("--last", Literal),
    ("-f", Literal),
    ("--filter", Literal),
    ("--format", Literal),
    ("--digests", Flag),
];

/// `docker compose`'s own options that pick the workspace's project (`docker compose --help`).
const COMPOSE: &[Opt] = &[
    ("-f", Read),
    ("--file", Read),
    ("-p", Literal),
    ("--project-name", Literal),
    ("--profile", Literal),
    ("--ansi", Literal),
    ("--progress", Literal),
];

/// The options of `docker compose ps`, `images`, `ls`, `top` and `version`: what is listed, and
/// how.
const COMPOSE_LIST: &[Opt] = &[
    ("-a", Flag),
    ("--all", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--services", Flag),
    ("--status", Literal),
    ("--filter", Literal),
    ("--format", Literal),
    ("--no-trunc", Flag),
    ("--orphans", Flag),
    ("--short", Flag),
];

/// hadolint's options (`hadolint --help`): rules, formats and thresholds; none runs anything.
const HADOLINT: &[Opt] = &[
    ("-c", Read),
    ("--config", Read),
    ("-f", Literal),
    ("--format", Literal),
    ("-t", Literal),
    ("--failure-threshold", Literal),
    ("--ignore", Literal),
    ("--error", Literal),
    ("--warning", Literal),
    ("--info", Literal),
    ("--style", Literal),
    ("--no-fail", Flag),
    ("--no-color", Flag),
    ("--strict-labels", Flag),
    ("--disable-ignore-pragma", Flag),
    ("--verbose", Flag),
];

/// actionlint's flags (`actionlint -h`). Left out, so asked: `-shellcheck` and `-pyflakes`
/// (a program to run in their place) and `-init-config` (writes a config file).
const ACTIONLINT: &[Opt] = &[
    ("-format", Literal),
    ("-ignore", Literal),
    ("-config-file", Read),
    ("-color", Flag),
    ("-no-color", Flag),
    ("-oneline", Flag),
    ("-verbose", Flag),
    ("-debug", Flag),
    ("-stdin-filename", Literal),
];

/// codespell's options (`codespell --help`) that only choose what it reports; left out, so
/// asked: `-w`/`-i` (rewrite files) and `-H` (hidden files, where `.env` is).
const CODESPELL: &[Opt] = &[
    ("-q", Literal),
    ("--quiet-level", Literal),
    ("-L", Literal),
    ("--ignore-words-list", Literal),
    ("-I", Read),
    ("--ignore-words", Read),
    ("-S", Literal),
    ("--skip", Literal),
    ("-D", Read),
    ("--dictionary", Read),
    ("--builtin", Literal),
    ("-c", Flag),
    ("--count", Flag),
    ("-s", Flag),
    ("--summary", Flag),
    ("-f", Flag),
    ("--check-filenames", Flag),
    ("-x", Read),
    ("--exclude-file", Read),
    ("--config", Read),
    ("--toml", Read),
    ("--ignore-regex", Literal),
    ("--uri-ignore-words-list", Literal),
    ("-C", Literal),
    ("--context", Literal),
    ("-A", Literal),
    ("--after-context", Literal),
    ("-B", Literal),
    ("--before-context", Literal),
];

/// typos's options (`typos --help`) that only choose what it reports; left out, so asked:
/// `-w` (rewrites files), `--hidden` and `--no-ignore*` (files an ignore file or a dot hides).
const TYPOS: &[Opt] = &[
    ("-c", Read),
    ("--config", Read),
    ("--exclude", Literal),
    ("--diff", Flag),
    ("--format", Literal),
    ("--files", Flag),
    ("--identifiers", Flag),
    ("--words", Flag),
    ("--file-types", Flag),
    ("--type-list", Flag),
    ("--dump-config", Write),
    ("--locale", Literal),
    ("--color", Literal),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-v", Flag),
    ("--verbose", Flag),
    ("-j", Literal),
    ("--threads", Literal),
];

/// markdownlint-cli's options (`markdownlint --help`); left out, so asked: `-r`/`--rules`
/// (custom rules: code to load) and `-f`/`--fix`.
const MARKDOWNLINT: &[Opt] = &[
    ("-c", Read),
    ("--config", Read),
    ("-i", Literal),
    ("--ignore", Literal),
    ("-p", Read),
    ("--ignore-path", Read),
    ("-j", Flag),
    ("--json", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("-o", Write),
    ("--output", Write),
    ("-d", Flag),
    ("--dot", Flag),
    ("--enable", Literal),
    ("--disable", Literal),
];

/// `helm lint` and `helm template` (`helm lint --help`): the chart rendered here, with values
/// from files; left out, so asked: `--validate` and the cluster options (they reach a cluster),
/// `--post-renderer` (a program).
const HELM_LOCAL: &[Opt] = &[
    ("-f", Read),
    ("--values", Read),
    ("--set", Literal),
    ("--set-string", Literal),
    ("--set-json", Literal),
    ("--set-file", Read),
    ("--strict", Flag),
    ("--quiet", Flag),
    ("--with-subcharts", Flag),
    ("-n", Literal),
    ("--namespace", Literal),
    ("--release-name", Flag),
    ("--include-crds", Flag),
    ("--skip-tests", Flag),
    ("--show-only", Literal),
    ("-s", Literal),
    ("--kube-version", Literal),
    ("--api-versions", Literal),
    ("--output-dir", Write),
];

/// `terraform fmt` (`terraform fmt -help`): Go-style flags, booleans written bare or `=false`.
const TERRAFORM_FMT: &[Opt] = &[
    ("-check", Optional),
    ("-diff", Optional),
    ("-list", Optional),
    ("-write", Optional),
    ("-recursive", Optional),
    ("-no-color", Flag),
];

/// Linters of files the workspace keeps beside its code (Dockerfiles, CI workflows, spelling,
/// Markdown, Helm charts, Terraform): they read the files they are given and print findings.
const FILE_LINTERS: &[Toolchain] = &[
    Toolchain {
        names: &["hadolint"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: HADOLINT,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["actionlint"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: ACTIONLINT,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Single,
    },
    Toolchain {
        names: &["codespell"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: CODESPELL,
            rest: Operands::Of(Tree),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["typos"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: TYPOS,
            rest: Operands::Of(Tree),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["markdownlint"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: MARKDOWNLINT,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["helm"],
        global: &[],
        commands: &[Sub {
            names: &["lint", "template"],
            options: HELM_LOCAL,
            rest: Operands::Of(Read),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["terraform", "tofu"],
        global: &[],
        commands: &[Sub {
            names: &["fmt"],
            options: TERRAFORM_FMT,
            rest: Operands::Of(Write),
        }],
        bare: None,
        tail: false,
        style: Style::Single,
    },
];

/// The toolchains added for the JVM, Haskell, OCaml, Erlang, PHP and Deno, the build systems
/// of monorepos, and the container listings: a sub-command and its harmless options each.
const MORE: &[Toolchain] = &[
    Toolchain {
        names: &["sbt"],
        global: SBT,
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: SBT,
            rest: Operands::Targets,
        }),
        tail: false,
        style: Style::Single,
    },
    Toolchain {
        names: &["lein"],
        global: &[],
        commands: &[Sub {
            names: &["test", "check", "compile"],
            options: &[],
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["cabal", "stack"],
        global: &[],
        commands: &[Sub {
            names: &["build", "test", "bench", "check", "haddock"],
            options: HASKELL,
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["dune"],
        global: &[],
        commands: &[Sub {
            names: &["build", "test", "runtest"],
            options: DUNE,
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["rebar3"],
        global: &[],
        commands: &[Sub {
            names: &["compile", "eunit", "ct", "dialyzer", "xref", "edoc"],
            options: REBAR3,
            rest: Operands::Of(Flag),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["bazel", "bazelisk", "buck2", "pants"],
        global: &[],
        commands: &[Sub {
            names: &["build", "test", "query", "check", "lint"],
            options: BAZEL,
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["phpunit"],
        global: &[],
        commands: &[],
        bare: Some(Sub {
            names: &[],
            options: PHPUNIT,
            rest: Operands::Of(Read),
        }),
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["composer"],
        global: COMPOSER,
        commands: &[Sub {
            // `test` runs the `test` script of the workspace's composer.json.
            names: &["test", "validate", "show", "check-platform-reqs"],
            options: COMPOSER,
            rest: Operands::Of(Flag),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    // Rails' own runner: the workspace's tests and what it reports of itself.
    Toolchain {
        names: &["rails"],
        global: &[],
        commands: &[Sub {
            names: &["test", "test:system", "routes", "about", "stats", "notes"],
            options: RAILS,
            rest: Operands::Of(Read),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    // The hooks the workspace's `.pre-commit-config.yaml` declares, at the revisions it pins.
    Toolchain {
        names: &["pre-commit"],
        global: &[],
        commands: &[
            Sub {
                names: &["run"],
                options: PRE_COMMIT,
                rest: Operands::Of(Literal),
            },
            Sub {
                names: &["validate-config", "validate-manifest"],
                options: &[],
                rest: Operands::Of(Read),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    Toolchain {
        names: &["deno"],
        global: &[],
        commands: &[
            Sub {
                names: &["test", "lint", "check"],
                options: DENO,
                rest: Operands::Of(Read),
            },
            // Rewrites the workspace's files it is given (all of them without operands).
            Sub {
                names: &["fmt"],
                options: DENO_FMT,
                rest: Operands::Of(Write),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    // What RubyGems has installed, and where: nothing fetched (not `--remote`, `--both`,
    // `--source`).
    Toolchain {
        names: &["gem"],
        global: &[],
        commands: &[
            Sub {
                names: &["list"],
                options: GEM_LIST,
                rest: Operands::Of(Literal),
            },
            Sub {
                names: &["env", "which"],
                options: &[],
                rest: Operands::Of(Literal),
            },
        ],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    // The local engine's containers and images (not `logs`, what a program outside the
    // workspace printed; nor `inspect`, a container's environment; nor `-H`/`--context`,
    // which send the engine's credentials elsewhere).
    Toolchain {
        names: &["docker", "podman"],
        global: &[],
        commands: &[Sub {
            names: &["ps", "images"],
            options: CONTAINERS,
            rest: Operands::Of(Flag),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
    // The workspace's Compose project as the engine runs it (`docker compose ps`; `docker
    // compose` is judged as `docker-compose`): not `logs` nor `config`, which prints the
    // values `.env` gives, nor `--env-file`, `-H` or a file of another project.
    Toolchain {
        names: &["docker-compose", "podman-compose"],
        global: COMPOSE,
        commands: &[Sub {
            names: &["ps", "images", "ls", "top", "version"],
            options: COMPOSE_LIST,
            rest: Operands::Of(Literal),
        }],
        bare: None,
        tail: false,
        style: Style::Gnu,
    },
];

/// `gem list`'s options that read what is installed locally (`gem help list`).
const GEM_LIST: &[Opt] = &[
    ("-l", Flag),
    ("--local", Flag),
    ("-i", Flag),
    ("--installed", Flag),
    ("--no-installed", Flag),
    ("-d", Flag),
    ("--details", Flag),
    ("--no-details", Flag),
    ("-a", Flag),
    ("--all", Flag),
    ("-e", Flag),
    ("--exact", Flag),
    ("--versions", Flag),
    ("--no-versions", Flag),
    ("-v", Literal),
    ("--version", Literal),
    ("--prerelease", Flag),
    ("--no-prerelease", Flag),
    ("-q", Flag),
    ("--quiet", Flag),
    ("--verbose", Flag),
    ("--no-verbose", Flag),
];

/// `uv pip list|show|freeze`: reading what is installed.
fn uv_pip(words: &[&Arg]) -> bool {
    match words {
        [first, rest @ ..] => {
            ["list", "show", "freeze"].iter().any(|w| first.is(w))
                && rest.iter().all(|a| !a.dynamic)
        }
        [] => false,
    }
}

fn toolchain(judge: &mut Judge, t: &Toolchain, args: &[Arg]) -> bool {
    let (before, after) = match args.iter().position(|a| a.is("--")) {
        Some(d) => (&args[..d], &args[d + 1..]),
        None => (args, &[][..]),
    };
    // The sub-command is the first operand after options of the program's own.
    let head = parse(before, &[t.global], Style::Posix);
    let named = head.iter().find_map(|i| match i {
        Item::Operand(a) if !a.dynamic => t
            .commands
            .iter()
            .find(|s| s.names.contains(&a.text.as_str()))
            .map(|s| (s, *a)),
        _ => None,
    });
    // The program's own options before the sub-command, judged with its words.
    let (sub, leading, words) = match named {
        Some((sub, word)) => {
            let at = before
                .iter()
                .position(|a| std::ptr::eq(a, word))
                .map_or(before.len(), |p| p + 1);
            let leading = parse(&before[..at - 1], &[t.global], t.style);
            if !leading.iter().all(|i| matches!(i, Item::Option { .. })) {
                return false;
            }
            (sub, leading, &before[at..])
        }
        None => match &t.bare {
            Some(bare) => (bare, Vec::new(), before),
            None => return false,
        },
    };
    let rest = match sub.rest {
        Operands::Of(v) => v,
        Operands::Targets => Literal,
    };
    let program = Program {
        names: &[],
        options: &[],
        lead: &[],
        rest,
        style: t.style,
    };
    let items = parse(words, &[t.global, sub.options], t.style);
    let operands: Vec<&Arg> = items.iter().filter_map(Item::operand).collect();
    let targets = match sub.rest {
        Operands::Targets if sub.names.contains(&"pip") => uv_pip(&operands),
        Operands::Targets => operands.iter().all(|a| !a.dynamic && build_target(&a.text)),
        Operands::Of(_) => true,
    };
    // Words handed to the workspace's own commands (`tox -- tests/unit`): plain words only.
    let tail = after.is_empty()
        || (t.tail && after.iter().all(|a| !a.dynamic && !a.text.starts_with('-')));
    targets && tail && judge.items(&leading, &program) && judge.items(&items, &program)
}

/// `cmake --build DIR`: the build a configured directory describes, with options that choose
/// targets, jobs and configurations.
fn cmake_build(judge: &mut Judge, args: &[Arg]) -> bool {
    let program = Program {
        names: &[],
        options: &[CMAKE_BUILD],
        lead: &[],
        rest: Flag,
        style: Style::Gnu,
    };
    args.first().is_some_and(|a| a.is("--build")) && judge.program(args, &program)
}

/// The toolchains of this module (and CMake, whose configuring is `build`'s); `None` for another
/// program.
/// The GitHub CLI's reads of the repository's own pull requests, issues, runs, releases and
/// workflows (from `gh help`): what a person reviewing the work looks at, through the
/// account `gh` is logged in with, on the host it is configured for. Not listed: `-R`/`--repo`
/// (another repository, or another host), `--web` (a browser), `--watch` (never ends), and
/// every verb that writes (`create`, `merge`, `comment`, `checkout`, ...) or calls the API
/// freely (`gh api`).
const GH_READS: &[(&str, &[&str])] = &[
    ("pr", &["list", "view", "status", "checks", "diff"]),
    ("issue", &["list", "view", "status"]),
    ("run", &["list", "view"]),
    ("release", &["list", "view"]),
    ("workflow", &["list", "view"]),
    ("repo", &["view"]),
];

const GH: &[Opt] = &[
    ("--json", Literal),
    ("-q", Literal),
    ("--jq", Literal),
    ("-t", Literal),
    ("--template", Literal),
    ("-L", Literal),
    ("--limit", Literal),
    ("-s", Literal),
    ("--state", Literal),
    ("-A", Literal),
    ("--author", Literal),
    ("-a", Literal),
    ("--assignee", Literal),
    ("-l", Literal),
    ("--label", Literal),
    ("-B", Literal),
    ("--base", Literal),
    ("-H", Literal),
    ("--head", Literal),
    ("-S", Literal),
    ("--search", Literal),
    ("-b", Literal),
    ("--branch", Literal),
    ("-c", Flag),
    ("--comments", Flag),
    ("--log", Flag),
    ("--log-failed", Flag),
    ("--name-only", Flag),
    ("--patch", Flag),
    ("--color", Literal),
    ("--exit-status", Flag),
    ("--required", Flag),
    ("-j", Literal),
    ("--job", Literal),
    ("-u", Literal),
    ("--user", Literal),
    ("-w", Literal),
    ("--workflow", Literal),
    ("-e", Literal),
    ("--event", Literal),
];

fn gh(judge: &mut Judge, args: &[Arg]) -> bool {
    let [group, verb, rest @ ..] = args else {
        return false;
    };
    GH_READS
        .iter()
        .any(|(g, verbs)| group.is(g) && verbs.iter().any(|v| verb.is(v)))
        && judge.program(
            rest,
            &Program {
                names: &[],
                options: &[GH],
                lead: &[],
                rest: Literal,
                style: Style::Gnu,
            },
        )
}

pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    if name == "gh" {
        return Some(gh(judge, args));
    }
    if name == "cmake" {
        return Some(
            matches!(args, [v] if v.is("--version"))
                || cmake_build(judge, args)
                || cmake_configure(judge, args),
        );
    }
    // `docker compose ...` is the Compose plugin, as `docker-compose ...`.
    if matches!(name, "docker" | "podman") && args.first().is_some_and(|a| a.is("compose")) {
        return judge_by_name(judge, "docker-compose", &args[1..]);
    }
    judge_by_name(judge, name, args)
}

/// The toolchain named `name`, judged on `args`; `None` when no table names it.
fn judge_by_name(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    let t =
        (TOOLCHAINS.iter().chain(MORE).chain(FILE_LINTERS)).find(|t| t.names.contains(&name))?;
    Some(toolchain(judge, t, args))
}
