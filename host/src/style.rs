//! Terminal styling: colours only when the stream is a terminal and `NO_COLOR` is unset.

use std::io::IsTerminal;

use crate::chain::Outcome;

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

    /// A verdict word (`allow`, `deny`, `ask`, `abstain`) in its colour, padded to `width`.
    pub fn verdict(self, verdict: &str, width: usize) -> String {
        let padded = format!("{verdict:<width$}");
        match verdict {
            "allow" => self.green(&padded),
            "deny" => self.red(&padded),
            "ask" => self.yellow(&padded),
            _ => self.dim(&padded),
        }
    }

    /// The combined outcome, upper-case and bold in its colour.
    pub fn outcome(self, outcome: Outcome) -> String {
        let word = outcome.as_str().to_uppercase();
        self.bold(&self.verdict(&word.to_lowercase(), 0))
            .replace(outcome.as_str(), &word)
    }
}
