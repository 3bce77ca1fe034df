//! Mode and configuration switches, which the chain judges like any request (kind
//! `switch_mode`): the editor's `session/set_mode` and `session/set_config_option` (through
//! `proxy`), and what the agent reports of its own (`current_mode_update`,
//! `config_option_update`, the mode a session starts in). In some modes an agent stops asking
//! (Claude Code's `bypassPermissions`, Gemini CLI's `yolo`, Codex's `full-access`): from then
//! on the gate would see nothing, so a switch is decided before it reaches the agent, and one
//! the agent made by itself is reported and acted on (`builtin:mode-guard` judges them).
//!
//! [`Modes`] keeps each session's current mode, so that an agent's report of a switch the gate
//! let through is not judged twice, and which configuration options select the mode.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::request::{SessionContext, ToolRequest};

/// A switch of a session's mode or configuration, as read from the message that asked for it
/// or reported it.
#[derive(Debug, Clone)]
pub struct Switch {
    /// `session/set_mode`, `session/set_config_option`, `current_mode_update`,
    /// `config_option_update` or `session/new` (the mode a session starts in).
    pub method: String,
    /// The message's params (for an update, the update).
    pub params: Value,
    /// The mode switched to, when the switch is one of the mode.
    pub mode: Option<String>,
}

impl Switch {
    /// What the chain judges.
    pub fn tool_request(&self, ctx: &SessionContext) -> ToolRequest {
        ToolRequest::from_switch(&self.method, &self.params, self.mode.as_deref(), ctx)
    }
}

/// What is known of each session's mode.
#[derive(Debug, Default)]
pub struct Modes {
    sessions: HashMap<String, SessionModes>,
}

#[derive(Debug, Default)]
struct SessionModes {
    /// The mode the session is in, as last reported or let through.
    current: Option<String>,
    /// The ids of the configuration options of category `mode`.
    mode_options: HashSet<String>,
}

impl Modes {
    /// The switch the editor asks for with `method`: `None` when `method` is not one, an
    /// what is missing when the params lack what it needs.
    pub fn requested(&self, method: &str, params: &Value) -> Option<Result<Switch, String>> {
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        let session_id = text("sessionId").unwrap_or_default();
        let mode = match method {
            "session/set_mode" => match text("modeId") {
                Some(mode) => Some(mode.to_owned()),
                None => return Some(Err("no `modeId`".to_owned())),
            },
            "session/set_config_option" => {
                let Some(config) = text("configId") else {
                    return Some(Err("no `configId`".to_owned()));
                };
                self.is_mode_option(session_id, config)
                    .then(|| text("value").map(str::to_owned))
                    .flatten()
            }
            _ => return None,
        };
        Some(Ok(Switch {
            method: method.to_owned(),
            params: params.clone(),
            mode,
        }))
    }

    /// The switch an agent's `session/update` reports, if it reports one into a mode other
    /// than the session's current one. Configuration options are noted either way.
    pub fn reported(&mut self, session_id: &str, update: &Value) -> Option<Switch> {
        let kind = update.get("sessionUpdate").and_then(Value::as_str)?;
        let mode = match kind {
            "current_mode_update" => update
                .get("currentModeId")
                .or_else(|| update.get("modeId"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            "config_option_update" => self.note_options(session_id, update),
            _ => return None,
        }?;
        self.changed(session_id, kind, update, mode)
    }

    /// The mode a session starts in, from the agent's answer to `method` (`session/new`,
    /// `session/load`, `session/resume`), as a switch to judge.
    pub fn opened(&mut self, session_id: &str, method: &str, result: &Value) -> Option<Switch> {
        let from_options = self.note_options(session_id, result);
        let mode = result
            .pointer("/modes/currentModeId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(from_options)?;
        self.changed(session_id, method, result, mode)
    }

    /// Notes that the session is now in `mode`: a switch the gate let through.
    pub fn approve(&mut self, session_id: &str, mode: &str) {
        self.sessions
            .entry(session_id.to_owned())
            .or_default()
            .current = Some(mode.to_owned());
    }

    fn changed(
        &mut self,
        session_id: &str,
        method: &str,
        params: &Value,
        mode: String,
    ) -> Option<Switch> {
        let session = self.sessions.entry(session_id.to_owned()).or_default();
        if session.current.as_deref() == Some(&mode) {
            return None;
        }
        session.current = Some(mode.clone());
        Some(Switch {
            method: method.to_owned(),
            params: params.clone(),
            mode: Some(mode),
        })
    }

    /// Notes which of `holder`'s `configOptions` select the mode; returns the current value of
    /// the first that does.
    fn note_options(&mut self, session_id: &str, holder: &Value) -> Option<String> {
        let options = holder.get("configOptions").and_then(Value::as_array)?;
        let session = self.sessions.entry(session_id.to_owned()).or_default();
        let mut mode = None;
        for option in options {
            let Some(id) = option.get("id").and_then(Value::as_str) else {
                continue;
            };
            if option.get("category").and_then(Value::as_str) == Some("mode") || id == "mode" {
                session.mode_options.insert(id.to_owned());
                if mode.is_none() {
                    mode = option
                        .get("currentValue")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
            }
        }
        mode
    }

    /// Whether `config` selects the session's mode: an option of category `mode`, or one
    /// called `mode` (Claude Code's and Codex's adapters name it so).
    fn is_mode_option(&self, session_id: &str, config: &str) -> bool {
        config == "mode"
            || self
                .sessions
                .get(session_id)
                .is_some_and(|s| s.mode_options.contains(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reported_switch_is_judged_once_and_not_after_the_gate_let_it_through() {
        let mut modes = Modes::default();
        let started =
            json!({"sessionId": "s", "modes": {"currentModeId": "default", "availableModes": []}});
        let opened = modes.opened("s", "session/new", &started).unwrap();
        assert_eq!(opened.mode.as_deref(), Some("default"));
        let update =
            |mode: &str| json!({"sessionUpdate": "current_mode_update", "currentModeId": mode});
        assert!(modes.reported("s", &update("default")).is_none());
        let switch = modes.reported("s", &update("bypassPermissions")).unwrap();
        assert_eq!(switch.mode.as_deref(), Some("bypassPermissions"));
        assert_eq!(switch.method, "current_mode_update");
        modes.approve("s", "plan");
        assert!(modes.reported("s", &update("plan")).is_none());
        assert!(
            modes
                .reported("s", &json!({"sessionUpdate": "agent_message_chunk"}))
                .is_none()
        );
    }

    #[test]
    fn a_configuration_option_of_category_mode_switches_the_mode() {
        let mut modes = Modes::default();
        let options = json!({"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "m1", "options": []},
            {"id": "approval", "name": "Approval", "category": "mode", "type": "select", "currentValue": "read-only", "options": []},
        ]});
        let reported = modes.reported("s", &options).unwrap();
        assert_eq!(reported.mode.as_deref(), Some("read-only"));
        let set = |config: &str, value: &str| {
            modes
                .requested(
                    "session/set_config_option",
                    &json!({"sessionId": "s", "configId": config, "value": value}),
                )
                .unwrap()
                .unwrap()
        };
        assert_eq!(
            set("approval", "full-access").mode.as_deref(),
            Some("full-access")
        );
        assert_eq!(set("mode", "yolo").mode.as_deref(), Some("yolo"));
        assert_eq!(set("model", "m2").mode, None);
        assert!(
            modes
                .requested("session/set_mode", &json!({"sessionId": "s"}))
                .unwrap()
                .is_err()
        );
        assert!(modes.requested("session/prompt", &json!({})).is_none());
    }
}
