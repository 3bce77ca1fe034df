//! A reviewer's decision, the same from the page and the API: who may decide (a reviewer,
//! never the developer who asked: the right to decide is apart from the right to submit), the
//! statement signed with the service's key, the org-policy rule draft a reviewer may propose
//! with an allow, and the wake-up of the gate waiting for it.

use axum::http::StatusCode;
use serde::Deserialize;

use super::Service;
use super::db::{Decided, Escalation, Token};
use super::error::Refusal;
use super::identity;
use crate::review;
use crate::service::{Ruling, SignedDecision, Statement};

/// The longest message a reviewer may give the agent.
pub const MAX_MESSAGE: usize = 2000;

/// What a reviewer chose.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Allow once.
    Allow,
    /// Deny, with a message for the agent.
    Deny,
    /// Allow once and propose an org-policy rule that would allow it from now on.
    AllowAndPropose,
}

impl Service {
    /// `reviewer` decides escalation `id`.
    pub async fn decide(
        &self,
        reviewer: &Token,
        id: &str,
        choice: Choice,
        message: Option<&str>,
    ) -> Result<Escalation, Refusal> {
        if !reviewer.role.reviews() {
            return Err(Refusal::forbidden(format!(
                "token `{}` is a {} token: only reviewers decide",
                reviewer.name,
                reviewer.role.as_str()
            )));
        }
        let message = message.map(str::trim).filter(|m| !m.is_empty());
        if message.is_some_and(|m| m.chars().count() > MAX_MESSAGE) {
            return Err(Refusal::bad_request(format!(
                "the message is longer than {MAX_MESSAGE} characters"
            )));
        }
        let Some(escalation) = self.db.escalation(id).await? else {
            return Err(Refusal::not_found(format!("no escalation {id}")));
        };
        if escalation.status != "open" {
            return Err(Refusal::conflict(format!(
                "escalation {id} was decided already ({} by {})",
                escalation.status,
                escalation.reviewer.as_deref().unwrap_or("?")
            )));
        }
        if own(reviewer, &escalation) {
            return Err(Refusal::forbidden(format!(
                "escalation {id} is {}'s own request: another reviewer must decide it",
                reviewer.person()
            )));
        }
        let ruling = match choice {
            Choice::Allow | Choice::AllowAndPropose => Ruling::Allow,
            Choice::Deny => Ruling::Deny,
        };
        let rule = match choice {
            Choice::AllowAndPropose => Some(self.proposal(&escalation, reviewer)?),
            _ => None,
        };
        let statement = Statement {
            escalation: escalation.id.clone(),
            session_id: escalation.session_id.clone(),
            fingerprint: escalation.fingerprint.clone(),
            ruling,
            reviewer: reviewer.name.clone(),
            message: message.map(str::to_owned),
            decided_ms: super::db::now() as u64,
        };
        let text = serde_json::to_string(&statement).map_err(anyhow::Error::from)?;
        let signature = self.key.sign(text.as_bytes());
        let decided = Decided {
            reviewer: &reviewer.name,
            ruling,
            message,
            rule: rule.as_deref(),
            statement: &text,
            signature: &signature,
            decided_ms: statement.decided_ms as i64,
        };
        if !self.db.decide(id, &decided).await? {
            return Err(Refusal::conflict(format!(
                "escalation {id} was decided by someone else a moment ago"
            )));
        }
        self.wake.decided(&self.db, id).await?;
        let Some(decided) = self.db.escalation(id).await? else {
            return Err(Refusal::not_found(format!("no escalation {id}")));
        };
        Ok(decided)
    }

    /// The org-policy rule draft for an allowed escalation: its command as the `match`
    /// example, a near miss as `not_match`.
    fn proposal(&self, escalation: &Escalation, reviewer: &Token) -> Result<String, Refusal> {
        let suggestion = (escalation.kind == "execute")
            .then(|| review::proposal(&escalation.subject))
            .flatten()
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "no rule can be drafted for escalation {}: only a plain command (no quotes, expansions or several commands) can be stated exactly as a rule; allow it once instead",
                        escalation.id
                    ),
                )
            })?;
        let header = format!(
            "# Proposed by {} on the review service, allowing escalation {} ({}'s request).\n\
             # For the policy owners: review, test with `acp-gate check --handlers THIS_FILE`, then\n\
             # take the rule into the org's handlers.toml.\n",
            reviewer.name, escalation.id, escalation.requester
        );
        Ok(review::rules_toml(&[suggestion], &header))
    }
}

/// Whether `escalation` is `reviewer`'s own request: the person of the gate token that sent it,
/// or the developer the gate named, is the reviewer's, however either is spelt.
pub fn own(reviewer: &Token, escalation: &Escalation) -> bool {
    let me = reviewer.person();
    me == identity::person(&escalation.requester)
        || me == identity::person(&escalation.submission.developer)
}

/// An escalation's decision as the gate receives it, when there is one.
pub fn signed(escalation: &Escalation) -> Option<SignedDecision> {
    Some(SignedDecision {
        statement: escalation.statement.clone()?,
        signature: escalation.signature.clone()?,
    })
}
