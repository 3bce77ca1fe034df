//! Session rules: what the person at the terminal answered "always" to, remembered for the rest
//! of the session as a normalised rule. A rule only turns a later identical **ask** into an
//! allow: it never touches a deny, nor an ask that an org handler gave.

use std::path::PathBuf;

use crate::chain::Decision;
use crate::request::{ToolKind, ToolRequest, said_once};
use crate::verdict::Verdict;

/// One remembered answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRule {
    kind: ToolKind,
    subject: Subject,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// A simple command, its words joined by single spaces.
    Command(String),
    /// The exact set of paths (sorted) and the title, for every other kind.
    Target { paths: Vec<PathBuf>, title: String },
}

impl SessionRule {
    /// The rule that "always" would remember for `request`, or why none can be: a shell
    /// command with dynamic parts (`$`, backticks, globs, redirections, several commands) is
    /// never remembered, since the same text can do something else next time.
    pub fn for_request(request: &ToolRequest) -> Result<SessionRule, String> {
        let subject = match &request.command {
            Some(command) => Subject::Command(simple_command(&command.text())?),
            None => {
                let mut paths: Vec<PathBuf> =
                    request.paths.iter().map(|p| p.absolute.clone()).collect();
                paths.sort();
                paths.dedup();
                if paths.is_empty() && request.title.is_empty() {
                    return Err("the request names no path and has no title".into());
                }
                Subject::Target {
                    paths,
                    title: request.title.clone(),
                }
            }
        };
        Ok(SessionRule {
            kind: request.kind,
            subject,
        })
    }

    /// Whether this rule settles `decision` for `request`: the same kind and subject, and a
    /// chain that said ask with no org handler among those asking.
    pub fn settles(&self, request: &ToolRequest, decision: &Decision) -> bool {
        decision.outcome == Verdict::Ask
            && !decision.org_insists()
            && SessionRule::for_request(request).is_ok_and(|rule| &rule == self)
    }

    /// For people: `execute cargo test`, `edit /ws/src/lib.rs`.
    pub fn describe(&self) -> String {
        match &self.subject {
            Subject::Command(command) => format!("{} `{command}`", self.kind.as_str()),
            Subject::Target { paths, title } if paths.is_empty() => said_once(self.kind, title),
            Subject::Target { paths, .. } => {
                let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                format!("{} {}", self.kind.as_str(), shown.join(", "))
            }
        }
    }
}

/// The normalised form of a simple command: words of plain characters only, joined by one
/// space. Anything the shell would expand, redirect or chain makes it not simple.
fn simple_command(text: &str) -> Result<String, String> {
    let plain = |c: char| c.is_alphanumeric() || "_-./:=,+@%^".contains(c);
    if let Some(c) = text.chars().find(|&c| !plain(c) && !c.is_whitespace()) {
        return Err(format!(
            "the command has a dynamic or compound part (`{c}`): it is asked every time"
        ));
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return Err("the command is empty".into());
    }
    Ok(words.join(" "))
}

/// The rules of one session, in the order they were made.
#[derive(Debug, Default)]
pub struct SessionRules {
    rules: Vec<SessionRule>,
}

impl SessionRules {
    pub fn remember(&mut self, rule: SessionRule) {
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
    }

    /// The rule that settles this ask, if any.
    pub fn settling(&self, request: &ToolRequest, decision: &Decision) -> Option<&SessionRule> {
        self.rules.iter().find(|r| r.settles(request, decision))
    }

    pub fn list(&self) -> &[SessionRule] {
        &self.rules
    }

    /// Forgets rule `index` (0-based); returns it.
    pub fn revoke(&mut self, index: usize) -> Option<SessionRule> {
        (index < self.rules.len()).then(|| self.rules.remove(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::HandlerTrace;
    use crate::config::Tier;
    use crate::request::SessionContext;
    use serde_json::json;

    fn command(text: &str) -> ToolRequest {
        let ctx = SessionContext::for_workspace("s", std::path::Path::new("/ws"));
        let params = json!({"toolCall": {"toolCallId": "t", "rawInput": {"command": text}}});
        ToolRequest::from_permission_request(&params, None, &ctx).unwrap()
    }

    fn decision(outcome: Verdict, tier: Tier, verdict: Verdict) -> Decision {
        Decision {
            outcome,
            reasons: vec![],
            handlers: vec![HandlerTrace {
                name: "h".into(),
                tier,
                verdict,
                reason: None,
                elapsed_us: 0,
                error: None,
                logs: vec![],
            }],
            by_default: false,
        }
    }

    #[test]
    fn simple_commands_are_remembered_exactly_and_dynamic_ones_never() {
        let rule = SessionRule::for_request(&command("cargo  test -p x")).unwrap();
        assert_eq!(rule.describe(), "execute `cargo test -p x`");
        let ask = decision(Verdict::Ask, Tier::Builtin, Verdict::Ask);
        assert!(rule.settles(&command("cargo test -p x"), &ask));
        assert!(!rule.settles(&command("cargo test -p y"), &ask));
        for dynamic in [
            "echo $HOME",
            "echo `id`",
            "ls *.rs",
            "a; b",
            "a && b",
            "cat < x",
            "echo \"x\"",
            "$(x)",
        ] {
            assert!(
                SessionRule::for_request(&command(dynamic)).is_err(),
                "{dynamic}"
            );
        }
    }

    #[test]
    fn a_rule_never_settles_a_deny_nor_an_org_ask() {
        let rule = SessionRule::for_request(&command("make deploy")).unwrap();
        let request = command("make deploy");
        assert!(!rule.settles(
            &request,
            &decision(Verdict::Deny, Tier::User, Verdict::Deny)
        ));
        assert!(!rule.settles(&request, &decision(Verdict::Ask, Tier::Org, Verdict::Ask)));
        assert!(rule.settles(
            &request,
            &decision(Verdict::Ask, Tier::Project, Verdict::Ask)
        ));
        let mut rules = SessionRules::default();
        rules.remember(rule.clone());
        rules.remember(rule);
        assert_eq!(rules.list().len(), 1);
        assert!(rules.revoke(0).is_some());
        assert!(
            rules
                .settling(&request, &decision(Verdict::Ask, Tier::User, Verdict::Ask))
                .is_none()
        );
    }
}
