//! What the walk produces: the simple commands a command line runs ([`Command`], with what each
//! one runs in turn, [`Runs`]), and what it could not see through ([`Note`]).

use crate::arg::{Arg, Feed};

/// What a recorded command does with the command it is given, if it runs one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Runs {
    /// Nothing: an ordinary command.
    #[default]
    Nothing,
    /// A wrapper (`sudo`, `env`, `timeout`, `xargs`, ...): `argv[..at]` are its own words,
    /// `argv[at..]` the command it runs, which is recorded after it.
    Command { at: usize },
    /// A shell or `eval` running a script given as words (`bash -c CODE`, `eval WORDS`): the
    /// script's commands are recorded after it.
    Script,
}

/// One simple command.
#[derive(Clone, Debug, Default)]
pub struct Command {
    /// The program's normalised name (`/bin/RM` -> `rm`); empty when there is no command word
    /// (a bare assignment or redirection) or it is not known statically.
    pub name: String,
    /// The words, the command word first.
    pub argv: Vec<Arg>,
    /// Variables set for it: prefix assignments, `env NAME=value`, `sudo NAME=value`.
    pub env: Vec<(String, Arg)>,
    /// Files its redirections (or those of a group or subshell around it) write to.
    pub writes: Vec<Arg>,
    /// Files its redirections read from.
    pub reads: Vec<Arg>,
    /// What its standard input carries.
    pub stdin: Feed,
    /// The here-document or here-string fed to it, as the shell expands it (parts only known
    /// at run time in their source form, `dynamic` set).
    pub input: Option<Arg>,
    /// Its standard output goes into a pipe or a substitution, not to whoever reads the
    /// command line's output.
    pub piped: bool,
    /// The directory it runs in (after any `cd` before it); empty when not known statically.
    pub cwd: String,
    /// The wrappers it runs under, outermost first (`sudo`, `timeout`, `xargs`, `bash`, ...).
    pub wrappers: Vec<String>,
    /// Whether it runs a command or a script given in its words.
    pub runs: Runs,
}

impl Command {
    /// The arguments after the command word.
    pub fn args(&self) -> &[Arg] {
        self.argv.get(1..).unwrap_or_default()
    }

    /// The program's own arguments: for a wrapper, those before the command it runs.
    pub fn own_args(&self) -> &[Arg] {
        match self.runs {
            Runs::Command { at } => self.argv.get(1..at).unwrap_or_default(),
            _ => self.args(),
        }
    }

    /// The command as text, for reasons.
    pub fn display(&self) -> String {
        let mut words: Vec<String> = self
            .env
            .iter()
            .map(|(n, v)| format!("{n}={}", v.text))
            .collect();
        words.extend(self.argv.iter().map(|a| a.text.clone()));
        let text = words.join(" ");
        match text.char_indices().nth(80) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    }
}

/// What kind of structure the walk could not see through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// The text (or a word, or a nested script) does not parse.
    Unparseable,
    /// Nested too deeply, or too long.
    TooComplex,
    /// The command word is only known when it runs (`$CMD`, `$(..)`).
    DynamicCommand,
    /// Code run by `eval`, `bash -c`, `source`, `alias`, ... is only known when it runs, or
    /// is loaded from a start-up file.
    DynamicCode,
    /// A command substitution or an array subscript inside arithmetic, which runs code.
    ArithmeticCode,
    /// Code downloaded from the network is run.
    RemoteCode,
    /// Decoded or unpacked bytes are run.
    DecodedPayload,
    /// A shell or interpreter runs code from an input that cannot be seen.
    StdinScript,
    /// A function calls itself in a pipeline or in the background.
    ForkBomb,
    /// Something changes what a later command name runs or when code runs (a function
    /// definition, `alias`, `trap`, `enable -f`, ...).
    Defines,
}

/// One thing the walk could not see through, with a reason for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub reason: String,
}

/// Everything the walk learned from one command line.
#[derive(Debug, Default)]
pub struct Reading {
    /// Every simple command, in the order the walk met them (substitutions before the command
    /// whose words hold them, a wrapper before the command it runs).
    pub commands: Vec<Command>,
    /// What could not be seen through.
    pub notes: Vec<Note>,
    /// The innermost script that did not parse (the top level or a nested payload).
    pub failed: Option<String>,
}
