//! `builtin:acpx-policy`: acpx's permission policy (`acpx --permission-policy`), decided as acpx
//! decides it, as one handler of acp-gate's chain (`run` / `proxy --permission-policy`).
//!
//! The policy is `{"autoApprove": [..], "autoDeny": [..], "escalate": [..], "defaultAction":
//! "approve" | "deny" | "escalate"}`. An entry matches a request when, ignoring ASCII case and
//! surrounding space, it equals one of its tokens, or is `*`: the tool kind, the tool call's
//! title, the title's first word (up to a space or `:`), and the tool name (the raw input's
//! `name`, `tool` or `toolName`, else the title's first word; acp-gate adds the agent's own tool
//! name, e.g. Claude Code's `Bash`). The first list that matches decides, in acpx's order:
//! autoDeny (deny) > autoApprove (allow) > escalate (ask) > defaultAction; nothing matching and
//! no default: abstain.
//!
//! One difference, because acp-gate does not trust the agent: the kind an agent declares counts
//! for autoDeny and escalate (it can only make them match more), but for autoApprove the kind
//! is the one acp-gate derived from what the request carries, so that a write declared `read`
//! is not approved as a read. And the handler only says what the policy says: acp-gate's own
//! handlers still judge the request (acpx calls its policy "a tool-name policy, not a
//! sandbox"), and the strictest verdict wins.

use acp_gate_plugin::{Plugin, Request, ToolKind, Verdict};
use serde::Deserialize;
use serde_json::Value;

/// The policy, in acpx's JSON format.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    pub auto_approve: Vec<String>,
    pub auto_deny: Vec<String>,
    pub escalate: Vec<String>,
    pub default_action: Option<Action>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Approve,
    Deny,
    Escalate,
}

pub struct AcpxPolicy;

impl Plugin for AcpxPolicy {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config)
    }
}

acp_gate_plugin::export_plugin!(AcpxPolicy);
acp_gate_plugin::use_instance_arena!();

pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    for (list, name) in [
        (&config.auto_approve, "autoApprove"),
        (&config.auto_deny, "autoDeny"),
        (&config.escalate, "escalate"),
    ] {
        if list.iter().any(|entry| entry.trim().is_empty()) {
            return Err(format!("{name} must contain only non-empty strings"));
        }
    }
    let strict = tokens(request, false);
    if let Some(rule) = first_match(&config.auto_deny, &strict) {
        return Ok(Verdict::Deny(format!("acpx policy: autoDeny `{rule}`")));
    }
    if first_match(&config.auto_approve, &tokens(request, true)).is_some() {
        return Ok(Verdict::Allow);
    }
    if let Some(rule) = first_match(&config.escalate, &strict) {
        return Ok(Verdict::Ask(format!("acpx policy: escalate `{rule}`")));
    }
    Ok(match config.default_action {
        Some(Action::Approve) => Verdict::Allow,
        Some(Action::Deny) => Verdict::Deny("acpx policy: defaultAction deny".into()),
        Some(Action::Escalate) => Verdict::Ask("acpx policy: defaultAction escalate".into()),
        None => Verdict::Abstain,
    })
}

/// The first entry of `rules` that matches one of `tokens`.
fn first_match<'a>(rules: &'a [String], tokens: &[String]) -> Option<&'a str> {
    rules
        .iter()
        .map(|rule| rule.trim())
        .find(|rule| *rule == "*" || tokens.iter().any(|t| t.eq_ignore_ascii_case(rule)))
}

/// What an entry is matched against (see the module's doc). `approving`: the kind is the one
/// acp-gate derived, not the one the agent declared.
fn tokens(request: &Request, approving: bool) -> Vec<String> {
    let raw: Value = serde_json::from_str(&request.raw_json).unwrap_or(Value::Null);
    let input = raw
        .pointer("/toolCall/rawInput")
        .or_else(|| raw.pointer("/subject/toolCall/rawInput"));
    let title = request.title.trim();
    let head = title
        .split([' ', '\t', '\n', ':'])
        .next()
        .unwrap_or("")
        .trim();
    let declared = request.declared_kind.map(ToolKind::acp_name);
    let inferred = match declared {
        Some(kind) => Some(kind),
        None if head.is_empty() => None,
        None => Some(kind_of_title(head)),
    };
    let input_name = ["name", "tool", "toolName"].into_iter().find_map(|key| {
        input?
            .get(key)?
            .as_str()
            .map(str::trim)
            .filter(|name| !name.is_empty())
    });
    let mut tokens = Vec::new();
    let kinds = match approving {
        true => vec![request.kind.acp_name()],
        false => [inferred, declared, Some(request.kind.acp_name())]
            .into_iter()
            .flatten()
            .collect(),
    };
    tokens.extend(kinds.into_iter().map(str::to_owned));
    tokens.extend(
        [title, head]
            .into_iter()
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
    );
    tokens.extend(input_name.map(str::to_owned));
    tokens.extend(request.tool_name.clone());
    tokens
}

/// acpx's guess of a kind from a title's first word.
fn kind_of_title(head: &str) -> &'static str {
    const MATCHERS: &[(&str, &[&str])] = &[
        ("read", &["read", "cat"]),
        ("search", &["search", "find", "grep"]),
        ("edit", &["write", "edit", "patch"]),
        ("delete", &["delete", "remove"]),
        ("move", &["move", "rename"]),
        ("execute", &["run", "execute", "bash"]),
        ("fetch", &["fetch", "http", "url"]),
        ("think", &["think"]),
    ];
    let head = head.to_ascii_lowercase();
    MATCHERS
        .iter()
        .find(|(_, names)| names.contains(&head.as_str()))
        .map_or("other", |(kind, _)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_gate_plugin::testing;

    /// A verdict as text (the generated type has no `PartialEq`).
    fn show(verdict: Result<Verdict, String>) -> String {
        match verdict {
            Ok(Verdict::Allow) => "allow".into(),
            Ok(Verdict::Deny(reason)) => format!("deny: {reason}"),
            Ok(Verdict::Ask(reason)) => format!("ask: {reason}"),
            Ok(Verdict::Abstain) => "abstain".into(),
            Err(error) => format!("error: {error}"),
        }
    }

    fn policy(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }

    fn titled(title: &str, declared: Option<ToolKind>, kind: ToolKind) -> Request {
        let mut request = testing::request("true");
        request.title = title.into();
        request.declared_kind = declared;
        request.kind = kind;
        request.command = None;
        request
    }

    #[test]
    fn acpx_precedence_deny_then_approve_then_escalate_then_default() {
        let config = policy(
            r#"{"autoApprove": ["read", "Bash"], "autoDeny": ["delete"], "escalate": ["bash", "fetch"], "defaultAction": "escalate"}"#,
        );
        let read = titled("Read src/lib.rs", Some(ToolKind::Read), ToolKind::Read);
        assert_eq!(show(evaluate(&read, &config)), "allow");
        // `Bash` is approved and escalated: approve wins, as in acpx.
        let bash = titled("bash: ls", None, ToolKind::Execute);
        assert_eq!(show(evaluate(&bash, &config)), "allow");
        let delete = titled("Remove build", Some(ToolKind::Delete), ToolKind::Delete);
        assert_eq!(
            show(evaluate(&delete, &config)),
            "deny: acpx policy: autoDeny `delete`"
        );
        let fetch = titled("Fetch https://x.example", None, ToolKind::Fetch);
        assert_eq!(
            show(evaluate(&fetch, &config)),
            "ask: acpx policy: escalate `fetch`"
        );
        let other = titled("Think hard", Some(ToolKind::Think), ToolKind::Think);
        assert_eq!(
            show(evaluate(&other, &config)),
            "ask: acpx policy: defaultAction escalate"
        );
        assert_eq!(show(evaluate(&other, &Config::default())), "abstain");
    }

    #[test]
    fn a_declared_read_that_writes_is_not_approved_as_a_read_but_is_denied_as_one() {
        let lying = titled("notes.md", Some(ToolKind::Read), ToolKind::Edit);
        let approve = policy(r#"{"autoApprove": ["read"]}"#);
        assert_eq!(show(evaluate(&lying, &approve)), "abstain");
        let deny = policy(r#"{"autoDeny": ["READ"]}"#);
        assert!(matches!(evaluate(&lying, &deny), Ok(Verdict::Deny(_))));
    }

    #[test]
    fn entries_match_titles_heads_tool_names_and_star() {
        let mut request = titled("terraform apply -auto-approve", None, ToolKind::Execute);
        request.tool_name = Some("Bash".into());
        for entry in [
            "terraform apply -auto-approve",
            "TERRAFORM",
            "bash",
            "*",
            "execute",
        ] {
            let config = Config {
                escalate: vec![entry.into()],
                ..Config::default()
            };
            assert!(
                matches!(evaluate(&request, &config), Ok(Verdict::Ask(_))),
                "{entry}"
            );
        }
        let config = Config {
            escalate: vec!["apply".into()],
            ..Config::default()
        };
        assert_eq!(show(evaluate(&request, &config)), "abstain");
        request.raw_json = r#"{"toolCall": {"rawInput": {"toolName": "shell"}}}"#.into();
        let config = policy(r#"{"autoDeny": ["Shell"]}"#);
        assert!(matches!(evaluate(&request, &config), Ok(Verdict::Deny(_))));
    }

    #[test]
    fn a_policy_acpx_refuses_is_refused() {
        assert!(serde_json::from_str::<Config>(r#"{"defaultAction": "allow"}"#).is_err());
        assert!(serde_json::from_str::<Config>(r#"{"autoApprove": "read"}"#).is_err());
        assert!(serde_json::from_str::<Config>(r#"{"approve": ["read"]}"#).is_err());
        let blank = policy(r#"{"autoApprove": [" "]}"#);
        assert!(evaluate(&titled("x", None, ToolKind::Other), &blank).is_err());
    }
}
