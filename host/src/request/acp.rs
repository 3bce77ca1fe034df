//! ACP's requests: `session/request_permission` in either protocol version, and the client
//! calls acp-gate serves itself (`fs/read_text_file`, `fs/write_text_file`, `terminal/create`)
//! and the switches of a session's mode it judges.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use super::{
    Access, CommandLine, Diff, OptionKind, PermissionOption, RequestSource, SessionContext,
    ToolKind, ToolRequest, str_field,
};

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
