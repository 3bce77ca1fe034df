//! `builtin:mode-guard`: judges switches of a session's mode or configuration (requests of kind
//! `switch-mode`). In some modes an agent stops asking for permission (Claude Code's
//! `bypassPermissions`, Gemini CLI's `yolo`, Codex's `full-access`, ...): from then on acp-gate
//! would see none of its actions. So:
//!
//! - a switch into a mode where the agent keeps asking (`default`, `plan`, `read-only`): allow;
//! - into a mode where it stops asking for some or all actions, or one whose name says so
//!   (`bypass`, `yolo`, `dangerously`, `auto-approve`, ...): ask, saying what it would stop
//!   asking about;
//! - into a mode it does not know: ask (it cannot tell whether the agent keeps asking);
//! - a setting that only picks the model or the reasoning level: allow; another setting: ask.
//!
//! The host gives the mode switched to as `modeId` in the request's raw JSON. For a permission
//! request of kind `switch-mode` (Claude Code's `ExitPlanMode`), the agent's option ids are
//! the modes it offers; the host selects the allow-once option on an allow, so that option's
//! mode is the one judged.
//!
//! The modes are the agents' own: Claude Code's ACP adapter (`default`, `acceptEdits`, `plan`,
//! `dontAsk`, `bypassPermissions`, `auto`), Gemini CLI (`default`, `autoEdit`, `yolo`, `plan`),
//! Codex's ACP adapter (`read-only`, `auto`, `full-access`).

mod config;

use acp_gate_plugin::{OptionKind, Plugin, Request, ToolKind, Verdict};
use serde_json::Value;

pub use config::Config;

pub struct ModeGuard;

impl Plugin for ModeGuard {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config)
    }
}

acp_gate_plugin::export_plugin!(ModeGuard);
acp_gate_plugin::use_instance_arena!();

/// What a mode does to the agent's asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    KeepsAsking,
    /// It stops asking for these actions.
    StopsAsking(&'static str),
}

/// The agents' modes: (id, agents, effect). Ids are compared normalised ([`normalise`]).
const MODES: &[(&str, &str, Effect)] = &[
    ("default", "Claude Code, Gemini CLI", Effect::KeepsAsking),
    ("plan", "Claude Code, Gemini CLI", Effect::KeepsAsking),
    ("read-only", "Codex", Effect::KeepsAsking),
    (
        "acceptEdits",
        "Claude Code",
        Effect::StopsAsking("file edits"),
    ),
    ("autoEdit", "Gemini CLI", Effect::StopsAsking("file edits")),
    (
        "auto",
        "Claude Code, Codex",
        Effect::StopsAsking("the edits and commands it judges safe itself"),
    ),
    (
        "dontAsk",
        "Claude Code",
        Effect::StopsAsking("anything (what its own settings allow runs unasked)"),
    ),
    (
        "bypassPermissions",
        "Claude Code",
        Effect::StopsAsking("anything"),
    ),
    ("yolo", "Gemini CLI", Effect::StopsAsking("anything")),
    (
        "full-access",
        "Codex",
        Effect::StopsAsking("anything, and runs commands outside its sandbox"),
    ),
];

/// Parts of a mode's name that say the agent stops asking in it (normalised).
const STOPS_ASKING_WORDS: &[&str] = &[
    "bypass",
    "yolo",
    "fullaccess",
    "danger",
    "dontask",
    "never",
    "skippermission",
    "noprompt",
    "approveall",
    "autoapprove",
    "autoaccept",
    "acceptall",
    "allowall",
    "nosandbox",
    "unrestricted",
    "unsafe",
];

/// Settings that pick only the model or how hard it thinks (normalised ids).
const MODEL_SETTINGS: &[&str] = &[
    "model",
    "modelconfig",
    "thoughtlevel",
    "reasoning",
    "reasoningeffort",
    "effort",
    "thinking",
];

/// Judges one request; anything but a switch gets `abstain`.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    if request.kind != ToolKind::SwitchMode {
        return Ok(Verdict::Abstain);
    }
    let raw: Value = serde_json::from_str(&request.raw_json).unwrap_or(Value::Null);
    let text = |key: &str| raw.get(key).and_then(Value::as_str);
    if let Some(mode) = text("modeId") {
        return Ok(judge_mode(mode, config));
    }
    if let Some(setting) = text("configId") {
        let value = match raw.get("value") {
            Some(Value::String(value)) => value.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        return Ok(judge_setting(setting, &value));
    }
    // A permission request to switch: the mode behind the option an allow selects.
    let allow_once = request
        .options
        .iter()
        .find(|option| option.kind == OptionKind::AllowOnce);
    Ok(match allow_once {
        Some(option) => match judge_mode(&option.id, config) {
            // An option id that is no mode says nothing: the chain's default decides.
            Verdict::Ask(_) if known(&option.id, config).is_none() => Verdict::Abstain,
            verdict => verdict,
        },
        None => Verdict::Abstain,
    })
}

/// The verdict on a switch into `mode`.
fn judge_mode(mode: &str, config: &Config) -> Verdict {
    match known(mode, config) {
        Some((_, Effect::KeepsAsking)) => Verdict::Allow,
        Some((agents, Effect::StopsAsking(what))) => Verdict::Ask(format!(
            "in mode `{mode}`{agents} the agent stops asking for permission for {what}: acp-gate \
             would see none of those requests"
        )),
        None if looks_like_stops_asking(mode) => Verdict::Ask(format!(
            "mode `{mode}` looks like one in which the agent stops asking for permission: \
             acp-gate would see no further requests"
        )),
        None => Verdict::Ask(format!(
            "mode `{mode}` is not one acp-gate knows: it cannot tell whether the agent keeps \
             asking for permission in it (a handler's `keeps_asking` names such modes)"
        )),
    }
}

/// What is known of `mode`: from the handler's config first, then [`MODES`]. The agents are
/// given as ` (Claude Code)`, or empty for a mode the config names.
fn known(mode: &str, config: &Config) -> Option<(String, Effect)> {
    let key = normalise(mode);
    let named = |list: &[String]| list.iter().any(|m| normalise(m) == key);
    if named(&config.stops_asking) {
        return Some((String::new(), Effect::StopsAsking("anything")));
    }
    if named(&config.keeps_asking) {
        return Some((String::new(), Effect::KeepsAsking));
    }
    MODES
        .iter()
        .find(|(id, ..)| normalise(id) == key)
        .map(|(_, agents, effect)| (format!(" ({agents})"), *effect))
}

/// The verdict on setting `setting` to `value` (not the mode).
fn judge_setting(setting: &str, value: &str) -> Verdict {
    if looks_like_stops_asking(setting) || looks_like_stops_asking(value) {
        return Verdict::Ask(format!(
            "setting `{setting}` to `{value}` looks like making the agent stop asking for \
             permission: acp-gate would see no further requests"
        ));
    }
    if MODEL_SETTINGS.contains(&normalise(setting).as_str()) {
        return Verdict::Allow;
    }
    Verdict::Ask(format!(
        "acp-gate does not know the setting `{setting}`: it may change what the agent asks \
         permission for"
    ))
}

fn looks_like_stops_asking(name: &str) -> bool {
    let key = normalise(name);
    STOPS_ASKING_WORDS.iter().any(|word| key.contains(word))
}

/// Lower case, without separators: `bypassPermissions`, `bypass_permissions` and
/// `Bypass-Permissions` are one mode.
fn normalise(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests;
