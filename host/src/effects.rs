//! What a request does, as `acp-gate check` shows it beside the verdicts: each path and what it
//! undergoes (listed, read, written, deleted), and for a command each program it would run with
//! its words, the variables set for it, the files its redirections write and read, where it
//! runs and under which wrappers, and what could not be seen through. The command is read by
//! the same reading the plugins are given (`runtime::shell`, the shell crate).

use serde::Serialize;

use crate::request::ToolRequest;
use crate::runtime::shell::read;
use crate::runtime::wit::{shell, types};

/// A request's effects.
#[derive(Debug, Default, Serialize)]
pub struct Effects {
    /// Every path, with what the request does to it.
    pub paths: Vec<Touched>,
    /// Every program the command would run, in order (none for a request with no command).
    pub runs: Vec<Run>,
    /// What the reading could not see through: the command may run more than `runs`.
    pub unseen: Vec<String>,
    /// Why the command could not be read at all (then nothing of it is understood).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// A path and what the request does to it: `list`, `may read`, `read`, `write`, `delete`.
#[derive(Debug, Serialize)]
pub struct Touched {
    pub does: &'static str,
    pub path: String,
}

/// One program a command runs.
#[derive(Debug, Serialize)]
pub struct Run {
    /// Its words, the program first, as it receives them.
    pub argv: Vec<String>,
    /// `NAME=value` for each variable set for it.
    pub env: Vec<String>,
    /// Files its redirections write, and read.
    pub writes: Vec<String>,
    pub reads: Vec<String>,
    /// Where it runs, when not where the request does (after a `cd`); empty: unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The wrappers it runs under, outermost first.
    pub wrappers: Vec<String>,
    /// Some word of it is only known when it runs.
    pub dynamic: bool,
}

impl Effects {
    /// The effects of `request`.
    pub async fn of(request: &ToolRequest) -> Effects {
        let paths = (request.paths.iter())
            .map(|p| Touched {
                does: p.effect(),
                path: p.absolute.display().to_string(),
            })
            .collect();
        let mut effects = Effects {
            paths,
            ..Effects::default()
        };
        let Some(command) = &request.command else {
            return effects;
        };
        let line = types::CommandLine {
            argv: command.argv.clone(),
            shell: command.shell.clone(),
        };
        let cwd = request.cwd.display().to_string();
        let home = request.home.display().to_string();
        match read(line, home, cwd.clone()).await {
            Ok(reading) => {
                effects.runs = (reading.commands.into_iter())
                    .map(|c| Run::from(c, &cwd))
                    .collect();
                effects.unseen = reading.unknown;
            }
            Err(why) => effects.unreadable = Some(why),
        }
        effects
    }

    /// The effects as lines for a person, each starting with `indent`.
    pub fn lines(&self, indent: &str) -> Vec<String> {
        let mut lines = Vec::new();
        for touched in &self.paths {
            lines.push(format!("{indent}{:<8} {}", touched.does, touched.path));
        }
        for run in &self.runs {
            lines.push(format!("{indent}{:<8} {}", "run", run.text()));
        }
        for unseen in &self.unseen {
            lines.push(format!("{indent}{:<8} {unseen}", "unseen"));
        }
        if let Some(why) = &self.unreadable {
            lines.push(format!(
                "{indent}{:<8} the command cannot be read: {why}",
                "unseen"
            ));
        }
        lines
    }
}

impl Run {
    fn from(command: shell::SimpleCommand, request_cwd: &str) -> Run {
        let (writes, reads): (Vec<_>, Vec<_>) =
            command.redirections.into_iter().partition(|r| r.write);
        let path = |r: shell::Redirection| r.path;
        Run {
            argv: command.argv,
            env: (command.assignments.into_iter())
                .map(|(name, value)| format!("{name}={value}"))
                .collect(),
            writes: writes.into_iter().map(path).collect(),
            reads: reads.into_iter().map(path).collect(),
            cwd: Some(command.cwd).filter(|cwd| cwd != request_cwd),
            wrappers: command.wrappers,
            dynamic: command.dynamic,
        }
    }

    /// `env A=1 prog args > out < in (in DIR, under sudo; known only when it runs)`.
    fn text(&self) -> String {
        let mut text = self.env.join(" ");
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&self.argv.join(" "));
        for file in &self.writes {
            text.push_str(&format!(" > {file}"));
        }
        for file in &self.reads {
            text.push_str(&format!(" < {file}"));
        }
        let mut notes = Vec::new();
        match &self.cwd {
            Some(cwd) if cwd.is_empty() => {
                notes.push("in a directory known when it runs".to_owned())
            }
            Some(cwd) => notes.push(format!("in {cwd}")),
            None => {}
        }
        if !self.wrappers.is_empty() {
            notes.push(format!("under {}", self.wrappers.join(", ")));
        }
        if self.dynamic {
            notes.push("some words known only when it runs".to_owned());
        }
        if !notes.is_empty() {
            text.push_str(&format!("  ({})", notes.join("; ")));
        }
        text
    }
}
