//! Asking the person at the terminal: the prompt for an **ask** verdict. It shows the tool, the
//! command or a coloured diff of the edit, the handlers' reasons, the agent's options and
//! "deny with a message", and reads the answer from the terminal.

use std::io::{BufRead, Write};

use serde_json::{Map, Value, json};
use tokio::sync::{Mutex, mpsc};

use crate::chain::Decision;
use crate::request::{OptionKind, ToolRequest};
use crate::style::Style;
use crate::verdict::Verdict;

/// Most diff lines shown in a prompt; the rest is summarised.
const MAX_DIFF_LINES: usize = 80;
/// Largest file read to show the current text beside a proposed write.
const MAX_DIFF_FILE: u64 = 1 << 20;

/// Lines typed at the terminal, read on a thread of their own so that waiting for them never
/// blocks the async runtime. Shared by the prompt loop and the permission prompts.
pub struct LineInput {
    lines: Mutex<mpsc::UnboundedReceiver<String>>,
}

impl LineInput {
    pub fn stdin() -> LineInput {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("acp-gate-stdin".into())
            .spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .expect("a thread to read the terminal");
        LineInput {
            lines: Mutex::new(rx),
        }
    }

    /// The next line, or `None` at end of input.
    pub async fn read_line(&self) -> Option<String> {
        self.lines.lock().await.recv().await
    }
}

/// One answer the prompt offers.
#[derive(Debug, Clone)]
pub struct PromptChoice {
    pub label: String,
    pub kind: OptionKind,
    /// The agent's option id; `None` for the host's own choices (fs and terminal calls).
    pub id: Option<String>,
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The index of the chosen [`PromptChoice`].
    Choice(usize),
    RejectWithMessage(String),
    /// The terminal closed before an answer.
    Unanswered,
}

pub struct Prompter {
    input: std::sync::Arc<LineInput>,
    style: Style,
    /// One question at a time, however many requests are pending.
    turn: Mutex<()>,
}

impl Prompter {
    pub fn new(input: std::sync::Arc<LineInput>) -> Prompter {
        Prompter {
            input,
            style: Style::stderr(),
            turn: Mutex::new(()),
        }
    }

    /// Asks about `request` on the terminal (stderr) and waits for a valid answer.
    /// `always_note` says what "always" would remember, or why it cannot.
    pub async fn ask(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        choices: &[PromptChoice],
        always_note: &str,
    ) -> Answer {
        let _turn = self.turn.lock().await;
        let s = self.style;
        // The action once: a command's own line below says what it runs.
        let action = match request.command {
            Some(_) => "run a command".to_owned(),
            None => request.action(),
        };
        let mut text = vec![
            String::new(),
            format!(
                "{} {}",
                s.yellow(&s.bold("? acp-gate: the agent asks to")),
                s.bold(&printable(&action))
            ),
        ];
        text.extend(details(request, s));
        for handler in decision
            .handlers
            .iter()
            .filter(|h| h.verdict != Verdict::Abstain)
        {
            text.push(format!(
                "  {}  {}  {}",
                handler.name,
                s.verdict(handler.verdict, 7),
                handler.reason.as_deref().unwrap_or("")
            ));
        }
        if decision.by_default {
            text.push(format!("  {}", s.dim(&decision.reasons.join("; "))));
        }
        for (n, choice) in choices.iter().enumerate() {
            let note = match choice.kind {
                OptionKind::AllowAlways => format!("  {}", s.dim(always_note)),
                _ => String::new(),
            };
            text.push(format!(
                "  {}  {} {}{note}",
                s.bold(&(n + 1).to_string()),
                choice.label,
                s.dim(&format!("({})", kind_name(choice.kind)))
            ));
        }
        text.push(format!("  {}  deny with a message", s.bold("m")));
        {
            let mut stderr = std::io::stderr().lock();
            for line in &text {
                let _ = writeln!(stderr, "{line}");
            }
        }
        loop {
            eprint!("{} ", s.bold(&format!("choose 1-{} or m:", choices.len())));
            let _ = std::io::stderr().flush();
            let Some(line) = self.input.read_line().await else {
                eprintln!();
                return Answer::Unanswered;
            };
            let line = line.trim();
            if line.eq_ignore_ascii_case("m") {
                eprint!("{} ", s.bold("message for the agent:"));
                let _ = std::io::stderr().flush();
                let Some(message) = self.input.read_line().await else {
                    return Answer::Unanswered;
                };
                return Answer::RejectWithMessage(message.trim().to_owned());
            }
            match line.parse::<usize>() {
                Ok(n) if (1..=choices.len()).contains(&n) => return Answer::Choice(n - 1),
                _ => eprintln!("{}", s.dim("type the number of an option, or m")),
            }
        }
    }
}

impl Prompter {
    /// Puts an agent's `elicitation/create` to the person: a URL to visit (accept once they
    /// have, or decline), or a form, one field per line (an empty line declines). Returns the
    /// answer's result.
    pub async fn elicit(&self, params: &Value) -> Value {
        let _turn = self.turn.lock().await;
        let s = self.style;
        let text = |key: &str| printable(params.get(key).and_then(Value::as_str).unwrap_or(""));
        eprintln!(
            "\n{} {}",
            s.yellow(&s.bold("? acp-gate: the agent asks you:")),
            text("message")
        );
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            eprintln!("  {}", text("url"));
            eprint!("{} ", s.bold("open it, then type y (or n to decline):"));
            let _ = std::io::stderr().flush();
            let yes = self
                .input
                .read_line()
                .await
                .is_some_and(|line| matches!(line.trim(), "y" | "Y" | "yes"));
            return json!({ "action": if yes { "accept" } else { "decline" } });
        }
        let empty = Map::new();
        let fields = params
            .pointer("/requestedSchema/properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut content = Map::new();
        for (name, field) in fields {
            let kind = field
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string");
            let label = field
                .get("title")
                .or_else(|| field.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(name);
            eprint!("{} ", s.bold(&format!("{} ({kind}):", printable(label))));
            let _ = std::io::stderr().flush();
            let Some(line) = self.input.read_line().await else {
                return json!({ "action": "cancel" });
            };
            let line = line.trim();
            if line.is_empty() {
                return json!({ "action": "decline" });
            }
            let value = match kind {
                "integer" => line.parse::<i64>().ok().map(|n| json!(n)),
                "number" => line.parse::<f64>().ok().map(|n| json!(n)),
                "boolean" => match line {
                    "y" | "yes" | "true" => Some(json!(true)),
                    "n" | "no" | "false" => Some(json!(false)),
                    _ => None,
                },
                _ => Some(json!(line)),
            };
            let Some(value) = value else {
                eprintln!("{}", s.dim(&format!("not a {kind}: declined")));
                return json!({ "action": "decline" });
            };
            content.insert(name.clone(), value);
        }
        json!({ "action": "accept", "content": content })
    }
}

/// `text` with control characters (which could drive the terminal) made spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub fn kind_name(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::AllowOnce => "allow once",
        OptionKind::AllowAlways => "allow always",
        OptionKind::RejectOnce => "reject once",
        OptionKind::RejectAlways => "reject always",
    }
}

/// The command, the paths (unless the action named the only one) and a coloured diff of every
/// proposed change.
fn details(request: &ToolRequest, s: Style) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(command) = &request.command {
        lines.push(format!("  {} {}", s.dim("$"), s.bold(&command.text())));
        lines.push(format!("  {} {}", s.dim("in"), request.cwd.display()));
    }
    let named = request.command.is_none() && request.paths.len() == 1;
    for path in request.paths.iter().filter(|_| !named) {
        lines.push(format!(
            "  {} {}",
            s.dim(path.effect()),
            path.absolute.display()
        ));
    }
    for diff in &request.diffs {
        let current;
        let old = match &diff.old_text {
            Some(old) => old.as_str(),
            // No old text: the tool replaces (or creates) the whole file.
            None => {
                current = read_small(&diff.path).unwrap_or_default();
                current.as_str()
            }
        };
        lines.extend(render_diff(
            &diff.path.display().to_string(),
            old,
            &diff.new_text,
            s,
        ));
    }
    lines
}

fn read_small(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_DIFF_FILE {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// A unified diff, `+` lines green and `-` lines red, at most [`MAX_DIFF_LINES`] lines.
pub fn render_diff(path: &str, old: &str, new: &str, s: Style) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string();
    let all: Vec<&str> = text.lines().collect();
    let mut lines: Vec<String> = all
        .iter()
        .take(MAX_DIFF_LINES)
        .map(|line| {
            let painted = if line.starts_with("+++") || line.starts_with("---") {
                s.bold(line)
            } else if line.starts_with('+') {
                s.green(line)
            } else if line.starts_with('-') {
                s.red(line)
            } else if line.starts_with("@@") {
                s.dim(line)
            } else {
                (*line).to_owned()
            };
            format!("  {painted}")
        })
        .collect();
    if all.len() > MAX_DIFF_LINES {
        lines.push(s.dim(&format!(
            "  … {} more diff lines",
            all.len() - MAX_DIFF_LINES
        )));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_show_removed_and_added_lines() {
        let plain = Style::stderr(); // not a terminal under the test harness
        let lines = render_diff("src/lib.rs", "a + b\n", "a.wrapping_add(b)\n", plain);
        assert!(lines.iter().any(|l| l.trim() == "-a + b"), "{lines:?}");
        assert!(
            lines.iter().any(|l| l.trim() == "+a.wrapping_add(b)"),
            "{lines:?}"
        );
    }
}
