//! What setting an environment variable does to the programs that run: one classification for
//! every way a command sets one (`NAME=value cmd`, `env NAME=value`, `export`, a terminal's
//! environment, bash's exported functions), shared by the plugins that judge commands.
//! `dangerous-command` decides how strongly each class is judged; `org-policy` lets an allow rule
//! cover only a command whose variables are inert.
//!
//! A variable is inert only when it is known to be: it changes how programs print, their locale,
//! colour, verbosity or which configured mode they run in, never what they load, where they look
//! for code or configuration, or which program runs. Any other variable is not known to be
//! harmless, whatever its name.

use crate::arg::Arg;
use crate::programs::program_name;

/// What setting one variable does to the programs that run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    /// Changes only how programs print, their locale or colour, or which configured mode they
    /// run in.
    Inert,
    /// Makes programs run code it holds or names, or load a library: a known way to inject code
    /// (`LD_PRELOAD`, `BASH_ENV`, bash's exported functions `BASH_FUNC_name%%`,
    /// `PROMPT_COMMAND`, a prompt with a command substitution, `GIT_SSH_COMMAND`,
    /// `NODE_OPTIONS=--require`, ...).
    RunsCode,
    /// May make programs run code: it names a program other tools run when they need one (an
    /// editor, a pager), or options a runtime takes that are only known when it runs.
    MayRunCode,
    /// Where programs look for code or configuration: a list of directories or files (`PATH`,
    /// `LD_LIBRARY_PATH`, `GCONV_PATH`, `PYTHONPATH`, `PERL5LIB`), a home or config directory
    /// (`HOME`, `XDG_CONFIG_HOME`, `GIT_DIR`): see [`places`].
    LoadsFrom,
    /// Changes how a shell reads the commands it runs (`SHELLOPTS`, `BASHOPTS`, `IFS`,
    /// `CDPATH`, `GLOBIGNORE`).
    ShellSyntax,
    /// Not known: it may change anything.
    Unknown,
}

/// Variables that only change formatting, locale, colour, verbosity, a test mode or which
/// configured environment an application runs in.
const INERT: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLORTERM",
    "TERM",
    "COLUMNS",
    "LINES",
    "CI",
    "NODE_ENV",
    "RAILS_ENV",
    "RACK_ENV",
    "MIX_ENV",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "RUST_MIN_STACK",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_TERM_QUIET",
    "CARGO_TERM_PROGRESS_WHEN",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONWARNINGS",
    "GIT_TERMINAL_PROMPT",
    "GIT_FLUSH",
    "DEBIAN_FRONTEND",
    "TERM_PROGRAM",
    "VERBOSE",
    "QUIET",
];

/// Variables whose value is code, or a program or library that runs.
const RUNS_CODE: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "BASH_ENV",
    "PROMPT_COMMAND",
    "PERL5OPT",
    "PERL5DB",
    "PYTHONSTARTUP",
    "RUBYOPT",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "LESSOPEN",
    "LESSCLOSE",
    "ZDOTDIR",
    "LUA_INIT",
    "NODE_REPL_EXTERNAL_MODULE",
    "PYTHONWARNINGS_IMPORT",
    "CARGO_TARGET_RUNNER",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
];

/// Variables that name where programs look for code or configuration.
const LOADS_FROM: &[&str] = &[
    "PATH",
    "LD_LIBRARY_PATH",
    "GCONV_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "NODE_PATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    "GEM_PATH",
    "GEM_HOME",
    "CLASSPATH",
    "LUA_PATH",
    "LUA_CPATH",
    "BASH_LOADABLES_PATH",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// Variables that change how a shell reads its commands.
const SHELL_SYNTAX: &[&str] = &["SHELLOPTS", "BASHOPTS", "IFS", "CDPATH", "GLOBIGNORE"];

/// Variables that name a program other tools run when they need one.
const PROGRAMS: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "BROWSER",
];

/// Options of `NODE_OPTIONS` that only tune the runtime.
const NODE_TUNING: &[&str] = &[
    "--max-old-space-size",
    "--max-semi-space-size",
    "--stack-size",
    "--enable-source-maps",
    "--no-warnings",
    "--trace-warnings",
    "--no-deprecation",
    "--trace-deprecation",
    "--unhandled-rejections",
    "--experimental-vm-modules",
];

/// Options of `NODE_OPTIONS` that load or run code.
const NODE_LOADING: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-e",
    "--eval",
    "-p",
    "--print",
    "--inspect",
];

/// Options of the JVM's option variables that load an agent or run a command.
const JVM_LOADING: &[&str] = &[
    "-javaagent",
    "-agentlib",
    "-agentpath",
    "-XX:OnError",
    "-XX:OnOutOfMemoryError",
];

/// What setting `name` to `value` does to the programs that run.
pub fn classify(name: &str, value: &Arg) -> Variable {
    let v = value.text.as_str();
    // The options of a runtime: code when they load some, unknown when they are.
    let options = |loading: bool, tuning: bool| match () {
        _ if loading => Variable::RunsCode,
        _ if value.dynamic => Variable::MayRunCode,
        _ if tuning => Variable::Inert,
        _ => Variable::Unknown,
    };
    match name {
        _ if name.starts_with("LC_") || INERT.contains(&name) => Variable::Inert,
        // bash imports `BASH_FUNC_name%%=() { ..; }` as the function `name`.
        _ if name.starts_with("BASH_FUNC_") => Variable::RunsCode,
        _ if RUNS_CODE.contains(&name)
            || name.starts_with("GIT_CONFIG_KEY_")
            || name.starts_with("GIT_CONFIG_VALUE_")
            || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER")) =>
        {
            Variable::RunsCode
        }
        // bash expands a prompt (`PS4` under `set -x`) as a double-quoted string each time.
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" => match () {
            _ if v.contains("$(") || v.contains('`') => Variable::RunsCode,
            _ if v.contains('$') => Variable::Unknown,
            _ => Variable::Inert,
        },
        // POSIX `sh` runs the file `ENV` names when it starts (an interactive one); a name
        // without a path is an application's own setting (`ENV=production`).
        "ENV" => match v.contains(['/', '$', '`']) || v.ends_with(".sh") || value.dynamic {
            true => Variable::RunsCode,
            false => Variable::Unknown,
        },
        "NODE_OPTIONS" => {
            let words = || {
                v.split_whitespace()
                    .map(|w| w.split('=').next().unwrap_or(w))
            };
            options(
                words().any(|w| NODE_LOADING.contains(&w)),
                words().all(|w| NODE_TUNING.contains(&w)),
            )
        }
        "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" => {
            options(JVM_LOADING.iter().any(|o| v.contains(o)), false)
        }
        // `-toolexec` runs a program around every tool of the build.
        "GOFLAGS" => options(v.contains("-toolexec") || v.contains("-exec"), false),
        _ if PROGRAMS.contains(&name) => {
            match name.ends_with("PAGER") && matches!(v.trim(), "" | "cat") {
                true if !value.dynamic => Variable::Inert,
                _ if viewer(value) => Variable::Unknown,
                _ => Variable::MayRunCode,
            }
        }
        _ if LOADS_FROM.contains(&name) || name.starts_with("DYLD_") => Variable::LoadsFrom,
        _ if SHELL_SYNTAX.contains(&name) => Variable::ShellSyntax,
        _ => Variable::Unknown,
    }
}

/// Whether setting `name` to `value` for a command is inert.
pub fn is_inert(name: &str, value: &Arg) -> bool {
    classify(name, value) == Variable::Inert
}

/// Whether a bare assignment (`x=1`, no command) is harmless: an inert variable, or a shell
/// variable named the way scripts name their own (lower case, or one letter), which no program
/// reads from its environment unless it was exported before. Upper-case names may be exported
/// already (`PATH`, `IFS`, `HOME`): assigning them changes what later commands run.
pub fn is_shell_variable(name: &str, value: &Arg) -> bool {
    is_inert(name, value)
        || name.len() == 1
        || (name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.ends_with("_proxy"))
}

/// The places a [`Variable::LoadsFrom`] value names: the entries of a list (`:`, or `;` for
/// Lua's), an empty one standing for the working directory.
pub fn places(value: &str) -> impl Iterator<Item = &str> {
    value.split([':', ';'])
}

/// Pagers and editors that only show or edit text: `cat`, `less -R`, `true`, `vim`, empty.
pub fn viewer(value: &Arg) -> bool {
    if value.dynamic {
        return false;
    }
    let mut words = value.text.split_whitespace();
    match words.next() {
        None => true,
        Some(program) => {
            matches!(
                program_name(program).as_str(),
                "cat"
                    | "less"
                    | "more"
                    | "most"
                    | "true"
                    | ":"
                    | "head"
                    | "tail"
                    | "bat"
                    | "delta"
                    | "vi"
                    | "vim"
                    | "nvim"
                    | "nano"
                    | "emacs"
                    | "code"
                    | "subl"
            ) && words.all(|w| {
                w.starts_with('-')
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '=')
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: &str) -> Variable {
        let value = match value.contains('$') {
            true => Arg::unknown(value),
            false => Arg::literal(value),
        };
        classify(name, &value)
    }

    #[test]
    fn only_known_variables_are_inert() {
        assert_eq!(class("NODE_ENV", "test"), Variable::Inert);
        assert_eq!(class("LC_ALL", "C"), Variable::Inert);
        assert_eq!(class("GIT_PAGER", "cat"), Variable::Inert);
        assert_eq!(
            class("NODE_OPTIONS", "--max-old-space-size=4096"),
            Variable::Inert
        );
        assert_eq!(class("PS4", "+ "), Variable::Inert);
        assert_eq!(class("FOO", "1"), Variable::Unknown);
        assert_eq!(class("DOCKER_HOST", "tcp://x"), Variable::Unknown);
        assert_eq!(class("ENV", "production"), Variable::Unknown);
        assert_eq!(class("EDITOR", "vim"), Variable::Unknown);
    }

    #[test]
    fn variables_that_run_code_in_every_form() {
        for (name, value) in [
            ("BASH_FUNC_ls%%", "() { id; }"),
            ("BASH_FUNC_echo()", "() { id; }"),
            ("PS4", "$(id)"),
            ("PS1", "`id`"),
            ("ENV", "/tmp/x"),
            ("NODE_OPTIONS", "--require /tmp/x.js"),
            ("NODE_OPTIONS", "--import=x"),
            ("JAVA_TOOL_OPTIONS", "-javaagent:/tmp/a.jar"),
            ("GOFLAGS", "-toolexec=/tmp/x"),
            ("GIT_CONFIG_KEY_0", "core.pager"),
            ("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "/tmp/x"),
        ] {
            assert_eq!(class(name, value), Variable::RunsCode, "{name}={value}");
        }
        assert_eq!(class("NODE_OPTIONS", "$OPTS"), Variable::MayRunCode);
        assert_eq!(class("PAGER", "sh -c id"), Variable::MayRunCode);
    }

    #[test]
    fn search_paths_and_shell_syntax() {
        for name in [
            "PATH",
            "LD_LIBRARY_PATH",
            "GCONV_PATH",
            "PYTHONPATH",
            "HOME",
            "GIT_DIR",
        ] {
            assert_eq!(class(name, "/tmp"), Variable::LoadsFrom, "{name}");
        }
        assert_eq!(class("DYLD_LIBRARY_PATH", "/tmp"), Variable::LoadsFrom);
        assert_eq!(class("IFS", "/"), Variable::ShellSyntax);
        assert_eq!(
            places("/tmp/x::$PATH").collect::<Vec<_>>(),
            ["/tmp/x", "", "$PATH"]
        );
    }

    #[test]
    fn bare_assignments_of_script_variables() {
        assert!(is_shell_variable("x", &Arg::literal("1")));
        assert!(is_shell_variable("out_dir", &Arg::literal("build")));
        assert!(!is_shell_variable("PATH", &Arg::literal("/tmp:/bin")));
        assert!(!is_shell_variable("http_proxy", &Arg::literal("http://x")));
    }
}
