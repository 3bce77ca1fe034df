//! Normalisation: every agent's request shape becomes one [`ToolRequest`] that plugins judge.
//!
//! Agents disagree on where they put things (Claude Code's adapter: `rawInput.command`,
//! `rawInput.file_path`, kind only in an earlier `tool_call` update; Gemini CLI: command in the
//! title, `locations` and diffs; Codex: an argv array and a `cwd`). This module holds the one
//! record; each source of requests has a file that reads its shapes into it, once, and the tool
//! kind is re-derived from the content: the declared kind is only a hint.
//!
//! - [`acp`]: ACP's `session/request_permission` (v1 `toolCall`, v2 `subject`) and the client
//!   calls acp-gate serves itself (`fs/*`, `terminal/create`, mode switches);
//! - [`tool_call`]: a tool call's fields as any agent names them (`rawInput`, `locations`,
//!   diffs), which every source ends up reading;
//! - [`gemini`]: what Gemini CLI carries only in its titles and call ids.

mod acp;
mod gemini;
pub mod hook;
mod tool_call;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::paths;

/// ACP's tool kinds (`ToolKind`); unknown values read as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    SwitchMode,
    Other,
}

impl ToolKind {
    pub fn parse(name: &str) -> ToolKind {
        serde_json::from_value(Value::String(name.to_owned())).unwrap_or(ToolKind::Other)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "switch_mode",
            ToolKind::Other => "other",
        }
    }
}

/// How a request reached the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestSource {
    PermissionRequest,
    FsRead,
    FsWrite,
    TerminalCreate,
    /// A change of the session's mode or configuration: the editor's `session/set_mode` or
    /// `session/set_config_option`, or the agent's report of one (`acp::switch`). Plugins
    /// see it as a `permission-request` of kind `switch-mode` (the 0.1 contract has no source
    /// for it), with the method as its tool name.
    ModeSwitch,
}

impl RequestSource {
    /// The ACP method the request came as (a mode switch names its own: `tool_name`).
    pub fn method(self) -> &'static str {
        match self {
            RequestSource::PermissionRequest => "session/request_permission",
            RequestSource::FsRead => "fs/read_text_file",
            RequestSource::FsWrite => "fs/write_text_file",
            RequestSource::TerminalCreate => "terminal/create",
            RequestSource::ModeSwitch => "mode switch",
        }
    }

    /// The source of a request that came as `method` (the editor's `session/set_*` are
    /// switches).
    pub fn of(method: &str) -> RequestSource {
        [
            RequestSource::PermissionRequest,
            RequestSource::FsRead,
            RequestSource::FsWrite,
            RequestSource::TerminalCreate,
        ]
        .into_iter()
        .find(|source| source.method() == method)
        .unwrap_or(RequestSource::ModeSwitch)
    }
}

/// ACP's `PermissionOptionKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

/// One answer the agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// What a request does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
    Delete,
}

/// One path a request touches: as written, as the kernel would see it, and why it is here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRef {
    pub raw: String,
    pub absolute: PathBuf,
    pub access: Access,
    /// Where the host found it, qualified by [`LISTING`] or [`REACH`] (see `wit/plugin.wit`).
    pub origin: String,
}

/// The `origin` prefix of a path whose names only the tool reads (a listing, a glob's matches).
pub const LISTING: &str = "listing:";
/// The `origin` prefix of a file a recursive search may read without naming it.
pub const REACH: &str = "reach:";

impl PathRef {
    /// What the request does to the path, as a verb: `list`, `may read`, `read`, `write`,
    /// `delete`.
    pub fn effect(&self) -> &'static str {
        match self.access {
            Access::Read if self.origin.starts_with(LISTING) => "list",
            Access::Read if self.origin.starts_with(REACH) => "may read",
            Access::Read => "read",
            Access::Write => "write",
            Access::Delete => "delete",
        }
    }
}

/// A proposed file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    pub path: PathBuf,
    pub old_text: Option<String>,
    pub new_text: String,
}

/// The command a request would run, as argv and/or a shell string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandLine {
    pub argv: Option<Vec<String>>,
    pub shell: Option<String>,
}

impl CommandLine {
    /// The command as a person reads it: the shell string, else the argv as a shell would show
    /// it (words with spaces or metacharacters single-quoted).
    pub fn text(&self) -> String {
        if let Some(shell) = &self.shell {
            return shell.clone();
        }
        let quote = |word: &String| {
            let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
            if !word.is_empty() && word.chars().all(plain) {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        };
        let argv = self.argv.as_deref().unwrap_or_default();
        argv.iter().map(quote).collect::<Vec<_>>().join(" ")
    }
}

/// Where a session runs: what relative paths and `~` mean for its requests.
#[derive(Debug, Clone)]
pub struct SessionContext {
    pub session_id: String,
    pub cwd: PathBuf,
    pub workspace_roots: Vec<PathBuf>,
    pub home: PathBuf,
}

impl SessionContext {
    /// A context rooted at `workspace`, with `$HOME` from the environment.
    pub fn for_workspace(session_id: &str, workspace: &Path) -> SessionContext {
        SessionContext {
            session_id: session_id.to_owned(),
            cwd: workspace.to_path_buf(),
            workspace_roots: vec![workspace.to_path_buf()],
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/".into()),
        }
    }
}

/// One normalised permission request (the host's side of the WIT `request` record).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolRequest {
    pub session_id: String,
    pub tool_call_id: String,
    pub title: String,
    pub kind: ToolKind,
    pub declared_kind: Option<ToolKind>,
    pub tool_name: Option<String>,
    pub source: RequestSource,
    pub command: Option<CommandLine>,
    pub paths: Vec<PathRef>,
    pub diffs: Vec<Diff>,
    pub cwd: PathBuf,
    pub workspace_roots: Vec<PathBuf>,
    pub home: PathBuf,
    pub options: Vec<PermissionOption>,
    pub received_at_ms: u64,
    /// What the agent sent (the ACP params), for plugins and the audit log.
    #[serde(skip)]
    pub raw: Value,
}

impl ToolRequest {
    /// What the request does, whoever asks and whenever: its kind, tool, command, working
    /// directory, paths with what it does to each (a listing is not a read) and the text it
    /// writes. A grant of an escalation lets exactly this through once.
    pub fn fingerprint(&self) -> String {
        let facts = json!({
            "kind": self.kind,
            "tool": self.tool_name,
            "source": self.source,
            "command": self.command.as_ref().map(CommandLine::text),
            "cwd": self.cwd,
            "paths": self.paths.iter().map(|p| (&p.absolute, p.effect())).collect::<Vec<_>>(),
            "writes": self.diffs.iter().map(|d| (&d.path, &d.new_text)).collect::<Vec<_>>(),
        });
        crate::digest::sha256_hex(facts.to_string().as_bytes())
    }

    /// `path` as a person reads it: relative inside a workspace root, else absolute.
    pub fn shown(&self, path: &Path) -> String {
        self.workspace_roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .filter(|relative| !relative.as_os_str().is_empty())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// What the request does, said once, as a verb and what it acts on: `run` and the
    /// command; `move` and both ends; for paths, what is done to the first (`read`, `list`,
    /// `search`, `write`, `delete`) and how many more there are; else the kind's verb and the
    /// title, whose first word is dropped when it says the verb again (`Fetch https://...`
    /// is `fetch https://...`, not `fetch Fetch https://...`).
    pub fn action(&self) -> String {
        if let Some(command) = &self.command {
            return format!("run {}", command.text());
        }
        let end = |access| self.paths.iter().find(|p| p.access == access);
        if let (ToolKind::Move, Some(from), Some(to)) =
            (self.kind, end(Access::Delete), end(Access::Write))
        {
            let (from, to) = (self.shown(&from.absolute), self.shown(&to.absolute));
            return format!("move {from} to {to}");
        }
        if let Some(first) = self.paths.first() {
            let verb = match (self.kind, first.effect()) {
                (ToolKind::Search, "read") => "search",
                (_, effect) => effect,
            };
            let more = match self.paths.len() - 1 {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            return format!("{verb} {}{more}", self.shown(&first.absolute));
        }
        said_once(self.kind, &self.title)
    }

    /// The W3C trace context the agent sent with the request (`_meta.traceparent`,
    /// `_meta.tracestate`), for the audit record.
    pub fn trace_context(&self) -> Option<Value> {
        let meta = self.raw.get("_meta")?.as_object()?;
        let trace: Map<String, Value> = ["traceparent", "tracestate"]
            .into_iter()
            .filter_map(|key| Some((key.to_owned(), meta.get(key)?.as_str()?.into())))
            .collect();
        (!trace.is_empty()).then_some(Value::Object(trace))
    }

    pub(super) fn empty(source: RequestSource, ctx: &SessionContext, raw: Value) -> ToolRequest {
        let received_at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        ToolRequest {
            session_id: ctx.session_id.clone(),
            tool_call_id: String::new(),
            title: String::new(),
            kind: ToolKind::Other,
            declared_kind: None,
            tool_name: None,
            source,
            command: None,
            paths: Vec::new(),
            diffs: Vec::new(),
            cwd: ctx.cwd.clone(),
            workspace_roots: ctx.workspace_roots.clone(),
            home: ctx.home.clone(),
            options: Vec::new(),
            received_at_ms,
            raw,
        }
    }

    pub(super) fn normalise(&self, raw: &str) -> PathBuf {
        paths::normalise(raw, &self.cwd, &self.home)
    }

    pub(super) fn add_path(&mut self, raw: &str, access: Access, origin: &str) {
        if raw.is_empty() {
            return;
        }
        let absolute = self.normalise(raw);
        if !self
            .paths
            .iter()
            .any(|p| p.absolute == absolute && p.access == access)
        {
            self.paths.push(PathRef {
                raw: raw.to_owned(),
                absolute,
                access,
                origin: origin.to_owned(),
            });
        }
    }

    /// A command that runs elsewhere than the session's directory reads that directory.
    pub(super) fn set_cwd(&mut self, cwd: &str) {
        let absolute = self.normalise(cwd);
        if absolute != self.cwd {
            self.add_path(cwd, Access::Read, "cwd");
            self.cwd = absolute;
        }
    }
}

/// What a request of `kind` about `text` (its title, or a command or path) does, said once:
/// the text itself when its first word is already one of the kind's verbs (`Write a.rs`,
/// `Find ...`; `Fetching content from: URL` is `fetch URL`), else the kind's verb before it
/// (never `fetch Fetch https://...`).
pub fn said_once(kind: ToolKind, text: &str) -> String {
    let (verbs, lead): (&[&str], &str) = match kind {
        ToolKind::Read => (&["read", "view"], "read"),
        ToolKind::Edit => (&["edit", "write", "create", "replace", "update"], "edit"),
        ToolKind::Delete => (&["delete", "remove"], "delete"),
        ToolKind::Move => (&["move", "rename"], "move"),
        ToolKind::Search => (&["search", "find", "grep", "list", "glob"], "search"),
        ToolKind::Execute => (&["run", "execute"], "run"),
        ToolKind::Fetch => (&["fetch", "get", "download"], "fetch"),
        ToolKind::Think => (&[], "think:"),
        ToolKind::SwitchMode => (&["switch"], "switch mode:"),
        ToolKind::Other => (&[], "use a tool:"),
    };
    let text = text.trim();
    if let Some((first, rest)) = text.split_once(char::is_whitespace) {
        let first = first.to_ascii_lowercase();
        let gerund = |verb: &str| format!("{}ing", verb.strip_suffix('e').unwrap_or(verb));
        let rest = rest.trim_start();
        let rest = rest
            .strip_prefix("content from:")
            .unwrap_or(rest)
            .trim_start();
        if let (Some(verb), false) = (
            verbs.iter().find(|v| first == **v || first == gerund(v)),
            rest.is_empty(),
        ) {
            return format!("{verb} {rest}");
        }
    }
    format!("{lead} {text}")
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests;
