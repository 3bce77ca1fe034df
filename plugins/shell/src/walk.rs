//! The walk over brush-parser's syntax tree: from a shell string (or an argv) to the list of
//! simple commands it would run, each with its words resolved as the shell would resolve them.
//!
//! Every simple command anywhere in the text is collected (lists, pipelines, subshells, brace
//! groups, loops, conditionals, function bodies, command and process substitutions), with its
//! words resolved as far as can be done without running anything (quotes, escapes, `$'..'`,
//! brace expansion, `~`, `$HOME`). Programs that run another command are looked through
//! (see [`crate::wrappers`]): the wrapper is recorded, then the command it runs. What cannot be
//! known without running it (a command word in a variable, `eval "$X"`) becomes a [`Note`],
//! never a pass.

use brush_parser::ast;
use brush_parser::word;
use brush_parser::{Parser, ParserOptions};

use crate::arg::{Arg, Feed, expand_braces};
use crate::paths::absolutize;
use crate::programs::{produces, program_name};
use crate::scan::{Piece, scan};

/// How deeply `bash -c`, `eval` and substitutions may nest before the walk gives up.
pub const MAX_DEPTH: u32 = 12;
/// Commands longer than this are not parsed.
pub const MAX_INPUT: usize = 128 * 1024;
/// The most words one brace expansion may produce.
const MAX_BRACE_WORDS: usize = 64;

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

/// The reading of a request's command, the same for every plugin: its argv when it has one
/// (that is what runs; a shell string sent with it describes the same), else its shell string.
/// `None` when there is neither, or the argv is empty.
pub fn read_command(
    argv: Option<&[String]>,
    shell: Option<&str>,
    home: &str,
    cwd: &str,
) -> Option<Reading> {
    match (argv, shell) {
        (Some([]), _) => None,
        (Some(argv), _) => Some(read_argv(argv, home, cwd)),
        (None, Some(shell)) => Some(read_shell(shell, home, cwd)),
        (None, None) => None,
    }
}

/// Parses a shell string and collects every simple command in it; `cwd` may be empty when
/// unknown.
pub fn read_shell(text: &str, home: &str, cwd: &str) -> Reading {
    let mut walker = Walker::new(home, cwd);
    walker.script(text, &Ctx::default());
    walker.finish()
}

/// Collects what an argv (run without a shell) would run.
pub fn read_argv(argv: &[String], home: &str, cwd: &str) -> Reading {
    let mut walker = Walker::new(home, cwd);
    let command = Command {
        argv: argv.iter().map(Arg::literal).collect(),
        ..Command::default()
    };
    walker.run(command, &Ctx::default());
    walker.finish()
}

/// What the surrounding shell code imposes on the commands inside it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ctx {
    pub(crate) stdin: Feed,
    pub(crate) wrappers: Vec<String>,
    pub(crate) env: Vec<(String, Arg)>,
    pub(crate) depth: u32,
    /// Inside a pipeline of several commands, or a command put in the background.
    pub(crate) forks: bool,
}

pub(crate) struct Walker<'a> {
    pub(crate) home: &'a str,
    /// The shell's working directory at this point of the walk; empty once it is unknown.
    pub(crate) cwd: String,
    options: ParserOptions,
    pub(crate) out: Vec<Command>,
    notes: Vec<Note>,
    failed: Option<String>,
    /// Functions whose bodies are being walked (for fork bombs).
    pub(crate) defining: Vec<String>,
    /// Variables assigned from the network or a decoder (`a=$(curl ..)`), so `$a` carries it.
    pub(crate) tainted: Vec<(String, Feed)>,
    /// Loop variables whose value is known as well as one word (`for f in src/*.rs`).
    bound: Vec<(String, Arg)>,
    /// Variables assigned text that runs code when evaluated as arithmetic (`x='a[$(id)]'`).
    subscripted: Vec<String>,
}

impl<'a> Walker<'a> {
    fn new(home: &'a str, cwd: &str) -> Self {
        Self {
            home: if home.is_empty() { "~" } else { home },
            cwd: cwd.to_owned(),
            options: ParserOptions::default(),
            out: Vec::new(),
            notes: Vec::new(),
            failed: None,
            defining: Vec::new(),
            tainted: Vec::new(),
            bound: Vec::new(),
            subscripted: Vec::new(),
        }
    }

    /// Adds a command to the result, in the directory the shell is in at that point.
    pub(crate) fn record(&mut self, mut command: Command) {
        command.cwd.clone_from(&self.cwd);
        self.out.push(command);
    }

    /// Runs `walk` in a child shell: a `cd` inside it does not change the parent's directory.
    pub(crate) fn in_child<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.cwd.clone();
        let result = walk(self);
        self.cwd = saved;
        result
    }

    /// Follows `cd DIR` / `pushd DIR`, so later relative paths resolve where they will run.
    pub(crate) fn change_directory(&mut self, command: &Command) {
        let operand = command
            .args()
            .iter()
            .find(|a| a.dynamic || a.glob || !a.text.starts_with('-') || a.text == "-");
        self.cwd = match operand {
            None => self.home.to_owned(),
            Some(a) if a.dynamic || a.glob || a.text == "-" => String::new(),
            Some(a) if a.text.starts_with('/') || a.text.starts_with('~') => {
                absolutize(&a.text, self.home, "/")
            }
            Some(_) if self.cwd.is_empty() => String::new(),
            Some(a) => absolutize(&a.text, self.home, &self.cwd),
        };
    }

    fn finish(self) -> Reading {
        Reading {
            commands: self.out,
            notes: self.notes,
            failed: self.failed,
        }
    }

    pub(crate) fn note(&mut self, kind: NoteKind, reason: String) {
        self.notes.push(Note { kind, reason });
    }

    // ----- the syntax tree -----

    /// Parses and walks a shell string (the top level, a `bash -c` payload, a substitution).
    pub(crate) fn script(&mut self, text: &str, ctx: &Ctx) {
        if ctx.depth > MAX_DEPTH {
            self.note(
                NoteKind::TooComplex,
                "the command nests shells and substitutions too deeply to check".into(),
            );
            return;
        }
        if text.len() > MAX_INPUT {
            self.note(
                NoteKind::TooComplex,
                format!("the command is too long to check ({} bytes)", text.len()),
            );
            return;
        }
        let mut parser = Parser::new(std::io::Cursor::new(text.as_bytes()), &self.options);
        match parser.parse_program() {
            Ok(program) => {
                for list in &program.complete_commands {
                    self.compound_list(list, ctx);
                }
            }
            Err(e) => {
                self.failed = Some(text.to_owned());
                self.note(
                    NoteKind::Unparseable,
                    format!("the command cannot be parsed as a shell command ({e})"),
                );
            }
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList, ctx: &Ctx) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = matches!(separator, ast::SeparatorOperator::Async);
            let ctx = Ctx {
                forks: ctx.forks || background,
                ..ctx.clone()
            };
            self.pipeline(&and_or.first, &ctx);
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p, &ctx);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: &Ctx) {
        let forks = ctx.forks || pipeline.seq.len() > 1;
        let mut strong = ctx.stdin.strong();
        let mut previous: Option<Feed> = None;
        for command in &pipeline.seq {
            let stdin = match previous.take() {
                None => ctx.stdin.clone(),
                Some(feed) => strong.clone().join(feed),
            };
            let start = self.out.len();
            let stage = Ctx {
                stdin,
                forks,
                ..ctx.clone()
            };
            if pipeline.seq.len() > 1 {
                self.in_child(|x| x.command(command, &stage));
            } else {
                self.command(command, &stage);
            }
            let produced = self.produced(start);
            strong = strong.join(produced.strong());
            previous = Some(produced);
        }
    }

    /// What the commands collected since `start` write to their standard output (a wrapper
    /// writes what the command it runs writes).
    pub(crate) fn produced(&self, start: usize) -> Feed {
        let commands: Vec<&Command> = self.out[start..]
            .iter()
            .filter(|c| c.runs == Runs::Nothing)
            .collect();
        let feed = commands.iter().fold(Feed::Nothing, |feed, c| {
            let own = if c.name.is_empty() && !c.argv.is_empty() {
                Feed::Unknown
            } else {
                produces(&c.name, &c.argv)
            };
            feed.join(own)
        });
        match feed {
            Feed::Text(_) if commands.len() > 1 => Feed::Unknown,
            Feed::Nothing => Feed::Unknown,
            feed => feed,
        }
    }

    fn command(&mut self, command: &ast::Command, ctx: &Ctx) {
        let start = self.out.len();
        let redirects = match command {
            ast::Command::Simple(simple) => return self.simple(simple, ctx),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, ctx);
                redirects
            }
            ast::Command::Function(function) => {
                let name = program_name(&function.fname.value);
                self.note(
                    NoteKind::Defines,
                    format!("defines a function `{name}`, which changes what that name runs"),
                );
                self.defining.push(name);
                self.compound(&function.body.0, ctx);
                self.defining.pop();
                &function.body.1
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, ctx);
                redirects
            }
        };
        self.group_redirects(start, redirects.as_ref().map(|r| r.0.as_slice()), ctx);
    }

    /// `{ ..; } > file`: every command inside (since `start`) writes to `file`; with no
    /// command inside, the redirections are recorded alone.
    fn group_redirects(&mut self, start: usize, redirects: Option<&[ast::IoRedirect]>, ctx: &Ctx) {
        let Some(redirects) = redirects.filter(|r| !r.is_empty()) else {
            return;
        };
        let mut group = Command::default();
        for r in redirects {
            self.redirect(r, &mut group, ctx);
        }
        if self.out.len() == start {
            self.record(group);
            return;
        }
        for command in &mut self.out[start..] {
            command.writes.extend(group.writes.iter().cloned());
            command.reads.extend(group.reads.iter().cloned());
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, ctx: &Ctx) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, ctx);
                self.extended_test(b, ctx);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, ctx),
            E::UnaryTest(_, w) => {
                self.words(w, ctx);
            }
            E::BinaryTest(op, a, b) => {
                use ast::BinaryPredicate as P;
                let numeric = matches!(
                    op,
                    P::ArithmeticEqualTo
                        | P::ArithmeticNotEqualTo
                        | P::ArithmeticLessThan
                        | P::ArithmeticLessThanOrEqualTo
                        | P::ArithmeticGreaterThan
                        | P::ArithmeticGreaterThanOrEqualTo
                );
                for w in [a, b] {
                    for arg in self.words(w, ctx) {
                        if numeric {
                            self.arithmetic(&arg.text, ctx);
                        }
                    }
                }
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: &Ctx) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => self.arithmetic(&a.expr.value, ctx),
            C::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value, ctx);
                }
                self.compound_list(&f.body.list, ctx);
            }
            C::BraceGroup(b) => self.compound_list(&b.list, ctx),
            C::Subshell(s) => self.in_child(|x| x.compound_list(&s.list, ctx)),
            C::ForClause(f) => {
                let mut values = Vec::new();
                for w in f.values.iter().flatten() {
                    values.extend(self.words(w, ctx));
                }
                // `for f in src/*.rs`: inside the body, `$f` is one of the words of the list;
                // with one word, it is known as well as that word is.
                let bound = match values.as_slice() {
                    [one] if !one.dynamic => Some((f.variable_name.clone(), one.clone())),
                    _ => None,
                };
                let had = bound.is_some();
                self.bound.extend(bound);
                self.compound_list(&f.body.list, ctx);
                if had {
                    self.bound.pop();
                }
            }
            C::CaseClause(c) => {
                self.words(&c.value, ctx);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.words(p, ctx);
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, ctx);
                    }
                }
            }
            C::IfClause(i) => {
                self.compound_list(&i.condition, ctx);
                self.compound_list(&i.then, ctx);
                for e in i.elses.iter().flatten() {
                    if let Some(condition) = &e.condition {
                        self.compound_list(condition, ctx);
                    }
                    self.compound_list(&e.body, ctx);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.compound_list(&w.0, ctx);
                self.compound_list(&w.1.list, ctx);
            }
            C::Coprocess(c) => self.command(
                &c.body,
                &Ctx {
                    forks: true,
                    ..ctx.clone()
                },
            ),
        }
    }

    /// An arithmetic expression (`(( .. ))`, `$(( .. ))`, `let`, an operand of `-eq`): a
    /// command substitution or an array subscript with an expansion in it runs code when it is
    /// evaluated, even from a quoted string. The commands inside are walked, so they are judged.
    pub(crate) fn arithmetic(&mut self, expr: &str, ctx: &Ctx) {
        let substitutes = expr.contains("$(") || expr.contains('`');
        // A variable holding such text runs it too: arithmetic evaluates a variable's value.
        let holds_code = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|name| self.subscripted.iter().any(|s| s == name));
        let subscripted = runs_in_subscript(expr) || holds_code;
        if !(substitutes || subscripted) {
            return;
        }
        self.note(
            NoteKind::ArithmeticCode,
            format!("the arithmetic expression `{expr}` runs code when it is evaluated"),
        );
        if let Ok(pieces) = scan(&format!("\"{}\"", expr.replace('"', "\\\""))) {
            let mut ignored = Arg::default();
            self.pieces(&pieces, &mut ignored, ctx);
        }
    }

    /// Remembers a variable assigned text that runs code when evaluated as arithmetic.
    pub(crate) fn assigned(&mut self, name: &str, value: &Arg) {
        if runs_in_subscript(&value.text) || value.text.contains("$(") || value.text.contains('`') {
            self.subscripted.push(name.to_owned());
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: &Ctx) {
        let mut inv = Command {
            env: ctx.env.clone(),
            stdin: ctx.stdin.clone(),
            wrappers: ctx.wrappers.clone(),
            ..Command::default()
        };
        let mut redirects = Vec::new();
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (i, true));
        let word = simple.word_or_name.as_ref();
        let suffix = simple
            .suffix
            .iter()
            .flat_map(|s| s.0.iter())
            .map(|i| (i, false));
        for (item, in_prefix) in items {
            self.prefix_or_suffix(item, in_prefix, &mut inv, &mut redirects, ctx);
        }
        if let Some(w) = word {
            let words = self.words(w, ctx);
            inv.argv.extend(words);
        }
        for (item, in_prefix) in suffix {
            self.prefix_or_suffix(item, in_prefix, &mut inv, &mut redirects, ctx);
        }
        for r in redirects {
            self.redirect(r, &mut inv, ctx);
        }
        self.run(inv, ctx);
    }

    fn prefix_or_suffix<'t>(
        &mut self,
        item: &'t ast::CommandPrefixOrSuffixItem,
        in_prefix: bool,
        inv: &mut Command,
        redirects: &mut Vec<&'t ast::IoRedirect>,
        ctx: &Ctx,
    ) {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => redirects.push(r),
            I::Word(w) => {
                let words = self.words(w, ctx);
                inv.argv.extend(words);
            }
            I::AssignmentWord(assignment, w) => {
                if in_prefix {
                    let value = match &assignment.value {
                        ast::AssignmentValue::Scalar(v) => self.word(&v.value, ctx),
                        ast::AssignmentValue::Array(items) => {
                            let mut joined = Arg::default();
                            for (_, v) in items {
                                let a = self.word(&v.value, ctx);
                                joined.text.push_str(&a.text);
                                joined.text.push(' ');
                                joined.dynamic |= a.dynamic;
                                joined.feed = joined.feed.clone().join(a.feed);
                            }
                            joined
                        }
                    };
                    let name = match &assignment.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, subscript) => {
                            self.arithmetic(&format!("{n}[{subscript}]"), ctx);
                            n.clone()
                        }
                    };
                    self.assigned(&name, &value);
                    inv.env.push((name, value));
                } else {
                    let words = self.words(w, ctx);
                    inv.argv.extend(words);
                }
            }
            I::ProcessSubstitution(kind, subshell) => {
                let arg = self.process_substitution(kind, subshell, &inv.stdin, ctx);
                inv.argv.push(arg);
            }
        }
    }

    fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        subshell: &ast::SubshellCommand,
        stdin: &Feed,
        ctx: &Ctx,
    ) -> Arg {
        let start = self.out.len();
        let inner_stdin = match kind {
            // `>(cmd)` reads what the outer command writes: assume the worst of what it was fed.
            ast::ProcessSubstitutionKind::Write => stdin.strong().join(Feed::Unknown),
            ast::ProcessSubstitutionKind::Read => Feed::Nothing,
        };
        let inner = Ctx {
            stdin: inner_stdin,
            depth: ctx.depth + 1,
            forks: true,
            ..ctx.clone()
        };
        self.in_child(|x| x.compound_list(&subshell.list, &inner));
        let feed = match kind {
            ast::ProcessSubstitutionKind::Read => self.produced(start),
            ast::ProcessSubstitutionKind::Write => Feed::Nothing,
        };
        Arg {
            text: "<(…)".into(),
            dynamic: true,
            glob: false,
            pipe: true,
            feed,
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, inv: &mut Command, ctx: &Ctx) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T};
        match redirect {
            ast::IoRedirect::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let arg = self.word(&w.value, ctx);
                    match kind {
                        K::Read => {
                            inv.stdin = Feed::Unknown.join(arg.feed.strong());
                            inv.reads.push(arg);
                        }
                        K::Write | K::Append | K::Clobber | K::ReadAndWrite => inv.writes.push(arg),
                        K::DuplicateInput | K::DuplicateOutput => {}
                    }
                }
                T::Duplicate(w) => {
                    let arg = self.word(&w.value, ctx);
                    // `>&file` is `&>file` when the word is not a descriptor number.
                    let descriptor = arg.text.chars().all(|c| c.is_ascii_digit() || c == '-');
                    if matches!(kind, K::DuplicateOutput) && !descriptor {
                        inv.writes.push(arg);
                    }
                }
                T::Fd(_) => {}
                T::ProcessSubstitution(sub_kind, subshell) => {
                    let producer = produces(
                        &program_name(inv.argv.first().map_or("", |a| a.text.as_str())),
                        &inv.argv,
                    );
                    let fed = inv.stdin.strong().join(producer.strong());
                    let arg = self.process_substitution(sub_kind, subshell, &fed, ctx);
                    if matches!(sub_kind, ast::ProcessSubstitutionKind::Read) {
                        inv.stdin = arg.feed.clone().join(Feed::Unknown);
                    }
                }
            },
            ast::IoRedirect::HereDocument(_, doc) => {
                let text = &doc.doc.value;
                inv.stdin = if doc.requires_expansion {
                    // The body expands like a double-quoted string in which `"` is literal.
                    match scan(&format!("\"{}\"", text.replace('"', "\\\""))) {
                        Ok(pieces) => {
                            let mut arg = Arg::default();
                            self.pieces(&pieces, &mut arg, ctx);
                            if arg.dynamic {
                                arg.feed.strong().join(Feed::Unknown)
                            } else {
                                Feed::Text(arg.text)
                            }
                        }
                        Err(_) => Feed::Unknown,
                    }
                } else {
                    Feed::Text(text.clone())
                };
            }
            ast::IoRedirect::HereString(_, w) => {
                let arg = self.word(&w.value, ctx);
                inv.stdin = if arg.dynamic {
                    arg.feed.strong().join(Feed::Unknown)
                } else {
                    Feed::Text(arg.text)
                };
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let arg = self.word(&w.value, ctx);
                inv.writes.push(arg);
            }
        }
    }

    // ----- words -----

    /// A word as the command receives it; brace expansion may turn it into several.
    pub(crate) fn words(&mut self, w: &ast::Word, ctx: &Ctx) -> Vec<Arg> {
        let raw = w.value.as_str();
        if raw.contains('{')
            && (raw.contains(',') || raw.contains(".."))
            && let Ok(Some(parts)) = word::parse_brace_expansions(raw, &self.options)
            && parts
                .iter()
                .any(|p| matches!(p, word::BraceExpressionOrText::Expr(_)))
        {
            return match expand_braces(&parts, MAX_BRACE_WORDS) {
                Some(expanded) => expanded.iter().map(|r| self.word(r, ctx)).collect(),
                None => {
                    let mut arg = self.word(raw, ctx);
                    arg.dynamic = true;
                    vec![arg]
                }
            };
        }
        vec![self.word(raw, ctx)]
    }

    pub(crate) fn word(&mut self, raw: &str, ctx: &Ctx) -> Arg {
        match scan(raw) {
            Ok(pieces) => {
                let mut arg = Arg::default();
                self.pieces(&pieces, &mut arg, ctx);
                arg
            }
            Err(e) => {
                self.failed.get_or_insert_with(|| raw.to_owned());
                self.note(
                    NoteKind::Unparseable,
                    format!("the word `{raw}` cannot be parsed ({e})"),
                );
                Arg::unknown(raw)
            }
        }
    }

    pub(crate) fn pieces(&mut self, pieces: &[Piece], arg: &mut Arg, ctx: &Ctx) {
        for piece in pieces {
            match piece {
                Piece::Literal { text, quoted } => {
                    if !quoted {
                        arg.glob |=
                            text.contains(['*', '?']) || (text.contains('[') && text.contains(']'));
                    }
                    arg.text.push_str(text);
                }
                Piece::Tilde(user) => match user.as_str() {
                    "" => arg.text.push_str(self.home),
                    "+" if !self.cwd.is_empty() => {
                        let cwd = self.cwd.clone();
                        arg.text.push_str(&cwd);
                    }
                    "+" | "-" => {
                        arg.dynamic = true;
                        arg.text.push('~');
                        arg.text.push_str(user);
                    }
                    user => {
                        arg.text.push('~');
                        arg.text.push_str(user);
                    }
                },
                Piece::Parameter { name, source } => match name.as_deref() {
                    Some("HOME") => arg.text.push_str(self.home),
                    Some("PWD") if !self.cwd.is_empty() => {
                        let cwd = self.cwd.clone();
                        arg.text.push_str(&cwd);
                    }
                    Some(n) if self.bound.iter().any(|(b, _)| b == n) => {
                        let (_, value) = self
                            .bound
                            .iter()
                            .rev()
                            .find(|(b, _)| b == n)
                            .expect("just found");
                        arg.text.push_str(&value.text);
                        arg.glob |= value.glob;
                    }
                    other => {
                        arg.dynamic = true;
                        arg.text.push_str(source);
                        // `${a[$(cmd)]}`: the subscript is arithmetic.
                        if let Some(inner) = source
                            .strip_prefix("${")
                            .and_then(|s| s.strip_suffix('}'))
                            .filter(|s| s.contains('['))
                        {
                            self.arithmetic(inner, ctx);
                        }
                        if let Some((_, feed)) =
                            self.tainted.iter().find(|(n, _)| Some(n.as_str()) == other)
                        {
                            arg.feed = std::mem::take(&mut arg.feed).join(feed.clone());
                        }
                    }
                },
                Piece::Substitution { script, source } => {
                    arg.dynamic = true;
                    arg.text.push_str(source);
                    let start = self.out.len();
                    let inner = Ctx {
                        stdin: Feed::Nothing,
                        depth: ctx.depth + 1,
                        ..ctx.clone()
                    };
                    self.in_child(|x| x.script(script, &inner));
                    let feed = self.produced(start);
                    arg.feed = std::mem::take(&mut arg.feed).join(feed);
                }
                Piece::Arithmetic { expr, source } => {
                    arg.dynamic = true;
                    arg.text.push_str(source);
                    self.arithmetic(expr, ctx);
                }
            }
        }
    }
}

/// Whether an array subscript in `expr` holds an expansion (`a[$i]`, `a[$(id)]`), which
/// arithmetic evaluation runs.
fn runs_in_subscript(expr: &str) -> bool {
    expr.split('[')
        .skip(1)
        .any(|inside| inside.contains('$') || inside.contains('`'))
}
