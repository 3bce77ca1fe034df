//! The `terminal/*` client capability: commands the chain allowed, run as child processes with
//! their output kept (up to the agent's byte limit) until the agent releases them.

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// The output kept when the agent sets no `outputByteLimit`.
const DEFAULT_OUTPUT_LIMIT: usize = 16 << 20;

/// How a terminal's command ended: ACP's `TerminalExitStatus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
}

impl ExitStatus {
    pub fn to_json(&self) -> Value {
        json!({ "exitCode": self.exit_code, "signal": self.signal })
    }
}

/// Output kept from the end: when over the limit, the oldest bytes go first.
struct OutputBuffer {
    bytes: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl OutputBuffer {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > self.limit {
            let mut cut = self.bytes.len() - self.limit;
            // Never start in the middle of a UTF-8 character.
            while cut < self.bytes.len() && (self.bytes[cut] & 0b1100_0000) == 0b1000_0000 {
                cut += 1;
            }
            self.bytes.drain(..cut);
            self.truncated = true;
        }
    }
}

struct Terminal {
    output: Arc<Mutex<OutputBuffer>>,
    exit: watch::Receiver<Option<ExitStatus>>,
    pid: Option<u32>,
}

impl Terminal {
    fn kill(&self) {
        if self.exit.borrow().is_some() {
            return;
        }
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // The command leads its own process group: end its children too.
            // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// The terminals of one session.
#[derive(Default)]
pub struct Terminals {
    next: AtomicU64,
    open: Mutex<HashMap<String, Arc<Terminal>>>,
}

/// What `terminal/create` asks to run.
pub struct Spawn<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(String, String)>,
    pub output_limit: Option<u64>,
}

impl Terminals {
    /// Starts the command; returns the new terminal's id.
    pub fn create(&self, spawn: Spawn<'_>) -> Result<String> {
        let mut child = tokio::process::Command::new(spawn.command)
            .args(spawn.args)
            .current_dir(spawn.cwd)
            .envs(spawn.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start `{}`", spawn.command))?;
        let limit = spawn
            .output_limit
            .map_or(DEFAULT_OUTPUT_LIMIT, |l| {
                usize::try_from(l).unwrap_or(usize::MAX)
            })
            .min(DEFAULT_OUTPUT_LIMIT);
        let output = Arc::new(Mutex::new(OutputBuffer {
            bytes: Vec::new(),
            limit,
            truncated: false,
        }));
        let (exit_tx, exit_rx) = watch::channel(None);
        let pid = child.id();
        let readers: Vec<_> = [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        .map(|mut stream| {
            let output = output.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 8192];
                while let Ok(n @ 1..) = stream.read(&mut buffer).await {
                    output
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(&buffer[..n]);
                }
            })
        })
        .collect();
        tokio::spawn(async move {
            let status = child.wait().await;
            for reader in readers {
                let _ = reader.await;
            }
            let status = match status {
                Ok(status) => ExitStatus {
                    exit_code: status.code(),
                    signal: status.signal().map(signal_name),
                },
                Err(_) => ExitStatus {
                    exit_code: None,
                    signal: None,
                },
            };
            let _ = exit_tx.send(Some(status));
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.open.lock().unwrap_or_else(|p| p.into_inner()).insert(
            id.clone(),
            Arc::new(Terminal {
                output,
                exit: exit_rx,
                pid,
            }),
        );
        Ok(id)
    }

    fn get(&self, id: &str) -> Result<Arc<Terminal>> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .with_context(|| format!("no terminal `{id}`"))
    }

    /// `terminal/output`: `{output, truncated, exitStatus?}`.
    pub fn output(&self, id: &str) -> Result<Value> {
        let terminal = self.get(id)?;
        let buffer = terminal.output.lock().unwrap_or_else(|p| p.into_inner());
        let mut response = json!({
            "output": String::from_utf8_lossy(&buffer.bytes),
            "truncated": buffer.truncated,
        });
        if let Some(exit) = terminal.exit.borrow().as_ref() {
            response["exitStatus"] = exit.to_json();
        }
        Ok(response)
    }

    /// `terminal/wait_for_exit`: waits for the command to end.
    pub async fn wait_for_exit(&self, id: &str) -> Result<ExitStatus> {
        let mut exit = self.get(id)?.exit.clone();
        let status = exit
            .wait_for(Option::is_some)
            .await
            .context("the terminal was dropped")?;
        Ok(status.clone().expect("waited for Some"))
    }

    /// `terminal/kill`: ends the command, keeps the terminal.
    pub fn kill(&self, id: &str) -> Result<()> {
        self.get(id)?.kill();
        Ok(())
    }

    /// `terminal/release`: ends the command if it still runs and forgets the terminal.
    pub fn release(&self, id: &str) -> Result<()> {
        let terminal = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
            .with_context(|| format!("no terminal `{id}`"))?;
        terminal.kill();
        Ok(())
    }

    /// Ends every command still running (the session is over).
    pub fn kill_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(|p| p.into_inner()));
        for terminal in open.values() {
            terminal.kill();
        }
    }
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_end_and_never_splits_a_character() {
        let mut buffer = OutputBuffer {
            bytes: Vec::new(),
            limit: 4,
            truncated: false,
        };
        buffer.push("ab".as_bytes());
        assert!(!buffer.truncated);
        buffer.push("cé!".as_bytes()); // é is two bytes: "abcé!" is 6 bytes
        assert!(buffer.truncated);
        assert_eq!(String::from_utf8(buffer.bytes.clone()).unwrap(), "cé!");
    }

    #[tokio::test]
    async fn a_command_runs_and_its_output_and_exit_are_kept() {
        let terminals = Terminals::default();
        let args = ["-c".to_owned(), "echo out; echo err >&2; exit 7".to_owned()];
        let id = terminals
            .create(Spawn {
                command: "sh",
                args: &args,
                cwd: Path::new("/"),
                env: vec![],
                output_limit: None,
            })
            .unwrap();
        let exit = terminals.wait_for_exit(&id).await.unwrap();
        assert_eq!(exit.exit_code, Some(7));
        let output = terminals.output(&id).unwrap();
        let text = output["output"].as_str().unwrap();
        assert!(text.contains("out") && text.contains("err"), "{text}");
        assert_eq!(output["exitStatus"]["exitCode"], 7);
        terminals.release(&id).unwrap();
        assert!(terminals.output(&id).is_err());
    }
}
