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
    /// The path the finding is about and what the command does to it, when it is about one.
    pub subject: Option<(String, Effect)>,
}

/// What a command does to a path. Several rules may see one command touch one path (`rm` of a
/// key deletes it, and so also reads and writes it): only the strongest effect is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    Read,
    Write,
    Move,
    Delete,
}

impl Finding {
    pub fn deny(rule: &'static str, reason: impl Into<String>) -> Self {
        Self {
            level: Level::Deny,
            rule,
            reason: reason.into(),
            subject: None,
        }
    }

    pub fn ask(rule: &'static str, reason: impl Into<String>) -> Self {
        Self {
            level: Level::Ask,
            rule,
            reason: reason.into(),
            subject: None,
        }
    }

    /// Whether `other` says at least as much about the same path: as strong an effect at as
    /// strong a level (so dropping this one lowers nothing).
    fn covered_by(&self, other: &Finding) -> bool {
        match (&self.subject, &other.subject) {
            (Some((path, effect)), Some((other_path, other_effect))) => {
                path == other_path && other_effect >= effect && other.level >= self.level
            }
            _ => false,
        }
    }
}

/// Keeps one finding per effect among the findings about one simple command: a finding about a
/// path is dropped when another says at least as much about it (`rm ~/.ssh/id_rsa` deletes a
/// key; that it also reads and writes it is no news).
pub fn one_per_effect(findings: &mut Vec<Finding>) {
    let mut k = 0;
    while k < findings.len() {
        let covered = findings.iter().enumerate().any(|(i, other)| {
            i != k && findings[k].covered_by(other) && (i < k || !other.covered_by(&findings[k]))
        });
        if covered {
            findings.remove(k);
        } else {
            k += 1;
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
            subject: None,
        });
    }

    /// A finding about what the command does to the (absolute) `path`.
    pub fn push_about(
        &mut self,
        level: Level,
        rule: &'static str,
        reason: impl AsRef<str>,
        path: &str,
        effect: Effect,
    ) {
        self.push(level, rule, reason);
        if let Some(last) = self.out.last_mut() {
            last.subject = Some((path.to_owned(), effect));
        }
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
    fn one_finding_per_effect_on_a_path_never_lowering_the_level() {
        let about = |level, effect, path: &str| Finding {
            subject: Some((path.to_owned(), effect)),
            ..Finding {
                level,
                ..Finding::deny("r", format!("{effect:?} {path} {level:?}"))
            }
        };
        let mut findings = vec![
            about(Level::Deny, Effect::Read, "/k"),
            about(Level::Deny, Effect::Delete, "/k"),
            about(Level::Deny, Effect::Write, "/k"),
            about(Level::Deny, Effect::Write, "/k"),
            about(Level::Ask, Effect::Delete, "/j"),
            about(Level::Deny, Effect::Read, "/j"),
            about(Level::Deny, Effect::Read, "/other"),
            Finding::deny("plain", "no path"),
        ];
        one_per_effect(&mut findings);
        let kept: Vec<&str> = findings.iter().map(|f| f.reason.as_str()).collect();
        assert_eq!(
            kept,
            [
                "Delete /k Deny",
                "Delete /j Ask",
                "Read /j Deny",
                "Read /other Deny",
                "no path"
            ]
        );
    }

    #[test]
    fn no_findings_is_allow_only_when_all_known_safe() {
        assert_eq!(Judgement::combine(&[], true).level, Level::Allow);
        assert_eq!(Judgement::combine(&[], false).level, Level::Abstain);
    }
}
