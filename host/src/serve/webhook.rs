//! Notifications: on each new escalation, a Slack-compatible JSON message (`text`, and
//! `blocks` with a link to the escalation on the page) is posted to the organisation's
//! webhook. Request text is escaped and its hidden characters shown as the page shows them.
//! Posting runs in its own task, retried with backoff: it never holds a submission or a
//! decision.

use std::time::Duration;

use serde_json::{Value, json};

use super::db::Escalation;
use super::visible;

/// How many times a notification is tried, and the first wait between tries (doubled each time).
const ATTEMPTS: u32 = 6;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Webhook {
    url: String,
    http: reqwest::Client,
}

impl Webhook {
    pub fn new(url: &str) -> anyhow::Result<Webhook> {
        reqwest::Url::parse(url).map_err(|e| anyhow::anyhow!("webhook {url}: not a URL: {e}"))?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(Webhook {
            url: url.to_owned(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
        })
    }

    /// Announces `escalation` (its page at `link`), in the background.
    pub fn announce(&self, escalation: &Escalation, link: &str) {
        let body = message(escalation, link);
        let webhook = self.clone();
        tokio::spawn(async move { webhook.post(&body).await });
    }

    async fn post(&self, body: &Value) {
        let mut backoff = FIRST_BACKOFF;
        for attempt in 1..=ATTEMPTS {
            let sent = self.http.post(&self.url).json(body).send().await;
            match sent {
                Ok(response) if response.status().is_success() => return,
                Ok(response) => eprintln!(
                    "acp-gate serve: webhook {}: {} (try {attempt} of {ATTEMPTS})",
                    self.url,
                    response.status()
                ),
                Err(error) => eprintln!(
                    "acp-gate serve: webhook {}: {error} (try {attempt} of {ATTEMPTS})",
                    self.url
                ),
            }
            tokio::time::sleep(backoff).await;
            backoff *= 2;
        }
    }
}

/// The Slack message for an escalation: one line of text (for clients that show only that)
/// and a section with the request and a link.
fn message(escalation: &Escalation, link: &str) -> Value {
    let why = escape(&escalation.submission.reasons.join("; "));
    let (requester, subject) = (escape(&escalation.requester), escape(&escalation.subject));
    let warning = match visible::anywhere(escalation) {
        true => " (it holds hidden characters, shown as ⟨U+…⟩: read it on the page)",
        false => "",
    };
    let text = format!(
        "{requester} asks to {} `{subject}` ({}){warning}: {link}",
        escape(&escalation.kind),
        escape(&escalation.agent),
    );
    json!({
        "text": text,
        "blocks": [
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": format!(
                        "*{requester}* asks to {}{warning}:\n```{subject}```\n{why}\n<{link}|Review escalation {}>",
                        escape(&escalation.kind),
                        escalation.id
                    ),
                }
            }
        ]
    })
}

/// Text as Slack reads it: its control characters escaped, so that a request cannot make a
/// link or a mention of its own, and its hidden characters shown.
fn escape(text: &str) -> String {
    visible::plain(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_shows_hidden_characters_and_says_so_and_makes_no_link_of_its_own() {
        let mut escalation = Escalation::example("esc-1", "rm -rf ~/\u{202E}hs.txt <!channel>");
        let plain = message(
            &Escalation::example("esc-2", "cargo test"),
            "https://r/esc-2",
        );
        assert!(
            !plain["text"].as_str().unwrap().contains("hidden"),
            "{plain}"
        );
        let said = message(&escalation, "https://r/esc-1");
        let text = said["text"].as_str().unwrap();
        assert!(
            text.contains("`rm -rf ~/⟨U+202E⟩hs.txt &lt;!channel&gt;`"),
            "{text}"
        );
        assert!(text.contains("it holds hidden characters"), "{text}");
        assert!(!said.to_string().contains('\u{202E}'), "{said}");
        escalation.subject = "ls".to_owned();
        escalation.submission.reasons = vec!["\u{200B}".to_owned()];
        let block = message(&escalation, "https://r/esc-1")["blocks"][0]["text"]["text"].clone();
        assert!(
            block.as_str().unwrap().contains("hidden characters"),
            "{block}"
        );
        assert!(block.as_str().unwrap().contains("⟨U+200B⟩"), "{block}");
    }
}
