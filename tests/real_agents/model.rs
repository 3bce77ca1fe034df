//! A scripted model server of the project's own: it answers each agent in its model API
//! (Anthropic Messages, Gemini's `streamGenerateContent`, OpenAI Responses, OpenAI chat
//! completions; every one streaming) with the tool calls of a script, one per turn, then a
//! last text, and keeps every request it was sent, so that a test can tell what reached the
//! model. The step a request is at is read from the request itself (how many tool results it
//! carries back), as a model would: no state per agent.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One tool call of a script, in terms every agent has.
#[derive(Debug, Clone)]
pub enum Step {
    /// A shell command.
    Shell(String),
    /// Reading a file (relative to the workspace; each agent is given the path its tool takes:
    /// Codex, which has no read tool, runs `cat`).
    Read(String),
    /// Creating a file (relative to the workspace) with this text.
    Write(String, String),
}

/// The scripted model server, listening on loopback until dropped.
pub struct ModelServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    _runtime: tokio::runtime::Runtime,
}

/// The text the model ends a turn with, once its script is done.
pub const DONE: &str = "All done.";

impl ModelServer {
    /// Serves `script`, its paths relative to `workspace`.
    pub fn start(script: Vec<Step>, workspace: &std::path::Path) -> ModelServer {
        let at = |relative: &str| workspace.join(relative).display().to_string();
        let script: Vec<Step> = script
            .into_iter()
            .map(|step| match step {
                Step::Read(path) => Step::Read(at(&path)),
                Step::Write(path, text) => Step::Write(at(&path), text),
                shell => shell,
            })
            .collect();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let script = Arc::new(script);
        let app = axum::Router::new().fallback({
            let (requests, script) = (requests.clone(), script.clone());
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let (requests, script) = (requests.clone(), script.clone());
                async move { answer(&method, &uri, &headers, &body, &requests, &script) }
            }
        });
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move { axum::serve(listener, app).await });
        ModelServer {
            addr,
            requests,
            _runtime: runtime,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request body it was sent, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Whether `text` reached the model in any request.
    pub fn was_sent(&self, text: &str) -> bool {
        self.requests().iter().any(|body| body.contains(text))
    }

    /// How many tool results came back to it in its last request: the tool calls that were
    /// made and answered (run or refused).
    pub fn turns(&self) -> usize {
        self.requests()
            .iter()
            .filter_map(|body| serde_json::from_str::<Value>(body).ok())
            .filter(main_loop)
            .map(|body| step_of(&body))
            .max()
            .unwrap_or(0)
    }
}

/// Which API a request is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Anthropic,
    Gemini,
    Responses,
    Chat,
}

fn dialect(uri: &Uri) -> Option<Dialect> {
    let path = uri.path();
    if path.ends_with("/messages") {
        Some(Dialect::Anthropic)
    } else if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        Some(Dialect::Gemini)
    } else if path.ends_with("/responses") {
        Some(Dialect::Responses)
    } else if path.ends_with("/chat/completions") {
        Some(Dialect::Chat)
    } else {
        None
    }
}

fn answer(
    method: &Method,
    uri: &Uri,
    _headers: &HeaderMap,
    body: &[u8],
    requests: &Mutex<Vec<String>>,
    script: &[Step],
) -> Response {
    if method != Method::POST {
        return StatusCode::OK.into_response();
    }
    let text = String::from_utf8_lossy(body).into_owned();
    requests.lock().unwrap().push(text.clone());
    let path = uri.path();
    if path.ends_with("/count_tokens") {
        return axum::Json(json!({ "input_tokens": 10 })).into_response();
    }
    if path.contains(":countTokens") {
        return axum::Json(json!({ "totalTokens": 10 })).into_response();
    }
    let Some(dialect) = dialect(uri) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let step = main_loop(&body)
        .then(|| script.get(step_of(&body)))
        .flatten();
    let events = match (dialect, path.contains(":generateContent")) {
        // Gemini's side calls (not streamed) ask for JSON of a schema: an empty object.
        (Dialect::Gemini, true) => {
            return axum::Json(gemini_chunk(json!([{ "text": "{}" }]))).into_response();
        }
        (Dialect::Anthropic, _) => anthropic(step, &body),
        (Dialect::Gemini, _) => gemini(step),
        (Dialect::Responses, _) => responses(step),
        (Dialect::Chat, _) => chat(step),
    };
    ([(header::CONTENT_TYPE, "text/event-stream")], events).into_response()
}

/// Whether a request is an agent's own turn (it offers its tools), not a side call.
fn main_loop(body: &Value) -> bool {
    body.get("tools").is_some_and(|tools| !tools.is_null())
}

/// How many tool calls of the script a request has the results of: the step it is at.
fn step_of(body: &Value) -> usize {
    let items = |key| {
        body.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let count =
        |items: Vec<Value>, f: &dyn Fn(&Value) -> bool| items.iter().filter(|i| f(i)).count();
    if body.get("contents").is_some() {
        return count(items("contents"), &|c| {
            c["role"] == "model"
                && c["parts"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p.get("functionCall").is_some()))
        });
    }
    if body.get("input").is_some() {
        return count(items("input"), &|i| {
            i["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("call_output"))
        });
    }
    if body.get("system").is_some()
        || body["messages"][0]
            .get("content")
            .is_some_and(Value::is_array)
    {
        return count(items("messages"), &|m| m["role"] == "assistant");
    }
    count(items("messages"), &|m| m["role"] == "tool")
}

fn sse(events: &[(Option<&str>, Value)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

fn anthropic(step: Option<&Step>, body: &Value) -> String {
    let model = body["model"].as_str().unwrap_or("claude");
    let usage = json!({"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    // Each answer a message of its own: Claude Code merges the blocks of one message id.
    let id = format!("msg_{:016x}", rand_id());
    let start = json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}});
    let (block, delta, stop) = match step {
        Some(step) => {
            let (name, input) = match step {
                Step::Shell(command) => (
                    "Bash",
                    json!({ "command": command, "description": "run it" }),
                ),
                Step::Read(path) => ("Read", json!({ "file_path": path })),
                Step::Write(path, content) => {
                    ("Write", json!({ "file_path": path, "content": content }))
                }
            };
            let id = format!("toolu_{:016x}", rand_id());
            (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input.to_string()}),
                "tool_use",
            )
        }
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": DONE}),
            "end_turn",
        ),
    };
    sse(&[
        (Some("message_start"), start),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ])
}

fn gemini_chunk(parts: Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    })
}

fn gemini(step: Option<&Step>) -> String {
    let parts = match step {
        Some(step) => {
            let (name, args) = match step {
                Step::Shell(command) => (
                    "run_shell_command",
                    json!({ "command": command, "description": "run it" }),
                ),
                Step::Read(path) => ("read_file", json!({ "file_path": path })),
                Step::Write(path, content) => (
                    "write_file",
                    json!({ "file_path": path, "content": content }),
                ),
            };
            json!([{ "functionCall": { "name": name, "args": args } }])
        }
        None => json!([{ "text": DONE }]),
    };
    sse(&[(None, gemini_chunk(parts))])
}

fn responses(step: Option<&Step>) -> String {
    let id = format!("{:016x}", rand_id());
    let item = match step {
        Some(Step::Shell(command)) => {
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"), "name": "exec_command", "arguments": json!({ "cmd": command }).to_string()})
        }
        Some(Step::Read(path)) => {
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"), "name": "exec_command", "arguments": json!({ "cmd": format!("cat '{path}'") }).to_string()})
        }
        Some(Step::Write(path, content)) => {
            let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
            json!({"type": "custom_tool_call", "id": format!("ctc_{id}"), "call_id": format!("call_{id}"), "name": "apply_patch", "input": format!("*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n")})
        }
        None => {
            json!({"type": "message", "role": "assistant", "id": format!("msg_{id}"), "content": [{"type": "output_text", "text": DONE, "annotations": []}]})
        }
    };
    let usage = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15});
    sse(&[
        (
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": format!("resp_{id}")}}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "response": {"id": format!("resp_{id}"), "usage": usage}}),
        ),
    ])
}

fn chat(step: Option<&Step>) -> String {
    let id = format!("chatcmpl-{:016x}", rand_id());
    let chunk = |delta: Value, finish: Value| json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let (delta, finish) = match step {
        Some(step) => {
            let (name, arguments) = match step {
                Step::Shell(command) => (
                    "bash",
                    json!({ "command": command, "description": "run it" }),
                ),
                Step::Read(path) => ("view", json!({ "path": path })),
                Step::Write(path, content) => {
                    ("create", json!({ "path": path, "file_text": content }))
                }
            };
            let call = json!({"index": 0, "id": format!("call_{:016x}", rand_id()), "type": "function", "function": {"name": name, "arguments": arguments.to_string()}});
            (
                json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                "tool_calls",
            )
        }
        None => (json!({"role": "assistant", "content": DONE}), "stop"),
    };
    let mut out = sse(&[
        (None, chunk(delta, Value::Null)),
        (None, chunk(json!({}), json!(finish))),
        (
            None,
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        ),
    ]);
    out.push_str("data: [DONE]\n\n");
    out
}

/// An id that differs from call to call.
fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    (nanos << 16) ^ NEXT.fetch_add(1, Ordering::Relaxed)
}
