//! From the command of a request to the simple commands the rules judge: the shared reading
//! of the shell (`acp_gate_shell`), so that this plugin and `dangerous-command` judge the same
//! list of simple commands, in the same order, under the same limits.
//!
//! A shell string is walked across pipelines, `&&`, `||`, `;`, `&`, newlines, subshells, brace
//! groups, `if`/`for`/`while`/`case` bodies, function bodies, `$( )`, backticks, `<( )` / `>( )`
//! and here-documents. Each word is resolved as the shell would (quotes, escapes, `$'..'`, `~`,
//! `$HOME`, brace expansion); what is only known at run time (`$X`, `$(..)`, globs) is marked
//! dynamic. A program that runs another command (`sudo`, `env`, `timeout`, `xargs`, ...) is one
//! simple command and the command it runs another; a shell's `-c` (or `eval`) with a static
//! payload is followed by the commands of the payload.
//!
//! An argv is one simple command already and is judged word by word, never re-parsed from a
//! join, unless it runs another command (`bash -c STRING`, `sudo CMD`). `of_request` reads a
//! request's command as `dangerous-command` does; `from_shell` reads a shell string alone.

use acp_gate_plugin::CommandLine;
use acp_gate_plugin::path_rules::inert_device;
use acp_gate_shell::environment::{is_inert, is_shell_variable};
use acp_gate_shell::{Arg, Command, NoteKind, Reading, Runs, read_command, read_shell};

pub use acp_gate_shell::program_name;

/// One word of a simple command, after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The word as the command receives it, or its source text when `dynamic`.
    pub text: String,
    /// Only known when the command runs (`$X`, `$(..)`, an unquoted glob).
    pub dynamic: bool,
}

impl Word {
    pub fn literal(text: &str) -> Word {
        Word {
            text: text.to_owned(),
            dynamic: false,
        }
    }

    fn of(arg: &Arg) -> Word {
        Word {
            text: arg.text.clone(),
            dynamic: arg.dynamic || arg.glob,
        }
    }
}

/// One simple command: its words, the command word first. Prefix assignments (`FOO=1 cmd`)
/// and redirections are not words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    /// Files its output is redirected into (its own `>`, `>>`, `&>`, or those of a group or
    /// subshell around it), other than `/dev/null` and the standard streams. Allow rules do
    /// not apply to a command that writes files this way.
    pub writes: Vec<Word>,
    /// It sets a variable that changes what runs, or that the shell reader does not know to be
    /// inert (`LD_PRELOAD=x cmd`, `env PATH=/tmp:$PATH cmd`, a bare `PATH=..`): allow rules do
    /// not apply to it.
    pub changes_environment: bool,
    /// `bash -c SCRIPT` or `eval WORDS` with a static payload, whose commands follow it in the
    /// list: deny and ask rules see it, allow rules need not cover it (its payload is judged).
    pub runs_payload: bool,
}

impl SimpleCommand {
    pub fn of_words(words: Vec<Word>) -> SimpleCommand {
        SimpleCommand {
            words,
            ..SimpleCommand::default()
        }
    }

    fn of(command: &Command) -> SimpleCommand {
        SimpleCommand {
            words: command.argv.iter().map(Word::of).collect(),
            writes: command
                .writes
                .iter()
                .filter(|w| w.dynamic || !inert_device(&w.text))
                .map(Word::of)
                .collect(),
            changes_environment: !command.env.iter().all(|(name, value)| {
                // A bare assignment sets a variable of the shell, which only an earlier
                // `export` hands to programs: a script's own variables are harmless.
                match command.argv.is_empty() {
                    true => is_shell_variable(name, value),
                    false => is_inert(name, value),
                }
            }),
            runs_payload: command.runs == Runs::Script,
        }
    }

    /// Whether allow rules need not cover it: a shell running a payload (the payload's
    /// commands are covered instead), or a bare assignment of a script's own variables that
    /// writes no file.
    pub fn needs_no_allow(&self) -> bool {
        self.runs_payload
            || (self.words.is_empty() && self.writes.is_empty() && !self.changes_environment)
    }

    /// The program's normalised name (`/usr/bin/Git` -> `git`), as `dangerous-command` has it.
    pub fn name(&self) -> String {
        self.words.first().map_or_else(String::new, |w| {
            if w.dynamic {
                w.text.clone()
            } else {
                program_name(&w.text)
            }
        })
    }

    /// The text regexes run over: the normalised name, then the other words, joined by spaces.
    pub fn text(&self) -> String {
        let mut text = self.name();
        for w in self.words.iter().skip(1) {
            text.push(' ');
            text.push_str(&w.text);
        }
        text
    }
}

/// What the rules see of a request's command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Commands {
    /// The request has no command.
    None,
    /// Every simple command the command would run.
    Parsed(Vec<SimpleCommand>),
    /// The command could not be parsed. `pieces` is a best-effort split of `raw` on shell
    /// operators, for deny and ask rules only; allow rules never apply.
    Unparseable {
        raw: String,
        error: String,
        pieces: Vec<SimpleCommand>,
    },
}

/// The simple commands of a request's command, read as every plugin reads it (its argv when it
/// has one, else its shell string).
pub fn of_request(command: &CommandLine, home: &str, cwd: &str) -> Commands {
    let raw = match (&command.argv, &command.shell) {
        (Some(argv), _) => argv.join(" "),
        (None, Some(shell)) => shell.clone(),
        (None, None) => String::new(),
    };
    match read_command(command.argv.as_deref(), command.shell.as_deref(), home, cwd) {
        Some(reading) => judged(reading, &raw),
        None => Commands::None,
    }
}

/// Collects the simple commands of a shell string run in `cwd` (empty when unknown).
pub fn from_shell(text: &str, home: &str, cwd: &str) -> Commands {
    judged(read_shell(text, home, cwd), text)
}

/// The shared reading in this plugin's terms. A command that does not parse, nests too
/// deeply, or runs code from inside an arithmetic expression is unparseable here.
fn judged(reading: Reading, raw: &str) -> Commands {
    let failure = reading.notes.iter().find(|n| {
        matches!(
            n.kind,
            NoteKind::Unparseable | NoteKind::TooComplex | NoteKind::ArithmeticCode
        )
    });
    if let Some(note) = failure {
        let mut pieces = rough_pieces(raw);
        // A payload that fails inside `bash -c '..'`: its own pieces too.
        if let Some(inner) = reading.failed.filter(|f| f != raw) {
            pieces.extend(rough_pieces(&inner));
        }
        return Commands::Unparseable {
            raw: raw.to_owned(),
            error: note.reason.clone(),
            pieces,
        };
    }
    Commands::Parsed(reading.commands.iter().map(SimpleCommand::of).collect())
}

/// A rough split of text that does not parse, on shell operators, for deny and ask rules.
fn rough_pieces(raw: &str) -> Vec<SimpleCommand> {
    raw.split([';', '&', '|', '\n', '(', ')', '`', '{', '}'])
        .map(|piece| {
            SimpleCommand::of_words(
                piece
                    .split_whitespace()
                    .skip_while(|w| RESERVED.contains(w))
                    .map(|w| Word::literal(&w.replace(['\'', '"', '\\', '$'], "")))
                    .filter(|w| !w.text.is_empty())
                    .collect(),
            )
        })
        .filter(|c| !c.words.is_empty())
        .collect()
}

/// Words that start a piece of shell syntax rather than a command (`if x; then cmd`).
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "!", "time",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(shell: &str) -> Vec<String> {
        match from_shell(shell, "/home/u", "") {
            Commands::Parsed(commands) => commands.iter().map(SimpleCommand::text).collect(),
            other => panic!("{shell:?} did not parse: {other:?}"),
        }
    }

    #[test]
    fn compound_commands_are_split_into_simple_commands() {
        assert_eq!(
            texts("npm test && curl x | sh"),
            ["npm test", "curl x", "sh"]
        );
        assert_eq!(
            texts("(cd a; make) || { echo $(whoami); } & wait"),
            ["cd a", "make", "whoami", "echo $(whoami)", "wait"]
        );
        assert_eq!(
            texts("for f in `ls`; do cat \"$f\"; done"),
            ["ls", "cat $f"]
        );
        assert_eq!(
            texts("diff <(ls a) b > $(mktemp)"),
            ["ls a", "mktemp", "diff <(…) b"]
        );
        assert_eq!(texts("NODE_ENV=test /usr/bin/NPM test"), ["npm test"]);
        assert_eq!(texts("X=$(id) true"), ["id", "true"]);
    }

    #[test]
    fn output_redirections_are_recorded() {
        let writes = |shell: &str| match from_shell(shell, "/h", "") {
            Commands::Parsed(c) => c
                .iter()
                .map(|c| {
                    c.writes
                        .iter()
                        .map(|w| w.text.clone())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(writes("cargo test 2>&1 >/dev/null | tail"), ["", ""]);
        assert_eq!(
            writes("echo x >> ~/.bashrc; ls &> out"),
            ["/h/.bashrc", "out"]
        );
        assert_eq!(writes("{ echo a; ls; } > f"), ["f", "f"]);
        assert_eq!(writes("ls >&log"), ["log"]);
        assert_eq!(writes("cat < in"), [""]);
    }

    #[test]
    fn words_are_resolved_and_shell_payloads_parsed() {
        assert_eq!(
            texts(r#"'git' "push" \origin ~/x"#),
            ["git push origin /home/u/x"]
        );
        assert_eq!(
            texts("bash -lc 'git push -f; ls'"),
            ["bash -lc git push -f; ls", "git push -f", "ls"]
        );
        assert_eq!(texts("eval git status"), ["eval git status", "git status"]);
        assert_eq!(texts("bash -c \"$X\""), ["bash -c $X"]);
        let Commands::Parsed(c) = from_shell("rm *.o", "/h", "") else {
            panic!()
        };
        assert!(c[0].words[1].dynamic);
    }

    #[test]
    fn argv_is_one_command_unless_it_is_a_shell_payload() {
        let argv = |a: &[&str]| {
            let command = CommandLine {
                argv: Some(a.iter().map(|s| s.to_string()).collect()),
                shell: None,
            };
            of_request(&command, "/h", "")
        };
        assert_eq!(
            argv(&["git", "commit", "-m", "a && b"]),
            Commands::Parsed(vec![SimpleCommand::of_words(
                ["git", "commit", "-m", "a && b"]
                    .map(Word::literal)
                    .to_vec()
            )])
        );
        let Commands::Parsed(mut c) = argv(&["/bin/bash", "-lc", "npm test && curl x"]) else {
            panic!()
        };
        assert!(c.remove(0).runs_payload);
        assert_eq!(
            c.iter().map(SimpleCommand::text).collect::<Vec<_>>(),
            ["npm test", "curl x"]
        );
    }

    #[test]
    fn wrappers_are_commands_and_so_is_what_they_run() {
        assert_eq!(
            texts("sudo -u root env A=1 timeout -s 9 10 nohup git push -f")
                .last()
                .unwrap(),
            "git push -f"
        );
        assert_eq!(texts("timeout 10"), ["timeout 10"]);
    }

    #[test]
    fn unparseable_commands_keep_a_rough_split() {
        let Commands::Unparseable { pieces, .. } = from_shell("npm test && echo 'open", "/h", "")
        else {
            panic!()
        };
        let texts: Vec<String> = pieces.iter().map(SimpleCommand::text).collect();
        assert_eq!(texts, ["npm test", "echo open"]);
        let Commands::Unparseable { pieces, .. } = from_shell("if x; then git push 'a", "/h", "")
        else {
            panic!()
        };
        assert_eq!(pieces[1].text(), "git push a");
        assert!(matches!(
            from_shell("echo $((1 + $(id)))", "/h", ""),
            Commands::Unparseable { .. }
        ));
    }
}
