//! Reading an audit log back: what was decided, by whom, about what ([`Summary`]), and the
//! org-policy rules that would have allowed what people approved again and again
//! ([`suggest`]), so that a team can tighten or loosen its policy from what happened.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::policy::{self, Decision, Rule, escape_regex};

/// The parts of an audit line a review reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub timestamp_ms: u64,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub subject: String,
    #[serde(default)]
    pub decision: String,
    #[serde(default)]
    pub handlers: Vec<HandlerEntry>,
    #[serde(default)]
    pub answer: String,
    #[serde(default)]
    pub allowed: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct HandlerEntry {
    pub name: String,
    pub verdict: String,
}

impl Entry {
    /// An ask that a person (at the terminal, in the editor, through a grant or an "always"
    /// they gave) let through.
    fn approved_by_person(&self) -> bool {
        self.decision == "ask"
            && self.allowed == Some(true)
            && ["(user", "(editor", "(granted", "(session-rule"]
                .iter()
                .any(|by| self.answer.contains(by))
    }

    /// Denied by the chain, or refused by whoever answered.
    fn refused(&self) -> bool {
        self.decision == "deny" || self.allowed == Some(false)
    }
}

/// Reads an audit log; a line that is not an audit record is an error naming it.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the audit log {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not an audit record", path.display(), n + 1))
        })
        .collect()
}

/// Counts of decisions: the chain's verdict, and what the answer did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Counts {
    pub total: usize,
    pub allow: usize,
    pub deny: usize,
    pub ask: usize,
    /// Asks a person let through.
    pub approved: usize,
}

impl Counts {
    fn add(&mut self, entry: &Entry) {
        self.total += 1;
        match entry.decision.as_str() {
            "allow" => self.allow += 1,
            "deny" => self.deny += 1,
            _ => self.ask += 1,
        }
        if entry.approved_by_person() {
            self.approved += 1;
        }
    }
}

/// What an audit log says, grouped.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub decisions: Counts,
    pub first_ms: u64,
    pub last_ms: u64,
    pub by_kind: BTreeMap<String, Counts>,
    pub by_tool: BTreeMap<String, Counts>,
    pub by_session: BTreeMap<String, Counts>,
    /// Per handler, how often it gave each verdict.
    pub by_handler: BTreeMap<String, BTreeMap<String, usize>>,
    /// The commands and paths asked about most often, with how many times.
    pub most_asked: Vec<(String, usize)>,
}

/// How many subjects `most_asked` lists.
const MOST_ASKED: usize = 10;

pub fn summarise(entries: &[Entry]) -> Summary {
    let mut summary = Summary {
        first_ms: entries.iter().map(|e| e.timestamp_ms).min().unwrap_or(0),
        last_ms: entries.iter().map(|e| e.timestamp_ms).max().unwrap_or(0),
        ..Summary::default()
    };
    let mut asked: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in entries {
        summary.decisions.add(entry);
        summary
            .by_kind
            .entry(entry.kind.clone())
            .or_default()
            .add(entry);
        let tool = entry.tool_name.clone().unwrap_or_else(|| "(none)".into());
        summary.by_tool.entry(tool).or_default().add(entry);
        let session = summary.by_session.entry(entry.session_id.clone());
        session.or_default().add(entry);
        for handler in &entry.handlers {
            let verdicts = summary.by_handler.entry(handler.name.clone()).or_default();
            *verdicts.entry(handler.verdict.clone()).or_default() += 1;
        }
        if entry.decision == "ask" {
            *asked.entry(&entry.subject).or_default() += 1;
        }
    }
    let mut most: Vec<(String, usize)> =
        asked.into_iter().map(|(s, n)| (s.to_owned(), n)).collect();
    most.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    most.truncate(MOST_ASKED);
    summary.most_asked = most;
    summary
}

/// A suggested org-policy allow rule: the commands people approved, and how often.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    pub name: String,
    /// The approved commands it allows, exactly (its `match` examples).
    pub commands: Vec<String>,
    pub approvals: usize,
    /// A command just beyond it (its `not_match` example).
    pub limit: String,
}

/// Allow rules for commands people approved at least `min` times, grouped by program and
/// first word: each allows exactly the commands approved, nothing else. A command the chain
/// denied or someone refused, even once, is never suggested (a suggestion never loosens a
/// deny), nor one acp-gate cannot state exactly as a rule (quotes, expansions, several
/// commands).
pub fn suggest(entries: &[Entry], min: usize) -> Vec<Suggestion> {
    let refused: Vec<&str> = entries
        .iter()
        .filter(|e| e.refused())
        .map(|e| e.subject.as_str())
        .collect();
    let approved = entries
        .iter()
        .filter(|e| e.kind == "execute" && e.approved_by_person())
        .filter(|e| !refused.contains(&e.subject.as_str()))
        .filter_map(|e| plain_command(&e.subject));
    let mut suggestions = grouped(approved);
    suggestions.retain(|s| s.approvals >= min);
    suggestions
}

/// The rules reviewers proposed on the review service, from the commands they allowed with a
/// proposal (one per allow): merged as [`suggest`] merges, one rule per program and first word,
/// each allowing exactly the commands allowed. Commands acp-gate cannot state exactly as a
/// rule are left out (the service never drafts one for them).
pub fn proposals<'a>(subjects: impl IntoIterator<Item = &'a str>) -> Vec<Suggestion> {
    grouped(subjects.into_iter().filter_map(plain_command))
}

/// One suggestion per program and first word of `commands` (each counted once per approval).
fn grouped(commands: impl IntoIterator<Item = String>) -> Vec<Suggestion> {
    let mut groups: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for command in commands {
        *groups
            .entry(head(&command))
            .or_default()
            .entry(command)
            .or_default() += 1;
    }
    groups
        .into_iter()
        .map(|(head, commands)| {
            let approvals: usize = commands.values().sum();
            suggestion(&head, commands.into_keys().collect(), approvals)
        })
        .collect()
}

/// The rule a reviewer proposes when they allow `subject` once (on the review service): it
/// allows exactly that command, with a near miss as its `not_match`; `None` when acp-gate
/// cannot state the command exactly as a rule.
pub fn proposal(subject: &str) -> Option<Suggestion> {
    proposals([subject]).pop()
}

/// A command's program and first word, which name its rule.
fn head(command: &str) -> String {
    command.split(' ').take(2).collect::<Vec<_>>().join("-")
}

fn suggestion(head: &str, commands: Vec<String>, approvals: usize) -> Suggestion {
    Suggestion {
        name: format!("approved-{head}"),
        limit: format!("{} --and-more", commands[0]),
        commands,
        approvals,
    }
}

/// `text` as the one simple command org-policy would see (program's base name lower-cased,
/// words joined by single spaces), when it is written with plain words only.
fn plain_command(text: &str) -> Option<String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c);
    let mut words = text.split_whitespace();
    let program = words.next()?;
    if !text.chars().all(|c| plain(c) || c == ' ') || program.contains('=') {
        return None;
    }
    let program = program.rsplit('/').next()?.to_ascii_lowercase();
    Some(
        std::iter::once(program.as_str())
            .chain(words)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The suggestions as a `handlers.toml` with one org-policy handler, ready for `acp-gate
/// check --handlers FILE` (each rule's examples are checked when it loads).
pub fn handlers_toml(suggestions: &[Suggestion], source: &Path) -> String {
    let header = format!(
        "# Suggested by `acp-gate audit suggest` from {}: {} rule(s) allowing commands people\n\
         # approved again and again, each exactly as approved. Review, then test before installing:\n\
         #   acp-gate check --handlers THIS_FILE REQUESTS...\n",
        source.display(),
        suggestions.len()
    );
    rules_toml(suggestions, &header)
}

/// The suggestions as a `handlers.toml` under `header` (comment lines).
pub fn rules_toml(suggestions: &[Suggestion], header: &str) -> String {
    let rules: Vec<Rule> = suggestions
        .iter()
        .map(|suggestion| {
            let alternatives: Vec<String> = suggestion
                .commands
                .iter()
                .map(|c| escape_regex(c))
                .collect();
            Rule {
                name: suggestion.name.clone(),
                decision: Decision::Allow,
                regex: Some(format!("^({})$", alternatives.join("|"))),
                matches: suggestion.commands.iter().map(|c| json!(c)).collect(),
                not_match: vec![json!(suggestion.limit)],
                ..Rule::default()
            }
        })
        .collect();
    let approvals = |rule: &Rule| {
        let suggestion = suggestions.iter().find(|s| s.name == rule.name);
        vec![format!(
            "approved {} time(s)",
            suggestion.map_or(0, |s| s.approvals)
        )]
    };
    policy::handlers_toml(header, "name = \"suggested\"\n", &rules, approvals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(subject: &str, decision: &str, answer: &str, allowed: Option<bool>) -> Entry {
        Entry {
            timestamp_ms: 1,
            session_id: "s".into(),
            kind: "execute".into(),
            tool_name: Some("Bash".into()),
            subject: subject.into(),
            decision: decision.into(),
            handlers: Vec::new(),
            answer: answer.into(),
            allowed,
        }
    }

    #[test]
    fn only_what_people_approved_repeatedly_and_nobody_refused_is_suggested() {
        let approved = |s| entry(s, "ask", "allow-once (user)", Some(true));
        let entries = [
            approved("terraform plan -out=plan"),
            approved("terraform plan -out=plan"),
            approved("/usr/bin/Terraform apply plan"),
            approved("npm install lodash"),
            approved("npm install react"),
            approved("make deploy"),
            approved("make deploy"),
            entry("make deploy", "deny", "reject", Some(false)),
            approved("echo $HOME"),
            approved("echo $HOME"),
            // Allowed by the chain, not by a person.
            entry("cargo test", "allow", "allow-once", Some(true)),
            entry("cargo test", "allow", "allow-once", Some(true)),
        ];
        let suggestions = suggest(&entries, 2);
        let named: Vec<&str> = suggestions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(named, ["approved-npm-install", "approved-terraform-plan"]);
        assert_eq!(
            suggestions[0].commands,
            ["npm install lodash", "npm install react"]
        );
        assert_eq!(suggestions[1].approvals, 2);
        assert!(suggest(&entries, 3).is_empty());
        let text = handlers_toml(&suggestions, Path::new("audit.jsonl"));
        assert!(
            text.contains(r"regex = '^(terraform plan \-out=plan)$'"),
            "{text}"
        );

        let summary = summarise(&entries);
        assert_eq!(
            (summary.decisions.total, summary.decisions.approved),
            (12, 9)
        );
        assert_eq!(summary.most_asked[0], ("echo $HOME".to_owned(), 2));
    }
}
