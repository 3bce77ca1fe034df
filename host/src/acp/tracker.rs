//! The tool-call tracker: the merged state of every `tool_call` / `tool_call_update` the agent
//! sent, by `toolCallId`, so that a permission request that carries only an id and a title
//! (Claude Code's adapter) is judged with the kind, input, locations and diffs announced earlier.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

/// How many open tool calls are remembered; the oldest is forgotten first. Finished calls are
/// forgotten at once, so a long session's memory stays flat.
const DEFAULT_LIMIT: usize = 4096;

pub struct ToolCallTracker {
    calls: HashMap<String, Map<String, Value>>,
    order: VecDeque<String>,
    limit: usize,
}

impl Default for ToolCallTracker {
    fn default() -> Self {
        ToolCallTracker::with_limit(DEFAULT_LIMIT)
    }
}

impl ToolCallTracker {
    pub fn with_limit(limit: usize) -> ToolCallTracker {
        ToolCallTracker {
            calls: HashMap::new(),
            order: VecDeque::new(),
            limit: limit.max(1),
        }
    }

    /// Takes one `session/update` payload (`update` object). A `tool_call` replaces what was
    /// known for its id, a `tool_call_update` overwrites the fields it carries (a `null` field
    /// changes nothing). Returns the merged state, or `None` for other updates.
    pub fn observe(&mut self, update: &Value) -> Option<Value> {
        let kind = update.get("sessionUpdate").and_then(Value::as_str)?;
        if kind != "tool_call" && kind != "tool_call_update" {
            return None;
        }
        let fields = update.as_object()?;
        let id = fields.get("toolCallId").and_then(Value::as_str)?.to_owned();
        if kind == "tool_call" {
            self.forget(&id);
        }
        if !self.calls.contains_key(&id) {
            if self.calls.len() >= self.limit
                && let Some(oldest) = self.order.pop_front()
            {
                self.calls.remove(&oldest);
            }
            self.order.push_back(id.clone());
        }
        let merged = self.calls.entry(id.clone()).or_default();
        for (key, value) in fields {
            if key != "sessionUpdate" && !value.is_null() {
                merged.insert(key.clone(), value.clone());
            }
        }
        let state = Value::Object(merged.clone());
        let finished = matches!(
            merged.get("status").and_then(Value::as_str),
            Some("completed" | "failed")
        );
        if finished {
            self.forget(&id);
        }
        Some(state)
    }

    /// The merged state announced for `id`, if the call is still open.
    pub fn get(&self, id: &str) -> Option<Value> {
        self.calls.get(id).cloned().map(Value::Object)
    }

    fn forget(&mut self, id: &str) {
        if self.calls.remove(id).is_some() {
            self.order.retain(|known| known != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn updates_merge_over_the_announced_call() {
        let mut tracker = ToolCallTracker::default();
        tracker.observe(
            &json!({"sessionUpdate": "tool_call", "toolCallId": "t", "kind": "execute",
            "title": "Bash", "rawInput": {"command": "ls"}}),
        );
        let merged = tracker
            .observe(
                &json!({"sessionUpdate": "tool_call_update", "toolCallId": "t",
                "title": "`ls -la`", "rawInput": {"command": "ls -la"}, "kind": null}),
            )
            .unwrap();
        assert_eq!(merged["kind"], "execute");
        assert_eq!(merged["title"], "`ls -la`");
        assert_eq!(merged["rawInput"]["command"], "ls -la");
        assert!(merged.get("sessionUpdate").is_none());
        assert_eq!(tracker.get("t").unwrap(), merged);
    }

    #[test]
    fn finished_calls_and_the_oldest_beyond_the_limit_are_forgotten() {
        let mut tracker = ToolCallTracker::with_limit(2);
        for id in ["a", "b", "c"] {
            tracker.observe(&json!({"sessionUpdate": "tool_call", "toolCallId": id}));
        }
        assert!(tracker.get("a").is_none());
        assert_eq!(tracker.calls.len(), 2);
        tracker.observe(
            &json!({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "completed"}),
        );
        assert!(tracker.get("b").is_none());
        assert_eq!(tracker.calls.len(), 1);
        assert!(
            tracker
                .observe(&json!({"sessionUpdate": "agent_message_chunk"}))
                .is_none()
        );
    }
}
