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

/// `rawInput` keys that name the file or directory a tool works on.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "notebook_path",
    "absolute_path",
    "dir_path",
    "target_file",
    "filename",
    "file",
];
/// `rawInput` keys of a move's source and destination.
const MOVE_KEYS: &[(&str, &str)] = &[
    ("source", "destination"),
    ("source_path", "destination_path"),
    ("sourcePath", "destinationPath"),
    ("old_path", "new_path"),
    ("oldPath", "newPath"),
    ("from", "to"),
];
/// `rawInput` keys holding the text a tool writes into its file (Claude Code's Write, Edit and
/// NotebookEdit, Gemini CLI's write_file and replace, OpenCode's edit, the text editor tool).
const NEW_TEXT_KEYS: &[&str] = &[
    "new_string",
    "content",
    "new_source",
    "newString",
    "new_str",
    "file_text",
    "newText",
    "new_text",
];
/// `rawInput` keys holding the text an edit replaces.
const OLD_TEXT_KEYS: &[&str] = &["old_string", "oldString", "old_str", "oldText", "old_text"];
/// `rawInput` keys that make a request a write by being there: a list of edits (MultiEdit),
/// a patch, a notebook edit's mode (a cell deletion carries no text), Codex's file changes.
const WRITE_KEYS: &[&str] = &["edits", "diff", "patch", "edit_mode", "changes"];
/// `rawInput` keys only a content search (grep) has: its `pattern` is a regex, not a path.
const GREP_KEYS: &[&str] = &[
    "output_mode",
    "glob",
    "include",
    "type",
    "-i",
    "-n",
    "-A",
    "-B",
    "-C",
    "multiline",
    "head_limit",
];

impl ToolRequest {
    /// Normalises the params of a `session/request_permission`, in either protocol version
    /// (see [`permission_subject`]). `earlier` is the merged state of the `tool_call` /
    /// `tool_call_update` notifications seen for the same `toolCallId`; the request's own
    /// fields win over it.
    pub fn from_permission_request(
        params: &Value,
        earlier: Option<&Value>,
        ctx: &SessionContext,
    ) -> Result<ToolRequest> {
        let tool_call = permission_subject(params)?;
        let mut merged = earlier
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, value) in tool_call {
            if !value.is_null() {
                merged.insert(key, value);
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

    /// A request of `method` acp-gate could not read: it is refused without the chain, and
    /// recorded with what it carried (and the options it offered, to reject it with).
    pub fn unreadable(method: &str, params: &Value, ctx: &SessionContext) -> ToolRequest {
        let mut request = ToolRequest::empty(RequestSource::of(method), ctx, params.clone());
        request.title = format!("unreadable `{method}`");
        request.tool_name = Some(method.to_owned());
        request.options = params
            .get("options")
            .and_then(|options| parse_options(options).ok())
            .unwrap_or_default();
        if let Some(session) = params.get("sessionId").and_then(Value::as_str) {
            request.session_id = session.to_owned();
        }
        request
    }

    /// The type of a v2 permission request's `subject` when acp-gate does not know it: such a
    /// request is judged from its title alone, and is at most asked about.
    pub fn unknown_subject(&self) -> Option<&str> {
        if self.source != RequestSource::PermissionRequest || self.raw.get("toolCall").is_some() {
            return None;
        }
        let kind = self.raw.pointer("/subject/type")?.as_str().unwrap_or("?");
        (!KNOWN_SUBJECTS.contains(&kind)).then_some(kind)
    }

    /// What the request does, whoever asks and whenever: its kind, tool, command, working
    /// directory, paths with their access and the text it writes. A grant of an escalation
    /// lets exactly this through once.
    pub fn fingerprint(&self) -> String {
        let facts = json!({
            "kind": self.kind,
            "tool": self.tool_name,
            "source": self.source,
            "command": self.command.as_ref().map(CommandLine::text),
            "cwd": self.cwd,
            "paths": self.paths.iter().map(|p| (&p.absolute, p.access)).collect::<Vec<_>>(),
            "writes": self.diffs.iter().map(|d| (&d.path, &d.new_text)).collect::<Vec<_>>(),
        });
        crate::digest::sha256_hex(facts.to_string().as_bytes())
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

    /// A switch of the session's mode or of a configuration option: `method` with `params`, and
    /// `mode`, the mode it switches to, when it is one (added to the raw JSON as `modeId`).
    pub fn from_switch(
        method: &str,
        params: &Value,
        mode: Option<&str>,
        ctx: &SessionContext,
    ) -> ToolRequest {
        let mut raw = json!({ "method": method });
        if let (Some(raw), Some(params)) = (raw.as_object_mut(), params.as_object()) {
            raw.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
            if let Some(mode) = mode {
                raw.insert("modeId".into(), json!(mode));
            }
        }
        let mut request = ToolRequest::empty(RequestSource::ModeSwitch, ctx, raw);
        request.kind = ToolKind::SwitchMode;
        request.tool_name = Some(method.to_owned());
        request.title = match mode {
            Some(mode) => format!("Switch to mode {mode}"),
            None => {
                let text = |key: &str| match params.get(key) {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                format!("Set {} to {}", text("configId"), text("value"))
            }
        };
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
        // The tool call's `name` (stable in v1 since 2026), else Claude Code's own field, else
        // Gemini CLI's tool name in its call id.
        self.tool_name = call
            .get("name")
            .filter(|name| name.as_str().is_some_and(|n| !n.is_empty()))
            .or_else(|| call.get("_meta")?.pointer("/claudeCode/toolName"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| gemini_tool(str_field(call, "toolCallId")?));
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
        let writes = writes_payload(&input);
        // An MCP tool (Claude Code names them `mcp__server__tool`) does what its server says:
        // a `path` in its input does not make it a read. The adapter's own `mcp__acp__*`
        // tools are Read, Edit, Write and Bash.
        let mcp = [Some(self.title.as_str()), self.tool_name.as_deref()]
            .into_iter()
            .flatten()
            .any(|name| name.starts_with("mcp__") && !name.starts_with("mcp__acp__"));
        self.kind = derive_kind(
            self.declared_kind.or(mcp.then_some(ToolKind::Other)),
            &input,
            self.command.is_some(),
            writes || !self.diffs.is_empty(),
        );
        if self.command.is_none() && self.kind == ToolKind::Execute && !self.title.is_empty() {
            // Gemini CLI sends shell commands only in the title: "CMD [in DIR] (DESCRIPTION)".
            let (command, dir) = split_title(&self.title);
            if let Some(dir) = dir.or_else(|| dir_from_explanation(call)) {
                self.set_cwd(&dir);
            }
            self.command = Some(CommandLine {
                argv: None,
                shell: Some(command),
            });
        }

        // A payload to write makes the named files written, whatever the kind says.
        let access = if writes {
            Access::Write
        } else {
            access_for(self.kind)
        };
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
        self.add_changes(&input);
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
        if self.kind == ToolKind::Search {
            self.add_search_scope(&input);
        }
    }

    /// Codex's `changes` (path to `add` / `delete` / `update`, an update possibly moving the
    /// file): each path with what the change does to it.
    fn add_changes(&mut self, input: &Map<String, Value>) {
        let Some(changes) = input.get("changes").and_then(Value::as_object) else {
            return;
        };
        for (path, change) in changes {
            let kind = change.get("type").and_then(Value::as_str).or_else(|| {
                change
                    .as_object()
                    .and_then(|c| c.keys().next())
                    .map(String::as_str)
            });
            let body = change.get(kind.unwrap_or_default()).unwrap_or(change);
            match kind {
                Some("delete") => self.add_path(path, Access::Delete, "raw-input.changes"),
                _ => match body.get("move_path").and_then(Value::as_str) {
                    Some(destination) => {
                        self.add_path(path, Access::Delete, "raw-input.changes");
                        self.add_path(destination, Access::Write, "raw-input.changes.move_path");
                    }
                    None => self.add_path(path, Access::Write, "raw-input.changes"),
                },
            }
        }
    }

    /// What a search reads: the directory it names, else the working directory, and for a file
    /// glob (Claude Code's Glob) where its pattern starts (`~/.ssh/*` searches `~/.ssh`).
    fn add_search_scope(&mut self, input: &Map<String, Value>) {
        let root = self
            .paths
            .iter()
            .find(|p| p.access == Access::Read)
            .map(|p| p.absolute.clone());
        let root = match root {
            Some(root) => root,
            None => {
                let cwd = self.cwd.display().to_string();
                self.add_path(&cwd, Access::Read, "cwd (a search without a path)");
                self.cwd.clone()
            }
        };
        let is_grep = GREP_KEYS.iter().any(|k| input.contains_key(*k))
            || self.title.to_ascii_lowercase().starts_with("grep")
            || self.tool_name.as_deref().is_some_and(|t| {
                let t = t.to_ascii_lowercase();
                t.contains("grep") || t.contains("search_file_content")
            });
        if let (false, Some(pattern)) = (is_grep, str_field(input, "pattern")) {
            let base = glob_base(pattern);
            let absolute = paths::normalise(&base, &root, &self.home);
            let raw = absolute.display().to_string();
            self.add_path(&raw, Access::Read, "raw-input.pattern");
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
            let path = self.normalise(file);
            let text = |edit: &Map<String, Value>, keys: &[&str]| {
                keys.iter()
                    .find_map(|k| str_field(edit, k))
                    .map(str::to_owned)
            };
            // One edit in the input itself, or a list of them (MultiEdit's `edits`).
            let edits = input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .chain(std::iter::once(input));
            for edit in edits {
                if let Some(new_text) = text(edit, NEW_TEXT_KEYS) {
                    diffs.push(Diff {
                        path: path.clone(),
                        old_text: text(edit, OLD_TEXT_KEYS),
                        new_text,
                    });
                }
            }
        }
        diffs
    }
}

/// Gemini CLI names a call `TOOL-MILLISECONDS` (`packages/cli/src/zed-integration`), newer
/// versions `TOOL-MILLISECONDS-COUNTER` (`packages/cli/src/acp/acpSession.ts`): its tool, when
/// the map knows it as Gemini CLI's, or an MCP tool (`mcp_SERVER_TOOL`).
fn gemini_tool(call_id: &str) -> Option<String> {
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (mut name, stamp) = call_id.rsplit_once('-')?;
    if !numeric(stamp) {
        return None;
    }
    if let Some((head, stamp)) = name.rsplit_once('-')
        && numeric(stamp)
    {
        name = head;
    }
    let known = name.starts_with("mcp_")
        || crate::policy::tools::find(name).is_some_and(|tool| tool.gemini.contains(&name));
    known.then(|| name.to_owned())
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The v2 subject types acp-gate reads.
const KNOWN_SUBJECTS: &[&str] = &["tool_call", "command"];

/// What a permission request is about, as the fields of a tool call: v1's `toolCall`, or v2's
/// `subject` (`{"type": "tool_call", "toolCall"}`; `{"type": "command", "command", "cwd"}`, a
/// shell command; none, or a type acp-gate does not know: the request's `title` alone, which
/// is at most asked about). The v2 `title` and `description` are kept beside it.
fn permission_subject(params: &Value) -> Result<Map<String, Value>> {
    if params.get("toolCall").is_some() && params.get("subject").is_some() {
        // One request in two versions' shapes could show one thing and be judged as another.
        bail!("the params have both a `toolCall` (protocol v1) and a `subject` (protocol v2)");
    }
    if let Some(tool_call) = params.get("toolCall") {
        return match tool_call.as_object() {
            Some(tool_call) => Ok(tool_call.clone()),
            None => bail!("`toolCall` is not an object"),
        };
    }
    let Some(title) = params.get("title").and_then(Value::as_str) else {
        bail!("the params have neither a `toolCall` (protocol v1) nor a `title` (protocol v2)");
    };
    let mut call = Map::new();
    call.insert("title".into(), title.into());
    let subject = match params.get("subject") {
        None | Some(Value::Null) => return Ok(call),
        Some(Value::Object(subject)) => subject,
        Some(_) => bail!("`subject` is not an object"),
    };
    match subject.get("type").and_then(Value::as_str) {
        Some("tool_call") => {
            let Some(tool_call) = subject.get("toolCall").and_then(Value::as_object) else {
                bail!("a `tool_call` subject has no `toolCall` object");
            };
            call.extend(tool_call.clone());
            if str_field(&call, "title").is_none_or(str::is_empty) {
                call.insert("title".into(), title.into());
            }
        }
        Some("command") => {
            let (Some(command), Some(cwd)) = (
                subject.get("command").and_then(Value::as_str),
                subject.get("cwd").and_then(Value::as_str),
            ) else {
                bail!("a `command` subject needs a `command` and a `cwd` string");
            };
            if !Path::new(cwd).is_absolute() {
                bail!("a `command` subject's `cwd` must be absolute, not `{cwd}`");
            }
            let id = subject
                .get("toolCallId")
                .or_else(|| subject.get("terminalId"))
                .cloned()
                .unwrap_or_else(|| "".into());
            call.insert("toolCallId".into(), id);
            call.insert("kind".into(), "execute".into());
            call.insert("rawInput".into(), json!({ "command": command, "cwd": cwd }));
        }
        // Another type: judged by its title, which is never enough to allow.
        _ => {}
    }
    Ok(call)
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

/// Whether `input` carries something to write: text for a file, a list of edits, a patch, a
/// notebook edit, file changes.
fn writes_payload(input: &Map<String, Value>) -> bool {
    NEW_TEXT_KEYS
        .iter()
        .chain(WRITE_KEYS)
        .any(|key| input.get(*key).is_some_and(|v| !v.is_null()))
}

/// Characters that make text mean something to a shell beyond words and prose punctuation: a
/// part of a title that has one is never dropped.
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '\\', '{', '}', '\n', '\r', '*', '[', ']', '~', '=',
];

/// Words after which a `(` opens a subshell rather than a description: the title's last
/// parenthesised part then belongs to the command.
const BEFORE_SUBSHELL: &[&str] = &[
    "time", "-p", "--", "coproc", "then", "do", "else", "elif", "if", "while", "until", "!",
];

/// A shell tool's title split into the command and the directory it runs in. Gemini CLI titles
/// a command `CMD [in DIR] (DESCRIPTION)`; a suffix is dropped only when it cannot be part of
/// the command: the description does not follow an operator or a word that starts a subshell,
/// and neither it nor the directory contains shell syntax. Otherwise the whole title is the
/// command: the checker then sees more, never less.
fn split_title(title: &str) -> (String, Option<String>) {
    let whole = (title.trim().to_owned(), None);
    let mut command = title.trim();
    let mut description = None;
    if let Some(open) = description_start(command) {
        description = Some(&command[open + 2..command.len() - 1]);
        command = command[..open].trim_end();
    }
    let mut dir = None;
    if let Some(open) = command.rfind(" [in ").filter(|_| command.ends_with(']')) {
        let named = &command[open + 5..command.len() - 1];
        if named.is_empty() || named.contains(SHELL_SYNTAX) || named.contains(['(', ')']) {
            return whole;
        }
        dir = Some(named.to_owned());
        command = command[..open].trim_end();
    }
    if let Some(description) = description {
        // After `[in DIR]` a `(` follows a plain word; otherwise look at the word before it.
        let previous = match dir {
            Some(_) => "]",
            None => command.rsplit(char::is_whitespace).next().unwrap_or(""),
        };
        let opens_subshell = command.is_empty()
            || dir.is_none() && previous.ends_with(SHELL_SYNTAX)
            || previous.ends_with(['(', ')', '!'])
            || BEFORE_SUBSHELL.contains(&previous)
            || command.split_whitespace().any(|w| w == "coproc");
        if opens_subshell || description.contains(SHELL_SYNTAX) {
            return whole;
        }
    }
    if command.is_empty() {
        return whole;
    }
    (command.to_owned(), dir)
}

/// Where a title's final parenthesised part starts (at its ` (`), if the title ends with one
/// whose parentheses balance.
fn description_start(title: &str) -> Option<usize> {
    if !title.ends_with(')') {
        return None;
    }
    let mut depth = 0usize;
    for (at, c) in title.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (at > 0 && title[..at].ends_with(' ')).then(|| at - 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The directory of newer Gemini CLI's explanation (`[in DIR] (DESCRIPTION)` in the content).
fn dir_from_explanation(call: &Map<String, Value>) -> Option<String> {
    call.get("content")?
        .as_array()?
        .iter()
        .filter_map(|item| item.pointer("/content/text").and_then(Value::as_str))
        .find_map(|text| {
            let rest = text.trim_start().strip_prefix("[in ")?;
            let dir = &rest[..rest.find(']')?];
            (!dir.is_empty()).then(|| dir.to_owned())
        })
}

/// Where a file glob starts looking: its segments before the first one with a wildcard (`""`
/// for the search's own directory). A pattern whose wildcard part climbs (`..`) or holds an
/// alternative with a `/` is unbounded: it starts at `/`.
fn glob_base(pattern: &str) -> String {
    let wild = |segment: &str| segment.contains(['*', '?', '[', '{']);
    let segments: Vec<&str> = pattern.split('/').collect();
    let literal = segments.iter().take_while(|s| !wild(s)).count();
    let rest = &segments[literal..];
    let climbs = rest.contains(&"..");
    let braces_span = pattern.find('{').is_some_and(|open| {
        pattern[open..]
            .split('}')
            .next()
            .is_some_and(|g| g.contains('/'))
    });
    if climbs || braces_span {
        return "/".to_owned();
    }
    // The last literal segment of a pattern without wildcards names a file: search its parent.
    let literal = if rest.is_empty() {
        literal.saturating_sub(1)
    } else {
        literal
    };
    match segments[..literal].join("/") {
        base if base.is_empty() && pattern.starts_with('/') => "/".to_owned(),
        base => base,
    }
}

/// The kind the content shows, whatever the agent declared: a command executes, a payload to
/// write edits, a URL fetches. Without such evidence the declared kind stands.
fn derive_kind(
    declared: Option<ToolKind>,
    input: &Map<String, Value>,
    has_command: bool,
    writes: bool,
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
    if writes {
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
        assert_eq!(r.cwd, Path::new("/ws"));
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
    /// The paths of `r` as (absolute, access) pairs.
    fn touched(r: &ToolRequest) -> Vec<(String, Access)> {
        r.paths
            .iter()
            .map(|p| (p.absolute.display().to_string(), p.access))
            .collect()
    }

    /// A permission request as Claude Code's adapter sends it: no kind, the tool's input.
    fn claude(title: &str, input: Value) -> ToolRequest {
        normalise(
            json!({"sessionId": "s", "toolCall": {"toolCallId": "toolu_1", "title": title, "rawInput": input}}),
            None,
        )
    }

    #[test]
    fn notebook_edits_are_writes_with_or_without_the_earlier_tool_call() {
        let input = json!({"notebook_path": "/ws/analysis.ipynb", "cell_id": "c1",
            "new_source": "import os\nos.system('id')", "edit_mode": "replace"});
        let r = claude("Edit Notebook /ws/analysis.ipynb", input.clone());
        assert_eq!(r.kind, ToolKind::Edit);
        assert_eq!(
            touched(&r),
            [("/ws/analysis.ipynb".to_owned(), Access::Write)]
        );
        assert_eq!(r.diffs[0].new_text, "import os\nos.system('id')");
        let earlier = json!({"toolCallId": "toolu_1", "kind": "edit", "rawInput": input,
            "locations": [{"path": "/ws/analysis.ipynb"}]});
        let r = normalise(
            json!({"toolCall": {"toolCallId": "toolu_1", "title": "Edit Notebook /ws/analysis.ipynb"}}),
            Some(earlier),
        );
        assert_eq!(r.kind, ToolKind::Edit);
        assert_eq!(r.paths[0].access, Access::Write);
        // Deleting a cell carries no text but still rewrites the notebook.
        let r = claude(
            "Edit Notebook",
            json!({"notebook_path": "~/.ipython/profile_default/startup/x.ipynb", "cell_id": "c1", "edit_mode": "delete"}),
        );
        assert_eq!(r.kind, ToolKind::Edit);
        assert_eq!(
            touched(&r),
            [(
                "/home/u/.ipython/profile_default/startup/x.ipynb".to_owned(),
                Access::Write
            )]
        );
        // Reading a notebook (Claude Code's NotebookRead has a cell_id too) stays a read.
        let r = claude(
            "Read Notebook /ws/a.ipynb",
            json!({"notebook_path": "/ws/a.ipynb", "cell_id": "c1"}),
        );
        assert_eq!(r.kind, ToolKind::Read);
        assert_eq!(r.paths[0].access, Access::Read);
    }

    #[test]
    fn file_content_under_any_key_the_agents_use_is_a_write() {
        for input in [
            json!({"file_path": "/ws/a.rs", "content": "x"}),
            json!({"file_path": "/ws/a.rs", "old_string": "a", "new_string": "b"}),
            json!({"filePath": "/ws/a.rs", "oldString": "a", "newString": "b"}),
            json!({"path": "/ws/a.rs", "old_str": "a", "new_str": "b"}),
            json!({"path": "/ws/a.rs", "file_text": "x"}),
            json!({"path": "/ws/a.rs", "newText": "x"}),
            json!({"file_path": "/ws/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
            json!({"path": "/ws/a.rs", "diff": "@@ -1 +1 @@\n-a\n+b"}),
        ] {
            for declared in [
                None,
                Some("read"),
                Some("think"),
                Some("other"),
                Some("search"),
            ] {
                let mut call = json!({"toolCallId": "t", "title": "x", "rawInput": input});
                if let Some(kind) = declared {
                    call["kind"] = json!(kind);
                }
                let r = normalise(json!({ "toolCall": call }), None);
                assert_eq!(r.kind, ToolKind::Edit, "{input} declared {declared:?}");
                assert_eq!(
                    touched(&r),
                    [("/ws/a.rs".to_owned(), Access::Write)],
                    "{input} declared {declared:?}"
                );
            }
        }
    }

    #[test]
    fn multi_edit_keeps_every_edit() {
        let r = claude(
            "Edit /ws/a.rs",
            json!({"file_path": "/ws/a.rs", "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d", "replace_all": true}]}),
        );
        let texts: Vec<_> = r
            .diffs
            .iter()
            .map(|d| (d.old_text.as_deref(), d.new_text.as_str()))
            .collect();
        assert_eq!(texts, [(Some("a"), "b"), (Some("c"), "d")]);
    }

    #[test]
    fn a_think_or_other_with_a_diff_is_a_write() {
        for declared in ["think", "other", "read"] {
            let r = normalise(
                json!({"toolCall": {"toolCallId": "t", "kind": declared, "title": "Planning",
                    "content": [{"type": "diff", "path": "/home/u/.bashrc", "oldText": null, "newText": "curl x | sh"}]}}),
                None,
            );
            assert_eq!(r.kind, ToolKind::Edit, "{declared}");
            assert_eq!(touched(&r), [("/home/u/.bashrc".to_owned(), Access::Write)]);
        }
        // An MCP tool's `path` does not make it a read.
        let r = claude("mcp__deploy__run", json!({"path": "src"}));
        assert_eq!(r.kind, ToolKind::Other);
        let r = claude("Read File", json!({"file_path": "src/a.rs"}));
        assert_eq!(r.kind, ToolKind::Read);
        // Claude Code's Task and TodoWrite are thoughts without a file payload.
        let r = claude(
            "Update TODOs",
            json!({"todos": [{"content": "fix", "status": "pending", "activeForm": "Fixing"}]}),
        );
        assert_eq!(r.kind, ToolKind::Other);
        assert!(r.paths.is_empty());
    }

    #[test]
    fn moves_name_both_ends() {
        let r = claude(
            "Move",
            json!({"source": "src/old.rs", "destination": "/home/u/.local/bin/ls"}),
        );
        assert_eq!(r.kind, ToolKind::Move);
        assert_eq!(
            touched(&r),
            [
                ("/ws/src/old.rs".to_owned(), Access::Delete),
                ("/home/u/.local/bin/ls".to_owned(), Access::Write)
            ]
        );
    }

    #[test]
    fn codex_patch_changes_name_every_file_with_what_happens_to_it() {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "call_1", "kind": "edit", "status": "pending",
                "title": "Edit a.rs, old.rs",
                "locations": [{"path": "/ws/b.rs"}, {"path": "/ws/old.rs"}],
                "rawInput": {"call_id": "call_1", "turn_id": "1", "reason": null, "grant_root": null,
                    "changes": {
                        "/ws/a.rs": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": "/ws/b.rs"},
                        "/ws/old.rs": {"type": "delete", "content": "x"},
                        "/ws/.git/hooks/pre-commit": {"add": {"content": "#!/bin/sh\nid"}}}}}}),
            None,
        );
        assert_eq!(r.kind, ToolKind::Edit);
        let mut paths = touched(&r);
        paths.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            paths,
            [
                ("/ws/.git/hooks/pre-commit".to_owned(), Access::Write),
                ("/ws/a.rs".to_owned(), Access::Delete),
                ("/ws/b.rs".to_owned(), Access::Write),
                ("/ws/old.rs".to_owned(), Access::Delete),
                ("/ws/old.rs".to_owned(), Access::Write),
            ]
        );
    }

    #[test]
    fn searches_read_their_directory_or_the_working_directory() {
        // Claude Code's Glob and Grep without a path search the working directory.
        let r = claude("Find `**/*.rs`", json!({"pattern": "**/*.rs"}));
        assert_eq!(r.kind, ToolKind::Search);
        assert_eq!(touched(&r), [("/ws".to_owned(), Access::Read)]);
        let r = claude("grep \"TODO\"", json!({"pattern": "TODO"}));
        assert_eq!(touched(&r), [("/ws".to_owned(), Access::Read)]);
        // A glob's pattern says where it looks; a grep's pattern is a regex, not a path.
        let r = claude("Find `~/.ssh/id_*`", json!({"pattern": "~/.ssh/id_*"}));
        assert_eq!(
            touched(&r),
            [
                ("/ws".to_owned(), Access::Read),
                ("/home/u/.ssh".to_owned(), Access::Read)
            ]
        );
        let r = claude(
            "Find `/etc` `*.conf`",
            json!({"pattern": "*.conf", "path": "/etc"}),
        );
        assert_eq!(touched(&r), [("/etc".to_owned(), Access::Read)]);
        let r = claude("Find `src/../../*`", json!({"pattern": "src/../../**/*"}));
        assert!(touched(&r).contains(&("/".to_owned(), Access::Read)));
        let r = claude("Find `**/../x`", json!({"pattern": "**/../secret"}));
        assert!(touched(&r).contains(&("/".to_owned(), Access::Read)));
        let r = claude(
            "grep -n \"/api/users\" src",
            json!({"pattern": "/api/users", "path": "src", "glob": "*.ts", "output_mode": "content", "-n": true}),
        );
        assert_eq!(touched(&r), [("/ws/src".to_owned(), Access::Read)]);
        // A pattern is never a path to write.
        assert!(r.paths.iter().all(|p| p.access == Access::Read));
    }

    #[test]
    fn title_only_commands_drop_only_what_cannot_be_command() {
        let split = |t: &str| split_title(t);
        let plain = |c: &str| (c.to_owned(), None::<String>);
        let with_dir = |c: &str, d: &str| (c.to_owned(), Some(d.to_owned()));
        assert_eq!(split("npm test"), plain("npm test"));
        assert_eq!(split("npm test (Run the tests)"), plain("npm test"));
        assert_eq!(split("ls -la [in src]"), with_dir("ls -la", "src"));
        assert_eq!(
            split("cargo build [in crates/core] (Build the core crate (debug))"),
            with_dir("cargo build", "crates/core")
        );
        assert_eq!(
            split("git status (Check the project's status!)"),
            plain("git status")
        );
        // A part with shell syntax, or a `(` where a subshell can start, stays.
        for title in [
            "echo ok; (rm -rf ~)",
            "echo ok && (rm -rf ~)",
            "true || (curl x | sh)",
            "time (rm -rf /)",
            "time -p (rm -rf /)",
            "coproc worker (rm -rf /)",
            "f () (rm -rf /)",
            "echo $(whoami)",
            "(cd / && rm -rf x)",
            "ls (x; rm -rf ~)",
            "ls (list $HOME)",
            "rm -rf ~ (x)",
            "ls [in $HOME]",
            "ls [in ~]",
            "ls [in /tmp;rm -rf ~]",
            " (only a description)",
        ] {
            assert_eq!(split(title), plain(title.trim()), "{title}");
        }
    }

    #[test]
    fn gemini_call_ids_name_their_tool() {
        let named = |id: &str| {
            normalise(
                json!({"toolCall": {"toolCallId": id, "kind": "edit", "title": "Writing to .env"}}),
                None,
            )
            .tool_name
        };
        assert_eq!(
            named("write_file-1732431234567").as_deref(),
            Some("write_file")
        );
        assert_eq!(
            named("run_shell_command-1").as_deref(),
            Some("run_shell_command")
        );
        // Not Gemini CLI's shape, or not one of its tools: no name.
        assert_eq!(named("toolu_01Edit"), None);
        assert_eq!(named("write_file-x1"), None);
        assert_eq!(named("Bash-12"), None);
        assert_eq!(named("my_tool-12"), None);
    }

    #[test]
    fn gemini_title_only_commands_run_in_their_directory() {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "make clean [in ../other] (Clean)"}}),
            None,
        );
        assert_eq!(touched(&r), [("/other".to_owned(), Access::Read)]);
        assert_eq!(r.cwd, Path::new("/other"));
        assert_eq!(r.command.unwrap().shell.as_deref(), Some("make clean"));
        // Newer Gemini CLI: the title is the command, the directory is in the explanation.
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "rm -rf build",
                "content": [{"type": "content", "content": {"type": "text", "text": "[in /home/u] (Clean up)"}}]}}),
            None,
        );
        assert_eq!(r.command.unwrap().shell.as_deref(), Some("rm -rf build"));
        assert_eq!(r.cwd, Path::new("/home/u"));
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "echo ok; (rm -rf ~)"}}),
            None,
        );
        assert_eq!(
            r.command.unwrap().shell.as_deref(),
            Some("echo ok; (rm -rf ~)")
        );
    }

    #[test]
    fn v2_subjects_read_as_the_tool_calls_they_describe() {
        let command = normalise(
            json!({"sessionId": "s", "title": "Run tests", "subject": {"type": "command", "command": "cargo test", "cwd": "/ws/crate", "terminalId": "t9"}}),
            None,
        );
        assert_eq!(command.kind, ToolKind::Execute);
        assert_eq!(
            command.command.as_ref().unwrap().shell.as_deref(),
            Some("cargo test")
        );
        assert_eq!(command.cwd, PathBuf::from("/ws/crate"));
        assert_eq!(command.tool_call_id, "t9");
        assert_eq!(command.title, "Run tests");
        assert_eq!(command.unknown_subject(), None);

        let call = normalise(
            json!({"sessionId": "s", "title": "Edit", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c", "name": "Write", "rawInput": {"file_path": "/ws/a.rs", "content": "x"}}}}),
            None,
        );
        assert_eq!(
            (call.kind, call.tool_name.as_deref()),
            (ToolKind::Edit, Some("Write"))
        );
        assert_eq!(
            call.title, "Edit",
            "the request's title where the tool call has none"
        );

        let bare = normalise(json!({"sessionId": "s", "title": "Tidy up"}), None);
        assert_eq!(
            (bare.kind, bare.title.as_str()),
            (ToolKind::Other, "Tidy up")
        );
        let odd = normalise(
            json!({"sessionId": "s", "title": "cargo test", "subject": {"type": "_x", "command": "rm -rf /"}}),
            None,
        );
        assert_eq!(odd.unknown_subject(), Some("_x"));
        assert!(
            odd.command.is_none(),
            "nothing is read from a subject of an unknown type"
        );

        for unreadable in [
            json!({"sessionId": "s", "subject": {"type": "command", "command": "ls", "cwd": "/ws"}}),
            json!({"sessionId": "s", "title": "ls", "subject": {"type": "command", "command": "ls", "cwd": "ws"}}),
            json!({"sessionId": "s", "title": "ls", "subject": {"type": "tool_call"}}),
            json!({"sessionId": "s", "title": "ls", "subject": "command"}),
            json!({"sessionId": "s", "toolCall": "ls"}),
            json!({"sessionId": "s", "title": "ls", "toolCall": {"toolCallId": "t", "title": "ls"},
                   "subject": {"type": "command", "command": "rm -rf ~", "cwd": "/ws"}}),
        ] {
            assert!(
                ToolRequest::from_permission_request(&unreadable, None, &ctx()).is_err(),
                "{unreadable}"
            );
        }
    }
}
