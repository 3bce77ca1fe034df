//! `builtin:path-validator`: judges every path a tool call touches, with the one set of path
//! rules the command checker judges a command's paths by (`acp_gate_plugin::path_rules`):
//!
//! - A secret (keys, credentials, `.env*`) is denied for any access, wherever it is; a file that
//!   runs code later (shell start-up files, `.git/hooks`, agents' settings, acp-gate's own
//!   files, ...) is denied for writes and deletes; a project's own such file
//!   (`.pre-commit-config.yaml`, `.vscode/tasks.json`, ...) is asked about for writes and
//!   deletes (and denied outside the workspace, as every write there is).
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

use acp_gate_plugin::path_rules::{
    Level, PathRules, Place, Target, Undergoes, is_same_or_ancestor,
};
use acp_gate_plugin::{Access, Interest, Plugin, Request, Resolution, ToolKind, Verdict};
use unicode_normalization::UnicodeNormalization;

pub use config::{Config, OutsideRead};

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
acp_gate_plugin::use_instance_arena!();

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
    // The config's patterns in the form paths are compared in.
    let nfc_all = |list: &[String]| list.iter().map(|p| nfc(p)).collect::<Vec<_>>();
    let (secrets, protected) = (nfc_all(&config.sensitive), nfc_all(&config.protected));
    let rules = PathRules::new(&home, &secrets, &protected)
        .without(&config.allow_sensitive)
        .map_err(|e| format!("allow_sensitive: {e}"))?;

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
        let fold = |s: &str| match resolution.case_insensitive {
            true => s.to_lowercase(),
            false => s.to_owned(),
        };
        let place = match roots
            .iter()
            .find(|root| is_same_or_ancestor(&fold(root), &fold(&canonical)))
        {
            Some(root) => Place::Inside { root },
            None => Place::Outside,
        };
        let shown = format!("`{}`", path.raw);
        let target = Target {
            named: &lexical,
            real: (canonical != lexical).then_some(canonical.as_str()),
            fold_case: resolution.case_insensitive,
            place,
            shown: &shown,
        };
        let (undergoes, how) = match path.access {
            Access::Read if path.lists_names() => (Undergoes::List, "lists"),
            Access::Read if path.may_be_read() => (Undergoes::Read, "may read"),
            Access::Read => (Undergoes::Read, "reads"),
            Access::Write => (Undergoes::Write, "writes"),
            Access::Delete => (Undergoes::Delete, "deletes"),
        };
        let judged = match rules.judge(&target, undergoes, how) {
            None => Verdict::Allow,
            // A search reaches a hidden secret only if no ignore file excludes it.
            Some(found) if found.rule == "sensitive-read" && path.may_be_read() => {
                Verdict::Ask(format!(
                    "{}: the search reads its directory's hidden files unless an ignore file excludes them",
                    found.reason
                ))
            }
            Some(found) if found.rule == "outside-read" => {
                let reason = format!("{}; workspace: {}", found.reason, roots.join(", "));
                match config.outside_read {
                    OutsideRead::Allow => Verdict::Allow,
                    OutsideRead::Ask => Verdict::Ask(reason),
                    OutsideRead::Deny => Verdict::Deny(reason),
                }
            }
            Some(found) if found.rule == "outside-write" => {
                Verdict::Deny(format!("{}; workspace: {}", found.reason, roots.join(", ")))
            }
            Some(found) => match found.level {
                Level::Ask => Verdict::Ask(found.reason),
                Level::Deny => return Ok(Verdict::Deny(found.reason)),
            },
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
