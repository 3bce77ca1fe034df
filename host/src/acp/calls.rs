//! The client calls acp-gate judges besides permission requests (`fs/read_text_file`,
//! `fs/write_text_file`, `terminal/create`): read from their params once, and turned into the
//! [`ToolRequest`] the chain decides, for `run` (which carries them out) and `proxy` (which
//! forwards them to the editor).

use agent_client_protocol::{Error, ErrorCode};
use serde_json::Value;

use crate::chain::Decision;
use crate::request::{SessionContext, ToolRequest};

/// The JSON-RPC error code of a call the chain refused (the server-error range).
pub const DENIED: i32 = -32000;

/// A gated client call, as the agent sent it.
#[derive(Debug, Clone)]
pub enum Call {
    Read {
        path: String,
        /// 1-based first line.
        line: Option<u32>,
        limit: Option<u32>,
    },
    Write {
        path: String,
        content: String,
    },
    Terminal {
        command: String,
        args: Vec<String>,
        cwd: Option<String>,
        env: Vec<(String, String)>,
        output_limit: Option<u64>,
    },
}

impl Call {
    /// The call `method` makes with `params`; `None` when the method is not one acp-gate
    /// judges, what is missing when the params lack what the call needs.
    pub fn parse(method: &str, params: &Value) -> Option<Result<Call, String>> {
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| params.get(key).and_then(Value::as_u64);
        let missing = |what: &str| what.to_owned();
        Some(match method {
            "fs/read_text_file" => match text("path") {
                Some(path) => Ok(Call::Read {
                    path,
                    line: number("line").map(|l| l as u32),
                    limit: number("limit").map(|l| l as u32),
                }),
                None => Err(missing("no `path`")),
            },
            "fs/write_text_file" => match (text("path"), text("content")) {
                (Some(path), Some(content)) => Ok(Call::Write { path, content }),
                _ => Err(missing("needs `path` and `content`")),
            },
            "terminal/create" => match text("command") {
                Some(command) => Ok(Call::Terminal {
                    command,
                    args: params
                        .get("args")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.as_str().map(str::to_owned))
                        .collect(),
                    cwd: text("cwd"),
                    env: params
                        .get("env")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|v| {
                            Some((
                                v.get("name")?.as_str()?.to_owned(),
                                v.get("value")?.as_str()?.to_owned(),
                            ))
                        })
                        .collect(),
                    output_limit: number("outputByteLimit"),
                }),
                None => Err(missing("no `command`")),
            },
            _ => return None,
        })
    }

    /// What the chain judges.
    pub fn tool_request(&self, ctx: &SessionContext) -> ToolRequest {
        match self {
            Call::Read { path, .. } => ToolRequest::from_fs_read(path, ctx),
            Call::Write { path, content } => ToolRequest::from_fs_write(path, content, ctx),
            Call::Terminal {
                command,
                args,
                cwd,
                env,
                ..
            } => {
                // The environment is part of what runs (`LD_PRELOAD`, `BASH_ENV`...): the chain
                // judges the command as `env NAME=VALUE... COMMAND ARGS`, which is what starts.
                if env.is_empty() {
                    ToolRequest::from_terminal_create(command, args, cwd.as_deref(), ctx)
                } else {
                    let with_env: Vec<String> = env
                        .iter()
                        .map(|(name, value)| format!("{name}={value}"))
                        .chain(std::iter::once(command.clone()))
                        .chain(args.iter().cloned())
                        .collect();
                    ToolRequest::from_terminal_create("env", &with_env, cwd.as_deref(), ctx)
                }
            }
        }
    }
}

/// The error a refused call is answered with: the handlers' reasons, and the person's message
/// when they gave one.
pub fn denial(decision: &Decision, message: Option<&str>) -> Error {
    let mut why = if decision.reasons.is_empty() {
        "denied by acp-gate".to_owned()
    } else {
        format!("denied by acp-gate: {}", decision.reasons.join("; "))
    };
    if let Some(message) = message {
        why = format!("{why} (the user says: {message})");
    }
    Error::new(ErrorCode::from(DENIED), why)
}
