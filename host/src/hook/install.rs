//! `acp-gate hook install` / `uninstall`: acp-gate's entry in an agent's settings file, put in
//! beside whatever is there (other hooks, other settings, unknown keys, a TOML file's comments)
//! and taken out again, exactly. Installing twice leaves one entry. A change is planned first
//! ([`plan`]), shown as a diff, and written atomically ([`Plan::write`]).
//!
//! Where each agent reads hooks (the agents' own documentation and sources):
//!
//! | agent | `--user` | `--managed` | the entry |
//! |---|---|---|---|
//! | Claude Code | `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`) | `/etc/claude-code/managed-settings.json` | `hooks.PreToolUse`, `onFailure: "block"` |
//! | Codex | `~/.codex/config.toml` (`$CODEX_HOME`) | `/etc/codex/config.toml` | `[[hooks.PreToolUse]]`, `[[hooks.PermissionRequest]]` |
//! | Gemini CLI | `~/.gemini/settings.json` | `/etc/gemini-cli/settings.json` (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`) | `hooks.BeforeTool`, named `acp-gate` |
//! | Copilot CLI | `~/.copilot/hooks/acp-gate.json` (`$COPILOT_HOME`) | none | `hooks.preToolUse` |
//!
//! A project's settings are the repository's: a commit, or the agent editing the file, can
//! drop the hook or turn hooks off without a word, so `--project` is refused for every agent,
//! with what makes it unsafe for that one ([`project_refusal`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::settings::{Json, JsonText};
use crate::request::hook::Agent;

/// Whose settings the hook goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own settings: every session of theirs.
    User,
    /// The repository's settings: refused (see [`project_refusal`]).
    Project,
    /// The machine's managed (system) settings, above the user's and the project's.
    Managed,
}

/// Whether the entry goes in or comes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Install,
    Uninstall,
}

/// A change to one settings file, planned.
#[derive(Debug)]
pub struct Plan {
    pub path: PathBuf,
    /// The file as it is (empty when there is none).
    pub before: String,
    /// The file as it would be.
    pub after: String,
    /// Whether the file goes (an uninstall that leaves nothing in a file install made, or in
    /// Copilot's file of acp-gate's own), with the directories install made for it.
    pub remove: bool,
    /// Whether it puts acp-gate's entry in (its text before is kept, to undo exactly).
    installs: bool,
    /// What the user should know about this agent's hooks.
    pub notes: Vec<String>,
}

impl Plan {
    pub fn changes(&self) -> bool {
        self.before != self.after || self.remove
    }

    /// Writes the file (through a temporary file renamed over it, keeping its permissions;
    /// through a symbolic link to where it points), or removes it. What install created (the
    /// file, its directories) and a changed file's text before it are noted in the state
    /// directory ([`Made`]), so that uninstall leaves everything as it was.
    pub fn write(&self) -> Result<()> {
        let path = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let mut made = Made::open()?;
        if !self.installs {
            made.originals.remove(&self.path);
        }
        if self.remove {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            made.created.retain(|p| *p != self.path);
            // Directories install made, emptied: from the deepest up.
            for dir in self.path.ancestors().skip(1) {
                if !made.created.iter().any(|p| p == dir) || std::fs::remove_dir(dir).is_err() {
                    break;
                }
                made.created.retain(|p| p != dir);
            }
            return made.save();
        }
        if !path.exists() {
            // The file and each directory above it that is not there yet.
            let missing = self.path.ancestors().take_while(|dir| !dir.exists());
            for missing in missing {
                if !made.created.iter().any(|p| p == missing) {
                    made.created.push(missing.to_path_buf());
                }
            }
        } else if self.installs {
            // The text before the first install (a second one only points the entry elsewhere).
            made.originals
                .entry(self.path.clone())
                .or_insert_with(|| self.before.clone());
        }
        let mode = std::fs::metadata(&path).ok().map(|m| m.permissions());
        crate::state::write_atomically(&path, self.after.as_bytes())?;
        if let Some(mode) = mode {
            std::fs::set_permissions(&path, mode)
                .with_context(|| format!("{}: cannot keep its permissions", path.display()))?;
        }
        made.save()
    }
}

/// What `hook install` changed, to undo exactly: the settings files and directories it created,
/// and the text of each file it added to before it did (`hook-installs.json` in the state
/// directory).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Made {
    #[serde(skip)]
    path: PathBuf,
    created: Vec<PathBuf>,
    originals: std::collections::BTreeMap<PathBuf, String>,
}

impl Made {
    fn open() -> Result<Made> {
        let path = crate::state::dir().join("hook-installs.json");
        let made = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{}: not what `hook install` writes", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Made::default(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Ok(Made { path, ..made })
    }

    fn save(&self) -> Result<()> {
        crate::state::write_atomically(&self.path, &serde_json::to_vec_pretty(self)?)
    }
}

/// The hook's timeout, in seconds: far above a decision's, well below the agents' defaults.
const TIMEOUT_SECONDS: u64 = 30;

/// What a hook that waits for a reviewer needs beyond its `--wait`: the decision itself, and
/// the answer's way back.
const WAIT_MARGIN_SECONDS: u64 = 10;

/// The timeout of the hook `command`, in seconds: [`TIMEOUT_SECONDS`], or, for a hook that
/// waits for a reviewer (`--wait DURATION`), that long and a margin, so that the agent never
/// gives up on the hook before the hook gives up on the reviewer (some agents run the call
/// then).
fn timeout_of(command: &str) -> u64 {
    let words: Vec<&str> = command.split_whitespace().collect();
    let wait = words.iter().enumerate().find_map(|(at, word)| match *word {
        "--wait" => words.get(at + 1).copied(),
        _ => word.strip_prefix("--wait="),
    });
    let waits = wait
        .and_then(|wait| crate::args::parse_duration(wait).ok())
        .map_or(0, |wait| wait.as_secs_f64().ceil() as u64);
    TIMEOUT_SECONDS.max(waits + WAIT_MARGIN_SECONDS)
}

/// Plans installing (or uninstalling) `command` as `agent`'s hook in its settings for `scope`.
pub fn plan(agent: Agent, scope: Scope, action: Action, command: &str) -> Result<Plan> {
    let path = match scope {
        Scope::Project => bail!("{}", project_refusal(agent)),
        Scope::User => user_settings(agent)?,
        Scope::Managed => managed_settings(agent)?,
    };
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    // Codex runs a user's hook only once trusted: the trust goes in with it, keyed by the
    // file Codex reads it from.
    let trust = (agent == Agent::Codex && scope == Scope::User)
        .then(|| std::path::absolute(&path))
        .transpose()?;
    let after = match agent {
        Agent::Codex => edit_toml(&before, action, command, trust.as_deref()),
        _ => edit_json(agent, &before, action, command),
    }
    .with_context(|| format!("{}", path.display()))?;
    let made = Made::open()?;
    let uninstalls = action == Action::Uninstall && after != before;
    let created = made.created.contains(&path);
    let remove = uninstalls && blank(agent, &after) && (agent == Agent::Copilot || created);
    // A file install added to, left as it was then but for acp-gate's entry: its text then,
    // byte for byte (an edit rewrites what it goes into in its own layout).
    let after = match made.originals.get(&path) {
        Some(original) if uninstalls && same(agent, original, &after) => original.clone(),
        _ => after,
    };
    Ok(Plan {
        notes: notes(agent, scope, action),
        path,
        before,
        after: if remove { String::new() } else { after },
        remove,
        installs: action == Action::Install,
    })
}

/// Whether two texts of a settings file say the same.
fn same(agent: Agent, one: &str, other: &str) -> bool {
    match agent {
        Agent::Codex => matches!(
            (one.parse::<toml::Table>(), other.parse::<toml::Table>()),
            (Ok(a), Ok(b)) if a == b
        ),
        _ => {
            let read = |text: &str| match text.trim() {
                "" => Ok(serde_json::json!({})),
                text => serde_json::from_str::<serde_json::Value>(text),
            };
            matches!((read(one), read(other)), (Ok(a), Ok(b)) if a == b)
        }
    }
}

/// Whether a settings file holds nothing once acp-gate's entry is out: no text, an empty
/// object, or (Copilot's file of acp-gate's own) nothing but its `version`.
fn blank(agent: Agent, text: &str) -> bool {
    if text.trim().is_empty() {
        return true;
    }
    if agent == Agent::Codex {
        return false;
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(members)) => members
            .keys()
            .all(|key| agent == Agent::Copilot && key == "version"),
        _ => false,
    }
}

/// Why a project-level install is refused for `agent`.
pub fn project_refusal(agent: Agent) -> String {
    let why = match agent {
        Agent::Claude => {
            "a project's `.claude/settings.json` is the repository's: a commit, or the agent \
             editing it, can drop the hook, and `.claude/settings.local.json` can set \
             `disableAllHooks`; Claude Code follows either without a word"
        }
        Agent::Codex => {
            "a project's `.codex/config.toml` is the repository's: a commit can change or \
             remove the hook (and Codex runs a project's hook only once you trust it)"
        }
        Agent::Gemini => {
            "a trusted project's `.gemini/settings.json` overrides the user's: it can set \
             `hooksConfig.enabled = false`, list the hook in `hooksConfig.disabled`, or drop it"
        }
        Agent::Copilot => {
            "Copilot CLI loads `.github/hooks/*.json` from the repository as it is: a commit \
             can remove or replace the hook's file"
        }
    };
    let instead = match agent {
        Agent::Copilot => "Install it for the user (`--user`)",
        _ => "Install it for the user (`--user`) or the machine (`--managed`)",
    };
    format!(
        "acp-gate does not install {}'s hook in a project: {why}. {instead} instead.",
        agent.title()
    )
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("$HOME is not set")
}

/// `$VAR`, else `~/DEFAULT` (an empty `$VAR` too: it would write into the current directory).
fn dir_or_home(var: &str, default: &str) -> Result<PathBuf> {
    match std::env::var_os(var).filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(dir.into()),
        None => Ok(home()?.join(default)),
    }
}

/// The directory of `agent`'s own settings for the user.
pub(crate) fn user_dir(agent: Agent) -> Result<PathBuf> {
    match agent {
        Agent::Claude => dir_or_home("CLAUDE_CONFIG_DIR", ".claude"),
        Agent::Codex => dir_or_home("CODEX_HOME", ".codex"),
        Agent::Gemini => Ok(home()?.join(".gemini")),
        Agent::Copilot => dir_or_home("COPILOT_HOME", ".copilot"),
    }
}

pub(crate) fn user_settings(agent: Agent) -> Result<PathBuf> {
    Ok(user_dir(agent)?.join(match agent {
        Agent::Claude | Agent::Gemini => "settings.json",
        Agent::Codex => "config.toml",
        Agent::Copilot => "hooks/acp-gate.json",
    }))
}

pub(crate) fn managed_settings(agent: Agent) -> Result<PathBuf> {
    let macos = cfg!(target_os = "macos");
    Ok(match agent {
        Agent::Claude if macos => {
            "/Library/Application Support/ClaudeCode/managed-settings.json".into()
        }
        Agent::Claude => "/etc/claude-code/managed-settings.json".into(),
        Agent::Codex => "/etc/codex/config.toml".into(),
        Agent::Gemini => match std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH") {
            Some(path) => path.into(),
            None if macos => "/Library/Application Support/GeminiCli/settings.json".into(),
            None => "/etc/gemini-cli/settings.json".into(),
        },
        Agent::Copilot => bail!(
            "Copilot CLI has no machine-wide hooks: install acp-gate's for each user (`--user`)"
        ),
    })
}

/// What the user should know after installing `agent`'s hook at `scope`.
fn notes(agent: Agent, scope: Scope, action: Action) -> Vec<String> {
    if action == Action::Uninstall {
        return Vec::new();
    }
    let mut notes = vec![format!(
        "{} reads its hooks when a session starts: sessions already running keep their old ones",
        agent.title()
    )];
    notes.push(match agent {
        Agent::Claude => "`onFailure: \"block\"` makes a hook that crashes, times out or is \
            missing block the call (Claude Code 2.1.295 and later; older versions let the call \
            through, so keep acp-gate where the entry points)"
            .to_owned(),
        Agent::Codex if scope == Scope::User => "Codex runs a hook from your own config only \
            once it is trusted: acp-gate's entries are trusted as Codex's `/hooks` screen trusts \
            them (an entry changed by hand needs trusting again there); a hook that fails or \
            times out lets the call through (Codex's approval policy then applies)"
            .to_owned(),
        Agent::Codex => "a hook in the system config is trusted and cannot be turned off by \
            users; a hook that fails or times out lets the call through (Codex's approval \
            policy then applies)"
            .to_owned(),
        Agent::Gemini => "Gemini CLI blocks a call when its hook is missing or exits with a \
            code other than 0 and 1 saying why (acp-gate always does); a hook killed without a \
            word or timed out lets it through; a project can still list `acp-gate` in \
            `hooksConfig.disabled`"
            .to_owned(),
        Agent::Copilot => "Copilot CLI refuses a call when its hook fails (an exit code, a \
            crash, a missing acp-gate), but lets it through when the hook times out"
            .to_owned(),
    });
    notes
}

/// Whether `command` is acp-gate's hook for `agent` (`.../acp-gate hook AGENT ...`), whatever
/// the path it was installed from.
fn is_ours(agent: Agent, command: &str) -> bool {
    our_program(agent, command).is_some()
}

/// The program `command` runs (its first word), when `command` is acp-gate's hook for `agent`.
pub(crate) fn our_program(agent: Agent, command: &str) -> Option<&str> {
    // The program is the first word, quoted as `shell_word` quotes a path with spaces.
    let command = command.trim_start();
    let (program, rest) = match command.chars().next() {
        Some(quote @ ('\'' | '"')) => command[1..].split_once(quote)?,
        _ => command
            .split_once(char::is_whitespace)
            .unwrap_or((command, "")),
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    (program.rsplit('/').next() == Some("acp-gate")
        && words.windows(2).any(|w| w == ["hook", agent.name()]))
    .then_some(program)
}

/// `word` as one POSIX shell word.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// How an agent's JSON settings hold hooks: `hooks.EVENT` is a list of matcher groups each
/// with a `hooks` list of handlers (Claude Code, Gemini CLI), or a list of handlers (Copilot).
pub(crate) struct JsonLayout {
    pub(crate) events: &'static [&'static str],
    /// A group's matcher, or `None` for handlers straight in the event's list.
    pub(crate) matcher: Option<&'static str>,
    /// The key of a handler that holds its command.
    pub(crate) command_key: &'static str,
}

pub(crate) fn json_layout(agent: Agent) -> JsonLayout {
    match agent {
        Agent::Claude => JsonLayout {
            events: &["PreToolUse"],
            matcher: Some("*"),
            command_key: "command",
        },
        Agent::Gemini => JsonLayout {
            events: &["BeforeTool"],
            matcher: Some("*"),
            command_key: "command",
        },
        // (Codex's settings are TOML: `edit_toml`.)
        Agent::Copilot | Agent::Codex => JsonLayout {
            events: &["preToolUse"],
            matcher: None,
            command_key: "bash",
        },
    }
}

/// The handler acp-gate adds for `agent`.
fn json_handler(agent: Agent, command: &str) -> Json {
    let s = Json::string;
    let (timeout_key, timeout) = json_timeout(agent, command);
    match agent {
        Agent::Claude => Json::object(vec![
            ("type", s("command")),
            ("command", s(command)),
            (timeout_key, timeout),
            ("onFailure", s("block")),
        ]),
        Agent::Gemini => Json::object(vec![
            ("name", s("acp-gate")),
            ("type", s("command")),
            ("command", s(command)),
            (timeout_key, timeout),
            ("description", s("acp-gate decides every tool call")),
        ]),
        Agent::Copilot | Agent::Codex => Json::object(vec![
            ("type", s("command")),
            ("bash", s(command)),
            (timeout_key, timeout),
        ]),
    }
}

/// The key and value of the hook `command`'s timeout in `agent`'s JSON settings (Gemini CLI's
/// in milliseconds).
fn json_timeout(agent: Agent, command: &str) -> (&'static str, Json) {
    let seconds = timeout_of(command);
    match agent {
        Agent::Gemini => ("timeout", Json::number(seconds * 1000)),
        Agent::Copilot | Agent::Codex => ("timeoutSec", Json::number(seconds)),
        Agent::Claude => ("timeout", Json::number(seconds)),
    }
}

/// `text` (a JSON settings file) with acp-gate's entry installed or taken out; unchanged
/// when there is nothing to do.
fn edit_json(agent: Agent, text: &str, action: Action, command: &str) -> Result<String> {
    let mut file = JsonText::parse(text)?;
    let layout = json_layout(agent);
    let root = &mut file.value;
    let changed = match action {
        Action::Install => {
            if agent == Agent::Copilot && root.member("version")?.is_none() {
                root.member_or("version", Json::number(1))?;
            }
            let hooks = root.member_or("hooks", Json::Object(Vec::new()))?;
            let mut changed = false;
            for event in layout.events {
                let Json::Array(list) = hooks
                    .member_or(event, Json::Array(Vec::new()))
                    .with_context(|| "`hooks` is not an object")?
                else {
                    bail!("`hooks.{event}` is not a list");
                };
                changed |= install_json(agent, &layout, list, command)?;
            }
            changed
        }
        Action::Uninstall => {
            let Some(hooks) = root.member("hooks")? else {
                return Ok(text.to_owned());
            };
            let mut changed = false;
            for event in layout.events {
                let Some(list) = hooks.member(event)? else {
                    continue;
                };
                let Json::Array(items) = list else {
                    bail!("`hooks.{event}` is not a list");
                };
                if uninstall_json(agent, &layout, items)? {
                    changed = true;
                    // A list acp-gate emptied goes; so does `hooks` then.
                    if items.is_empty() {
                        hooks.remove(event);
                    }
                }
            }
            if changed && hooks.is_empty() {
                root.remove("hooks");
            }
            changed
        }
    };
    match changed {
        true => file.render(),
        false => Ok(text.to_owned()),
    }
}

/// The command of `handler` when it is acp-gate's hook for `agent`.
fn ours(agent: Agent, layout: &JsonLayout, handler: &mut Json) -> Result<bool> {
    Ok(handler
        .member(layout.command_key)?
        .and_then(|command| command.as_str())
        .is_some_and(|command| is_ours(agent, &command)))
}

/// Adds acp-gate's handler to an event's list, or points the one there at `command`; whether
/// anything changed.
fn install_json(
    agent: Agent,
    layout: &JsonLayout,
    list: &mut Vec<Json>,
    command: &str,
) -> Result<bool> {
    for item in list.iter_mut() {
        // Read on a copy: an item left alone keeps its text.
        let mut read = item.clone();
        let handlers: Vec<&mut Json> = match layout.matcher {
            None => vec![&mut read],
            Some(_) => match read.member("hooks")? {
                Some(Json::Array(handlers)) => handlers.iter_mut().collect(),
                _ => Vec::new(),
            },
        };
        for handler in handlers {
            if ours(agent, layout, handler)? {
                // Installed already (from another path, perhaps): it runs this acp-gate now,
                // with the timeout its command needs.
                let slot = handler.member_or(layout.command_key, Json::string(command))?;
                if slot.as_str().as_deref() == Some(command) {
                    return Ok(false);
                }
                *slot = Json::string(command);
                let (key, timeout) = json_timeout(agent, command);
                let slot = handler.member_or(key, timeout.clone())?;
                *slot = timeout;
                *item = read;
                return Ok(true);
            }
        }
    }
    let handler = json_handler(agent, command);
    list.push(match layout.matcher {
        None => handler,
        Some(matcher) => Json::object(vec![
            ("matcher", Json::string(matcher)),
            ("hooks", Json::Array(vec![handler])),
        ]),
    });
    Ok(true)
}

/// Takes acp-gate's handlers out of an event's list (and a group it empties); whether any
/// was there.
fn uninstall_json(agent: Agent, layout: &JsonLayout, list: &mut Vec<Json>) -> Result<bool> {
    let mut removed = false;
    let mut kept = Vec::with_capacity(list.len());
    for item in std::mem::take(list) {
        // Read on a copy: an item left alone keeps its text.
        let mut read = item.clone();
        match layout.matcher {
            None => {
                if ours(agent, layout, &mut read)? {
                    removed = true;
                    continue;
                }
            }
            Some(_) => {
                if let Some(Json::Array(handlers)) = read.member("hooks")? {
                    let had = handlers.len();
                    let mut left = Vec::with_capacity(had);
                    for mut handler in std::mem::take(handlers) {
                        match ours(agent, layout, &mut handler)? {
                            true => left.push(None),
                            false => left.push(Some(handler)),
                        }
                    }
                    if left.iter().any(Option::is_none) {
                        removed = true;
                        let left: Vec<Json> = left.into_iter().flatten().collect();
                        // A group acp-gate emptied goes.
                        if left.is_empty() {
                            continue;
                        }
                        *handlers = left;
                        kept.push(read);
                        continue;
                    }
                }
            }
        }
        kept.push(item);
    }
    *list = kept;
    Ok(removed)
}

/// Codex's events acp-gate answers (before every tool, and at its approval prompt), with the
/// names Codex's hook trust gives them.
pub(crate) const CODEX_EVENTS: [(&str, &str); 2] = [
    ("PreToolUse", "pre_tool_use"),
    ("PermissionRequest", "permission_request"),
];

/// `text` (Codex's `config.toml`) with acp-gate's entries installed or taken out; its
/// comments and layout kept. With `trust` (the file's own absolute path, for a user's file),
/// the entries acp-gate installs are trusted as Codex's `/hooks` screen trusts them, and on
/// uninstall their trust goes with them (another hook's moves with it, where taking acp-gate's
/// out moved it up).
fn edit_toml(text: &str, action: Action, command: &str, trust: Option<&Path>) -> Result<String> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = text.parse().context("not TOML that acp-gate can read")?;
    if action == Action::Uninstall && doc.get("hooks").is_none() {
        return Ok(text.to_owned());
    }
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_like_mut()
        .context("`hooks` is not a table")?;
    let ours = |handler: &dyn toml_edit::TableLike| {
        handler
            .get("command")
            .and_then(Item::as_str)
            .is_some_and(|c| is_ours(Agent::Codex, c))
    };
    // Trust entries to take out, to move (from, to) and to set (key, hash).
    let mut untrusted: Vec<String> = Vec::new();
    let mut moved: Vec<(String, String)> = Vec::new();
    let mut trusted: Vec<(String, String)> = Vec::new();
    let key = |event: &str, group: usize, handler: usize| {
        trust.map(|path| codex_trust_key(path, event, group, handler))
    };
    for (event, snake) in CODEX_EVENTS {
        if action == Action::Uninstall && hooks.get(event).is_none() {
            continue;
        }
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
        let Some(groups) = groups.as_array_of_tables_mut() else {
            bail!("`hooks.{event}` is not an array of tables (`[[hooks.{event}]]`)");
        };
        match action {
            Action::Install => {
                let mut found = false;
                for (g, group) in groups.iter_mut().enumerate() {
                    let matcher = group
                        .get("matcher")
                        .and_then(Item::as_str)
                        .map(str::to_owned);
                    if let Some(handlers) = group
                        .get_mut("hooks")
                        .and_then(Item::as_array_of_tables_mut)
                    {
                        for (h, handler) in handlers.iter_mut().enumerate() {
                            if !found && ours(&*handler) {
                                handler["command"] = value(command);
                                handler["timeout"] = value(timeout_of(command) as i64);
                                found = true;
                                trusted.extend(key(snake, g, h).map(|key| {
                                    (key, codex_trust_hash(snake, matcher.as_deref(), handler))
                                }));
                            }
                        }
                    }
                }
                if !found {
                    let mut handler = Table::new();
                    handler["type"] = value("command");
                    handler["command"] = value(command);
                    handler["timeout"] = value(timeout_of(command) as i64);
                    trusted.extend(
                        key(snake, groups.len(), 0)
                            .map(|key| (key, codex_trust_hash(snake, None, &handler))),
                    );
                    let mut handlers = ArrayOfTables::new();
                    handlers.push(handler);
                    let mut group = Table::new();
                    group["hooks"] = Item::ArrayOfTables(handlers);
                    groups.push(group);
                }
            }
            Action::Uninstall => {
                let mut kept_groups = 0;
                let mut emptied = Vec::new();
                for (g, group) in groups.iter_mut().enumerate() {
                    let Some(handlers) = group
                        .get_mut("hooks")
                        .and_then(Item::as_array_of_tables_mut)
                    else {
                        kept_groups += 1;
                        continue;
                    };
                    let had = handlers.len();
                    let mut kept = 0;
                    for (h, handler) in handlers.iter().enumerate() {
                        let old = key(snake, g, h);
                        if ours(handler) {
                            untrusted.extend(old);
                        } else {
                            if let (Some(old), Some(new)) = (old, key(snake, kept_groups, kept))
                                && old != new
                            {
                                moved.push((old, new));
                            }
                            kept += 1;
                        }
                    }
                    handlers.retain(|handler| !ours(handler));
                    match had > 0 && handlers.is_empty() {
                        true => emptied.push(g),
                        false => kept_groups += 1,
                    }
                }
                for index in emptied.into_iter().rev() {
                    groups.remove(index);
                }
                if groups.is_empty() {
                    hooks.remove(event);
                }
            }
        }
    }
    retrust(hooks, &untrusted, &moved, &trusted)?;
    if action == Action::Uninstall && hooks.is_empty() {
        doc.remove("hooks");
    }
    Ok(doc.to_string())
}

/// Codex's `hooks.state` (where `/hooks` keeps what the user trusted, by `FILE:EVENT:GROUP:
/// HANDLER`) with the entries `untrusted` taken out, those `moved` rekeyed, and `trusted`
/// set; the table goes when it is left empty.
fn retrust(
    hooks: &mut dyn toml_edit::TableLike,
    untrusted: &[String],
    moved: &[(String, String)],
    trusted: &[(String, String)],
) -> Result<()> {
    use toml_edit::{Item, Table, value};
    if untrusted.is_empty() && moved.is_empty() && trusted.is_empty() {
        return Ok(());
    }
    let state = hooks
        .entry("state")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_like_mut()
        .context("`hooks.state` is not a table")?;
    for key in untrusted {
        state.remove(key);
    }
    let taken: Vec<(String, Item)> = moved
        .iter()
        .filter_map(|(old, new)| Some((new.clone(), state.remove(old)?)))
        .collect();
    for (new, item) in taken {
        state.insert(&new, item);
    }
    for (key, hash) in trusted {
        let entry = state
            .entry(key)
            .or_insert_with(|| {
                // Written after everything else in the file: an install only appends.
                let mut table = Table::new();
                table.set_position(Some(isize::MAX));
                Item::Table(table)
            })
            .as_table_like_mut()
            .with_context(|| format!("`hooks.state.\"{key}\"` is not a table"))?;
        entry.insert("trusted_hash", value(hash.as_str()));
    }
    if state.is_empty() {
        hooks.remove("state");
    }
    Ok(())
}

/// Where Codex's `hooks.state` keeps the trust of the hook `handler` of group `group` of `event`
/// (Codex's snake-case name) in the config file at `path` (absolute).
pub(crate) fn codex_trust_key(path: &Path, event: &str, group: usize, handler: usize) -> String {
    format!("{}:{event}:{group}:{handler}", path.display())
}

/// The hash Codex's `/hooks` screen trusts a command hook by: the sha256 of the compact JSON,
/// keys sorted, of its event, its group's matcher and the handler as Codex reads it (its
/// defaults filled in: `async` false, `timeout` 600 seconds).
pub(crate) fn codex_trust_hash(
    event: &str,
    matcher: Option<&str>,
    handler: &dyn toml_edit::TableLike,
) -> String {
    let get = |key: &str| handler.get(key).and_then(toml_edit::Item::as_value);
    let mut read = serde_json::json!({
        "async": get("async").and_then(toml_edit::Value::as_bool).unwrap_or(false),
        "command": get("command").and_then(toml_edit::Value::as_str).unwrap_or_default(),
    });
    if let Some(status) = get("statusMessage").and_then(toml_edit::Value::as_str) {
        read["statusMessage"] = status.into();
    }
    read["timeout"] = get("timeout")
        .and_then(toml_edit::Value::as_integer)
        .unwrap_or(600)
        .into();
    read["type"] = "command".into();
    let mut hashed = serde_json::json!({ "event_name": event, "hooks": [read] });
    if let Some(matcher) = matcher {
        hashed["matcher"] = matcher.into();
    }
    format!(
        "sha256:{}",
        crate::digest::sha256_hex(sorted_json(&hashed).as_bytes())
    )
}

/// The trust hash of acp-gate's hook given to Codex for one session (`-c` overrides: one
/// handler of `command`, no matcher, before every tool).
pub fn codex_session_trust_hash(command: &str, timeout: u64) -> String {
    let mut handler = toml_edit::Table::new();
    handler["type"] = toml_edit::value("command");
    handler["command"] = toml_edit::value(command);
    handler["timeout"] = toml_edit::value(timeout as i64);
    codex_trust_hash("pre_tool_use", None, &handler)
}

/// `value` as compact JSON with every object's keys sorted, whatever order the map keeps.
fn sorted_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(members) => {
            let mut keys: Vec<&String> = members.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::Value::from(k.as_str()),
                        sorted_json(&members[k])
                    )
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(sorted_json).collect();
            format!("[{}]", inner.join(","))
        }
        scalar => scalar.to_string(),
    }
}

/// The change as a unified diff, for `--dry-run` and for what was written.
pub fn diff(plan: &Plan, style: crate::style::Style) -> Vec<String> {
    crate::acp::ask::render_diff(
        &plan.path.display().to_string(),
        &plan.before,
        &plan.after,
        style,
    )
}

/// The command acp-gate installs for `agent`: this binary, by its absolute path.
pub fn default_command(agent: Agent) -> Result<String> {
    let exe = std::env::current_exe().context("cannot tell where this acp-gate is")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    Ok(format!(
        "{} hook {}",
        shell_word(&exe.display().to_string()),
        agent.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_acp_gates_own_hook_for_the_agent_is_ours() {
        assert!(is_ours(
            Agent::Claude,
            "/usr/local/bin/acp-gate hook claude"
        ));
        assert!(is_ours(
            Agent::Claude,
            "'/opt/x y/acp-gate' hook claude --workspace /w"
        ));
        assert!(!is_ours(
            Agent::Claude,
            "/usr/local/bin/acp-gate hook codex"
        ));
        assert!(!is_ours(Agent::Claude, "my-acp-gate-wrapper hook claude"));
        assert!(!is_ours(Agent::Claude, "./lint.sh"));
    }

    /// Hashes Codex 0.171.0's `/hooks` screen wrote for these two hooks when a person trusted
    /// them (its config.toml after trusting, diffed with the one before).
    #[test]
    fn a_hook_that_waits_for_a_reviewer_is_given_longer_than_it_waits() {
        assert_eq!(timeout_of("/bin/acp-gate hook claude"), TIMEOUT_SECONDS);
        assert_eq!(timeout_of("acp-gate hook codex --wait 5s"), TIMEOUT_SECONDS);
        assert_eq!(
            timeout_of("acp-gate hook codex --escalate-to U --wait 90s"),
            100
        );
        assert_eq!(timeout_of("acp-gate hook gemini --wait=2m"), 130);
        assert_eq!(
            timeout_of("acp-gate hook claude --wait 1.5s"),
            TIMEOUT_SECONDS
        );
    }

    #[test]
    fn codex_hooks_are_trusted_by_the_hash_its_hooks_screen_writes() {
        let doc: toml_edit::DocumentMut =
            "command = \"/tmp/research/codex/hook.py\"\ntimeout = 30\ntype = \"command\"\n"
                .parse()
                .unwrap();
        let handler = doc.as_table();
        assert_eq!(
            codex_trust_hash("pre_tool_use", Some("*"), handler),
            "sha256:a55e6aa1513c59cfa0935e13b5179f82f8b42d1ce4596624dbbbb57144d4cafd"
        );
        assert_eq!(
            codex_trust_hash("permission_request", Some("*"), handler),
            "sha256:0da2271230b0a7d141928dbce534b7f49ba203a80daed0bf9494147af70c76d2"
        );
    }

    #[test]
    fn uninstalling_codex_s_hook_leaves_another_hook_trusted_where_it_moved() {
        let path = Path::new("/home/u/.codex/config.toml");
        let ours = "/usr/local/bin/acp-gate hook codex";
        let installed = edit_toml("", Action::Install, ours, Some(path)).unwrap();
        assert!(
            installed.contains(
                "[hooks.state.\"/home/u/.codex/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:"
            ),
            "{installed}"
        );
        // The user adds and trusts a hook of their own after acp-gate's.
        let theirs = format!(
            "{installed}\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./lint.sh\"\n\n[hooks.state.\"/home/u/.codex/config.toml:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:mine\"\n"
        );
        let out = edit_toml(&theirs, Action::Uninstall, ours, Some(path)).unwrap();
        assert!(!out.contains("acp-gate"), "{out}");
        assert!(!out.contains("permission_request"), "{out}");
        assert!(
            out.contains(
                "[hooks.state.\"/home/u/.codex/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:mine\""
            ),
            "{out}"
        );
        assert_eq!(
            edit_toml(&installed, Action::Uninstall, ours, Some(path)).unwrap(),
            "",
            "a file install made holds nothing once the hook is out"
        );
    }
}
