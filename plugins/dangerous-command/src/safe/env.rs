//! Environment assignments that are inert: they change how programs print, never what they
//! load, where they look for config or code, or which program runs.

use acp_gate_shell::Arg;

/// Variables that only change formatting, locale, colour, verbosity or a test mode.
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

/// Pagers that print, as `GIT_PAGER` / `PAGER`.
const PRINTING_PAGERS: &[&str] = &["", "cat"];

/// Whether `NAME=value` in front of a command is inert.
pub(super) fn inert(name: &str, value: &Arg) -> bool {
    if name.starts_with("LC_") || INERT.contains(&name) {
        // A value from a substitution still runs that substitution, which is judged on its own.
        return true;
    }
    match name {
        "NODE_OPTIONS" => {
            !value.dynamic
                && value.text.split_whitespace().all(|w| {
                    let option = w.split('=').next().unwrap_or(w);
                    NODE_TUNING.contains(&option)
                })
        }
        "GIT_PAGER" | "PAGER" | "MANPAGER" | "SYSTEMD_PAGER" => {
            !value.dynamic && PRINTING_PAGERS.contains(&value.text.trim())
        }
        _ => false,
    }
}

/// Whether a bare assignment (`x=1`, no command) is harmless: an inert variable, or a shell
/// variable named the way scripts name their own (lower case, or one letter), which no
/// program reads from its environment unless it was exported before.
pub(super) fn shell_variable(name: &str, value: &Arg) -> bool {
    inert(name, value)
        || name.len() == 1
        || (name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.ends_with("_proxy")
            && !matches!(name, "ftp_proxy" | "no_proxy" | "all_proxy"))
}
