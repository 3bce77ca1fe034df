//! {{name}}: an acp-gate permission plugin. Denies a `git commit` whose message does not name a
//! ticket (`ABC-123`, of one of the projects in its config), in any spelling: `git -C . commit`,
//! `/usr/bin/git commit`, `bash -c 'git commit …'`, `git commit -am x && git push`,
//! `env GIT_X=1 git commit`, `sudo`, `timeout`, `xargs`, … Abstains on everything else.
//!
//! It reads the command with the crates acp-gate's built-in plugins use (vendored under
//! `vendor/acp-gate` by `acp-gate plugin new`): `acp_gate_plugin` (the request, the verdict, the
//! export, and in `sensitive` the sensitive-path tables) and `acp_gate_shell` (the shell read
//! as a shell reads it: every simple command through `&&`, pipes, `$(...)`, `bash -c`, quoting
//! and wrappers). So it judges a command as the built-ins read it, and nothing here splits
//! shell text by hand.

use acp_gate_plugin::{Plugin, Request, ToolKind, Verdict};
use acp_gate_shell::options::{self, Item, Opt, Style, Value};
use acp_gate_shell::{Command, Reading, read_command};

// What the reading cannot see through (`reading.notes`: `eval "$X"`, a script in a variable)
// is asked by the built-in `builtin-commands`; this plugin judges the commits it can see.

/// The handler's `[handler.config]` table.
#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// The ticket projects (`ABC` for `ABC-123`); empty: any upper-case project key.
    projects: Vec<String>,
}

/// Denies a `git commit` without a ticket id in its message.
struct CommitTickets;

impl Plugin for CommitTickets {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        let Some(command) = request
            .command
            .as_ref()
            .filter(|_| request.kind == ToolKind::Execute)
        else {
            return Ok(Verdict::Abstain);
        };
        let Some(reading) = read_command(
            command.argv.as_deref(),
            command.shell.as_deref(),
            &request.home_dir,
            &request.cwd,
        ) else {
            return Ok(Verdict::Abstain);
        };
        if command.argv.is_none() && reading.failed.is_some() && reading.failed == command.shell {
            return Ok(Verdict::Ask("cannot read the command: it does not parse".into()));
        }
        Ok(judge(&reading, config))
    }
}

acp_gate_plugin::export_plugin!(CommitTickets);

/// The strictest verdict over every `git commit` the command line runs.
fn judge(reading: &Reading, config: &Config) -> Verdict {
    let mut verdict = Verdict::Abstain;
    for command in reading.commands.iter().filter(|c| c.name == "git") {
        match commit_message(command) {
            None => {}
            Some(Message::Unseen(why)) => {
                if matches!(verdict, Verdict::Abstain) {
                    verdict = Verdict::Ask(format!(
                        "cannot check the commit message for a ticket id: {why}"
                    ));
                }
            }
            Some(Message::Known(text)) if names_ticket(&text, &config.projects) => {}
            Some(Message::Known(_)) => {
                return Verdict::Deny(format!(
                    "a commit message must name a ticket (like ABC-123){}: `{}`",
                    projects(config),
                    command.display()
                ));
            }
        }
    }
    verdict
}

/// The commit message of a `git … commit …`, if `command` is one.
enum Message {
    Known(String),
    Unseen(&'static str),
}

/// git's global options that take a value (`git -C DIR commit`): the subcommand comes after.
const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

/// The options of `git commit` that matter here, and the flags that cluster with `-m`.
const COMMIT: &[Opt] = &[
    ("-m", Value::Literal),
    ("--message", Value::Literal),
    ("-F", Value::Read),
    ("--file", Value::Read),
    ("-C", Value::Literal),
    ("--reuse-message", Value::Literal),
    ("-c", Value::Literal),
    ("--reedit-message", Value::Literal),
    ("-a", Value::Flag),
    ("--all", Value::Flag),
    ("-s", Value::Flag),
    ("--signoff", Value::Flag),
    ("-n", Value::Flag),
    ("--no-verify", Value::Flag),
    ("-q", Value::Flag),
    ("--quiet", Value::Flag),
    ("-v", Value::Flag),
    ("--verbose", Value::Flag),
    ("--amend", Value::Flag),
    ("--no-edit", Value::Flag),
    ("-S", Value::Optional),
    ("--allow-empty", Value::Flag),
];

fn commit_message(command: &Command) -> Option<Message> {
    let at = options::operand_start(&command.argv, 1, GIT_VALUED);
    let subcommand = command.argv.get(at)?;
    if subcommand.dynamic {
        return Some(Message::Unseen(
            "the git subcommand is only known when it runs",
        ));
    }
    if subcommand.text != "commit" {
        return None;
    }
    let mut message = Vec::new();
    for item in options::parse(&command.argv[at + 1..], &[COMMIT], Style::Gnu) {
        match item {
            Item::Option {
                name: "-m" | "--message",
                arg: Some(text),
                ..
            } if text.dynamic => {
                return Some(Message::Unseen("the message is only known when it runs"));
            }
            Item::Option {
                name: "-m" | "--message",
                arg: Some(text),
                ..
            } => message.push(text.text),
            Item::Option {
                name: "-F" | "--file" | "-C" | "--reuse-message" | "-c" | "--reedit-message",
                ..
            } => {
                return Some(Message::Unseen(
                    "the message comes from a file or another commit",
                ));
            }
            // An option it does not know that may be giving the message: `-xm TEXT`, or an
            // abbreviation git accepts (`--mess=TEXT`).
            Item::Unknown(word) if may_give_message(&word.text) => {
                return Some(Message::Unseen(
                    "an option it does not know may hold the message",
                ));
            }
            _ => {}
        }
    }
    // No message at all: git opens an editor, which an agent cannot use.
    Some(Message::Known(message.join("\n\n")))
}

fn may_give_message(option: &str) -> bool {
    match option.strip_prefix("--") {
        Some(long) => {
            let name = long.split('=').next().unwrap_or(long);
            !name.is_empty() && "message".starts_with(name)
        }
        None => option.starts_with('-') && option.contains('m'),
    }
}

/// Whether `text` names a ticket: `KEY-123`, KEY one of `projects` (or, with none, any
/// upper-case key of two characters or more).
fn names_ticket(text: &str, projects: &[String]) -> bool {
    text.match_indices('-').any(|(dash, _)| {
        let before = &text[..dash];
        let start = before
            .rfind(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit()))
            .map_or(0, |i| i + 1);
        let key = &before[start..];
        let number = text[dash + 1..].starts_with(|c: char| c.is_ascii_digit());
        let known = match projects.is_empty() {
            true => key.len() >= 2 && key.starts_with(|c: char| c.is_ascii_uppercase()),
            false => projects.iter().any(|p| p == key),
        };
        known && number
    })
}

fn projects(config: &Config) -> String {
    match config.projects.as_slice() {
        [] => String::new(),
        keys => format!(" of {}", keys.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_gate_plugin::testing::request;

    fn verdict(shell: &str) -> Verdict {
        let config = Config {
            projects: vec!["ABC".into()],
        };
        CommitTickets::evaluate(&request(shell), &config).unwrap()
    }

    #[test]
    fn a_commit_without_a_ticket_is_denied_in_any_spelling() {
        for shell in [
            "git commit -m 'fix the build'",
            "git -C . commit -m x",
            "/usr/bin/git commit -m x",
            "bash -c 'git commit -m x'",
            "git commit -am x && git push",
            "env GIT_AUTHOR_NAME=x git commit -mx",
            "git commit",
        ] {
            assert!(matches!(verdict(shell), Verdict::Deny(_)), "{shell}");
        }
        assert!(matches!(
            verdict("git commit -m 'ABC-12 fix'"),
            Verdict::Abstain
        ));
        assert!(matches!(verdict("git commit -m \"$MSG\""), Verdict::Ask(_)));
    }
}
