//! Environment variables that make programs load or run other code (`LD_PRELOAD`,
//! `BASH_ENV`, `GIT_SSH_COMMAND`, `NODE_OPTIONS=--require`, ...).

use crate::judgement::{Findings, Level};
use acp_gate_shell::{Arg, program_name as command_name};

pub(crate) fn check(f: &mut Findings) {
    let inv = f.inv;
    let mut vars: Vec<(String, Arg)> = inv.env.clone();
    if matches!(
        inv.name.as_str(),
        "export" | "declare" | "typeset" | "local" | "readonly" | "setenv"
    ) {
        vars.extend(inv.args().iter().filter_map(Arg::assignment));
    }
    for (name, value) in &vars {
        if let Some((level, why)) = code_loading_variable(name, value) {
            f.push(level, "env-code-injection", format!("`{name}` {why}"));
        }
    }
}

/// Whether setting `name` to `value` makes the programs that run load or run other code.
pub(crate) fn code_loading_variable(name: &str, value: &Arg) -> Option<(Level, &'static str)> {
    let deny = Some((Level::Deny, "makes programs load or run other code"));
    let ask = Some((Level::Ask, "changes which code programs load"));
    let v = value.text.as_str();
    match name {
        "LD_PRELOAD"
        | "LD_AUDIT"
        | "DYLD_INSERT_LIBRARIES"
        | "BASH_ENV"
        | "PROMPT_COMMAND"
        | "PERL5OPT"
        | "PERL5DB"
        | "PYTHONSTARTUP"
        | "RUBYOPT"
        | "GIT_SSH"
        | "GIT_SSH_COMMAND"
        | "GIT_EXTERNAL_DIFF"
        | "GIT_PROXY_COMMAND"
        | "GIT_ASKPASS"
        | "SSH_ASKPASS"
        | "SUDO_ASKPASS"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR"
        | "GIT_CONFIG_PARAMETERS"
        | "GIT_CONFIG_COUNT"
        | "LESSOPEN"
        | "LESSCLOSE"
        | "ZDOTDIR"
        | "LUA_INIT"
        | "PYTHONWARNINGS_IMPORT"
        | "NODE_REPL_EXTERNAL_MODULE"
        | "CARGO_TARGET_RUNNER"
        | "RUSTC_WRAPPER"
        | "RUSTC_WORKSPACE_WRAPPER" => deny,
        n if n.starts_with("GIT_CONFIG_KEY_") || n.starts_with("GIT_CONFIG_VALUE_") => deny,
        n if n.starts_with("CARGO_TARGET_") && n.ends_with("_RUNNER") => deny,
        "LD_LIBRARY_PATH" | "GIT_CONFIG" | "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM"
        | "PERL5LIB" | "PERLLIB" | "RUBYLIB" | "SHELLOPTS" | "BASHOPTS" => ask,
        n if n.starts_with("DYLD_") => ask,
        "NODE_OPTIONS" => {
            let loads = [
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
            ]
            .iter()
            .any(|o| {
                v.split([' ', '='])
                    .any(|w| w == *o || w.starts_with(&format!("{o}=")))
            });
            if loads {
                deny
            } else if value.dynamic {
                ask
            } else {
                None
            }
        }
        "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" => {
            let loads = [
                "-javaagent",
                "-agentlib",
                "-agentpath",
                "-XX:OnError",
                "-XX:OnOutOfMemoryError",
            ]
            .iter()
            .any(|o| v.contains(o));
            if loads {
                deny
            } else if value.dynamic {
                ask
            } else {
                None
            }
        }
        "ENV" => (v.contains('/')
            || v.contains('$')
            || v.contains('`')
            || v.ends_with(".sh")
            || value.dynamic)
            .then_some((Level::Deny, "makes sh run a start-up file")),
        "PAGER"
        | "GIT_PAGER"
        | "MANPAGER"
        | "SYSTEMD_PAGER"
        | "EDITOR"
        | "VISUAL"
        | "GIT_EDITOR"
        | "GIT_SEQUENCE_EDITOR"
        | "BROWSER" => {
            (!benign_program(value)).then_some((Level::Ask, "names a program other tools will run"))
        }
        _ => None,
    }
}

/// Pagers and editors that only show text: `cat`, `less -R`, `true`, empty.
pub(crate) fn benign_program(value: &Arg) -> bool {
    if value.dynamic {
        return false;
    }
    let mut words = value.text.split_whitespace();
    match words.next() {
        None => true,
        Some(program) => {
            matches!(
                command_name(program).as_str(),
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
