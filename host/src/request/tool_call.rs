//! A tool call's fields, as any agent names them: the title, the declared kind, the tool's
//! name, `rawInput` (commands, paths, moves, written text, edits, patches), `locations` and
//! diff content. Every source of requests ends up here.

use serde_json::{Map, Value};

use super::gemini::{dir_from_explanation, gemini_tool, split_title};
use super::{Access, CommandLine, Diff, ToolKind, ToolRequest, str_field};
use crate::paths;

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
    pub(super) fn fill_from_tool_call(&mut self, call: &Map<String, Value>) {
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
