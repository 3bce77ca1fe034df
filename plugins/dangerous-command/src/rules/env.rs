//! Environment variables that change what runs, however a command sets them (a prefix,
//! `env`/`sudo NAME=value`, `export`/`declare`, a bare assignment, a terminal's environment),
//! judged by the shared classification ([`acp_gate_shell::environment`]): code or a library
//! to load is denied; a program other tools run, options only known at run time and how the
//! shell reads its commands are asked about; a place programs load code or configuration from
//! is asked about, and denied when it is outside the workspace and not where programs are
//! installed (a temporary directory, the home directory: anyone's files).

use crate::context::Context;
use crate::judgement::{Findings, Level};
use acp_gate_shell::environment::{Variable, classify, places};
use acp_gate_shell::{Arg, Command as Invocation};

pub(crate) fn check(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let mut vars: Vec<(String, Arg)> = inv.env.clone();
    if matches!(
        inv.name.as_str(),
        "export" | "declare" | "typeset" | "local" | "readonly" | "setenv"
    ) {
        vars.extend(inv.args().iter().filter_map(Arg::assignment));
    }
    for (name, value) in &vars {
        let (level, why) = match classify(name, value) {
            Variable::Inert | Variable::Unknown => continue,
            Variable::RunsCode => (
                Level::Deny,
                "makes programs load or run other code".to_owned(),
            ),
            Variable::MayRunCode => (
                Level::Ask,
                "may make programs run other code (a program they run, or options only known when it runs)".to_owned(),
            ),
            Variable::ShellSyntax => (
                Level::Ask,
                "changes how the shell reads the commands it runs".to_owned(),
            ),
            Variable::LoadsFrom => match foreign_place(cx, inv, value) {
                Some(place) => (
                    Level::Deny,
                    format!(
                        "makes programs load code or configuration from `{place}`, outside the workspace and where no program is installed"
                    ),
                ),
                None => (
                    Level::Ask,
                    "changes where programs load code or configuration from".to_owned(),
                ),
            },
        };
        f.push(level, "env-code-injection", format!("`{name}` {why}"));
    }
}

/// The first place `value` names that is neither in the workspace nor where programs are
/// installed; a place only known at run time (`$PATH`, the value before) is left to the ask.
fn foreign_place(cx: &Context, inv: &Invocation, value: &Arg) -> Option<String> {
    places(&value.text).find_map(|entry| {
        if value.dynamic && entry.contains(['$', '`']) {
            return None;
        }
        // An empty entry is the directory the program runs in.
        let entry = if entry.is_empty() { "." } else { entry };
        let abs = cx.absolute(inv, entry)?;
        let elsewhere = !cx.in_workspace(&abs) && !cx.installed(&abs) && abs != "/dev/null";
        elsewhere.then_some(abs)
    })
}
