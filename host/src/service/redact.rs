//! What leaves the developer's machine: only what a reviewer needs. Written file contents
//! become a digest, a size and a short excerpt; values that look like secrets (assignments to
//! secret-named variables, secret flags, credentials and secret parameters in URLs, bearer
//! tokens, the shapes of well-known API tokens, private keys) are replaced by `[redacted]`;
//! the org file can add its own patterns and shorten the excerpt (`[escalation.redact]`).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::digest::sha256_hex;

/// What stands in for a secret.
pub const REDACTED: &str = "[redacted]";

/// How long an excerpt of written contents is, unless the org file says shorter.
pub const EXCERPT_CHARS: usize = 200;

/// The built-in patterns, each with what replaces its match (`$1`: the part kept).
static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let secret_word =
        r"(?:secret|token|password|passwd|pwd|api_?key|access_?key|private_?key|credentials?)";
    [
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            "[redacted private key]",
        ),
        (
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36})\b",
            REDACTED,
        ),
        (r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", "$1[redacted]@"),
        (
            &*format!(r"(?i)([?&;][a-z0-9_.-]*(?:{secret_word}|sig|signature|key)[a-z0-9_.-]*=)[^&\s#'\x22]+"),
            "$1[redacted]",
        ),
        (r"(?i)\b((?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}", "$1[redacted]"),
        (
            &*format!(r#"(?i)(--?[a-z0-9-]*{}[a-z0-9-]*(?:=|\s+))("[^"]*"|'[^']*'|[^\s;&|]+)"#, secret_word.replace('_', "[-_]")),
            "$1[redacted]",
        ),
        (
            &*format!(r#"(?i)\b([a-z0-9_]*{secret_word}[a-z0-9_]*\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s;&|,}}]+)"#),
            "$1[redacted]",
        ),
    ]
    .into_iter()
    .map(|(pattern, replacement)| {
        (
            Regex::new(pattern).expect("the built-in redaction patterns compile"),
            replacement,
        )
    })
    .collect()
});

/// Keys of a tool's input that hold contents written to a file.
const CONTENT_KEYS: &[&str] = &[
    "content",
    "contents",
    "new_string",
    "old_string",
    "newText",
    "oldText",
    "new_text",
    "old_text",
    "new_source",
    "file_text",
];

/// How an org redacts, beyond the built-in rules.
#[derive(Debug, Clone)]
pub struct Redaction {
    pub excerpt_chars: usize,
    /// The org's own patterns: each match becomes `[redacted]`.
    pub patterns: Vec<Regex>,
}

impl Default for Redaction {
    fn default() -> Redaction {
        Redaction {
            excerpt_chars: EXCERPT_CHARS,
            patterns: Vec::new(),
        }
    }
}

impl Redaction {
    /// `text` with every secret-looking value replaced.
    pub fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (pattern, replacement) in PATTERNS.iter() {
            if pattern.is_match(&text) {
                text = pattern.replace_all(&text, *replacement).into_owned();
            }
        }
        for pattern in &self.patterns {
            if pattern.is_match(&text) {
                text = pattern.replace_all(&text, REDACTED).into_owned();
            }
        }
        text
    }

    /// Written contents as they leave the machine: digest, size and a redacted excerpt.
    pub fn contents(&self, text: &str) -> Value {
        // Redacted whole first: an excerpt's cut never leaves half a secret behind.
        let redacted = self.text(text);
        let excerpt: String = redacted.chars().take(self.excerpt_chars).collect();
        json!({
            "sha256": sha256_hex(text.as_bytes()),
            "bytes": text.len(),
            "truncated": excerpt.len() < redacted.len(),
            "excerpt": excerpt,
        })
    }

    /// A JSON value (a tool's input, an audit record) with every string redacted, and the
    /// contents of written files reduced to [`Redaction::contents`].
    pub fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, value) in map {
                    let redacted = match value {
                        Value::String(text) if CONTENT_KEYS.contains(&key.as_str()) => {
                            self.contents(text)
                        }
                        // Secret-named fields lose their value whole, whatever its shape.
                        _ if secret_name(key) && !value.is_object() && !value.is_array() => {
                            Value::String(REDACTED.to_owned())
                        }
                        _ => self.value(value),
                    };
                    out.insert(key.clone(), redacted);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

/// Whether a field's name says it holds a secret.
fn secret_name(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    [
        "password",
        "passwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "private_key",
        "access_key",
        "authorization",
        "credential",
    ]
    .iter()
    .any(|word| key.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_commands_and_urls_are_redacted_and_the_rest_is_kept() {
        let redaction = Redaction::default();
        let cases = [
            (
                "AWS_SECRET_ACCESS_KEY=abc123 aws s3 ls",
                "AWS_SECRET_ACCESS_KEY=[redacted] aws s3 ls",
            ),
            (
                "export GITHUB_TOKEN='ghx 1' && make",
                "export GITHUB_TOKEN=[redacted] && make",
            ),
            (
                "mysql --password=hunter2 -u root",
                "mysql --password=[redacted] -u root",
            ),
            (
                "deploy --api-key sk_live_x --env prod",
                "deploy --api-key [redacted] --env prod",
            ),
            (
                "curl -H 'Authorization: Bearer eyJhbGciOi.xyz' https://api.example.com",
                "curl -H 'Authorization: Bearer [redacted]' https://api.example.com",
            ),
            (
                "git clone https://alice:s3cret@git.example.com/r.git",
                "git clone https://[redacted]@git.example.com/r.git",
            ),
            (
                "curl 'https://x.example.com/a?user=bob&access_token=abcd&n=1'",
                "curl 'https://x.example.com/a?user=bob&access_token=[redacted]&n=1'",
            ),
            (
                "echo ghp_0123456789abcdefghij0123456789abcdef",
                "echo [redacted]",
            ),
            ("cargo test --workspace", "cargo test --workspace"),
            ("rm -rf build/", "rm -rf build/"),
        ];
        for (text, expected) in cases {
            assert_eq!(redaction.text(text), expected, "{text}");
        }
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(redaction.text(key), "[redacted private key]");
    }

    #[test]
    fn written_contents_leave_as_digest_and_short_excerpt_and_the_org_can_tighten() {
        let mut redaction = Redaction {
            excerpt_chars: 22,
            ..Redaction::default()
        };
        let input = json!({
            "file_path": "/ws/.env.example",
            "content": "DB_PASSWORD=hunter2\nmore lines that stay home",
            "api_token": 42,
            "command": "make release CODENAME=falcon",
        });
        let out = redaction.value(&input);
        assert_eq!(out["file_path"], "/ws/.env.example");
        assert_eq!(out["api_token"], REDACTED);
        assert_eq!(out["content"]["excerpt"], "DB_PASSWORD=[redacted]");
        assert_eq!(out["content"]["truncated"], true);
        assert_eq!(out["content"]["bytes"], 45);
        assert!(!out.to_string().contains("hunter2"));
        assert!(!out.to_string().contains("stay home"));
        redaction.patterns = vec![Regex::new("CODENAME=[a-z]+").unwrap()];
        assert_eq!(
            redaction.value(&input)["command"],
            "make release [redacted]"
        );
    }
}
