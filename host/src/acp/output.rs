//! What `run` shows: the agent's stream (messages, thoughts, plans, tool calls), each decision
//! and escalation, and the end of each turn, as readable text (colours only on a terminal) or
//! as one JSON object per line (`--format json`).
//!
//! What goes to stderr can be [`captured`] instead, per task: a resident hook server hands each
//! call's lines to the hook process it answers for.

use std::cell::RefCell;
use std::io::Write;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::args::OutputFormat;
use crate::chain::Decision;
use crate::record::{DecisionLine, DecisionRecord, Escalation, ResolvedBy};
use crate::request::{RequestSource, ToolKind, ToolRequest, said_once};
use crate::style::Style;

/// What the agent's stream was last doing on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Other,
    Message,
    Thought,
}

tokio::task_local! {
    /// Where stderr's lines go while [`captured`] runs.
    static CAPTURED: RefCell<Vec<u8>>;
}

/// Runs `task`, with what any [`Output`] writes to stderr meanwhile (in this task) kept
/// instead of written; returns its result and that text.
pub async fn captured<T>(task: impl Future<Output = T>) -> (T, String) {
    CAPTURED
        .scope(RefCell::new(Vec::new()), async {
            let done = task.await;
            let text = CAPTURED.with(|kept| String::from_utf8_lossy(&kept.take()).into_owned());
            (done, text)
        })
        .await
}

/// stderr, or the buffer of the [`captured`] task this runs in.
fn stderr() -> Box<dyn Write> {
    struct Kept;
    impl Write for Kept {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            CAPTURED.with(|kept| kept.borrow_mut().extend_from_slice(bytes));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match CAPTURED.try_with(|_| ()) {
        Ok(()) => Box::new(Kept),
        Err(_) => Box::new(std::io::stderr().lock()),
    }
}

struct LineState {
    at_line_start: bool,
    stream: Stream,
}

pub struct Output {
    format: OutputFormat,
    /// Where the stream, the decisions and JSON lines go: stdout for `run`, stderr for `proxy`
    /// (whose stdout carries only protocol messages).
    on_stderr: bool,
    /// Show every handler's verdict (the demo), not only the deciding reasons.
    verbose: bool,
    out: Style,
    err: Style,
    line: Mutex<LineState>,
}

impl Output {
    pub fn new(format: OutputFormat, verbose: bool) -> Output {
        Output {
            format,
            on_stderr: false,
            verbose,
            out: Style::stdout(),
            err: Style::stderr(),
            line: Mutex::new(LineState {
                at_line_start: true,
                stream: Stream::Other,
            }),
        }
    }

    /// Everything on stderr: for `proxy`.
    pub fn on_stderr(format: OutputFormat) -> Output {
        Output {
            on_stderr: true,
            out: Style::stderr(),
            ..Output::new(format, false)
        }
    }

    /// The main output, locked.
    fn main_out(&self) -> Box<dyn Write> {
        if self.on_stderr {
            stderr()
        } else {
            Box::new(std::io::stdout().lock())
        }
    }

    pub fn is_json(&self) -> bool {
        self.format == OutputFormat::Json
    }

    pub fn stderr_style(&self) -> Style {
        self.err
    }

    fn json_line(&self, value: &Value) {
        let mut stdout = self.main_out();
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }

    /// Writes `text` to stdout as part of `stream`, starting a new line when the stream
    /// changes.
    fn write_stream(&self, stream: Stream, text: &str) {
        let mut state = self.line.lock().unwrap_or_else(|p| p.into_inner());
        let mut stdout = self.main_out();
        if state.stream != stream && !state.at_line_start {
            let _ = writeln!(stdout);
            state.at_line_start = true;
        }
        state.stream = stream;
        if text.is_empty() {
            return;
        }
        let shown = match stream {
            Stream::Thought => self.out.dim(text),
            _ => text.to_owned(),
        };
        let _ = write!(stdout, "{shown}");
        let _ = stdout.flush();
        state.at_line_start = text.ends_with('\n');
    }

    /// Writes whole lines to stdout, after ending the agent's unfinished line.
    fn block(&self, lines: &[String]) {
        let mut state = self.line.lock().unwrap_or_else(|p| p.into_inner());
        let mut stdout = self.main_out();
        if !state.at_line_start {
            let _ = writeln!(stdout);
        }
        for line in lines {
            let _ = writeln!(stdout, "{line}");
        }
        let _ = stdout.flush();
        state.at_line_start = true;
        state.stream = Stream::Other;
    }

    /// A line on stderr, after ending the agent's unfinished stdout line (they share a screen).
    pub fn notice(&self, text: &str) {
        self.end_stdout_line();
        let _ = writeln!(stderr(), "{}", self.err.dim(&format!("acp-gate: {text}")));
    }

    /// An error on stderr (and, in JSON mode, an `error` line on stdout).
    pub fn error(&self, text: &str) {
        self.end_stdout_line();
        let _ = writeln!(stderr(), "acp-gate: {}", self.err.red(text));
        if self.is_json() {
            self.json_line(&json!({ "type": "error", "message": text }));
        }
    }

    fn end_stdout_line(&self) {
        let mut state = self.line.lock().unwrap_or_else(|p| p.into_inner());
        if !state.at_line_start {
            let _ = writeln!(self.main_out());
            state.at_line_start = true;
        }
    }

    /// A line of the agent's stderr.
    pub fn agent_stderr(&self, line: &str) {
        self.end_stdout_line();
        let _ = writeln!(stderr(), "{}", self.err.dim(&format!("agent│ {line}")));
    }

    /// One `session/update`; `tool_call` is the tracker's merged state for tool-call updates.
    pub fn update(&self, update: &Value, tool_call: Option<&Value>) {
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        if self.is_json() {
            let mut line = json!({ "type": kind });
            match (
                kind,
                update.pointer("/content/text").and_then(Value::as_str),
            ) {
                (
                    "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
                    Some(text),
                ) => {
                    line["text"] = json!(text);
                }
                _ => {
                    if let Some(fields) = update.as_object() {
                        for (key, value) in fields.iter().filter(|(k, _)| *k != "sessionUpdate") {
                            line[key] = value.clone();
                        }
                    }
                }
            }
            self.json_line(&line);
            return;
        }
        match kind {
            "agent_message_chunk" => {
                if let Some(text) = content_text(update) {
                    self.write_stream(Stream::Message, &text);
                }
            }
            "agent_thought_chunk" => {
                if let Some(text) = content_text(update) {
                    self.write_stream(Stream::Thought, &text);
                }
            }
            "plan" => {
                let mut lines = vec![self.out.bold("plan")];
                for entry in update
                    .get("entries")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let mark = match entry.get("status").and_then(Value::as_str) {
                        Some("completed") => "[x]",
                        Some("in_progress") => "[~]",
                        _ => "[ ]",
                    };
                    let text = entry.get("content").and_then(Value::as_str).unwrap_or("");
                    lines.push(format!("  {mark} {text}"));
                }
                self.block(&lines);
            }
            "tool_call" => {
                let call = tool_call.unwrap_or(update);
                let title = call.get("title").and_then(Value::as_str).unwrap_or("");
                let tool_kind = call.get("kind").and_then(Value::as_str).unwrap_or("other");
                let said = said_once(ToolKind::parse(tool_kind), title);
                self.block(&[format!("{} {said}", self.out.dim("⏺"))]);
            }
            _ => {}
        }
    }

    /// A request, how the chain decided it, and what was answered.
    pub fn decision(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        resolved_by: ResolvedBy,
        answer: &str,
    ) {
        if self.is_json() {
            self.json_line(&json!(DecisionLine {
                line_type: "decision",
                record: DecisionRecord::new(request, decision),
                resolved_by: resolved_by.as_str(),
                answer,
            }));
            return;
        }
        let s = self.out;
        let via = match request.source {
            RequestSource::ModeSwitch => request.tool_name.as_deref().unwrap_or_default(),
            source => source.method(),
        };
        let mut lines = vec![format!(
            "  {} {}  {}",
            s.bold("▶"),
            request.action(),
            s.dim(&format!("({via})"))
        )];
        if self.verbose {
            lines.extend(s.handler_lines(&decision.handlers, "    ", false));
            if decision.by_default {
                lines.push(s.dim(&format!("    {}", decision.reasons.join("; "))));
            }
        } else {
            for reason in &decision.reasons {
                lines.push(format!("    {}", s.dim(reason)));
            }
        }
        let how = match resolved_by {
            ResolvedBy::Chain => String::new(),
            ResolvedBy::SessionRule => " (remembered for this session)".into(),
            ResolvedBy::User => " (answered at the terminal)".into(),
            ResolvedBy::Escalated => " (nobody to ask: rejected and escalated)".into(),
            ResolvedBy::Cancelled => " (the turn was cancelled)".into(),
            ResolvedBy::Editor => " (answered in the editor)".into(),
            ResolvedBy::Agent => " (passed on to the agent's own prompt)".into(),
            ResolvedBy::Granted => " (granted by the orchestrator)".into(),
            ResolvedBy::Reviewer => " (decided by a reviewer on the review service)".into(),
        };
        lines.push(format!(
            "    {} → {}{}",
            s.outcome(decision.outcome),
            answer,
            s.dim(&how)
        ));
        self.block(&lines);
    }

    /// An escalation record: a JSON line on stdout (`--format json`) or a block on stderr.
    pub fn escalation(&self, record: &Escalation) {
        if self.is_json() {
            self.json_line(&json!(record));
            return;
        }
        self.end_stdout_line();
        let s = self.err;
        let judged = &record.record.judged;
        let mut lines = vec![format!(
            "{} {}",
            s.yellow(&s.bold("ESCALATED")),
            said_once(judged.kind, &judged.subject)
        )];
        lines.push(format!(
            "  nobody could be asked, so acp-gate answered `{}`; session {}, tool call {}",
            record.answer, record.record.session_id, record.record.tool_call_id
        ));
        if !record.input.is_null() {
            lines.push(format!("  input: {}", record.input));
        }
        if let Some(id) = &record.id {
            lines.push(format!("  escalation {id}"));
        }
        if let Some(resume) = &record.resume {
            lines.push(format!("  resume with it granted: {resume}"));
        }
        for handler in judged.handlers {
            let reason = handler.reason.as_deref().unwrap_or("");
            let line = format!(
                "  {}  {}  {reason}",
                handler.name,
                s.verdict(handler.verdict, 7)
            );
            lines.push(line.trim_end().to_owned());
        }
        let mut stderr = stderr();
        for line in lines {
            let _ = writeln!(stderr, "{line}");
        }
    }

    /// The end of a turn.
    pub fn stop(&self, stop_reason: &str) {
        if self.is_json() {
            self.json_line(&json!({ "type": "stop", "stop_reason": stop_reason }));
        } else {
            self.block(&[self.out.dim(&format!("— end of turn: {stop_reason}"))]);
        }
    }

    /// The last line in JSON mode: how the run ended.
    pub fn end(&self, exit_code: u8, escalations: usize) {
        if self.is_json() {
            self.json_line(
                &json!({ "type": "end", "exit_code": exit_code, "escalations": escalations }),
            );
        }
    }

    /// Plain lines on stdout (the demo's banner and summary).
    pub fn lines(&self, lines: &[String]) {
        if !self.is_json() {
            self.block(lines);
        }
    }
}

fn content_text(update: &Value) -> Option<String> {
    let content = update.get("content")?;
    match content.get("type").and_then(Value::as_str) {
        Some("text") => content
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_owned),
        Some(other) => Some(format!("[{other}]\n")),
        None => None,
    }
}
