//! Normalisation: every agent's request shape becomes one [`ToolRequest`] that plugins judge.
//!
//! Agents disagree on where they put things (Claude Code's adapter: `rawInput.command`,
//! `rawInput.file_path`, kind only in an earlier `tool_call` update; Gemini CLI: command in the
//! title, `locations` and diffs; Codex: an argv array and a `cwd`). This module reads them all,
//! once, and re-derives the tool kind from the content: the declared kind is only a hint.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::paths;

/// ACP's tool kinds (`ToolKind`); unknown values read as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestSource {
    PermissionRequest,
    FsRead,
    FsWrite,
    TerminalCreate,
}

impl RequestSource {
    /// The ACP method the request came as.
    pub fn method(self) -> &'static str {
        match self {
            RequestSource::PermissionRequest => "session/request_permission",
            RequestSource::FsRead => "fs/read_text_file",
            RequestSource::FsWrite => "fs/write_text_file",
            RequestSource::TerminalCreate => "terminal/create",
        }
    }
}

/// ACP's `PermissionOptionKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

/// One answer the agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// What a request does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
    Delete,
}

/// One path a request touches: as written, as the kernel would see it, and why it is here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathRef {
    pub raw: String,
    pub absolute: PathBuf,
    pub access: Access,
    pub origin: String,
}

/// A proposed file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub path: PathBuf,
    pub old_text: Option<String>,
    pub new_text: String,
}

/// The command a request would run, as argv and/or a shell string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
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

/// `rawInput` keys that name the file a tool works on.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "notebook_path",
    "filename",
    "file",
];
/// `rawInput` keys of a move's source and destination.
const MOVE_KEYS: &[(&str, &str)] = &[
    ("source", "destination"),
    ("old_path", "new_path"),
    ("from", "to"),
];

impl ToolRequest {
    /// Normalises the params of a `session/request_permission`. `earlier` is the merged state of
    /// the `tool_call` / `tool_call_update` notifications seen for the same `toolCallId`; the
    /// request's own `toolCall` fields win over it.
    pub fn from_permission_request(
        params: &Value,
        earlier: Option<&Value>,
        ctx: &SessionContext,
    ) -> Result<ToolRequest> {
        let Some(tool_call) = params.get("toolCall").and_then(Value::as_object) else {
            bail!("session/request_permission params have no `toolCall` object");
        };
        let mut merged = earlier
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, value) in tool_call {
            if !value.is_null() {
                merged.insert(key.clone(), value.clone());
            }
        }
        let options = match params.get("options") {
            None | Some(Value::Null) => Vec::new(),
            Some(options) => parse_options(options)?,
        };
        let session_id = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or(&ctx.session_id);
        let mut request = ToolRequest::empty(RequestSource::PermissionRequest, ctx, params.clone());
        request.session_id = session_id.to_owned();
        request.tool_call_id = str_field(&merged, "toolCallId")
            .unwrap_or_default()
            .to_owned();
        request.options = options;
        request.fill_from_tool_call(&merged);
        Ok(request)
    }

    /// An `fs/read_text_file` call the host serves.
    pub fn from_fs_read(path: &str, ctx: &SessionContext) -> ToolRequest {
        let raw = json!({ "method": "fs/read_text_file", "path": path });
        let mut request = ToolRequest::empty(RequestSource::FsRead, ctx, raw);
        request.kind = ToolKind::Read;
        request.title = format!("Read {path}");
        request.add_path(path, Access::Read, "fs/read_text_file");
        request
    }

    /// An `fs/write_text_file` call the host serves.
    pub fn from_fs_write(path: &str, content: &str, ctx: &SessionContext) -> ToolRequest {
        let raw = json!({ "method": "fs/write_text_file", "path": path, "content": content });
        let mut request = ToolRequest::empty(RequestSource::FsWrite, ctx, raw);
        request.kind = ToolKind::Edit;
        request.title = format!("Write {path}");
        request.add_path(path, Access::Write, "fs/write_text_file");
        let absolute = request.normalise(path);
        request.diffs.push(Diff {
            path: absolute,
            old_text: None,
            new_text: content.to_owned(),
        });
        request
    }

    /// A `terminal/create` call the host serves.
    pub fn from_terminal_create(
        command: &str,
        args: &[String],
        cwd: Option<&str>,
        ctx: &SessionContext,
    ) -> ToolRequest {
        let argv: Vec<String> = std::iter::once(command.to_owned())
            .chain(args.iter().cloned())
            .collect();
        let raw =
            json!({ "method": "terminal/create", "command": command, "args": args, "cwd": cwd });
        let mut request = ToolRequest::empty(RequestSource::TerminalCreate, ctx, raw);
        request.kind = ToolKind::Execute;
        request.title = argv.join(" ");
        request.command = Some(CommandLine {
            argv: Some(argv),
            shell: None,
        });
        if let Some(cwd) = cwd {
            request.set_cwd(cwd);
        }
        request
    }

    fn empty(source: RequestSource, ctx: &SessionContext, raw: Value) -> ToolRequest {
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

    fn normalise(&self, raw: &str) -> PathBuf {
        paths::normalise(raw, &self.cwd, &self.home)
    }

    fn add_path(&mut self, raw: &str, access: Access, origin: &str) {
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
    fn set_cwd(&mut self, cwd: &str) {
        let absolute = self.normalise(cwd);
        if absolute != self.cwd {
            self.add_path(cwd, Access::Read, "cwd");
            self.cwd = absolute;
        }
    }

    fn fill_from_tool_call(&mut self, call: &Map<String, Value>) {
        self.title = str_field(call, "title").unwrap_or_default().to_owned();
        self.declared_kind = str_field(call, "kind").map(ToolKind::parse);
        self.tool_name = call
            .get("_meta")
            .and_then(|m| m.pointer("/claudeCode/toolName"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let input = call
            .get("rawInput")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();

        if let Some(cwd) = str_field(&input, "cwd") {
            self.set_cwd(cwd);
        }
        self.command = command_from_input(&input);
        self.diffs = self.diffs_from(call, &input);
        self.kind = derive_kind(
            self.declared_kind,
            &input,
            self.command.is_some(),
            !self.diffs.is_empty(),
        );
        if self.command.is_none() && self.kind == ToolKind::Execute && !self.title.is_empty() {
            // Gemini CLI sends shell commands only in the title: "CMD [in DIR] (DESCRIPTION)".
            self.command = Some(CommandLine {
                argv: None,
                shell: Some(command_from_title(&self.title)),
            });
        }

        let access = access_for(self.kind);
        for (from, to) in MOVE_KEYS {
            if let (Some(src), Some(dst)) = (str_field(&input, from), str_field(&input, to)) {
                self.add_path(src, Access::Delete, &format!("raw-input.{from}"));
                self.add_path(dst, Access::Write, &format!("raw-input.{to}"));
            }
        }
        for key in PATH_KEYS {
            if let Some(path) = str_field(&input, key) {
                self.add_path(path, access, &format!("raw-input.{key}"));
            }
        }
        if let Some(list) = input.get("paths").and_then(Value::as_array) {
            for path in list.iter().filter_map(Value::as_str) {
                self.add_path(path, access, "raw-input.paths");
            }
        }
        if let Some(locations) = call.get("locations").and_then(Value::as_array) {
            for path in locations
                .iter()
                .filter_map(|l| l.get("path"))
                .filter_map(Value::as_str)
            {
                self.add_path(path, access, "locations");
            }
        }
        let diff_paths: Vec<String> = self
            .diffs
            .iter()
            .map(|d| d.path.display().to_string())
            .collect();
        for path in diff_paths {
            self.add_path(&path, Access::Write, "diff");
        }
    }

    fn diffs_from(&self, call: &Map<String, Value>, input: &Map<String, Value>) -> Vec<Diff> {
        let mut diffs = Vec::new();
        for item in call
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if item.get("type").and_then(Value::as_str) != Some("diff") {
                continue;
            }
            let (Some(path), Some(new_text)) = (
                item.get("path").and_then(Value::as_str),
                item.get("newText").and_then(Value::as_str),
            ) else {
                continue;
            };
            let old_text = item
                .get("oldText")
                .and_then(Value::as_str)
                .map(str::to_owned);
            diffs.push(Diff {
                path: self.normalise(path),
                old_text,
                new_text: new_text.to_owned(),
            });
        }
        let file = PATH_KEYS.iter().find_map(|key| str_field(input, key));
        if let (true, Some(file)) = (diffs.is_empty(), file) {
            let old = str_field(input, "old_string");
            let new = str_field(input, "new_string").or_else(|| str_field(input, "content"));
            if let Some(new) = new {
                diffs.push(Diff {
                    path: self.normalise(file),
                    old_text: old.map(str::to_owned),
                    new_text: new.to_owned(),
                });
            }
        }
        diffs
    }
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

fn parse_options(options: &Value) -> Result<Vec<PermissionOption>> {
    let list = options.as_array().context("`options` is not an array")?;
    let mut parsed = Vec::new();
    for option in list {
        let id = option
            .get("optionId")
            .and_then(Value::as_str)
            .context("an option has no `optionId`")?;
        let kind = option.get("kind").cloned().unwrap_or(Value::Null);
        // An option of a kind this host does not know can never be selected: leave it out.
        let Ok(kind) = serde_json::from_value::<OptionKind>(kind) else {
            continue;
        };
        let name = option.get("name").and_then(Value::as_str).unwrap_or(id);
        parsed.push(PermissionOption {
            id: id.to_owned(),
            name: name.to_owned(),
            kind,
        });
    }
    Ok(parsed)
}

/// `rawInput.command` as a shell string (Claude Code) or an argv array (Codex).
fn command_from_input(input: &Map<String, Value>) -> Option<CommandLine> {
    match input
        .get("command")
        .or_else(|| input.get("cmd"))
        .or_else(|| input.get("argv"))?
    {
        Value::String(shell) => Some(CommandLine {
            argv: None,
            shell: Some(shell.clone()),
        }),
        Value::Array(words) => {
            let argv = words
                .iter()
                .map(|w| w.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>();
            // An argv with a non-string word is not a command we can judge: keep it as text.
            Some(match argv {
                Some(argv) => CommandLine {
                    argv: Some(argv),
                    shell: None,
                },
                None => CommandLine {
                    argv: None,
                    shell: Some(Value::Array(words.clone()).to_string()),
                },
            })
        }
        other => Some(CommandLine {
            argv: None,
            shell: Some(other.to_string()),
        }),
    }
}

/// Strips Gemini CLI's ` [in DIR]` and ` (DESCRIPTION)` suffixes from a shell tool's title.
fn command_from_title(title: &str) -> String {
    let mut command = title.trim();
    if command.ends_with(')')
        && let Some(open) = command.rfind(" (")
    {
        command = command[..open].trim_end();
    }
    if command.ends_with(']')
        && let Some(open) = command.rfind(" [in ")
    {
        command = command[..open].trim_end();
    }
    command.to_owned()
}

/// The kind the content shows, whatever the agent declared: a command executes, a text to
/// write edits, a URL fetches. Without such evidence the declared kind stands.
fn derive_kind(
    declared: Option<ToolKind>,
    input: &Map<String, Value>,
    has_command: bool,
    has_diff: bool,
) -> ToolKind {
    if has_command {
        return ToolKind::Execute;
    }
    if MOVE_KEYS
        .iter()
        .any(|(from, to)| input.contains_key(*from) && input.contains_key(*to))
    {
        return ToolKind::Move;
    }
    if has_diff {
        return match declared {
            Some(kind @ (ToolKind::Delete | ToolKind::Move)) => kind,
            _ => ToolKind::Edit,
        };
    }
    if input.contains_key("url") || input.contains_key("query") && !input.contains_key("pattern") {
        return ToolKind::Fetch;
    }
    match declared {
        Some(kind) => kind,
        None if input.contains_key("pattern") => ToolKind::Search,
        None if PATH_KEYS.iter().any(|k| input.contains_key(*k)) => ToolKind::Read,
        None => ToolKind::Other,
    }
}

/// What a kind does to the paths it names; kinds that do not say are treated as writes.
fn access_for(kind: ToolKind) -> Access {
    match kind {
        ToolKind::Read
        | ToolKind::Search
        | ToolKind::Execute
        | ToolKind::Fetch
        | ToolKind::Think => Access::Read,
        ToolKind::Delete => Access::Delete,
        ToolKind::Edit | ToolKind::Move | ToolKind::SwitchMode | ToolKind::Other => Access::Write,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SessionContext {
        SessionContext {
            session_id: "s".into(),
            cwd: "/ws".into(),
            workspace_roots: vec!["/ws".into()],
            home: "/home/u".into(),
        }
    }

    fn normalise(params: Value, earlier: Option<Value>) -> ToolRequest {
        ToolRequest::from_permission_request(&params, earlier.as_ref(), &ctx()).unwrap()
    }

    #[test]
    fn claude_bash_without_kind_is_execute() {
        let r = normalise(
            json!({"sessionId": "s1", "toolCall": {"toolCallId": "t", "title": "Bash", "rawInput": {"command": "ls -la"}},
                   "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}),
            None,
        );
        assert_eq!(r.kind, ToolKind::Execute);
        assert_eq!(r.command.unwrap().shell.as_deref(), Some("ls -la"));
        assert_eq!(r.session_id, "s1");
        assert_eq!(r.options[0].kind, OptionKind::AllowOnce);
    }

    #[test]
    fn declared_read_with_a_command_is_still_execute() {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "read", "rawInput": {"command": "rm -rf /"}}}),
            None,
        );
        assert_eq!(r.kind, ToolKind::Execute);
        assert_eq!(r.declared_kind, Some(ToolKind::Read));
    }

    #[test]
    fn earlier_tool_call_update_supplies_kind_and_input() {
        let earlier = json!({"toolCallId": "t", "kind": "edit", "rawInput": {"file_path": "~/.ssh/authorized_keys", "content": "k"}});
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "title": "Write"}}),
            Some(earlier),
        );
        assert_eq!(r.kind, ToolKind::Edit);
        assert_eq!(
            r.paths[0].absolute,
            Path::new("/home/u/.ssh/authorized_keys")
        );
        assert_eq!(r.paths[0].access, Access::Write);
        assert_eq!(r.diffs[0].new_text, "k");
    }

    #[test]
    fn codex_argv_and_cwd() {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "rawInput": {"command": ["bash", "-lc", "cargo test"], "cwd": "/elsewhere"}}}),
            None,
        );
        assert_eq!(
            r.command.unwrap().argv.unwrap(),
            ["bash", "-lc", "cargo test"]
        );
        assert_eq!(r.cwd, Path::new("/elsewhere"));
        assert_eq!(r.paths[0].origin, "cwd");
    }

    #[test]
    fn gemini_command_in_title_and_diff_locations() {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "rm -rf ~ [in /ws] (clean up)"}}),
            None,
        );
        assert_eq!(r.command.unwrap().shell.as_deref(), Some("rm -rf ~"));
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "edit", "title": "WriteFile",
                "locations": [{"path": "/ws/a.rs"}],
                "content": [{"type": "diff", "path": "/etc/passwd", "oldText": null, "newText": "x"}]}}),
            None,
        );
        let written: Vec<_> = r
            .paths
            .iter()
            .map(|p| p.absolute.display().to_string())
            .collect();
        assert_eq!(written, ["/ws/a.rs", "/etc/passwd"]);
    }

    #[test]
    fn unknown_option_kinds_are_dropped_and_missing_tool_call_is_an_error() {
        let r = normalise(
            json!({"toolCall": {}, "options": [{"optionId": "x", "kind": "maybe"}]}),
            None,
        );
        assert!(r.options.is_empty());
        assert_eq!(r.kind, ToolKind::Other);
        assert!(ToolRequest::from_permission_request(&json!({}), None, &ctx()).is_err());
    }
}
