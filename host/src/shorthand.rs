//! The short request form of inline `[[handler.test]]` entries, `acp-gate plugin test` cases and
//! the test corpus: `command = "..."`, `argv = [..]`, `path`/`paths` with `kind`, `title`,
//! `content`, `url`, `tool` (the agent's tool name), or `request = {...}` holding full params;
//! the clock a plugin sees (`at`, `received_at_ms`); and what the case expects (`expect`).

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::request::{SessionContext, ToolRequest};
use crate::verdict::Verdict;

/// Every key a case may have.
pub const KEYS: &[&str] = &[
    "command",
    "argv",
    "path",
    "paths",
    "kind",
    "title",
    "content",
    "old_string",
    "new_string",
    "url",
    "cwd",
    "id",
    "request",
    "at",
    "received_at_ms",
    "name",
    "tool",
    "expect",
    "reason",
];

/// What a case expects of its handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Verdict(Verdict),
    /// The plugin fails (traps, times out, returns an error): `expect = "error"`, for
    /// `acp-gate plugin test` cases only (in a chain a failure counts as `on_error`).
    Failure,
}

/// A case's `expect`: `allow`, `deny`, `ask`, `abstain` or `error`.
pub fn expected(case: &toml::Table) -> Result<Expect, String> {
    match case.get("expect").and_then(|v| v.as_str()) {
        Some("error") => Ok(Expect::Failure),
        Some(word) => Verdict::parse(word)
            .map(Expect::Verdict)
            .ok_or_else(|| format!("`{word}` is not allow | deny | ask | abstain | error")),
        None => Err("missing (allow | deny | ask | abstain | error)".to_owned()),
    }
}

/// An inline test's `expect`: a verdict (a chain never shows a failure, only `on_error`).
pub fn expected_verdict(case: &toml::Table) -> Result<Verdict, String> {
    match expected(case) {
        Ok(Expect::Verdict(verdict)) => Ok(verdict),
        Ok(Expect::Failure) => Err("`error` is for `acp-gate plugin test` cases; an inline test expects allow | deny | ask | abstain (a failure counts as on_error)".to_owned()),
        Err(why) => Err(why),
    }
}

/// Builds `session/request_permission` params from the short form:
/// `{ command = "..." }`, `{ argv = [..] }`, `{ kind = "edit", path = "...", content = "..." }`,
/// `{ title, kind, paths = [..] }`, or `{ request = { ...full params... } }`.
pub fn params(case: &Value) -> Result<Value> {
    let case = case.as_object().context("a test request must be a table")?;
    if let Some(full) = case.get("request") {
        return Ok(full.clone());
    }
    let kind = case.get("kind").and_then(Value::as_str);
    let mut raw_input = Map::new();
    let mut title = case.get("title").and_then(Value::as_str).map(str::to_owned);
    if let Some(command) = case.get("command") {
        raw_input.insert("command".into(), command.clone());
        title.get_or_insert_with(|| {
            command
                .as_str()
                .map_or_else(|| command.to_string(), str::to_owned)
        });
    }
    if let Some(argv) = case.get("argv") {
        raw_input.insert("command".into(), argv.clone());
        title.get_or_insert_with(|| argv.to_string());
    }
    if let Some(path) = case.get("path") {
        raw_input.insert("file_path".into(), path.clone());
        title.get_or_insert_with(|| {
            format!("{} {}", kind.unwrap_or("read"), path.as_str().unwrap_or(""))
        });
    }
    if let Some(url) = case.get("url").and_then(Value::as_str) {
        title.get_or_insert_with(|| url.to_owned());
    }
    for key in ["content", "old_string", "new_string", "url", "cwd"] {
        if let Some(value) = case.get(key) {
            raw_input.insert(key.into(), value.clone());
        }
    }
    let locations: Vec<Value> = case
        .get("paths")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| json!({ "path": p }))
        .collect();
    let mut tool_call = json!({
        "toolCallId": case.get("id").and_then(Value::as_str).unwrap_or("test"),
        "title": title.unwrap_or_default(),
        "rawInput": raw_input,
        "locations": locations,
    });
    if let Some(kind) = kind {
        tool_call["kind"] = json!(kind);
    }
    if let Some(tool) = case.get("tool") {
        tool_call["name"] = tool.clone();
    }
    Ok(json!({
        "sessionId": "test",
        "toolCall": tool_call,
        "options": [
            { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
            { "optionId": "always", "name": "Always allow", "kind": "allow_always" },
            { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
        ],
    }))
}

/// Normalises a case written in the short form ([`params`]). A case
/// can set the clock a plugin sees: `received_at_ms` (milliseconds since the Unix epoch) or
/// `at = "2025-06-06T16:30:00Z"` (UTC, or with a `+HH:MM` offset).
pub fn request(case: &Value, ctx: &SessionContext) -> Result<ToolRequest> {
    let params = params(case)?;
    let mut request = ToolRequest::from_permission_request(&params, None, ctx)?;
    if let Some(ms) = case.get("received_at_ms") {
        request.received_at_ms = ms
            .as_u64()
            .context("received_at_ms: must be milliseconds since the Unix epoch")?;
    }
    if let Some(at) = case.get("at") {
        // A TOML datetime arrives as serde's private wrapper object; a string as itself.
        let text = at
            .as_str()
            .or_else(|| at.as_object()?.values().next()?.as_str())
            .unwrap_or_default();
        request.received_at_ms = unix_ms(text).with_context(|| {
            format!("at: `{text}` is not a date and time like 2025-06-06T16:30:00Z")
        })?;
    }
    Ok(request)
}

/// `YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM]` -> milliseconds since the Unix epoch.
fn unix_ms(text: &str) -> Option<u64> {
    let number = |s: &str| s.parse::<i64>().ok();
    let (date, time) = text.split_once(['T', ' '])?;
    let mut ymd = date.splitn(3, '-').map(number);
    let (y, m, d) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let (clock, offset_minutes) = match time.find(['Z', 'z', '+', '-']) {
        None => (time, 0),
        Some(at) => {
            let (clock, zone) = time.split_at(at);
            let offset = match zone {
                "Z" | "z" => 0,
                _ => {
                    let (h, min) = zone[1..].split_once(':')?;
                    let minutes = number(h)? * 60 + number(min)?;
                    if zone.starts_with('-') {
                        -minutes
                    } else {
                        minutes
                    }
                }
            };
            (clock, offset)
        }
    };
    let mut hms = clock.split(':').map(number);
    let (h, min) = (hms.next()??, hms.next()??);
    let s = hms.next().unwrap_or(Some(0))?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 24 || min > 59 || s > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + d - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds = days * 86_400 + h * 3600 + min * 60 + s - offset_minutes * 60;
    u64::try_from(seconds).ok().map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::unix_ms;

    #[test]
    fn test_times_are_read_as_utc_or_with_their_offset() {
        assert_eq!(unix_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_ms("2025-06-06T16:30:00Z"), Some(1_749_227_400_000));
        assert_eq!(unix_ms("2025-06-06T17:30+01:00"), Some(1_749_227_400_000));
        assert_eq!(unix_ms("2024-02-29T23:59:59Z"), Some(1_709_251_199_000));
        assert_eq!(unix_ms("2025-13-01T00:00Z"), None);
        assert_eq!(unix_ms("yesterday"), None);
    }
}
