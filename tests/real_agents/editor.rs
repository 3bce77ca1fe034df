//! A scripted editor, as Zed is to `acp-gate proxy`: it opens a session in the workspace,
//! sends one prompt, serves the agent's `fs/*` calls as an editor does (a file missing in the
//! project reads as empty, as a new buffer does), turns down every question it is asked, and
//! keeps what it was sent.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What the editor saw of a session.
pub struct Seen {
    /// The permission requests it was asked.
    pub asked: Vec<Value>,
    /// The prompt's answer (its stop reason), if it came.
    pub stop: Option<String>,
    /// The proxy's exit code, once the editor closed its end.
    pub code: Option<i32>,
    pub stderr: String,
}

/// Runs `proxy` (acp-gate proxy and the agent) as the editor of one session in `workspace`,
/// for one prompt, within `limit`.
pub fn edit(proxy: &mut Command, workspace: &Path, limit: Duration) -> Seen {
    use std::os::unix::process::CommandExt;
    let mut child = proxy
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    let mut to_proxy = child.stdin.take().unwrap();
    let (lines_tx, lines) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str(&line) {
                let _ = lines_tx.send(message);
            }
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let mut send = move |message: Value| {
        let _ = writeln!(to_proxy, "{message}");
        let _ = to_proxy.flush();
    };
    let deadline = Instant::now() + limit;
    let next = |lines: &mpsc::Receiver<Value>| {
        lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    };
    let mut seen = Seen {
        asked: Vec::new(),
        stop: None,
        code: None,
        stderr: String::new(),
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": false},
            "clientInfo": {"name": "scripted-editor", "version": "1"},
        }}),
    );
    let mut session: Option<String> = None;
    while let Ok(message) = next(&lines) {
        let id = message.get("id").cloned();
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                let params = &message["params"];
                let result = match method {
                    "session/request_permission" => {
                        seen.asked.push(params.clone());
                        let reject = params["options"]
                            .as_array()
                            .and_then(|o| o.iter().find(|o| o["kind"] == "reject_once"))
                            .map(|o| o["optionId"].clone());
                        match reject {
                            Some(id) => json!({"outcome": {"outcome": "selected", "optionId": id}}),
                            None => json!({"outcome": {"outcome": "cancelled"}}),
                        }
                    }
                    "fs/read_text_file" => {
                        let path = params["path"].as_str().unwrap_or_default();
                        json!({"content": std::fs::read_to_string(path).unwrap_or_default()})
                    }
                    "fs/write_text_file" => {
                        let path = params["path"].as_str().unwrap_or_default();
                        let _ =
                            std::fs::write(path, params["content"].as_str().unwrap_or_default());
                        Value::Null
                    }
                    _ => {
                        send(
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}),
                        );
                        continue;
                    }
                };
                send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            (None, Some(id)) if id == 1 => {
                send(
                    json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
                        "cwd": workspace.display().to_string(), "mcpServers": [],
                    }}),
                );
            }
            (None, Some(id)) if id == 2 => {
                let Some(id) = message.pointer("/result/sessionId").and_then(Value::as_str) else {
                    break;
                };
                session = Some(id.to_owned());
                send(
                    json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
                        "sessionId": id, "prompt": [{"type": "text", "text": "go"}],
                    }}),
                );
            }
            (None, Some(id)) if id == 3 => {
                seen.stop = message
                    .pointer("/result/stopReason")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                break;
            }
            _ => {}
        }
    }
    let _ = session;
    // The editor closes its end (`send` owns it): the proxy stops the agent and exits.
    drop(send);
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            _ if Instant::now() > deadline + Duration::from_secs(15) => break None,
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    // SAFETY: kill(2) of the process group the proxy leads, and what it left behind.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
    seen.code = ended;
    seen.stderr = stderr.join().unwrap_or_default();
    seen
}
