//! The plugin's `[handler.config]` table.

use serde::Deserialize;

use crate::catalog::RULES;
use crate::git_call::parse_git;
use acp_gate_shell::Command as Invocation;
use acp_gate_shell::program_name as command_name;

/// What a `handlers.toml` entry may add to or switch off in the built-in rules.
///
/// ```toml
/// [handler.config]
/// extra_deny = [{ pattern = ["terraform", "destroy"], reason = "destroys infrastructure" }]
/// extra_ask = [{ pattern = ["kubectl", "delete"], reason = "deletes cluster objects" }]
/// safe_commands = ["just test", "terraform plan"]
/// disable_rules = ["privilege-escalation"]
/// sensitive_paths = ["~/.config/secrets/**", "*.pem"]
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Commands to deny, by prefix of their words.
    pub extra_deny: Vec<PatternRule>,
    /// Commands to ask about, by prefix of their words.
    pub extra_ask: Vec<PatternRule>,
    /// More known-safe commands, as word prefixes (`"just test"`); matching ones are allowed
    /// when no rule fires on them.
    pub safe_commands: Vec<String>,
    /// Built-in rules to switch off, by id.
    pub disable_rules: Vec<String>,
    /// More paths (globs; `~/` is the home directory, a pattern without `/` matches at any
    /// depth) that commands must not write or delete, and whose reading is asked about.
    pub sensitive_paths: Vec<String>,
}

/// One extra rule: a command matches when its words start with `pattern`, where the first word
/// is compared with the program's name (`/usr/bin/git` is `git`), `*` matches any one word,
/// and for `git` the global options (`-C dir`, `-c k=v`) are skipped first.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternRule {
    pub pattern: Vec<String>,
    pub reason: String,
}

/// Rules that cannot be switched off: turning them off would let an unparsed command through.
const ALWAYS_ON: &[&str] = &["unparseable", "too-complex"];

impl Config {
    /// Rejects ids that name no rule and patterns that match everything.
    pub fn validate(&self) -> Result<(), String> {
        for id in &self.disable_rules {
            if ALWAYS_ON.contains(&id.as_str()) {
                return Err(format!("disable_rules: rule `{id}` cannot be switched off"));
            }
            if !RULES.iter().any(|(rule, _)| rule == id) {
                let known: Vec<&str> = RULES.iter().map(|(rule, _)| *rule).collect();
                return Err(format!(
                    "disable_rules: no rule `{id}` (known: {})",
                    known.join(", ")
                ));
            }
        }
        for (key, rules) in [
            ("extra_deny", &self.extra_deny),
            ("extra_ask", &self.extra_ask),
        ] {
            for rule in rules.iter() {
                if rule
                    .pattern
                    .first()
                    .is_none_or(|w| w.is_empty() || w == "*")
                {
                    return Err(format!(
                        "{key}: a pattern must start with a command name, got {:?}",
                        rule.pattern
                    ));
                }
            }
        }
        if let Some(bad) = self
            .safe_commands
            .iter()
            .find(|s| s.split_whitespace().next().is_none())
        {
            return Err(format!("safe_commands: empty entry {bad:?}"));
        }
        Ok(())
    }

    pub fn enabled(&self, rule: &str) -> bool {
        !self.disable_rules.iter().any(|r| r == rule)
    }
}

/// Whether `words` (program name first) start with `pattern`.
pub fn matches_prefix<S: AsRef<str>>(pattern: &[S], words: &[&str]) -> bool {
    pattern.len() <= words.len()
        && pattern.iter().zip(words).enumerate().all(|(i, (p, w))| {
            let p = p.as_ref();
            p == "*"
                || if i == 0 {
                    command_name(p) == *w
                } else {
                    p == *w
                }
        })
}

/// The words config patterns are matched against: the program name, then its arguments; for
/// git, without the global options.
pub fn pattern_words(inv: &Invocation) -> Vec<&str> {
    let mut words = vec![inv.name.as_str()];
    if inv.name == "git" {
        let call = parse_git(&inv.argv);
        words.extend(call.subcommand.map(|a| a.text.as_str()));
        words.extend(call.args.iter().map(|a| a.text.as_str()));
    } else {
        words.extend(inv.args().iter().map(|a| a.text.as_str()));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_rules_are_errors() {
        assert!(serde_json::from_str::<Config>(r#"{"extra_denny": []}"#).is_err());
        let config: Config =
            serde_json::from_str(r#"{"disable_rules": ["no-such-rule"]}"#).unwrap();
        assert!(config.validate().unwrap_err().contains("no-such-rule"));
        let config: Config = serde_json::from_str(r#"{"disable_rules": ["unparseable"]}"#).unwrap();
        assert!(config.validate().is_err());
        let config: Config =
            serde_json::from_str(r#"{"extra_deny": [{"pattern": ["*"], "reason": "x"}]}"#).unwrap();
        assert!(config.validate().is_err());
    }

    #[test]
    fn prefix_patterns() {
        assert!(matches_prefix(&["git", "push"], &["git", "push", "origin"]));
        assert!(matches_prefix(
            &["/usr/bin/git", "*", "x"],
            &["git", "push", "x"]
        ));
        assert!(!matches_prefix(&["git", "push"], &["git"]));
    }
}
