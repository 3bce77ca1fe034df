//! A gate's escalation settings, put together once from the command line and the org file's
//! `[escalation]` (which the command line cannot change): the service's client and key, how
//! long to wait for a reviewer, what is redacted, and who is asking. The front ends (`run`,
//! `proxy`, `hook`) reach the service only through this.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::client::ServiceClient;
use super::fleet::{AgentGate, GateReport};
use super::origin::Origin;
use super::redact::Redaction;
use super::ship::{Destination, Shipper};
use super::{Expected, SignedDecision, Statement, Submission};
use crate::args::EscalationArgs;
use crate::chain::Chain;
use crate::config::Escalation;
use crate::distribution::signature::PublicKey;

/// How long an escalation that nothing waits for may take to be sent: well inside any agent's
/// hook timeout.
pub const SUBMIT_ALONE: Duration = Duration::from_secs(5);

/// Where and how a gate escalates.
pub struct Escalator {
    pub client: ServiceClient,
    key: PublicKey,
    /// How long a request waits for a reviewer; `None`: it does not wait.
    pub wait: Option<Duration>,
    pub redaction: Redaction,
    pub origin: Origin,
}

impl Escalator {
    /// The settings of a gate: `None` when it escalates nowhere. The org file's
    /// `[escalation]` wins; a flag naming another service is an error, not ignored.
    pub fn configure(
        args: &EscalationArgs,
        org: Option<&Escalation>,
        origin: Origin,
    ) -> Result<Option<Escalator>> {
        let url = match (org, &args.escalate_to) {
            (Some(org), Some(flag))
                if flag.trim_end_matches('/') != org.url.trim_end_matches('/') =>
            {
                bail!(
                    "--escalate-to {flag}: {} sends escalations to {}, and a flag cannot change that",
                    org.origin,
                    org.url
                )
            }
            (Some(org), _) => org.url.clone(),
            (None, Some(flag)) => flag.clone(),
            (None, None) if args.wait.is_some() => {
                bail!(
                    "--wait needs a review service to wait for: --escalate-to URL, or the org file's [escalation] url"
                )
            }
            (None, None) => return Ok(None),
        };
        let token = match &args.service_token_file {
            Some(file) => std::fs::read_to_string(file)
                .inspect(|_| crate::stamps::noted(file))
                .with_context(|| format!("--service-token-file {}: cannot read", file.display()))?,
            None => std::env::var("ACP_GATE_SERVICE_TOKEN").map_err(|_| {
                anyhow::anyhow!(
                    "escalations go to {url}, but this gate has no token for it: set $ACP_GATE_SERVICE_TOKEN or give --service-token-file FILE (`acp-gate serve token create --role gate` makes one)"
                )
            })?,
        };
        let key = match (org.and_then(|o| o.key.as_ref()), &args.service_key) {
            (Some((_, key)), _) => key.clone(),
            (None, Some(file)) => crate::config::read_file(file)
                .and_then(|pem| PublicKey::from_pem(&pem))
                .with_context(|| format!("--service-key {}", file.display()))?,
            (None, None) => bail!(
                "escalations go to {url}, but acp-gate has no key to check its decisions with: give the service's public key (`acp-gate serve key` prints it) with --service-key FILE or the org file's [escalation] key"
            ),
        };
        let mut redaction = Redaction::default();
        if let Some(org) = org {
            redaction.patterns = org.redact.clone();
            if let Some(chars) = org.excerpt_chars {
                redaction.excerpt_chars = redaction.excerpt_chars.min(chars);
            }
        }
        Ok(Some(Escalator {
            client: ServiceClient::new(&url, token)?,
            key,
            wait: args.wait,
            redaction,
            origin,
        }))
    }

    /// Sends an escalation and, when the gate waits, waits for its decision: the verified
    /// statement, or `None` when nobody decided in time. The whole of it (connecting,
    /// submitting, every poll, every retry) ends by one deadline: `--wait`, or
    /// [`SUBMIT_ALONE`] when nothing waits; an agent gives its hook only so long, and some run
    /// the call once it has given up.
    pub async fn escalate(&self, submission: &Submission) -> Result<Option<Statement>> {
        let budget = self.wait.unwrap_or(SUBMIT_ALONE);
        let deadline = Instant::now() + budget;
        let url = self.client.url();
        let by = tokio::time::Instant::from_std(deadline);
        tokio::time::timeout_at(by, self.client.submit_until(submission, deadline))
            .await
            .map_err(|elapsed| {
                anyhow::Error::from(elapsed).context(format!(
                    "the review service at {url} did not take the escalation within {budget:?}"
                ))
            })??;
        if self.wait.is_none() {
            return Ok(None);
        }
        let decision =
            match tokio::time::timeout_at(by, self.client.wait(&submission.id, deadline)).await {
                Ok(decision) => decision?,
                Err(_) => None,
            };
        decision.map(|d| self.check(&d, submission)).transpose()
    }

    /// A decision from the service, checked: signed by its key, for exactly this escalation.
    pub fn check(&self, decision: &SignedDecision, submission: &Submission) -> Result<Statement> {
        decision.verify(
            &self.key,
            &Expected {
                escalation: &submission.id,
                session_id: &submission.session_id,
                fingerprint: &submission.fingerprint,
            },
        )
    }

    /// A grant for a resumed session: escalation `id`'s decision, claimed once, checked
    /// against the session resumed (the request's fingerprint comes from the signed
    /// statement, never from a local file).
    pub async fn claim(&self, id: &str, session_id: &str) -> Result<Statement> {
        let decision = self.client.claim(id).await?;
        let statement: Statement = serde_json::from_str(&decision.statement)
            .context("the review service's decision is not a statement acp-gate reads")?;
        decision.verify(
            &self.key,
            &Expected {
                escalation: id,
                session_id,
                fingerprint: &statement.fingerprint,
            },
        )
    }

    /// The shipper of audit log `log` to this service.
    pub fn shipper(&self, log: &Path) -> Shipper {
        Shipper::new(
            log,
            Destination::Service(self.client.clone()),
            self.redaction.clone(),
        )
    }

    /// The shipper of a gate that runs `chain` (`via`: `run`, `proxy`…) on a machine with
    /// `agents`, which also reports the gate to the service's fleet view while it ships.
    pub fn gate_shipper(
        &self,
        log: &Path,
        chain: &Chain,
        via: &str,
        agents: Vec<AgentGate>,
    ) -> Shipper {
        self.shipper(log)
            .reporting(GateReport::new(&self.origin, via, chain, agents))
    }
}
