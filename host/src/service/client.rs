//! The HTTP client of a gate: submits an escalation (idempotent on its id), waits for its
//! decision by long-poll until a deadline, claims a grant for a resumed session, posts
//! audit batches and reports the gate for the fleet view. Every answer from the service is read strictly; an error names the service
//! and what it said.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::fleet::{GateReport, Reported};
use super::{API, AuditBatch, Ingested, SignedDecision, Submission, Waited};

/// The longest one long-poll asks the service to hold: below the idle timeouts of the proxies
/// usually in front of it.
const POLL: Duration = Duration::from_secs(25);

/// How long a gate waits before trying a service it could not reach again.
const RETRY: Duration = Duration::from_millis(500);

/// Whether `error` is the service not answering at all, or not in time (rather than
/// answering no).
pub fn unreachable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<tokio::time::error::Elapsed>()
            || cause
                .downcast_ref::<reqwest::Error>()
                .is_some_and(|e| e.is_connect() || e.is_timeout() || e.is_request())
    })
}

/// A gate's connection to the review service.
#[derive(Clone)]
pub struct ServiceClient {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for ServiceClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServiceClient({})", self.base)
    }
}

impl ServiceClient {
    /// A client of the service at `url` (`http://` or `https://`), authenticated by `token`.
    pub fn new(url: &str, token: String) -> Result<ServiceClient> {
        let parsed =
            reqwest::Url::parse(url).with_context(|| format!("--escalate-to {url}: not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--escalate-to {url}: the review service is reached over http or https");
        }
        if token.trim().is_empty() {
            bail!(
                "the review service's token is empty ($ACP_GATE_SERVICE_TOKEN or --service-token-file)"
            );
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .context("cannot set up the HTTP client of the review service")?;
        Ok(ServiceClient {
            base: url.trim_end_matches('/').to_owned(),
            token: token.trim().to_owned(),
            http,
        })
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// Sends an escalation; sending it again is harmless (the service keeps one per id).
    pub async fn submit(&self, submission: &Submission) -> Result<()> {
        let _: serde_json::Value = self.post("/escalations", submission).await?;
        Ok(())
    }

    /// Waits until `deadline` for escalation `id`'s decision: `None` when it is still open then.
    /// A service that cannot be reached (restarting, say) is tried again until the deadline.
    pub async fn wait(&self, id: &str, deadline: Instant) -> Result<Option<SignedDecision>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let wait_ms = left.min(POLL).as_millis();
            let path = format!("/escalations/{id}/decision?wait_ms={wait_ms}");
            let request = self
                .http
                .get(self.endpoint(&path))
                .timeout(left.min(POLL) + Duration::from_secs(10));
            match self.send(request, &path).await {
                Ok(Waited::Decided { decision }) => return Ok(Some(decision)),
                Ok(Waited::Open) if left.is_zero() => return Ok(None),
                Ok(Waited::Open) => {}
                Err(error) if unreachable(&error) && !left.is_zero() => {
                    tokio::time::sleep(RETRY.min(left)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Sends an escalation, trying again until `deadline` while the service cannot be reached.
    pub async fn submit_until(&self, submission: &Submission, deadline: Instant) -> Result<()> {
        loop {
            match self.submit(submission).await {
                Err(error) if unreachable(&error) && Instant::now() < deadline => {
                    tokio::time::sleep(RETRY).await;
                }
                done => return done,
            }
        }
    }

    /// Takes escalation `id`'s decision for a resumed session, once: the service refuses a
    /// second claim, and an escalation nobody has decided yet.
    pub async fn claim(&self, id: &str) -> Result<SignedDecision> {
        let path = format!("/escalations/{id}/claim");
        match self.post(&path, &serde_json::json!({})).await? {
            Waited::Decided { decision } => Ok(decision),
            Waited::Open => bail!("escalation {id} is not decided yet on {}", self.base),
        }
    }

    /// Posts a batch of audit records.
    pub async fn ship(&self, batch: &AuditBatch) -> Result<Ingested> {
        self.post("/audit", batch).await
    }

    /// Reports this gate for the fleet view: what the service says of it.
    pub async fn report(&self, report: &GateReport) -> Result<Reported> {
        self.post("/gates/report", report).await
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}{API}{path}", self.base)
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T> {
        let request = self
            .http
            .post(self.endpoint(path))
            .timeout(Duration::from_secs(30))
            .json(body);
        self.send(request, path).await
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        path: &str,
    ) -> Result<T> {
        let where_ = format!("the review service {}{API}{path}", self.base);
        let response =
            request.bearer_auth(&self.token).send().await.map_err(|e| {
                anyhow::Error::from(e).context(format!("{where_}: cannot reach it"))
            })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| anyhow!("{where_}: the answer broke off: {e}"))?;
        if !status.is_success() {
            let said = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
                .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
            bail!("{where_}: {status}: {said}");
        }
        serde_json::from_slice(&body)
            .with_context(|| format!("{where_}: an answer acp-gate cannot read"))
    }
}
