//! `builtin:path-validator`: judges every path a request touches against the workspace roots
//! and the sensitive-file patterns.
//!
//! - A secret (keys, credentials, `.env*`) is denied for any access, wherever it is; a file that
//!   runs code later (shell start-up files, `.git/hooks`, agents' settings, acp-gate's own
//!   files, ...) is denied for writes and deletes; a project's own such file
//!   (`.pre-commit-config.yaml`, `.vscode/tasks.json`, ...) is asked about for writes and
//!   deletes (and denied outside the workspace, as every write there is). The lists are the
//!   SDK's (`acp_gate_plugin::sensitive`), shared with the dangerous-command checker.
//! - Listing names is not reading contents: a path the host marks as listed (`LS ~/.ssh`, a
//!   glob's directory) is judged by where it is only; a hidden file a recursive search may read
//!   without naming it (the host's look at the searched directory) is asked about when secret.
//! - Inside a workspace root (after following symlinks through the host): allow.
//! - Outside: writes and deletes are denied; reads and listings are asked (configurable).
//! - An allow needs the tool's effect on its paths to be known: a tool of kind `other`,
//!   `think`, `fetch` or `switch_mode`, or a move without both ends, is at most asked.
//! - Forms that a Linux path check cannot judge (Windows drive letters, `\\?\`, alternate data
//!   streams, trailing dots, 8.3 names) never yield allow; control characters are denied.
//!
//! The plugin has no filesystem: symlinks are resolved by the host (`paths.resolve`).

mod config;
mod forms;
mod patterns;

use acp_gate_plugin::{Access, Interest, Plugin, Request, Resolution, ToolKind, Verdict};
use unicode_normalization::UnicodeNormalization;

pub use config::{Config, OutsideRead};
use patterns::{Patterns, Protection};

pub struct PathValidator;

impl Plugin for PathValidator {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config, &acp_gate_plugin::resolve_path)
    }

    /// A request without paths abstains at once (the first line of [`evaluate`]).
    fn interest(_config: &Config) -> Interest {
        Interest {
            kinds: None,
            paths: true,
        }
    }
}

acp_gate_plugin::export_plugin!(PathValidator);

/// Judges `request` with `resolve` standing in for the host's symlink resolution.
pub fn evaluate(
    request: &Request,
    config: &Config,
    resolve: &dyn Fn(&str) -> Resolution,
) -> Result<Verdict, String> {
    if request.paths.is_empty() {
        return Ok(Verdict::Abstain);
    }
    let home = nfc(&request.home_dir);
    let mut roots: Vec<String> = request
        .workspace_roots
        .iter()
        .map(|r| nfc(&resolve(r).canonical))
        .collect();
    for extra in &config.extra_roots {
        let expanded = match acp_gate_plugin::sensitive::strip_home(extra) {
            Some(rest) => format!("{home}{rest}"),
            None => extra.clone(),
        };
        roots.push(nfc(&resolve(&expanded).canonical));
    }
    let patterns = Patterns::new(config, &home)?;

    let mut verdict = Verdict::Abstain;
    for path in &request.paths {
        if let Some(problem) = forms::control_characters(&path.raw) {
            return Ok(Verdict::Deny(format!(
                "{problem} in the path {:?}",
                path.raw
            )));
        }
        if let Some(form) = forms::foreign_form(&path.raw) {
            let judged = match path.access {
                Access::Read => {
                    Verdict::Ask(format!("cannot judge the path {:?}: {form}", path.raw))
                }
                Access::Write | Access::Delete => {
                    Verdict::Deny(format!("refusing to write {:?}: {form}", path.raw))
                }
            };
            verdict = stricter(verdict, judged);
            continue;
        }
        let resolution = resolve(&path.absolute);
        let canonical = nfc(&resolution.canonical);
        let lexical = nfc(&path.absolute);
        // The host hands over normalised absolute paths; anything else is not judged as inside.
        if [&lexical, &canonical]
            .iter()
            .any(|p| !forms::is_normalised(p))
        {
            let judged = match path.access {
                Access::Read => Verdict::Ask(format!(
                    "cannot judge the unnormalised path {:?}",
                    path.absolute
                )),
                Access::Write | Access::Delete => Verdict::Deny(format!(
                    "refusing to write the unnormalised path {:?}",
                    path.absolute
                )),
            };
            verdict = stricter(verdict, judged);
            continue;
        }
        let fold_case = resolution.case_insensitive;
        // Listing names reads none of the files the patterns protect.
        let matched = (!path.lists_names())
            .then(|| {
                patterns.matching(&lexical, fold_case).or_else(|| {
                    (canonical != lexical)
                        .then(|| patterns.matching(&canonical, fold_case))
                        .flatten()
                })
            })
            .flatten();
        if let Some((pattern, protection)) = matched {
            let shown = if canonical == lexical {
                path.raw.clone()
            } else {
                format!("{} (-> {canonical})", path.raw)
            };
            match (protection, path.access) {
                (Protection::Secret, _) if path.may_be_read() => {
                    verdict = stricter(
                        verdict,
                        Verdict::Ask(format!(
                            "may read the sensitive file {shown} (matches `{pattern}`): the search reads its directory's hidden files unless an ignore file excludes them"
                        )),
                    );
                    continue;
                }
                (Protection::Secret, _) => {
                    return Ok(Verdict::Deny(format!(
                        "sensitive file {shown} (matches `{pattern}`)"
                    )));
                }
                (Protection::NoWrite, Access::Write | Access::Delete) => {
                    return Ok(Verdict::Deny(format!(
                        "protected file {shown} runs code or configures the gate (matches `{pattern}`)"
                    )));
                }
                (Protection::ApproveWrite, Access::Write | Access::Delete) => {
                    verdict = stricter(
                        verdict,
                        Verdict::Ask(format!(
                            "changes the project's file {shown}, which runs code later (matches `{pattern}`)"
                        )),
                    );
                }
                (Protection::NoWrite | Protection::ApproveWrite, Access::Read) => {}
            }
        }
        let fold = |s: &str| {
            if resolution.case_insensitive {
                s.to_lowercase()
            } else {
                s.to_owned()
            }
        };
        let root = roots
            .iter()
            .find(|root| is_within(&fold(&canonical), &fold(root)));
        let judged = match (root, path.access) {
            (Some(root), Access::Delete) if fold(root) == fold(&canonical) => {
                Verdict::Ask(format!("deletes the workspace root {canonical}"))
            }
            (Some(_), _) => Verdict::Allow,
            (None, Access::Read) => {
                let what = if path.lists_names() { "list" } else { "read" };
                match config.outside_read {
                    OutsideRead::Allow => Verdict::Allow,
                    OutsideRead::Ask => Verdict::Ask(outside(what, path, &canonical, &roots)),
                    OutsideRead::Deny => Verdict::Deny(outside(what, path, &canonical, &roots)),
                }
            }
            (None, Access::Write) => Verdict::Deny(outside("write", path, &canonical, &roots)),
            (None, Access::Delete) => Verdict::Deny(outside("delete", path, &canonical, &roots)),
        };
        verdict = stricter(verdict, judged);
    }
    if let (Verdict::Allow, Some(doubt)) = (&verdict, doubt(request)) {
        return Ok(Verdict::Ask(doubt));
    }
    Ok(verdict)
}

fn unknown_effect(kind: &str, request: &Request) -> Option<String> {
    let paths: Vec<&str> = request.paths.iter().map(|p| p.raw.as_str()).collect();
    Some(format!(
        "a tool of kind `{kind}`: what it does to {} is not known",
        paths.join(", ")
    ))
}

/// Why paths that are all fine still do not make `request` understood, if they do not: an
/// allow vouches for what the tool does to them, which is known only for reads, searches,
/// edits, deletes, moves with both ends, and a command's working directory (the command
/// itself is the command checker's).
fn doubt(request: &Request) -> Option<String> {
    let changed = || {
        request
            .paths
            .iter()
            .filter(|p| p.access != Access::Read)
            .count()
    };
    match request.kind {
        ToolKind::Read
        | ToolKind::Search
        | ToolKind::Edit
        | ToolKind::Delete
        | ToolKind::Execute => None,
        ToolKind::Move if changed() >= 2 => None,
        ToolKind::Move => Some("a move whose source or destination is not given".to_owned()),
        ToolKind::Think => unknown_effect("think", request),
        ToolKind::Fetch => unknown_effect("fetch", request),
        ToolKind::SwitchMode => unknown_effect("switch_mode", request),
        ToolKind::Other => unknown_effect("other", request),
    }
}

fn outside(
    what: &str,
    path: &acp_gate_plugin::PathRef,
    canonical: &str,
    roots: &[String],
) -> String {
    let escape = if nfc(&path.absolute) != canonical {
        format!(" (a symlink leads to {canonical})")
    } else {
        String::new()
    };
    format!(
        "{what} outside the workspace: {}{escape}; workspace: {}",
        path.raw,
        roots.join(", ")
    )
}

/// Whether `path` is `root` or below it, comparing whole components.
fn is_within(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    path == root
        || root.is_empty()
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn nfc(text: &str) -> String {
    match text.is_ascii() {
        true => text.to_owned(),
        false => text.nfc().collect(),
    }
}

/// The stricter of two verdicts: deny > ask > allow > abstain.
fn stricter(a: Verdict, b: Verdict) -> Verdict {
    let rank = |v: &Verdict| match v {
        Verdict::Abstain => 0,
        Verdict::Allow => 1,
        Verdict::Ask(_) => 2,
        Verdict::Deny(_) => 3,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

#[cfg(test)]
mod tests;
