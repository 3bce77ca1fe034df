//! The plugin's `[handler.config]` table, and its compilation into [`Rule`]s.
//!
//! Every mistake (an unknown key, decision or tool kind, a bad regex or glob, a rule without
//! conditions, a `match` example the rule does not match) is an error that names the rule.

use serde::Deserialize;

use crate::examples::Example;
use crate::rules::{Condition, Decision, PathGlob, Pattern, Rule, Token};
use acp_gate_plugin::ToolKind;

/// `[handler.config]`: `{}` (or no table) gives no rules, and the plugin abstains on everything.
///
/// ```toml
/// [[handler.config.rules]]
/// name = "no-push-to-main"
/// decision = "deny"
/// reason = "main is protected: open a pull request"
/// prefix = ["git", "push", "origin", ["main", "master"]]
/// match = ["git push origin main", "/usr/bin/git push origin master"]
/// not_match = ["git push origin feature/x"]
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The rules, as tables; each is checked on its own so that an error can name it.
    pub rules: Vec<serde_json::Value>,
}

/// One `[[handler.config.rules]]` table as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub name: String,
    pub decision: Decision,
    #[serde(default)]
    pub reason: Option<String>,
    /// Among the rules that match, only those of the highest priority count (default 0).
    #[serde(default)]
    pub priority: i64,
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    #[serde(default)]
    pub prefix: Option<Vec<Token>>,
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub domains: Option<Vec<String>>,
    #[serde(default, rename = "match")]
    pub matches: Vec<Example>,
    #[serde(default)]
    pub not_match: Vec<Example>,
}

/// The tool kinds by their names in `handlers.toml` (`switch_mode` or `switch-mode`).
pub fn tool_kind(name: &str) -> Option<ToolKind> {
    Some(match name {
        "read" => ToolKind::Read,
        "edit" => ToolKind::Edit,
        "delete" => ToolKind::Delete,
        "move" => ToolKind::Move,
        "search" => ToolKind::Search,
        "execute" => ToolKind::Execute,
        "think" => ToolKind::Think,
        "fetch" => ToolKind::Fetch,
        "switch_mode" | "switch-mode" => ToolKind::SwitchMode,
        "other" => ToolKind::Other,
        _ => return None,
    })
}

const KINDS: &str = "read, edit, delete, move, search, execute, think, fetch, switch_mode, other";

impl Config {
    /// Checks every rule and compiles it. The first mistake is an error that starts with the
    /// JSON pointer of its place in the config (`/rules/3/regex: ...`, which acp-gate turns into
    /// the file and line) and names the rule.
    pub fn compile(&self) -> Result<Vec<Rule>, String> {
        let mut rules: Vec<Rule> = Vec::with_capacity(self.rules.len());
        for (number, value) in self.rules.iter().enumerate() {
            let label = match value.get("name").and_then(|n| n.as_str()) {
                Some(name) => format!("rule `{name}`"),
                None => "a rule without a `name`".to_owned(),
            };
            let fail = |mistake: Mistake| {
                format!(
                    "{}: {label}: {}",
                    rule_pointer(number, &mistake.at),
                    mistake.why
                )
            };
            let spec: RuleSpec = serde_json::from_value(value.clone()).map_err(|e| {
                let why = e.to_string();
                // serde names an unknown key: point at it.
                let at = why
                    .strip_prefix("unknown field `")
                    .and_then(|rest| rest.split_once('`'))
                    .map_or_else(String::new, |(key, _)| key.to_owned());
                fail(Mistake { at, why })
            })?;
            let rule = compile_rule(spec).map_err(fail)?;
            if rules.iter().any(|r| r.name == rule.name) {
                return Err(fail(Mistake::at("name", "another rule has the same name")));
            }
            rules.push(rule);
        }
        Ok(rules)
    }
}

/// The JSON pointer of rule `number`'s key `at` (a key, `key/index`, or `""` for the rule).
pub fn rule_pointer(number: usize, at: &str) -> String {
    match at {
        "" => format!("/rules/{number}"),
        at => format!("/rules/{number}/{at}"),
    }
}

/// A mistake in one rule: where in the rule (`regex`, `kinds/2`, `""` for the whole rule), and why.
struct Mistake {
    at: String,
    why: String,
}

impl Mistake {
    fn at(at: impl Into<String>, why: impl Into<String>) -> Mistake {
        Mistake {
            at: at.into(),
            why: why.into(),
        }
    }
}

fn compile_rule(spec: RuleSpec) -> Result<Rule, Mistake> {
    if spec.name.trim().is_empty() {
        return Err(Mistake::at("name", "`name` is empty"));
    }
    let reason = spec.reason.unwrap_or_default();
    if spec.decision != Decision::Allow && reason.trim().is_empty() {
        return Err(Mistake::at(
            "",
            format!(
                "a `{}` rule needs a `reason` (it is shown to the user and the agent)",
                spec.decision.as_str()
            ),
        ));
    }
    let mut conditions = Vec::new();
    if let Some(kinds) = spec.kinds {
        let mut parsed = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            parsed.push(tool_kind(kind).ok_or_else(|| {
                Mistake::at(
                    format!("kinds/{i}"),
                    format!("`kinds`: unknown tool kind `{kind}` (kinds: {KINDS})"),
                )
            })?);
        }
        nonempty("kinds", &parsed)?;
        conditions.push(Condition::Kinds(parsed));
    }
    if let Some(tools) = spec.tools {
        nonempty("tools", &tools)?;
        conditions.push(Condition::Tools(tools));
    }
    if let Some(title) = spec.title {
        conditions.push(Condition::Title(compile_regex("title", &title)?));
    }
    if let Some(domains) = spec.domains {
        nonempty("domains", &domains)?;
        for (i, domain) in domains.iter().enumerate() {
            let host = domain.strip_prefix("*.").unwrap_or(domain);
            if host.is_empty() || host.contains(['*', '/', ':', ' ']) {
                return Err(Mistake::at(
                    format!("domains/{i}"),
                    format!(
                        "`domains`: `{domain}` is not a host name (`example.com`, or `*.example.com` for its subdomains)"
                    ),
                ));
            }
        }
        conditions.push(Condition::Domains(domains));
    }
    if let Some(paths) = spec.paths {
        nonempty("paths", &paths)?;
        for (i, pattern) in paths.iter().enumerate() {
            PathGlob::check(pattern)
                .map_err(|e| Mistake::at(format!("paths/{i}"), format!("`paths`: {e}")))?;
        }
        conditions.push(Condition::Paths(paths));
    }
    if let Some(prefix) = spec.prefix {
        nonempty("prefix", &prefix)?;
        for (i, token) in prefix.iter().enumerate() {
            let alternatives = token.alternatives();
            if alternatives.is_empty() || alternatives.iter().any(|a| a.is_empty()) {
                return Err(Mistake::at(
                    format!("prefix/{i}"),
                    format!("`prefix`: token {i} is empty"),
                ));
            }
        }
        conditions.push(Condition::Prefix(prefix));
    }
    if let Some(regex) = spec.regex {
        conditions.push(Condition::Regex(compile_regex("regex", &regex)?));
    }
    if conditions.is_empty() {
        return Err(Mistake::at(
            "",
            "no conditions: give at least one of kinds, tools, title, paths, domains, prefix, regex",
        ));
    }
    Ok(Rule {
        name: spec.name,
        decision: spec.decision,
        priority: spec.priority,
        reason,
        conditions,
        matches: spec.matches,
        not_match: spec.not_match,
    })
}

fn nonempty<T>(key: &str, list: &[T]) -> Result<(), Mistake> {
    if list.is_empty() {
        return Err(Mistake::at(
            key,
            format!("`{key}` is empty, so the rule could never match"),
        ));
    }
    Ok(())
}

fn compile_regex(key: &str, pattern: &str) -> Result<Pattern, Mistake> {
    Pattern::new(pattern).map_err(|e| Mistake::at(key, format!("`{key}`: invalid regex: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(json: &str) -> Result<Vec<Rule>, String> {
        serde_json::from_str::<Config>(json)
            .map_err(|e| e.to_string())?
            .compile()
    }

    #[test]
    fn empty_config_has_no_rules() {
        assert!(compile("{}").unwrap().is_empty());
        assert!(compile(r#"{"rulez": []}"#).is_err());
    }

    #[test]
    fn mistakes_name_the_rule_and_its_place() {
        let cases = [
            (
                r#"{"name": "a", "decision": "block", "reason": "r", "kinds": ["read"]}"#,
                "/rules/0: ",
                "block",
            ),
            (
                r#"{"name": "a", "decision": "deny", "reason": "r", "kinds": ["read", "exec"]}"#,
                "/rules/0/kinds/1: ",
                "exec",
            ),
            (
                r#"{"name": "a", "decision": "deny", "reason": "r", "knids": ["read"]}"#,
                "/rules/0/knids: ",
                "knids",
            ),
            (
                r#"{"name": "a", "decision": "deny", "kinds": ["read"]}"#,
                "/rules/0: ",
                "reason",
            ),
            (
                r#"{"name": "a", "decision": "ask", "reason": "r"}"#,
                "/rules/0: ",
                "no conditions",
            ),
            (
                r#"{"name": "a", "decision": "ask", "reason": "r", "regex": "("}"#,
                "/rules/0/regex: ",
                "error: unclosed group",
            ),
            (
                r#"{"name": "a", "decision": "ask", "reason": "r", "title": "a{2,1}"}"#,
                "/rules/0/title: ",
                "invalid repetition count range",
            ),
            (
                r#"{"name": "a", "decision": "ask", "reason": "r", "paths": ["a/[b"]}"#,
                "/rules/0/paths/0: ",
                "paths",
            ),
            (
                r#"{"name": "a", "decision": "ask", "reason": "r", "prefix": ["git", []]}"#,
                "/rules/0/prefix/1: ",
                "token 1",
            ),
            (
                r#"{"name": "a", "decision": "allow", "prefix": ["ls"], "match": [{"cmd": "ls"}]}"#,
                "/rules/0: ",
                "a",
            ),
        ];
        for (rule, place, needle) in cases {
            let err = compile(&format!(r#"{{"rules": [{rule}]}}"#)).unwrap_err();
            assert!(err.contains("rule `a`"), "{err}");
            assert!(err.starts_with(place), "{err} should start with {place}");
            assert!(err.contains(needle), "{err} should mention {needle}");
        }
        let twice = r#"{"name": "a", "decision": "allow", "prefix": ["ls"]}"#;
        let err = compile(&format!(r#"{{"rules": [{twice}, {twice}]}}"#)).unwrap_err();
        assert!(
            err.starts_with("/rules/1/name: rule `a`: ") && err.contains("same name"),
            "{err}"
        );
    }
}
