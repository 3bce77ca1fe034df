//! The agents' own hooks, in an ACP session: what an agent does without asking its client
//! still reaches the gate. Claude Code's and Codex's ACP adapters run the reads and commands
//! they judge harmless themselves (`cat .env` among them) and ask the client only about the
//! rest; both run hooks before every tool. So `run` and `proxy` give an adapter they start
//! acp-gate as its hook, for this session only (the user's settings untouched): Claude Code's
//! through `session/new`'s `_meta.claudeCode.options.settings`, Codex's through `-c`
//! overrides on its command line, trusted there as its `/hooks` screen trusts them. The hook
//! process finds this session's gate through [`SESSION_GATE`] and hands it the call, which the
//! gate decides as a permission request (the chain, then the front end's own ask: the person
//! at the terminal, the editor, a reviewer) and records once: the same tool call brought again,
//! by another hook or by the adapter's own permission request, gets the same answer
//! ([`Gate::hooked`]).
//!
//! Gemini CLI runs no hooks in ACP mode: it is given a policy for the session that asks its
//! client about every tool ([`GEMINI_POLICY`], in its admin tier) instead.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::gate::{Asked, Gate, HookTicket, Hooked};
use crate::hook::decide::Told;
use crate::hook::once::{self, Received, Transport};
use crate::hook::reply::{self, HookReply, Shape};
use crate::hook::resident::{self, Incoming, SESSION_GATE};
use crate::request::hook::{Agent, HookCall};
use crate::verdict::Verdict;

/// An ACP adapter whose own decisions acp-gate reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// `@zed-industries/claude-agent-acp` (formerly `claude-code-acp`).
    Claude,
    /// `@zed-industries/codex-acp`.
    Codex,
    /// `gemini --acp` (or `--experimental-acp`).
    Gemini,
}

impl Adapter {
    /// The adapter `argv` starts, known by a word naming its program or npm package (a path,
    /// `npx -y @scope/name@version`, `node .../name/dist/index.js`).
    pub fn of(argv: &[String]) -> Option<Adapter> {
        let names = |word: &str, name: &str| {
            word.split(['/', '@'])
                .any(|part| part == name || part.strip_suffix(".js") == Some(name))
        };
        let any = |name: &str| argv.iter().any(|word| names(word, name));
        let acp = argv
            .iter()
            .any(|w| w == "--acp" || w == "--experimental-acp");
        if any("claude-agent-acp") || any("claude-code-acp") {
            Some(Adapter::Claude)
        } else if any("codex-acp") {
            Some(Adapter::Codex)
        } else if acp && (any("gemini") || any("gemini-cli")) {
            Some(Adapter::Gemini)
        } else {
            None
        }
    }

    /// Whether it runs hooks in ACP mode (Gemini CLI does not).
    fn runs_hooks(self) -> bool {
        self != Adapter::Gemini
    }
}

/// How long an agent waits for its session's hook: as long as a person may take to answer.
const HOOK_TIMEOUT_SECONDS: u64 = 3600;

/// How a session's front end answers a hook call handed to it: [`answer`], with its own way
/// of deciding a permission request.
pub type Answerer =
    Arc<dyn Fn(Agent, Vec<u8>) -> Pin<Box<dyn Future<Output = HookReply> + Send>> + Send + Sync>;

/// Gemini CLI's policy for a session: every tool asked about (its shell's own rule, with a
/// pattern, so that its list of harmless commands does not answer first), above every other
/// tier's rules.
const GEMINI_POLICY: &str = r#"# acp-gate: every tool call is asked about (session/request_permission), so that
# acp-gate decides it. Written for one session, and removed when it ends.
[[rule]]
toolName = "run_shell_command"
commandRegex = ".*"
decision = "ask_user"
priority = 999

[[rule]]
toolName = "*"
decision = "ask_user"
priority = 998
"#;

/// An adapter's own hooks for one session: where its gate answers them, and what the adapter
/// is started and its sessions opened with.
pub struct OwnHooks {
    adapter: Adapter,
    /// Where this session's gate answers hook calls (none for an adapter without hooks).
    socket: Option<PathBuf>,
    /// Gemini CLI's policy file for the session.
    policy: Option<PathBuf>,
    /// The front end's answerer, once it exists (calls wait for it).
    answerer: Arc<OnceLock<Answerer>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl OwnHooks {
    /// For the agent `argv`, when acp-gate knows it: listens for its hooks (answered once
    /// [`OwnHooks::serve`] says how).
    pub fn listen(argv: &[String]) -> Result<Option<OwnHooks>> {
        let Some(adapter) = Adapter::of(argv) else {
            return Ok(None);
        };
        let answerer: Arc<OnceLock<Answerer>> = Arc::default();
        let place = resident::session_socket()
            .map_err(anyhow::Error::msg)
            .context("cannot give the agent acp-gate as its hook for this session")?;
        let mut own = OwnHooks {
            adapter,
            socket: None,
            policy: None,
            answerer,
            server: None,
        };
        if adapter.runs_hooks() {
            let listener = tokio::net::UnixListener::bind(&place)
                .with_context(|| format!("cannot listen on {}", place.display()))?;
            own.server = Some(tokio::spawn(accept(listener, own.answerer.clone())));
            own.socket = Some(place);
        } else {
            let policy = place.with_extension("gemini-policy.toml");
            std::fs::write(&policy, GEMINI_POLICY)
                .with_context(|| format!("cannot write {}", policy.display()))?;
            own.policy = Some(policy);
        }
        Ok(Some(own))
    }

    /// Whether the adapter's hooks bring every call to the gate whatever mode it is in (Claude
    /// Code's and Codex's run before every tool in every mode; Gemini CLI's policy is skipped
    /// for edits in its `autoEdit` mode).
    pub fn sees_every_mode(&self) -> bool {
        self.socket.is_some()
    }

    /// Answers the hook calls from now on, with `answerer`.
    pub fn serve(&self, answerer: Answerer) {
        let _ = self.answerer.set(answerer);
    }

    /// The agent's command line: Codex's with its hooks, trusted, as `-c` overrides; Gemini
    /// CLI's with its policy for the session, in the admin tier (and the user's, where a
    /// machine's own admin policies make Gemini CLI ignore `--admin-policy`).
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut argv = argv.to_vec();
        if let Some(policy) = &self.policy {
            let policy = policy.display().to_string();
            argv.extend(["--admin-policy".to_owned(), policy.clone()]);
            argv.extend(["--policy".to_owned(), policy]);
        }
        if self.adapter == Adapter::Codex {
            let command = hook_command(Agent::Codex);
            let handler = format!(
                "{{type=\"command\",command={},timeout={HOOK_TIMEOUT_SECONDS}}}",
                toml_string(&command)
            );
            let hash =
                crate::hook::install::codex_session_trust_hash(&command, HOOK_TIMEOUT_SECONDS);
            argv.push("-c".to_owned());
            argv.push(format!("hooks.PreToolUse=[{{hooks=[{handler}]}}]"));
            argv.push("-c".to_owned());
            argv.push(format!(
                "hooks.state={{\"/<session-flags>/config.toml:pre_tool_use:0:0\"={{trusted_hash={}}}}}",
                toml_string(&hash)
            ));
        }
        argv
    }

    /// The variables the agent is started with: where its hooks find this session's gate;
    /// `IS_SANDBOX` emptied (Claude Code's switch that lets a process running as root skip
    /// permissions, whose adapter, given any other value than `1` as root, fails to start).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![("IS_SANDBOX".to_owned(), String::new())];
        if let Some(socket) = &self.socket {
            env.push((SESSION_GATE.to_owned(), socket.display().to_string()));
        }
        env
    }

    /// Adds the hook to the params of the editor's (or `run`'s) `session/new`,
    /// `session/load` or `session/resume`: Claude Code's adapter takes settings for the
    /// session's Claude Code there, beside what the editor put in them.
    pub fn open_session(&self, params: &mut Value) {
        if self.adapter != Adapter::Claude {
            return;
        }
        let handler = json!({
            "type": "command",
            "command": hook_command(Agent::Claude),
            "timeout": HOOK_TIMEOUT_SECONDS,
            "onFailure": "block",
        });
        let group = json!({ "matcher": "*", "hooks": [handler] });
        let Some(params) = params.as_object_mut() else {
            return;
        };
        let options = params
            .entry("_meta")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .and_then(|meta| {
                meta.entry("claudeCode")
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
            })
            .and_then(|claude| {
                claude
                    .entry("options")
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
            });
        let Some(options) = options else {
            return;
        };
        // Settings the editor gave as a file's path are read, so that they keep applying.
        let mut settings = match options.remove("settings") {
            Some(Value::String(path)) => std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_else(|| json!({})),
            Some(settings @ Value::Object(_)) => settings,
            _ => json!({}),
        };
        if let Some(hooks) = settings
            .as_object_mut()
            .map(|s| s.entry("hooks").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
        {
            match hooks.entry("PreToolUse").or_insert_with(|| json!([])) {
                Value::Array(groups) => groups.push(group),
                other => *other = json!([group]),
            }
        }
        options.insert("settings".into(), settings);
    }
}

impl Drop for OwnHooks {
    fn drop(&mut self) {
        if let Some(server) = &self.server {
            server.abort();
        }
        for file in [&self.socket, &self.policy].into_iter().flatten() {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// The command of the hook acp-gate gives an agent: this binary, by its absolute path.
fn hook_command(agent: Agent) -> String {
    crate::hook::install::default_command(agent)
        .unwrap_or_else(|_| format!("acp-gate hook {}", agent.name()))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_owned()
}

/// Serves the session's hook calls on `listener`: each read, then answered once the front
/// end's answerer is known.
async fn accept(listener: tokio::net::UnixListener, answerer: Arc<OnceLock<Answerer>>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let answerer = answerer.clone();
        tokio::spawn(async move {
            if !resident::this_users(&stream) {
                return;
            }
            let (reader, mut writer) = stream.split();
            let mut reader = tokio::io::BufReader::new(reader);
            let Ok(Incoming::Call(agent, input)) =
                resident::incoming(&mut reader, &mut writer).await
            else {
                return;
            };
            let answerer = loop {
                match answerer.get() {
                    Some(answerer) => break answerer.clone(),
                    None => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                }
            };
            let reply = answerer(agent, input).await;
            let _ = resident::send_reply(&mut writer, reply).await;
        });
    }
}

/// A hook call of `agent`'s, answered by the session's `gate`: read (an unreadable one is
/// refused and recorded as such), looked up (a tool call brought before gets the answer it
/// got), else decided by `decide` (the front end's own way with the call's permission request,
/// which offers `allow` and `reject`: whether it was let through, the chain's verdict and
/// reasons) and put in the agent's terms.
pub async fn answer<F, Fut>(gate: &Gate, agent: Agent, input: &[u8], decide: F) -> HookReply
where
    F: FnOnce(Asked) -> Fut,
    Fut: Future<Output = (bool, Verdict, Vec<String>)>,
{
    let received = Received::read(agent, input);
    let call = match &received.call {
        Ok(call) => call.clone(),
        Err(_) => {
            let workspace = PathBuf::new();
            return once::refuse_unreadable(gate, agent, Transport::Process, received, &workspace)
                .await;
        }
    };
    let shape = Shape {
        agent,
        event: call.event,
        event_name: &call.event_name,
        snake_case: call.snake_case,
        exit_code: true,
    };
    let told = match gate.hooked(&call.tool_use_id).await {
        Hooked::Answered(true) => Told::Allow("acp-gate allowed this tool call already".into()),
        Hooked::Answered(false) => Told::Deny("acp-gate refused this tool call already".into()),
        Hooked::First(ticket) => decided(gate, &call, ticket, decide).await,
    };
    reply::answer(shape, &told)
}

/// The first hook call of a tool call, decided as its permission request.
async fn decided<F, Fut>(gate: &Gate, call: &HookCall, ticket: HookTicket, decide: F) -> Told
where
    F: FnOnce(Asked) -> Fut,
    Fut: Future<Output = (bool, Verdict, Vec<String>)>,
{
    let mut params = call.params.clone();
    params["options"] = json!([
        { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
        { "optionId": "allow_always", "name": "Allow always", "kind": "allow_always" },
        { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
    ]);
    let Some(asked) = gate.read("session/request_permission", params) else {
        unreachable!("a permission request is always read");
    };
    let (allowed, verdict, reasons) = decide(asked).await;
    ticket.settle(allowed);
    let reasons = reasons.join("; ");
    match (allowed, verdict) {
        (true, _) => Told::Allow("acp-gate allows this".to_owned()),
        (false, Verdict::Deny) => Told::Deny(format!("acp-gate denies this: {reasons}")),
        (false, _) => Told::Deny(format!(
            "acp-gate refused this: a person must approve it ({reasons}), and did not"
        )),
    }
}

/// Whether a permission request's `outcome` (as the front end answered it) selected one of
/// the options that allow which [`decided`] offers.
pub fn allowed(outcome: &Value) -> bool {
    outcome.pointer("/outcome/outcome").and_then(Value::as_str) == Some("selected")
        && matches!(
            outcome.pointer("/outcome/optionId").and_then(Value::as_str),
            Some("allow" | "allow_always")
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn adapters_are_known_however_they_are_started() {
        for (line, adapter) in [
            (
                "npx -y @zed-industries/claude-agent-acp",
                Some(Adapter::Claude),
            ),
            (
                "npx @zed-industries/claude-agent-acp@0.23.1",
                Some(Adapter::Claude),
            ),
            (
                "node /n/node_modules/@zed-industries/claude-agent-acp/dist/index.js",
                Some(Adapter::Claude),
            ),
            ("claude-code-acp", Some(Adapter::Claude)),
            ("/opt/bin/codex-acp -c model=x", Some(Adapter::Codex)),
            ("npx @zed-industries/codex-acp@0.16.0", Some(Adapter::Codex)),
            ("gemini --acp", Some(Adapter::Gemini)),
            (
                "node /n/@google/gemini-cli/bundle/gemini.js --experimental-acp",
                Some(Adapter::Gemini),
            ),
            ("gemini -p hello", None),
            ("acp-gate demo-agent", None),
            ("my-claude-agent-acp-fork", None),
        ] {
            assert_eq!(Adapter::of(&argv(line)), adapter, "{line}");
        }
    }

    #[test]
    fn claude_code_gets_the_hook_beside_the_settings_the_editor_gave() {
        let hooks = OwnHooks {
            adapter: Adapter::Claude,
            socket: None,
            policy: None,
            answerer: Arc::default(),
            server: None,
        };
        let mut params = json!({"cwd": "/w", "mcpServers": [], "_meta": {"claudeCode": {"options": {
            "model": "x", "settings": {"env": {"A": "1"}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}}}}});
        hooks.open_session(&mut params);
        let settings = &params["_meta"]["claudeCode"]["options"]["settings"];
        assert_eq!(settings["env"]["A"], "1");
        assert_eq!(params["_meta"]["claudeCode"]["options"]["model"], "x");
        let groups = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{settings}");
        let ours = &groups[1]["hooks"][0];
        assert!(
            ours["command"].as_str().unwrap().ends_with(" hook claude"),
            "{ours}"
        );
        assert_eq!(ours["onFailure"], "block");
        let mut bare = json!({"cwd": "/w", "mcpServers": []});
        hooks.open_session(&mut bare);
        assert_eq!(
            bare["_meta"]["claudeCode"]["options"]["settings"]["hooks"]["PreToolUse"][0]["matcher"],
            "*"
        );
    }
}
