//! The agent of the `proxy` and `memory` sections: this benchmark binary run again with
//! $ACP_GATE_BENCH_AGENT set. It speaks newline-delimited JSON-RPC (ACP) on stdio, answers
//! `initialize` and `session/new`, and takes a prompt's text as a script:
//!
//! - `updates N [EVERY_US]`: N `session/update` agent_message_chunk notifications, each with its
//!   send time in `_meta.sentNs` (ns since the Unix epoch), EVERY_US apart or as fast as it can;
//! - `permissions N`: N `session/request_permission` requests, one after another, each answer
//!   waited for: `cargo test` (allowed) and a write to `~/.ssh/authorized_keys` (denied) in
//!   turn. The resident memory of its parent (the client) after every 1,000th and the Nth is
//!   written to $ACP_GATE_BENCH_RSS as JSON;
//! - `alone N` / `burst N`: N permission requests like those, one after another or all sent at
//!   once; each one's latency (sent to answered, µs) and how many were answered otherwise than
//!   alone are written to $ACP_GATE_BENCH_LATENCY as JSON;
//!
//! then it answers the prompt `end_turn`. It exits when its stdin closes.

use std::io::{BufRead, Lines, StdinLock, StdoutLock, Write};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use crate::{LATENCY_FILE, RSS_FILE, unix_ns};

/// Every how many permission requests the client's RSS is read.
pub const RSS_EVERY: usize = 1000;

pub fn run() -> Result<()> {
    let mut agent = Agent {
        input: std::io::stdin().lock().lines(),
        output: std::io::stdout().lock(),
        next_id: 0,
    };
    while let Some(message) = agent.read()? {
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let result = match method {
            "initialize" => {
                json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
            }
            "session/new" => json!({"sessionId": "bench"}),
            "session/prompt" => {
                let text = message["params"]["prompt"][0]["text"]
                    .as_str()
                    .unwrap_or_default();
                agent.script(text)?;
                json!({"stopReason": "end_turn"})
            }
            _ => {
                agent.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}))?;
                continue;
            }
        };
        agent.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))?;
    }
    Ok(())
}

struct Agent {
    input: Lines<StdinLock<'static>>,
    /// Line-buffered: each message goes out as it is written, as an agent streams.
    output: StdoutLock<'static>,
    next_id: u64,
}

impl Agent {
    fn read(&mut self) -> Result<Option<Value>> {
        match self.input.next() {
            None => Ok(None),
            Some(line) => Ok(Some(serde_json::from_str(&line?)?)),
        }
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.output, "{message}")?;
        Ok(())
    }

    fn script(&mut self, text: &str) -> Result<()> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let number =
            |i: usize| -> Result<u64> { Ok(words.get(i).context("a count is missing")?.parse()?) };
        match words.first() {
            Some(&"updates") => {
                let every = match words.get(2) {
                    Some(_) => Some(std::time::Duration::from_micros(number(2)?)),
                    None => None,
                };
                self.updates(number(1)?, every)
            }
            Some(&"permissions") => self.permissions(number(1)? as usize),
            Some(&"alone") => self.latencies(number(1)? as usize, false),
            Some(&"burst") => self.latencies(number(1)? as usize, true),
            _ => bail!("unknown script `{text}`"),
        }
    }

    fn updates(&mut self, count: u64, every: Option<std::time::Duration>) -> Result<()> {
        for i in 0..count {
            if let Some(every) = every {
                std::thread::sleep(every);
            }
            self.send(&json!({
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "bench",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": format!("chunk {i} of the agent's answer, streamed as it is written. ")}
                    },
                    "_meta": {"sentNs": unix_ns().to_string()}
                }
            }))?;
        }
        Ok(())
    }

    /// Sends the `n`th permission request (even: `cargo test`, allowed; odd: a write to
    /// `~/.ssh/authorized_keys`, denied); its id and the option it should be answered with.
    fn ask(&mut self, n: usize) -> Result<(String, &'static str)> {
        self.next_id += 1;
        let id = format!("perm-{}", self.next_id);
        let (title, input, expected) = if n.is_multiple_of(2) {
            ("Bash", json!({"command": "cargo test"}), "allow")
        } else {
            (
                "Write",
                json!({"file_path": "~/.ssh/authorized_keys", "content": "k"}),
                "reject",
            )
        };
        self.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "session/request_permission",
            "params": {
                "sessionId": "bench",
                "toolCall": {"toolCallId": format!("call-{n}"), "title": title, "rawInput": input},
                "options": [
                    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
                ]
            }
        }))?;
        Ok((id, expected))
    }

    /// The next answer to one of this agent's requests: its id and the option chosen.
    fn answer(&mut self) -> Result<(String, String)> {
        loop {
            let message = self.read()?.context("the client went away")?;
            if let (Some(id), None) = (message["id"].as_str(), message.get("method")) {
                let outcome = &message["result"]["outcome"];
                let option = outcome["optionId"]
                    .as_str()
                    .or(outcome["outcome"].as_str())
                    .unwrap_or("error");
                return Ok((id.to_owned(), option.to_owned()));
            }
        }
    }

    /// `alone N` / `burst N`: see the module's doc.
    fn latencies(&mut self, count: usize, at_once: bool) -> Result<()> {
        let path = std::env::var_os(LATENCY_FILE).context("$ACP_GATE_BENCH_LATENCY is not set")?;
        let mut pending = std::collections::HashMap::new();
        let mut latencies = Vec::new();
        let mut wrong = 0;
        for n in 1..=count {
            let (id, expected) = self.ask(n)?;
            pending.insert(id, (std::time::Instant::now(), expected));
            if at_once && n < count {
                continue;
            }
            while !pending.is_empty() {
                let (id, option) = self.answer()?;
                let (sent, expected) = pending.remove(&id).context("an answer to no request")?;
                latencies.push(sent.elapsed().as_secs_f64() * 1e6);
                wrong += usize::from(option != expected);
            }
        }
        std::fs::write(
            path,
            json!({"latencies_us": latencies, "wrong": wrong}).to_string(),
        )?;
        Ok(())
    }

    fn permissions(&mut self, count: usize) -> Result<()> {
        let path = std::env::var_os(RSS_FILE).context("$ACP_GATE_BENCH_RSS is not set")?;
        let mut readings = Vec::new();
        let mut answers = std::collections::BTreeMap::<String, usize>::new();
        for n in 1..=count {
            let (id, _) = self.ask(n)?;
            let (answered, option) = self.answer()?;
            ensure!(answered == id, "answered {answered}, asked {id}");
            *answers.entry(option).or_default() += 1;
            if n % RSS_EVERY == 0 || n == count {
                readings.push(json!({"requests": n, "rss_kib": parent_rss_kib()?}));
            }
        }
        std::fs::write(
            path,
            json!({"readings": readings, "answers": answers}).to_string(),
        )?;
        Ok(())
    }
}

/// VmRSS of the parent process (the client), in KiB.
fn parent_rss_kib() -> Result<u64> {
    let status = std::fs::read_to_string(format!(
        "/proc/{}/status",
        std::os::unix::process::parent_id()
    ))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .context("no VmRSS")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .context("VmRSS without a value")?
        .parse()?)
}
