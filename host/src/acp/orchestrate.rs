//! What `run` keeps for whoever orchestrates it: the named session (to resume it), each
//! escalation (with a stable id and the command line that resumes the session with it granted),
//! and the grants given on a resume, each of which lets one escalated request through once
//! (with a review service, only as its reviewer signed it).

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

use crate::chain::Decision;
use crate::record::{Escalation, escalation_id};
use crate::request::ToolRequest;
use crate::service::Ruling;
use crate::service::escalator::Escalator;
use crate::state::{EscalationEntry, Escalations, SessionEntry, Sessions, now_ms};
use crate::verdict::Verdict;

/// How the session of a run is named and resumed.
pub struct Orchestration {
    /// `--session NAME`, or the name of the session resumed.
    pub name: Option<String>,
    pub agent: Vec<String>,
    pub workspace: PathBuf,
    pub protocol: u16,
    /// The agent's id of the session `--resume` names.
    pub resumed: Option<String>,
    sessions: Mutex<Sessions>,
    escalations: Mutex<Escalations>,
    /// The grants of this run not used yet.
    grants: Mutex<Vec<Grant>>,
}

/// One escalated request the orchestrator (or a reviewer) approved.
#[derive(Debug, Clone)]
pub struct Grant {
    pub id: String,
    fingerprint: String,
    /// Who approved it, for the audit log.
    by: Option<String>,
}

/// What a grant did for a request.
pub enum Granted {
    /// It lets the request through; the note says which grant, and who gave it.
    Allow(String),
    /// A grant matches, but the chain does not merely ask: it stands.
    Refused(String),
}

impl Orchestration {
    pub fn new(
        name: Option<String>,
        agent: Vec<String>,
        workspace: PathBuf,
        protocol: u16,
        sessions: Sessions,
        escalations: Escalations,
    ) -> Orchestration {
        Orchestration {
            name,
            agent,
            workspace,
            protocol,
            resumed: None,
            sessions: Mutex::new(sessions),
            escalations: Mutex::new(escalations),
            grants: Mutex::default(),
        }
    }

    /// Takes the `--grant` ids of a resume of `session_id`: each must name an escalation of
    /// that session.
    pub fn grant(&mut self, ids: &[String], session_id: &str, by: Option<String>) -> Result<()> {
        let escalations = lock(&self.escalations);
        let mut grants = Vec::new();
        for id in ids {
            let Some((entry, granted)) = escalations.find(id) else {
                bail!("--grant {id}: no such escalation (see `acp-gate escalations`)");
            };
            if granted.is_some() {
                bail!("--grant {id}: that escalation was granted already, and its grant used");
            }
            if entry.session_id != session_id {
                bail!(
                    "--grant {id}: that escalation is of session {}, not of the session resumed ({session_id})",
                    entry.session_id
                );
            }
            grants.push(Grant {
                id: id.clone(),
                fingerprint: entry.fingerprint.clone(),
                by: by.clone(),
            });
        }
        drop(escalations);
        self.grants = Mutex::new(grants);
        Ok(())
    }

    /// With a review service, a grant is its reviewer's signed decision, claimed once: each
    /// grant is replaced by what the service signed (the request's fingerprint, who allowed
    /// it), so that editing a local file grants nothing.
    pub async fn countersign(&mut self, escalator: &Escalator) -> Result<()> {
        let Some(session) = self.resumed.clone() else {
            return Ok(());
        };
        let grants = std::mem::take(self.grants.get_mut().unwrap_or_else(|p| p.into_inner()));
        let mut signed = Vec::new();
        for grant in grants {
            let statement = escalator
                .claim(&grant.id, &session)
                .await
                .with_context(|| format!("--grant {}", grant.id))?;
            if statement.ruling != Ruling::Allow {
                let why = statement
                    .message
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                bail!(
                    "--grant {}: {} denied it on the review service{why}",
                    grant.id,
                    statement.reviewer
                );
            }
            signed.push(Grant {
                id: grant.id,
                fingerprint: statement.fingerprint,
                by: Some(statement.reviewer),
            });
        }
        self.grants = Mutex::new(signed);
        Ok(())
    }

    /// The session is open: a named one is recorded, to be resumed by name.
    pub fn opened(&self, session_id: &str) -> Result<()> {
        let Some(name) = &self.name else {
            return Ok(());
        };
        let mut sessions = lock(&self.sessions);
        let created_ms = sessions
            .find(name)
            .filter(|e| e.session_id == session_id)
            .map_or_else(now_ms, |e| e.created_ms);
        sessions.record(SessionEntry {
            name: name.clone(),
            session_id: session_id.to_owned(),
            agent: self.agent.clone(),
            workspace: self.workspace.clone(),
            protocol: self.protocol,
            created_ms,
            updated_ms: now_ms(),
        })
    }

    /// Whether a grant of this run settles `request`: only an ask, and never one an org handler
    /// insists on; used once.
    pub fn granted(&self, request: &ToolRequest, decision: &Decision) -> Option<Granted> {
        let fingerprint = request.fingerprint();
        let mut grants = lock(&self.grants);
        let index = grants.iter().position(|g| g.fingerprint == fingerprint)?;
        let id = grants[index].id.clone();
        if decision.outcome != Verdict::Ask || decision.org_insists() {
            let why = match decision.outcome {
                Verdict::Ask => "an org handler asks about it",
                _ => "the chain does not ask about it now: it denies it",
            };
            return Some(Granted::Refused(format!("grant {id} not used: {why}")));
        }
        let grant = grants.remove(index);
        drop(grants);
        let by = grant.by.as_deref();
        if let Err(error) = lock(&self.escalations).granted(&id, by) {
            return Some(Granted::Refused(format!("grant {id} not used: {error:#}")));
        }
        Some(Granted::Allow(match by {
            Some(by) => format!("{id} by {by}"),
            None => id,
        }))
    }

    /// Keeps an escalation of `request` (once per request and session; an ask sent to the
    /// review service with an id of its own, `sent_as`, once per ask) and completes its record
    /// with the id and the command line that resumes the session with it granted.
    pub fn escalated(
        &self,
        escalation: &mut Escalation<'_>,
        request: &ToolRequest,
        sent_as: Option<&String>,
    ) -> Result<()> {
        let fingerprint = request.fingerprint();
        let id = match sent_as {
            Some(id) => id.clone(),
            None => escalation_id(&request.session_id, &fingerprint),
        };
        let resume = self.name.as_ref().map(|name| self.resume_line(name, &id));
        escalation.id = Some(id.clone());
        escalation.session_name = self.name.clone();
        escalation.resume = resume.clone();
        lock(&self.escalations).record(EscalationEntry {
            id,
            session_id: request.session_id.clone(),
            session_name: self.name.clone(),
            at_ms: now_ms(),
            fingerprint,
            tool: escalation.tool.clone(),
            kind: request.kind.as_str().to_owned(),
            title: request.title.clone(),
            input: escalation.input.clone(),
            resume,
        })
    }

    fn resume_line(&self, name: &str, id: &str) -> String {
        let program = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "acp-gate".to_owned());
        let words = [
            program.as_str(),
            "run",
            "--resume",
            name,
            "--grant",
            id,
            "-p",
            "The request you were refused is approved: go on.",
        ];
        words.map(shell_quote).join(" ")
    }
}

/// `word` as one shell word.
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("esc-1a2b"), "esc-1a2b");
        assert_eq!(shell_quote("go on"), "'go on'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
