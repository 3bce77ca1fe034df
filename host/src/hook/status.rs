//! Whether each agent on this machine is gated by acp-gate's hook, for `acp-gate doctor`: the
//! agent found (its program on `PATH`, or its settings directory), acp-gate's entry in its user
//! and managed settings (where [`install`] puts it, found as [`install`] finds it), the
//! acp-gate it runs, Codex's trust of it, and the settings that switch it off: the agent's own
//! (then it does not gate) and the workspace's (a warning: a repository can switch it off).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use super::install::{self, CODEX_EVENTS};
use crate::request::hook::Agent;
use crate::service::fleet::AgentGate;

/// One agent: whether it is on this machine, and acp-gate's hook in each of its settings.
#[derive(Debug, Serialize)]
pub struct AgentStatus {
    pub agent: &'static str,
    pub title: &'static str,
    /// How it was found on this machine; `None`: it was not.
    pub found: Option<String>,
    /// Whether one of its hooks decides every call.
    pub gated: bool,
    pub hooks: Vec<HookStatus>,
}

impl AgentStatus {
    /// Whether it is on this machine and nothing of acp-gate's decides its calls.
    pub fn ungated(&self) -> bool {
        self.found.is_some() && !self.gated
    }
}

/// acp-gate's hook in one of an agent's settings files.
#[derive(Debug, Serialize)]
pub struct HookStatus {
    /// `user` or `managed`.
    pub scope: &'static str,
    pub file: PathBuf,
    /// Whether acp-gate's entry is there, before every tool.
    pub installed: bool,
    pub command: Option<String>,
    /// The acp-gate the entry runs, when it is there.
    pub runs: Option<PathBuf>,
    /// Codex's trust of a user's hook; `None` where the agent asks for none.
    pub trusted: Option<bool>,
    /// Installed, running this acp-gate, trusted and not switched off.
    pub gates: bool,
    /// Why it does not gate.
    pub problems: Vec<String>,
    /// What it leaves open while it gates.
    pub warnings: Vec<String>,
}

/// A settings file as read: absent, unreadable (why), or its contents.
enum Settings {
    Absent,
    Unreadable(String),
    Json(Value),
    Toml(toml_edit::DocumentMut),
}

impl Settings {
    fn read(agent: Agent, path: &Path) -> Settings {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::Absent,
            Err(e) => return Settings::Unreadable(format!("cannot read it: {e}")),
        };
        match agent {
            Agent::Codex => match text.parse() {
                Ok(doc) => Settings::Toml(doc),
                Err(e) => Settings::Unreadable(format!("not TOML: {}", e.message())),
            },
            _ if text.trim().is_empty() => Settings::Json(Value::Object(Default::default())),
            _ => match serde_json::from_str(&text) {
                Ok(value) => Settings::Json(value),
                Err(e) => Settings::Unreadable(format!(
                    "not JSON that acp-gate can read ({e}; comments are not read)"
                )),
            },
        }
    }

    /// The JSON value, or null.
    fn json(&self) -> &Value {
        match self {
            Settings::Json(value) => value,
            _ => &Value::Null,
        }
    }
}

/// The settings beside the file read that can switch its hook off.
struct Others<'a> {
    user: &'a Value,
    managed: &'a Value,
    /// Where the project's settings are.
    workspace: &'a Path,
}

/// acp-gate's handler for one event, as found in a settings file.
struct Entry {
    command: String,
    /// Its group's matcher, if it has one.
    matcher: Option<String>,
    /// The name Gemini CLI's `hooksConfig.disabled` knows it by (its `name`, else its command).
    name: String,
    /// Claude Code's `onFailure: "block"`.
    blocks_on_failure: bool,
    /// Codex's trust: `None` where none is needed.
    trusted: Option<bool>,
}

/// This acp-gate's program, symlinks resolved: what a hook must run to be this gate.
pub fn this_program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot tell where this acp-gate is")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Every agent as a gate reports it to the review service's fleet view; settings that cannot
/// be read are reported as an ungated agent that says why.
pub fn reported(workspace: &Path) -> Vec<AgentGate> {
    match this_program().and_then(|this| all_agents(&this, workspace)) {
        Ok(agents) => agents.iter().map(AgentGate::from).collect(),
        Err(error) => vec![AgentGate {
            agent: "?".to_owned(),
            title: "the agents' settings".to_owned(),
            found: true,
            gated: false,
            problems: vec![format!("{error:#}")],
        }],
    }
}

impl From<&AgentStatus> for AgentGate {
    fn from(agent: &AgentStatus) -> AgentGate {
        AgentGate {
            agent: agent.agent.to_owned(),
            title: agent.title.to_owned(),
            found: agent.found.is_some(),
            gated: agent.gated,
            problems: (agent.hooks.iter())
                .flat_map(|hook| hook.problems.iter().cloned())
                .collect(),
        }
    }
}

/// [`agent_status`] of every agent acp-gate knows.
pub fn all_agents(this: &Path, workspace: &Path) -> anyhow::Result<Vec<AgentStatus>> {
    (Agent::ALL.into_iter())
        .map(|agent| agent_status(agent, this, workspace))
        .collect()
}

/// `agent`'s status on this machine, with `this` (this acp-gate, canonical) as the binary its
/// hooks should run and `workspace` as the directory whose project settings are read.
pub fn agent_status(agent: Agent, this: &Path, workspace: &Path) -> anyhow::Result<AgentStatus> {
    let user = install::user_settings(agent)?;
    let mut places = vec![("user", user)];
    if agent != Agent::Copilot {
        places.push(("managed", install::managed_settings(agent)?));
    }
    let read: Vec<Settings> = (places.iter())
        .map(|(_, path)| Settings::read(agent, path))
        .collect();
    let others = Others {
        user: read[0].json(),
        managed: read.get(1).map_or(&Value::Null, Settings::json),
        workspace,
    };
    let hooks: Vec<HookStatus> = (places.into_iter().zip(&read))
        .map(|((scope, file), settings)| hook_status(agent, scope, file, settings, this, &others))
        .collect();
    Ok(AgentStatus {
        agent: agent.name(),
        title: agent.title(),
        found: found(agent),
        gated: hooks.iter().any(|hook| hook.gates),
        hooks,
    })
}

/// How `agent` was found on this machine: its program on `PATH` (named as acp-gate's
/// `hook AGENT` names it), or its settings directory.
fn found(agent: Agent) -> Option<String> {
    if let Some(program) = on_path(agent.name()) {
        return Some(format!("{} on PATH", program.display()));
    }
    let dir = install::user_dir(agent).ok()?;
    dir.is_dir().then(|| format!("{} exists", dir.display()))
}

/// `program`, found in a directory of `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// acp-gate's entry in one settings file: there or not, what it runs, whether it is trusted,
/// what switches it off.
fn hook_status(
    agent: Agent,
    scope: &'static str,
    file: PathBuf,
    settings: &Settings,
    this: &Path,
    others: &Others,
) -> HookStatus {
    let mut hook = HookStatus {
        scope,
        file,
        installed: false,
        command: None,
        runs: None,
        trusted: None,
        gates: false,
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let entries = match settings {
        Settings::Absent => return hook,
        Settings::Unreadable(why) => {
            hook.problems.push(why.clone());
            return hook;
        }
        Settings::Json(value) => json_entries(agent, value),
        Settings::Toml(doc) => {
            // Codex runs a hook from the user's config only once trusted; the system's needs none.
            let trust_in = (scope == "user").then(|| std::path::absolute(&hook.file).ok());
            toml_entries(doc, trust_in.flatten().as_deref())
        }
    };
    let mut entries = entries.into_iter();
    // The event before every tool: the one that gates.
    let Some((_, Some(entry))) = entries.next() else {
        return hook;
    };
    hook.installed = true;
    let reinstall = match scope {
        "managed" => format!("`acp-gate hook install {} --managed`", agent.name()),
        _ => format!("`acp-gate hook install {}`", agent.name()),
    };
    let program = install::our_program(agent, &entry.command).unwrap_or_default();
    let runs = match program.contains('/') {
        true => Some(PathBuf::from(program)),
        false => on_path(program),
    };
    match runs.as_deref().map(std::fs::canonicalize) {
        Some(Ok(runs)) if runs == this => {}
        Some(Ok(runs)) => hook.problems.push(format!(
            "it runs another acp-gate ({}), not this one ({}): {reinstall} points it at this one",
            runs.display(),
            this.display()
        )),
        _ => hook.problems.push(format!(
            "it runs `{program}`, which is not there: {} (reinstall with {reinstall})",
            missing(agent, entry.blocks_on_failure)
        )),
    }
    hook.runs = runs;
    hook.trusted = entry.trusted;
    if entry.trusted == Some(false) {
        hook.problems.push(format!(
            "Codex has not trusted it as it is, and skips it without a word: trust it in Codex's `/hooks`, or run {reinstall}"
        ));
    }
    if agent == Agent::Claude && !entry.blocks_on_failure {
        hook.warnings.push(
            "no `onFailure: \"block\"`: a hook that crashes, times out or is missing lets the call through"
                .to_owned(),
        );
    }
    if let Some(matcher) = (entry.matcher.as_deref()).filter(|m| !matches!(*m, "" | "*" | ".*")) {
        hook.warnings.push(format!(
            "its matcher is `{matcher}`: the tools it does not match never reach acp-gate"
        ));
    }
    // Codex's other event: its approval prompt.
    for (event, other) in entries {
        match other {
            Some(other) if other.trusted != Some(false) => {}
            _ => hook.warnings.push(format!(
                "no trusted hook at `{event}`: Codex asks you what the chain would have decided"
            )),
        }
    }
    let (off, open) = switches(agent, scope, &entry.name, others);
    hook.problems.extend(off);
    hook.warnings.extend(open);
    hook.gates = hook.problems.is_empty();
    hook.command = Some(entry.command);
    hook
}

/// What an agent does when its hook's program is missing (docs/hooks.md's table), Claude Code
/// as its entry's `onFailure` says.
fn missing(agent: Agent, blocks_on_failure: bool) -> &'static str {
    match agent {
        Agent::Claude if blocks_on_failure => "Claude Code blocks every call",
        Agent::Claude | Agent::Codex => "every call goes on as if no hook were installed",
        Agent::Gemini | Agent::Copilot => "every call is blocked",
    }
}

/// acp-gate's handler at each event of the JSON settings `value` of `agent` (one event).
fn json_entries(agent: Agent, value: &Value) -> Vec<(&'static str, Option<Entry>)> {
    let layout = install::json_layout(agent);
    let found = |event: &str| -> Option<Entry> {
        for item in value["hooks"][event].as_array()? {
            let (matcher, handlers) = match layout.matcher {
                None => (None, std::slice::from_ref(item)),
                Some(_) => (
                    item["matcher"].as_str(),
                    item["hooks"].as_array().map_or(&[][..], Vec::as_slice),
                ),
            };
            for handler in handlers {
                let Some(command) = handler[layout.command_key].as_str() else {
                    continue;
                };
                if install::our_program(agent, command).is_some() {
                    return Some(Entry {
                        command: command.to_owned(),
                        matcher: matcher.map(str::to_owned),
                        name: handler["name"].as_str().unwrap_or(command).to_owned(),
                        blocks_on_failure: handler["onFailure"] == "block",
                        trusted: None,
                    });
                }
            }
        }
        None
    };
    (layout.events.iter())
        .map(|event| (*event, found(event)))
        .collect()
}

/// acp-gate's handler at each of Codex's events in `doc` (its `config.toml`), with its trust
/// when the file is the user's (`trust_in`: its absolute path, as Codex keys the trust).
fn toml_entries(
    doc: &toml_edit::DocumentMut,
    trust_in: Option<&Path>,
) -> Vec<(&'static str, Option<Entry>)> {
    use toml_edit::Item;
    let found = |event: &str, snake: &str| -> Option<Entry> {
        let groups = doc.get("hooks")?.get(event)?.as_array_of_tables()?;
        for (g, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(Item::as_str);
            let Some(handlers) = group.get("hooks").and_then(Item::as_array_of_tables) else {
                continue;
            };
            for (h, handler) in handlers.iter().enumerate() {
                let Some(command) = handler.get("command").and_then(Item::as_str) else {
                    continue;
                };
                if install::our_program(Agent::Codex, command).is_none() {
                    continue;
                }
                let trusted = trust_in.map(|path| {
                    let key = install::codex_trust_key(path, snake, g, h);
                    let hash = install::codex_trust_hash(snake, matcher, handler);
                    (doc.get("hooks").and_then(|hooks| hooks.get("state")))
                        .and_then(|state| state.get(&key)?.get("trusted_hash")?.as_str())
                        == Some(hash.as_str())
                });
                return Some(Entry {
                    command: command.to_owned(),
                    matcher: matcher.map(str::to_owned),
                    name: command.to_owned(),
                    blocks_on_failure: false,
                    trusted,
                });
            }
        }
        None
    };
    (CODEX_EVENTS.iter())
        .map(|(event, snake)| (*event, found(event, snake)))
        .collect()
}

/// What switches off `agent`'s hook at `scope` (named `name`): the agent's own settings, which
/// make it not gate, and the workspace's, which could (a repository's files, or an agent's edit
/// of them).
fn switches(agent: Agent, scope: &str, name: &str, others: &Others) -> (Vec<String>, Vec<String>) {
    let (mut off, mut open) = (Vec::new(), Vec::new());
    let Others {
        user,
        managed,
        workspace,
    } = others;
    match agent {
        Agent::Claude => {
            if managed["disableAllHooks"] == true {
                off.push("the managed settings set `disableAllHooks`".to_owned());
            }
            if scope == "user" {
                if managed["allowManagedHooksOnly"] == true {
                    off.push(
                        "the managed settings set `allowManagedHooksOnly`: only managed hooks run"
                            .to_owned(),
                    );
                }
                if user["disableAllHooks"] == true {
                    off.push("this file sets `disableAllHooks`".to_owned());
                }
                for project in [".claude/settings.json", ".claude/settings.local.json"] {
                    let path = workspace.join(project);
                    if Settings::read(agent, &path).json()["disableAllHooks"] == true {
                        open.push(format!(
                            "{} sets `disableAllHooks`: Claude Code runs none of your hooks in this workspace (a managed one still runs)",
                            path.display()
                        ));
                    }
                }
            }
        }
        Agent::Gemini => {
            let path = workspace.join(".gemini/settings.json");
            let project = Settings::read(agent, &path);
            let project = project.json();
            let disables = |file: &Value| {
                file["hooksConfig"]["disabled"]
                    .as_array()
                    .is_some_and(|list| list.iter().any(|listed| listed == name))
            };
            // The system's settings override the others, and the workspace's the user's.
            let enabled = |file: &Value| file["hooksConfig"]["enabled"].as_bool();
            if enabled(managed).or(enabled(user)) == Some(false) {
                off.push("`hooksConfig.enabled` is false: Gemini CLI runs no hook".to_owned());
            }
            for (file, whose) in [
                (user, "the user's settings"),
                (managed, "the system settings"),
            ] {
                if disables(file) {
                    off.push(format!("{whose} list `{name}` in `hooksConfig.disabled`"));
                }
            }
            if enabled(managed).is_none() && enabled(project) == Some(false) {
                open.push(format!(
                    "{} sets `hooksConfig.enabled` to false: Gemini CLI runs no hook in this workspace once you trust it",
                    path.display()
                ));
            }
            if disables(project) {
                open.push(format!(
                    "{} lists `{name}` in `hooksConfig.disabled`: Gemini CLI skips it in this workspace once you trust it",
                    path.display()
                ));
            }
        }
        Agent::Codex | Agent::Copilot => {}
    }
    (off, open)
}
