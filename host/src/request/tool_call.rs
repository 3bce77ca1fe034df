//! A tool call's fields, as any agent names them: the title, the declared kind, the tool's
//! name, `rawInput` (commands, paths, moves, written text, edits, patches), `locations` and
//! diff content. Every source of requests ends up here.

use serde_json::{Map, Value};

use std::path::Path;

use super::gemini::{dir_from_explanation, gemini_tool, split_title};
use super::{Access, CommandLine, Diff, LISTING, REACH, ToolKind, ToolRequest, str_field};
use crate::paths;
use crate::policy::tools;

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
    "include_pattern",
    "type",
    "-i",
    "-n",
    "-A",
    "-B",
    "-C",
    "multiline",
    "head_limit",
];
/// `rawInput` keys of a content search's file filter (Claude Code's Grep `glob`, Gemini CLI's
/// `include` / `include_pattern`, Codex's `include`).
const FILTER_KEYS: &[&str] = &["glob", "include", "include_pattern"];
/// `rawInput` keys listing the files (or globs of them) a multi-file read reads (Gemini CLI's
/// `read_many_files`).
const MANY_PATHS_KEYS: &[&str] = &["paths", "include"];
/// Most entries of a searched directory looked at for the hidden files it may read.
const MAX_ENTRIES_LOOKED_AT: usize = 4096;

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
        // With no kind declared, a tool the map knows has its usual one.
        let usual = self
            .tool_name
            .as_deref()
            .and_then(tools::find)
            .map(|tool| ToolKind::parse(tool.kinds[0]));
        self.kind = derive_kind(
            self.declared_kind
                .or(mcp.then_some(ToolKind::Other))
                .or(usual),
            &input,
            self.command.is_some(),
            writes || !self.diffs.is_empty(),
        );
        // Fetching a local file's URL is reading that file.
        let local = (self.kind == ToolKind::Fetch)
            .then(|| str_field(&input, "url").and_then(local_file))
            .flatten();
        if let Some(file) = local {
            self.kind = ToolKind::Read;
            self.add_path(&file, Access::Read, "raw-input.url");
        }
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
        for key in MANY_PATHS_KEYS {
            for path in input
                .get(*key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                self.add_path(path, access, &format!("raw-input.{key}"));
                // A glob reads every file it matches: the hidden ones where it starts too.
                if access == Access::Read && path.contains(['*', '?', '[', '{']) {
                    let base = self.normalise(&glob_base(path));
                    self.add_reach(&base, Some(path));
                }
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
        let lists_names = self.lists_names(&input);
        let listed_tool = self.tool_name.as_deref().and_then(tools::find);
        if listed_tool.is_some_and(|tool| tool.id == "list")
            && self.paths.is_empty()
            && input.is_empty()
        {
            // Gemini CLI's `list_directory` carries its directory only as its title.
            let title = self.title.clone();
            self.add_path(title.trim(), Access::Read, "title");
        }
        if self.kind == ToolKind::Search {
            self.add_search_scope(&input, lists_names);
        }
        if lists_names {
            for path in self.paths.iter_mut().filter(|p| p.access == Access::Read) {
                path.origin.insert_str(0, LISTING);
            }
        }
    }

    /// Whether the tool reads only names (a directory listing, a file glob's matches), never a
    /// file's contents: its name is one of the map's `list` or `glob` tools (`LS`, `Glob`,
    /// `list_directory`, `glob`, `list_dir`) or, with no name, its title is Claude Code's
    /// adapter's for them (`List the ... directory's contents`, ``Find `...` ``) and its input
    /// has nothing but theirs.
    fn lists_names(&self, input: &Map<String, Value>) -> bool {
        if !matches!(self.kind, ToolKind::Search | ToolKind::Read) {
            return false;
        }
        match &self.tool_name {
            Some(name) => tools::find(name).is_some_and(|tool| matches!(tool.id, "list" | "glob")),
            None => {
                ["List the ", "Find `"]
                    .iter()
                    .any(|title| self.title.starts_with(title))
                    && input
                        .keys()
                        .all(|key| matches!(key.as_str(), "path" | "pattern" | "ignore"))
            }
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
    /// glob (Claude Code's Glob) where its pattern starts (`~/.ssh/*` searches `~/.ssh`). A
    /// content search (grep) also reads the hidden files of its directory, unless it is known
    /// to skip them.
    fn add_search_scope(&mut self, input: &Map<String, Value>, lists_names: bool) {
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
        let is_grep = !lists_names
            && (GREP_KEYS.iter().any(|k| input.contains_key(*k))
                || self.title.to_ascii_lowercase().starts_with("grep")
                || self.tool_name.as_deref().is_some_and(|t| {
                    let t = t.to_ascii_lowercase();
                    t.contains("grep") || t.contains("search_file_content")
                }));
        if let (false, Some(pattern)) = (is_grep, str_field(input, "pattern")) {
            let base = glob_base(pattern);
            let absolute = paths::normalise(&base, &root, &self.home);
            let raw = absolute.display().to_string();
            self.add_path(&raw, Access::Read, "raw-input.pattern");
        }
        if is_grep && !self.skips_hidden_files() {
            let filter = FILTER_KEYS.iter().find_map(|k| str_field(input, k));
            self.add_reach(&root, filter);
        }
    }

    /// Whether the content search leaves hidden files alone: Codex's `grep_files` runs ripgrep
    /// without `--hidden`. Claude Code's Grep passes `--hidden`; Gemini CLI's search runs
    /// `git grep --untracked`, `grep -r` or a walk with dot files, or ripgrep without it,
    /// depending on its settings, so it is taken to read them.
    fn skips_hidden_files(&self) -> bool {
        self.tool_name.as_deref() == Some("grep_files")
    }

    /// The hidden files directly in `dir` that a recursive read of it (a content search, a
    /// multi-file read's glob) reads unless an ignore file excludes them, and whose names
    /// `filter` (the read's file glob) may match: each added as a file the request may read
    /// ([`REACH`]). Only `dir`'s own entries are looked at (one listing, at most
    /// [`MAX_ENTRIES_LOOKED_AT`]), and only regular files: the searches do not follow links.
    fn add_reach(&mut self, dir: &Path, filter: Option<&str>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let origin = format!("{REACH}search of {}", dir.display());
        for entry in entries.take(MAX_ENTRIES_LOOKED_AT).flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let file = entry.file_type().is_ok_and(|t| t.is_file());
            if file && name.starts_with('.') && filter.is_none_or(|f| may_match(f, name)) {
                let path = dir.join(name).display().to_string();
                self.add_path(&path, Access::Read, &origin);
            }
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

/// The local path a `file:` URL names (`file:///p`, `file://localhost/p`, `file:/p`),
/// percent-decoded, without its query or fragment; `None` for any other URL, a file URL on
/// another host (a network share) and one that does not decode to text.
fn local_file(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once(':')?;
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let path = match rest.strip_prefix("//") {
        Some(authority) => {
            let (host, path) = authority.split_at(authority.find('/')?);
            (host.is_empty() || host.eq_ignore_ascii_case("localhost")).then_some(path)?
        }
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(decoded).ok()
}

/// Whether a search's file glob `filter` may match a file named `name` directly in the searched
/// directory. Known exactly for a plain name and for extension globs (`*.ts`, `**/*.{ts,tsx}`);
/// anything else (classes, negations, other wildcards) may match.
fn may_match(filter: &str, name: &str) -> bool {
    let mut glob = filter.trim();
    while let Some(rest) = glob.strip_prefix("**/") {
        glob = rest;
    }
    if glob.contains('/') {
        // Its segments name a subdirectory: never a file at the top.
        return glob.starts_with('!');
    }
    if !glob.contains(['*', '?', '[', '{', '!']) {
        return glob == name;
    }
    let Some(extensions) = glob.strip_prefix("*.") else {
        return true;
    };
    let extensions = match extensions.strip_prefix('{') {
        Some(list) => match list.strip_suffix('}') {
            Some(list) => list,
            None => return true,
        },
        None => extensions,
    };
    if extensions.contains(['*', '?', '[', '{', '}']) {
        return true;
    }
    extensions
        .split(',')
        .any(|ext| name.len() > ext.len() + 1 && name.ends_with(&format!(".{ext}")))
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
