//! Closing the loop to policy: the rules reviewers proposed, each with the requests that led to
//! it, exported as a `handlers.toml` fragment; and a what-if replay of the audit the gates
//! shipped under a proposed policy, by `acp-gate audit replay`'s own code. The page
//! (`serve::page`) shows them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::db::{Db, Escalation};
use super::error::Refusal;
use crate::replay::{self, Recorded, Report};
use crate::review::{self, Suggestion};

/// The largest policy a replay form takes.
pub const MAX_POLICY: usize = 256 << 10;
/// The most audit records one replay on the service decides again.
pub const MAX_REPLAYED: i64 = 1_000_000;

/// A proposed rule and the escalations whose allows proposed it.
#[derive(Debug, Serialize)]
pub struct Proposed {
    pub rule: Suggestion,
    pub escalations: Vec<Escalation>,
}

/// The rules reviewers proposed, merged (as `audit suggest` merges approvals), with the
/// escalations that proposed each, most recently decided first.
pub async fn proposals(db: &Db) -> anyhow::Result<Vec<Proposed>> {
    Ok(proposed(db.proposals().await?))
}

fn proposed(escalations: Vec<Escalation>) -> Vec<Proposed> {
    let rules = review::proposals(escalations.iter().map(|e| e.subject.as_str()));
    let mut proposed: Vec<Proposed> = rules
        .into_iter()
        .map(|rule| Proposed {
            rule,
            escalations: Vec::new(),
        })
        .collect();
    for escalation in escalations {
        let command = review::proposal(&escalation.subject).map(|s| s.commands[0].clone());
        if let Some(group) = proposed.iter_mut().find(|p| {
            command
                .as_ref()
                .is_some_and(|c| p.rule.commands.contains(c))
        }) {
            group.escalations.push(escalation);
        }
    }
    proposed.sort_by_key(|p| std::cmp::Reverse(p.escalations.first().and_then(|e| e.decided_ms)));
    proposed
}

/// The proposed rules as one `handlers.toml` (an org-policy handler), to review and take into
/// the org's file: each rule's `match` examples are the commands allowed.
pub fn proposals_toml(proposed: Vec<Proposed>) -> String {
    let rules: Vec<Suggestion> = proposed.into_iter().map(|p| p.rule).collect();
    let header = format!(
        "# Proposed by reviewers on the review service: {} rule(s), each allowing exactly the\n\
         # commands reviewers allowed with a proposal (its `match` examples). Review, replay\n\
         # against real traffic (`acp-gate audit replay --handlers THIS_FILE`), then take the\n\
         # rules into the org's handlers.toml.\n",
        rules.len()
    );
    review::rules_toml(&rules, &header)
}

/// What a replay is asked: a policy (a `handlers.toml`'s text) and a time range.
#[derive(Debug, Deserialize)]
pub struct Asked {
    pub handlers: String,
    #[serde(default)]
    pub since: String,
    #[serde(default)]
    pub until: String,
}

/// What a replay on the service was asked for and found.
#[derive(Debug, Serialize)]
pub struct Replayed {
    pub handlers: String,
    pub since: String,
    pub until: String,
    pub report: Report,
    /// Records in the range beyond [`MAX_REPLAYED`] were left out.
    pub cut: bool,
}

/// The audit the gates shipped in `asked`'s time range decided again under its policy.
pub async fn replay_audit(db: &Db, asked: Asked) -> Result<Replayed, Refusal> {
    // As typed: a browser sends a text area's lines ended by CRLF, and the page shows each
    // hidden character as its escape, which reads back as the character.
    let form = Asked {
        handlers: super::visible::unplain(&asked.handlers.replace("\r\n", "\n")).into_owned(),
        ..asked
    };
    let bad = |message: String| Refusal::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, message);
    let now = super::db::now();
    let moment = |text: &str, otherwise: i64| match text.trim() {
        "" => Ok(otherwise),
        text => replay::moment(text, now as u64)
            .map(|ms| ms as i64)
            .map_err(|e| bad(format!("{e:#}"))),
    };
    let (from, to) = (moment(&form.since, 0)?, moment(&form.until, i64::MAX)?);
    builtin_only(&form.handlers).map_err(bad)?;
    // The proposed policy as the org layer of an empty place: no file of the service's own
    // (its user's or a project's) takes part.
    let place = tempfile::tempdir().map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    let org = place.path().join("handlers.toml");
    let empty = place.path().join("empty.toml");
    std::fs::write(&org, &form.handlers).map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    std::fs::write(&empty, "").map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    let options = crate::LoadOptions {
        handlers: Some(empty),
        org_handlers: Some(org),
        workspace: place.path().to_path_buf(),
        permission_policy: None,
    };
    let chain = crate::load_chain(&options)
        .await
        .map_err(|e| bad(format!("the policy does not load: {e:#}")))?;
    if let Some((handler, why)) = chain.load_failures().next() {
        return Err(bad(format!(
            "the policy does not load: handler `{}`: {why}",
            handler.name
        )));
    }
    let lines = (db.audit_lines(from, to, MAX_REPLAYED + 1).await)?;
    let cut = lines.len() as i64 > MAX_REPLAYED;
    let (mut records, mut skipped) = (Vec::new(), 0);
    for line in lines.iter().take(MAX_REPLAYED as usize) {
        match Recorded::from_line(line) {
            Some(record) => records.push(record),
            None => skipped += 1,
        }
    }
    let report = replay::replay(Arc::new(chain), records, skipped).await?;
    Ok(Replayed {
        handlers: form.handlers,
        since: form.since,
        until: form.until,
        report,
        cut,
    })
}

/// A policy replayed on the service names built-in plugins only: a plugin file or a registry
/// reference would be read from the service's own disk or fetched by it.
fn builtin_only(text: &str) -> Result<(), String> {
    let policy: toml::Table =
        toml::from_str(text).map_err(|e| format!("the policy is not TOML: {e}"))?;
    let handlers = policy.get("handler").and_then(toml::Value::as_array);
    for handler in handlers.into_iter().flatten() {
        let plugin = handler
            .get("plugin")
            .and_then(toml::Value::as_str)
            .unwrap_or("");
        if !plugin.starts_with("builtin:") {
            let name = handler
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or("?");
            return Err(format!(
                "handler `{name}`: the service replays built-in plugins only (`builtin:…`), not `{plugin}`: replay a policy with other plugins where they are, with `acp-gate audit replay --handlers FILE`"
            ));
        }
    }
    Ok(())
}
