//! The one verdict scale, from a plugin's answer to the audit line: `abstain < allow < ask <
//! deny`. Handlers' verdicts, the combined decision, `on_error`, the policy default and the
//! inline tests' `expect` are all this type; verdicts combine with `max`. It is written as the
//! lowercase words everywhere (`handlers.toml`, JSON output, the audit log). A leaf: it imports
//! nothing of the crate.

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No opinion. As a combined decision it never stands: the policy default replaces it.
    #[default]
    Abstain,
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Abstain,
        Verdict::Allow,
        Verdict::Ask,
        Verdict::Deny,
    ];

    /// `abstain`, `allow`, `ask` or `deny`; nothing else.
    pub fn parse(word: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == word)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Abstain => "abstain",
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_ordered_and_spelt_as_on_the_wire() {
        assert!(Verdict::Abstain < Verdict::Allow);
        assert!(Verdict::Allow < Verdict::Ask);
        assert!(Verdict::Ask < Verdict::Deny);
        for verdict in Verdict::ALL {
            assert_eq!(Verdict::parse(verdict.as_str()), Some(verdict));
            assert_eq!(
                serde_json::to_value(verdict).unwrap(),
                serde_json::json!(verdict.as_str())
            );
        }
        assert_eq!(Verdict::parse("Allow"), None);
    }
}
