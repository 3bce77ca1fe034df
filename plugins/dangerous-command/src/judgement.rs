//! Verdict levels, findings, and how the findings about the parts of one command combine.

use std::fmt::Write as _;

use acp_gate_plugin::Verdict;
use acp_gate_shell::Command as Invocation;

/// How strongly a finding (or a whole command) is judged. The order is the precedence:
/// deny beats ask beats allow beats abstain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Abstain,
    Allow,
    Ask,
    Deny,
}

/// One rule that fired on one part of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    /// The rule's id, as `disable_rules` names it.
    pub rule: &'static str,
    /// What the user sees.
    pub reason: String,
}

impl Finding {
    pub fn deny(rule: &'static str, reason: impl Into<String>) -> Self {
        Self {
            level: Level::Deny,
            rule,
            reason: reason.into(),
        }
    }

    pub fn ask(rule: &'static str, reason: impl Into<String>) -> Self {
        Self {
            level: Level::Ask,
            rule,
            reason: reason.into(),
        }
    }
}

/// The findings about one simple command, collected into a shared list; each reason ends with
/// the command it is about.
pub struct Findings<'o, 'i> {
    pub out: &'o mut Vec<Finding>,
    pub inv: &'i Invocation,
}

impl Findings<'_, '_> {
    pub fn push(&mut self, level: Level, rule: &'static str, reason: impl AsRef<str>) {
        let reason = format!("{}: `{}`", reason.as_ref(), self.inv.display());
        self.out.push(Finding {
            level,
            rule,
            reason,
        });
    }

    pub fn deny(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Deny, rule, reason);
    }

    pub fn ask(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Ask, rule, reason);
    }
}

/// The judgement of a whole command: the strongest finding wins; with no finding, the command
/// is allowed only when every simple command in it is known to be safe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub level: Level,
    pub reasons: Vec<String>,
}

impl Judgement {
    /// Combines the findings about every part of a command with whether every part is known safe.
    pub fn combine(findings: &[Finding], all_known_safe: bool) -> Self {
        let top = findings.iter().map(|f| f.level).max();
        match top {
            Some(level @ (Level::Deny | Level::Ask)) => {
                let mut reasons: Vec<String> = Vec::new();
                for f in findings.iter().filter(|f| f.level == level) {
                    let mut line = f.reason.clone();
                    let _ = write!(line, " [{}]", f.rule);
                    if !reasons.contains(&line) {
                        reasons.push(line);
                    }
                }
                Self { level, reasons }
            }
            _ if all_known_safe => Self {
                level: Level::Allow,
                reasons: Vec::new(),
            },
            _ => Self {
                level: Level::Abstain,
                reasons: Vec::new(),
            },
        }
    }

    pub fn into_verdict(self) -> Verdict {
        match self.level {
            Level::Deny => Verdict::Deny(self.reasons.join("; ")),
            Level::Ask => Verdict::Ask(self.reasons.join("; ")),
            Level::Allow => Verdict::Allow,
            Level::Abstain => Verdict::Abstain,
        }
    }
}

/// The level a verdict stands for.
pub fn level_of(verdict: &Verdict) -> Level {
    match verdict {
        Verdict::Deny(_) => Level::Deny,
        Verdict::Ask(_) => Level::Ask,
        Verdict::Allow => Level::Allow,
        Verdict::Abstain => Level::Abstain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_beats_ask_and_reasons_are_deduplicated() {
        let findings = [
            Finding::ask("a", "why a"),
            Finding::deny("b", "why b"),
            Finding::deny("b", "why b"),
        ];
        let j = Judgement::combine(&findings, true);
        assert_eq!(j.level, Level::Deny);
        assert_eq!(j.reasons, ["why b [b]"]);
    }

    #[test]
    fn no_findings_is_allow_only_when_all_known_safe() {
        assert_eq!(Judgement::combine(&[], true).level, Level::Allow);
        assert_eq!(Judgement::combine(&[], false).level, Level::Abstain);
    }
}
