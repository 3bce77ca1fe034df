//! Terminal styling: colours only when the stream is a terminal and `NO_COLOR` is unset.

use std::io::IsTerminal;

use crate::chain::HandlerTrace;
use crate::verdict::Verdict;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    colour: bool,
}

impl Style {
    pub fn stdout() -> Style {
        Style {
            colour: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    pub fn stderr() -> Style {
        Style {
            colour: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// A verdict word in its colour, padded to `width`.
    pub fn verdict(self, verdict: Verdict, width: usize) -> String {
        self.verdict_text(verdict, &format!("{:<width$}", verdict.as_str()))
    }

    /// The combined outcome, upper-case and bold in its colour.
    pub fn outcome(self, outcome: Verdict) -> String {
        self.bold(&self.verdict_text(outcome, &outcome.as_str().to_uppercase()))
    }

    fn verdict_text(self, verdict: Verdict, text: &str) -> String {
        match verdict {
            Verdict::Allow => self.green(text),
            Verdict::Deny => self.red(text),
            Verdict::Ask => self.yellow(text),
            Verdict::Abstain => self.dim(text),
        }
    }

    /// Each handler's verdict and reason, names aligned, after `indent`; with `timed`, also
    /// its time and its log lines.
    pub fn handler_lines(
        self,
        handlers: &[HandlerTrace],
        indent: &str,
        timed: bool,
    ) -> Vec<String> {
        let width = handlers.iter().map(|h| h.name.len()).max().unwrap_or(0);
        let mut lines = Vec::new();
        for handler in handlers {
            let reason = handler.reason.as_deref().unwrap_or("");
            let verdict = self.verdict(handler.verdict, 7);
            let line = match timed {
                true => format!(
                    "{indent}{:<width$}  {verdict}  {:>7}  {reason}",
                    handler.name,
                    format!("{} µs", handler.elapsed_us)
                ),
                false => format!("{indent}{:<width$}  {verdict}  {reason}", handler.name),
            };
            lines.push(line.trim_end().to_owned());
            if timed {
                for log in &handler.logs {
                    lines.push(format!(
                        "{indent}{:<width$}  {}",
                        "",
                        self.dim(&format!("log {log}"))
                    ));
                }
            }
        }
        lines
    }
}
