//! The walk over brush-parser's syntax tree: from a shell string (or an argv) to the list of
//! simple commands it would run, each with its words resolved as the shell would resolve them.
//!
//! Every simple command anywhere in the text is collected (lists, pipelines, subshells, brace
//! groups, loops, conditionals, function bodies, command and process substitutions), with its
//! words resolved as far as can be done without running anything (quotes, escapes, `$'..'`,
//! brace expansion, `~`, `$HOME`). Programs that run another command are looked through, as
//! [`crate::wrappers`] reads them: the wrapper is recorded, then the command it runs. What cannot be
//! known without running it (a command word in a variable, `eval "$X"`) becomes a [`Note`],
//! never a pass.

use brush_parser::ast;
use brush_parser::word;
use brush_parser::{Parser, ParserOptions};

use crate::arg::{Arg, Feed, expand_braces};
use crate::command::{Command, Note, NoteKind, Reading, Runs};
use crate::paths::absolutize;
use crate::programs::{produces, program_name};
use crate::scan::{Piece, scan};
use crate::wrappers::{Plan, SUBSCRIPT_BUILTINS, Step, found_paths, plan};

/// How deeply `bash -c`, `eval` and substitutions may nest before the walk gives up.
pub const MAX_DEPTH: u32 = 12;
/// Commands longer than this are not parsed.
pub const MAX_INPUT: usize = 128 * 1024;
/// The most words one brace expansion may produce.
const MAX_BRACE_WORDS: usize = 64;

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
struct Ctx {
    stdin: Feed,
    wrappers: Vec<String>,
    env: Vec<(String, Arg)>,
    depth: u32,
    /// Inside a pipeline of several commands, or a command put in the background.
    forks: bool,
    /// Standard output goes into a pipe or a substitution.
    captured: bool,
}

struct Walker<'a> {
    home: &'a str,
    /// The shell's working directory at this point of the walk; empty once it is unknown.
    cwd: String,
    options: ParserOptions,
    out: Vec<Command>,
    notes: Vec<Note>,
    failed: Option<String>,
    /// Functions whose bodies are being walked (for fork bombs).
    defining: Vec<String>,
    /// Variables assigned from the network or a decoder (`a=$(curl ..)`), so `$a` carries it.
    tainted: Vec<(String, Feed)>,
    /// Loop variables whose value is known as well as one word (`for f in src/*.rs`).
    bound: Vec<(String, Arg)>,
    /// Variables assigned text that runs code when evaluated as arithmetic (`x='a[$(id)]'`).
    subscripted: Vec<String>,
    /// The texts of the scripts being walked, innermost last (the syntax tree's locations
    /// point into them).
    sources: Vec<String>,
    /// Walking a `$( .. )` whose enclosing text has a `<<` (see
    /// [`Walker::nested_arithmetic_command`]).
    substitution_before_heredoc: bool,
    /// How many `cd`s (and `popd`s) the walk has followed.
    cds: usize,
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
            sources: Vec::new(),
            substitution_before_heredoc: false,
            cds: 0,
        }
    }

    /// Adds a command to the result, in the directory the shell is in at that point.
    fn record(&mut self, mut command: Command) {
        command.cwd.clone_from(&self.cwd);
        self.out.push(command);
    }

    /// Runs `walk` in a child shell: a `cd` inside it does not change the parent's directory.
    fn in_child<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.cwd.clone();
        let result = walk(self);
        self.cwd = saved;
        result
    }

    /// Follows `cd DIR` / `pushd DIR`, so later relative paths resolve where they will run.
    fn change_directory(&mut self, command: &Command) {
        self.cds += 1;
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

    /// Walks code that may not run (after `&&` or `||`, a branch, a loop's body, a function's
    /// body): a `cd` in it leaves the directory unknown from there on.
    fn maybe<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.cds;
        let result = walk(self);
        if self.cds != before {
            self.cwd.clear();
        }
        result
    }

    fn finish(self) -> Reading {
        Reading {
            commands: self.out,
            notes: self.notes,
            failed: self.failed,
        }
    }

    fn note(&mut self, kind: NoteKind, reason: String) {
        self.notes.push(Note { kind, reason });
    }

    // ----- the syntax tree -----

    /// Parses and walks a shell string (the top level, a `bash -c` payload, a substitution).
    fn script(&mut self, text: &str, ctx: &Ctx) {
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
                self.sources.push(text.to_owned());
                for list in &program.complete_commands {
                    self.compound_list(list, ctx);
                }
                self.sources.pop();
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
            // A `cd` in the list holds for what follows it only while every operator so far is
            // `&&` (what runs then ran after it); after the list, only if it was in the first
            // pipeline, which always runs.
            // In the background, the list runs in a child shell: its `cd` stays there.
            let here = background.then(|| self.cwd.clone());
            self.pipeline(&and_or.first, &ctx);
            let after_first = self.cds;
            let mut all_and = true;
            for next in &and_or.additional {
                let p = match next {
                    ast::AndOr::And(p) => p,
                    ast::AndOr::Or(p) => {
                        all_and = false;
                        p
                    }
                };
                if !all_and && self.cds != after_first {
                    self.cwd.clear();
                }
                self.pipeline(p, &ctx);
            }
            if self.cds != after_first {
                self.cwd.clear();
            }
            if let Some(here) = here {
                self.cwd = here;
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: &Ctx) {
        let forks = ctx.forks || pipeline.seq.len() > 1;
        let mut strong = ctx.stdin.strong();
        let mut previous: Option<Feed> = None;
        let last = pipeline.seq.len().saturating_sub(1);
        for (k, command) in pipeline.seq.iter().enumerate() {
            let stdin = match previous.take() {
                None => ctx.stdin.clone(),
                Some(feed) => strong.clone().join(feed),
            };
            let start = self.out.len();
            let stage = Ctx {
                stdin,
                forks,
                captured: ctx.captured || k < last,
                ..ctx.clone()
            };
            if let Some(timed) = (k == 0).then(|| time_keyword(command)).flatten() {
                // bash's `time` keyword where the parser read a command named `time`: what
                // it times is read as bash reads it (assignments stay assignments).
                self.script(&timed, &stage);
            } else if pipeline.seq.len() > 1 {
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
    fn produced(&self, start: usize) -> Feed {
        let commands: Vec<&Command> = self.out[start..]
            .iter()
            .filter(|c| c.runs == Runs::Nothing)
            .collect();
        let feed = commands.iter().fold(Feed::Nothing, |feed, c| {
            let found = (c.name == "find").then(|| found_paths(&c.argv)).flatten();
            let own = if c.name.is_empty() && !c.argv.is_empty() {
                Feed::Unknown
            } else if let Some(root) = found {
                Feed::Found(root)
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
        let cwd = self.cwd.clone();
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
                // The body runs wherever the function is called.
                self.defining.push(name);
                let (here, before) = (std::mem::take(&mut self.cwd), self.cds);
                self.compound(&function.body.0, ctx);
                self.cwd = if self.cds == before {
                    here
                } else {
                    String::new()
                };
                self.defining.pop();
                &function.body.1
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, ctx);
                redirects
            }
        };
        self.group_redirects(start, &cwd, redirects.as_ref().map(|r| r.0.as_slice()), ctx);
    }

    /// Walks a loop (its condition and its body, `lists`): run again after a `cd` in any part
    /// of it, none of its commands has a directory known statically, nor has what follows the
    /// loop (it ran any number of times).
    fn body(&mut self, lists: &[&ast::CompoundList], ctx: &Ctx) {
        let (start, before) = (self.out.len(), self.cds);
        for list in lists {
            self.compound_list(list, ctx);
        }
        if self.cds != before {
            for command in &mut self.out[start..] {
                command.cwd.clear();
            }
            self.cwd.clear();
        }
    }

    /// `{ ..; } > file`: every command inside (since `start`) writes to `file`; with no
    /// command inside, the redirections are recorded alone.
    fn group_redirects(
        &mut self,
        start: usize,
        cwd: &str,
        redirects: Option<&[ast::IoRedirect]>,
        ctx: &Ctx,
    ) {
        let Some(redirects) = redirects.filter(|r| !r.is_empty()) else {
            return;
        };
        let mut group = Command::default();
        for r in redirects {
            self.redirect(r, &mut group, ctx);
        }
        // The files are opened where the group starts, not where a `cd` inside it leads.
        if !cwd.is_empty() {
            for a in group.writes.iter_mut().chain(group.reads.iter_mut()) {
                if !a.dynamic && !a.glob && !a.text.starts_with(['/', '~']) {
                    a.text = absolutize(&a.text, self.home, cwd);
                }
            }
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
        if !matches!(
            compound,
            C::BraceGroup(_) | C::Subshell(_) | C::Arithmetic(_)
        ) {
            return self.maybe(|x| x.branches(compound, ctx));
        }
        self.branches(compound, ctx);
    }

    /// The commands of a compound command.
    fn branches(&mut self, compound: &ast::CompoundCommand, ctx: &Ctx) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => match self.nested_subshells(&a.loc) {
                Some(inner) => self.in_child(|x| x.script(&inner, ctx)),
                None => {
                    self.nested_arithmetic_command();
                    self.arithmetic(&a.expr.value, ctx)
                }
            },
            C::ArithmeticForClause(f) => {
                self.nested_arithmetic_command();
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value, ctx);
                }
                self.body(&[&f.body.list], ctx);
            }
            C::BraceGroup(b) => self.compound_list(&b.list, ctx),
            C::Subshell(s) => self.in_child(|x| x.compound_list(&s.list, ctx)),
            C::ForClause(f) => {
                let mut values = Vec::new();
                for w in f.values.iter().flatten() {
                    values.extend(self.words(w, ctx));
                }
                // `for f in src/*.rs`: inside the body, `$f` is one of the words of the list;
                // with one word, it is known as well as that word is; with more, it is not
                // known, whatever an enclosing loop of the same variable bound it to.
                let value = match values.as_slice() {
                    [one] if !one.dynamic => one.clone(),
                    _ => Arg {
                        dynamic: true,
                        ..Arg::default()
                    },
                };
                self.bound.push((f.variable_name.clone(), value));
                self.body(&[&f.body.list], ctx);
                self.bound.pop();
                // After the loop the variable holds what the loop last gave it (or what it
                // held, when the list was empty): an enclosing loop's binding is gone.
                for (name, value) in &mut self.bound {
                    if *name == f.variable_name {
                        value.dynamic = true;
                    }
                }
            }
            C::CaseClause(c) => {
                self.words(&c.value, ctx);
                // One arm runs: each starts where the `case` does.
                let here = self.cwd.clone();
                for item in &c.cases {
                    self.cwd.clone_from(&here);
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
                let here = self.cwd.clone();
                self.compound_list(&i.then, ctx);
                for e in i.elses.iter().flatten() {
                    self.cwd.clone_from(&here);
                    if let Some(condition) = &e.condition {
                        self.compound_list(condition, ctx);
                    }
                    self.compound_list(&e.body, ctx);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.body(&[&w.0, &w.1.list], ctx);
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

    /// `( ( cmd ) )`, which brush-parser reads as the arithmetic command `(( cmd ))`, but bash
    /// only when the two parentheses touch: with a space between them, two nested subshells
    /// running `cmd`. The text inside the outer one, then.
    fn nested_subshells(&self, loc: &brush_parser::SourceSpan) -> Option<String> {
        let source = self.sources.last()?;
        let text: String = source
            .chars()
            .skip(loc.start.index)
            .take(loc.end.index.saturating_sub(loc.start.index))
            .collect();
        let inside = text.strip_prefix('(')?.strip_suffix(')')?;
        (!inside.starts_with('(')).then(|| inside.to_owned())
    }

    /// An arithmetic command (`(( .. ))`, `for (( .. ))`) inside a substitution: having met
    /// its `((` inside `$( .. )`, brush-parser's tokenizer stays in arithmetic mode past the
    /// substitution's end and reads a later `<<` as a shift, so a here-document after it is read
    /// as commands and words (`$( ((1)) ); bash <<E` with `rm -rf ~` in the document). Found
    /// by the differential test against bash: noted when the text around the substitution has
    /// a `<<`.
    fn nested_arithmetic_command(&mut self) {
        if self.substitution_before_heredoc {
            self.note(
                NoteKind::Unparseable,
                "a here-document after an arithmetic command inside a substitution cannot be read reliably".into(),
            );
        }
    }

    /// An arithmetic expression (`(( .. ))`, `$(( .. ))`, `let`, an operand of `-eq`): a
    /// command substitution or an array subscript with an expansion in it runs code when it is
    /// evaluated, even from a quoted string. The commands inside are walked, so they are judged.
    fn arithmetic(&mut self, expr: &str, ctx: &Ctx) {
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
    fn assigned(&mut self, name: &str, value: &Arg) {
        if runs_in_subscript(&value.text) || value.text.contains("$(") || value.text.contains('`') {
            self.subscripted.push(name.to_owned());
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: &Ctx) {
        let mut inv = Command {
            env: ctx.env.clone(),
            stdin: ctx.stdin.clone(),
            wrappers: ctx.wrappers.clone(),
            piped: ctx.captured,
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
            captured: true,
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
            found_in: None,
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
                let input = if doc.requires_expansion {
                    // The body expands like a double-quoted string in which `"` is literal.
                    match scan(&format!("\"{}\"", text.replace('"', "\\\""))) {
                        Ok(pieces) => {
                            let mut arg = Arg::default();
                            self.pieces(&pieces, &mut arg, ctx);
                            arg
                        }
                        Err(_) => Arg::unknown(text.clone()),
                    }
                } else {
                    Arg::literal(text.clone())
                };
                inv.stdin = fed(&input);
                inv.input = Some(input);
            }
            ast::IoRedirect::HereString(_, w) => {
                let input = self.word(&w.value, ctx);
                inv.stdin = fed(&input);
                inv.input = Some(input);
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let arg = self.word(&w.value, ctx);
                inv.writes.push(arg);
            }
        }
    }

    // ----- words -----

    /// A word as the command receives it; brace expansion may turn it into several.
    fn words(&mut self, w: &ast::Word, ctx: &Ctx) -> Vec<Arg> {
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

    fn word(&mut self, raw: &str, ctx: &Ctx) -> Arg {
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

    fn pieces(&mut self, pieces: &[Piece], arg: &mut Arg, ctx: &Ctx) {
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
                Piece::Parameter { name, source } => match (
                    name.as_deref(),
                    // The innermost loop of that variable binds it (to a word not known: then
                    // it is not known).
                    name.as_deref().and_then(|n| {
                        self.bound
                            .iter()
                            .rev()
                            .find(|(b, _)| b == n)
                            .map(|(_, value)| value)
                            .filter(|value| !value.dynamic)
                            .cloned()
                    }),
                ) {
                    (Some("HOME"), _) => arg.text.push_str(self.home),
                    (Some("PWD"), _) if !self.cwd.is_empty() => {
                        let cwd = self.cwd.clone();
                        arg.text.push_str(&cwd);
                    }
                    (Some(_), Some(value)) => {
                        arg.text.push_str(&value.text);
                        arg.glob |= value.glob;
                    }
                    (other, _) => {
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
                        captured: true,
                        ..ctx.clone()
                    };
                    let before_heredoc = source.starts_with("$(")
                        && self.sources.last().is_some_and(|text| text.contains("<<"));
                    let outer = self.substitution_before_heredoc;
                    self.substitution_before_heredoc |= before_heredoc;
                    self.in_child(|x| x.script(script, &inner));
                    self.substitution_before_heredoc = outer;
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

    // ----- what commands run -----

    /// Records one simple command, looking through the wrappers that run another command.
    fn run(&mut self, mut inv: Command, ctx: &Ctx) {
        for (name, value) in &inv.env {
            let feed = value.feed.strong();
            if feed != Feed::Nothing {
                self.tainted.push((name.clone(), feed));
            }
        }
        let Some(head) = inv.argv.first() else {
            self.record(inv);
            return;
        };
        if head.dynamic || head.glob {
            let (kind, why) = match head.feed {
                Feed::Network => (
                    NoteKind::RemoteCode,
                    "runs a command name downloaded from the network",
                ),
                Feed::Decoded => (
                    NoteKind::DecodedPayload,
                    "runs a command name decoded at run time",
                ),
                _ => (
                    NoteKind::DynamicCommand,
                    "the command word is only known when it runs",
                ),
            };
            self.note(kind, format!("{why}: `{}`", inv.display()));
            inv.name.clear();
            self.record(inv);
            return;
        }
        let name = program_name(&head.text);
        if self.defining.contains(&name) && ctx.forks {
            self.note(
                NoteKind::ForkBomb,
                format!("`{name}` calls itself in a pipeline or in the background: a fork bomb"),
            );
        }
        inv.name = name;
        if SUBSCRIPT_BUILTINS.contains(&inv.name.as_str()) {
            let all = inv.name == "let";
            for a in inv.args().to_vec() {
                if all || a.text.contains('[') {
                    self.arithmetic(&a.text, ctx);
                }
                if let Some((name, value)) = a.assignment() {
                    self.assigned(&name, &value);
                }
            }
        }
        let plan = plan(inv);
        self.follow(plan, ctx);
    }

    /// Carries out the steps of one command's plan.
    fn follow(&mut self, plan: Plan, ctx: &Ctx) {
        let Plan { command, steps } = plan;
        let last = steps.len().saturating_sub(1);
        let mut command = Some(command);
        for (k, step) in steps.into_iter().enumerate() {
            let inv = command.as_ref().expect("taken only by the last step");
            match step {
                Step::Note(kind, reason) => self.note(kind, reason),
                Step::Record(runs) => {
                    let recorded = if k == last {
                        command.take().expect("the command is still there")
                    } else {
                        inv.clone()
                    };
                    self.record(Command { runs, ..recorded });
                }
                Step::Wrap { start } => {
                    let inv = command.take().expect("the command is still there");
                    self.run_inner(inv, start, ctx);
                }
                Step::Code(code) => self.code_arg(&code, inv, ctx),
                Step::Words(words) => self.code_words(&words, inv, ctx),
                Step::Stdin { shell } => self.stdin_code(inv, shell, ctx),
                Step::Run(each) => self.run(*each, ctx),
                Step::ChangeDirectory => self.change_directory(inv),
                Step::LeaveDirectory => {
                    self.cds += 1;
                    self.cwd.clear();
                }
            }
        }
    }

    /// Records the wrapper, then runs what it runs: `inv.argv[start..]`, after any
    /// `NAME=value` words, which are its environment (as `env` reads them: any name).
    fn run_inner(&mut self, inv: Command, start: usize, ctx: &Ctx) {
        let mut i = start.min(inv.argv.len());
        let mut env = inv.env.clone();
        while let Some(assignment) = inv.argv.get(i).and_then(Arg::env_assignment) {
            env.push(assignment);
            i += 1;
        }
        if i >= inv.argv.len() {
            // The wrapper runs nothing (`sudo -i`, `env`, `nohup`): judge it alone.
            self.record(Command { env, ..inv });
            return;
        }
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        let inner = Command {
            name: String::new(),
            argv: inv.argv[i..].to_vec(),
            env,
            writes: inv.writes,
            reads: inv.reads,
            stdin: inv.stdin.clone(),
            input: inv.input,
            piped: inv.piped,
            cwd: String::new(),
            wrappers,
            runs: Runs::Nothing,
        };
        self.record(Command {
            name: inv.name,
            argv: inv.argv,
            env: inv.env,
            stdin: inv.stdin,
            piped: inv.piped,
            wrappers: inv.wrappers,
            runs: Runs::Command { at: start },
            ..Command::default()
        });
        self.run(inner, ctx);
    }

    /// Code passed as one argument (`bash -c CODE`, `su -c CODE`, `alias x=CODE`).
    fn code_arg(&mut self, code: &Arg, inv: &Command, ctx: &Ctx) {
        if code.dynamic {
            self.dynamic_code(&code.feed, &code.text, inv);
            return;
        }
        let inner = self.inner_ctx(inv, ctx);
        // Another shell (or code run later): a loop variable bound here is not its value.
        let bound = std::mem::take(&mut self.bound);
        self.in_child(|x| x.script(&code.text, &inner));
        self.bound = bound;
    }

    /// Code passed as words joined by spaces (`eval`, `watch`).
    fn code_words(&mut self, words: &[Arg], inv: &Command, ctx: &Ctx) {
        if let Some(dynamic) = words.iter().find(|a| a.dynamic) {
            let feed = words
                .iter()
                .fold(Feed::Nothing, |f, a| f.join(a.feed.strong()));
            self.dynamic_code(&feed, &dynamic.text, inv);
            return;
        }
        let code = words
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let inner = self.inner_ctx(inv, ctx);
        if inv.name == "eval" {
            self.script(&code, &inner);
        } else {
            self.in_child(|x| x.script(&code, &inner));
        }
    }

    fn dynamic_code(&mut self, feed: &Feed, shown: &str, inv: &Command) {
        match feed {
            Feed::Network => self.note(
                NoteKind::RemoteCode,
                format!("runs code downloaded from the network: `{}`", inv.display()),
            ),
            Feed::Decoded => self.note(
                NoteKind::DecodedPayload,
                format!("runs code decoded at run time: `{}`", inv.display()),
            ),
            _ => self.note(
                NoteKind::DynamicCode,
                format!(
                    "the code `{}` runs (`{shown}`) is only known when it runs",
                    inv.display()
                ),
            ),
        }
    }

    /// A shell or interpreter reading the code it runs from its standard input.
    fn stdin_code(&mut self, inv: &Command, shell: bool, ctx: &Ctx) {
        match &inv.stdin {
            Feed::Network => self.note(
                NoteKind::RemoteCode,
                format!("pipes code downloaded from the network into `{}`", inv.name),
            ),
            Feed::Decoded => self.note(
                NoteKind::DecodedPayload,
                format!("pipes decoded or unpacked code into `{}`", inv.name),
            ),
            Feed::Unknown | Feed::Found(_) => self.note(
                NoteKind::StdinScript,
                format!(
                    "`{}` runs code from its input, which cannot be checked",
                    inv.name
                ),
            ),
            Feed::Text(code) if shell => {
                let inner = Ctx {
                    stdin: Feed::Nothing,
                    ..self.inner_ctx(inv, ctx)
                };
                if matches!(inv.name.as_str(), "source" | ".") {
                    self.script(code, &inner);
                } else {
                    let bound = std::mem::take(&mut self.bound);
                    self.in_child(|x| x.script(code, &inner));
                    self.bound = bound;
                }
            }
            Feed::Text(_) | Feed::Nothing => {}
        }
    }

    fn inner_ctx(&self, inv: &Command, ctx: &Ctx) -> Ctx {
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        Ctx {
            stdin: inv.stdin.clone(),
            wrappers,
            env: inv.env.clone(),
            depth: ctx.depth + 1,
            forks: ctx.forks,
            captured: inv.piped,
        }
    }
}

/// What a here-document or here-string feeds a command: its text, when known.
fn fed(input: &Arg) -> Feed {
    if input.dynamic {
        input.feed.strong().join(Feed::Unknown)
    } else {
        Feed::Text(input.text.clone())
    }
}

/// Whether an array subscript in `expr` holds an expansion (`a[$i]`, `a[$(id)]`), which
/// arithmetic evaluation runs.
fn runs_in_subscript(expr: &str) -> bool {
    expr.split('[')
        .skip(1)
        .any(|inside| inside.contains('$') || inside.contains('`'))
}

/// The pipeline `command` times, as text, when it is a simple command whose unquoted first word
/// is `time`: bash reads `time` as its keyword at the start of a pipeline, after `!` and after
/// another `time` (`! time A=1 cmd`), where the parser reads a program named `time` (whose
/// `A=1` would be an argument, brace-expanded). After a `|` it is the program.
fn time_keyword(command: &ast::Command) -> Option<String> {
    let ast::Command::Simple(simple) = command else {
        return None;
    };
    if simple.prefix.is_some() || simple.word_or_name.as_ref()?.value != "time" {
        return None;
    }
    let items = simple.suffix.as_ref().map_or(&[][..], |s| &s.0[..]);
    let options = items
        .iter()
        .take_while(|item| {
            matches!(item, ast::CommandPrefixOrSuffixItem::Word(w) if w.value == "-p" || w.value == "--")
        })
        .count();
    let rest: Vec<String> = items[options..].iter().map(ToString::to_string).collect();
    Some(rest.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        read_shell(text, "/home/u", "/w")
            .commands
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    #[test]
    fn spaced_parentheses_are_subshells_not_arithmetic() {
        // Found by the differential test against bash: brush-parser reads `( ( cmd ) )` as
        // `(( cmd ))`, but bash runs `cmd` in two subshells.
        assert_eq!(names("( ( rm -rf x && id ) )"), ["rm", "id"]);
        assert_eq!(names("x; ( (rm a) ) > f"), ["x", "rm"]);
        assert_eq!(names("( ( ( id ) ) )"), ["id"]);
        assert!(names("((i++)); (( x + 1 ))").is_empty());
    }

    #[test]
    fn a_here_document_after_arithmetic_in_a_substitution_is_noted() {
        // Found by the differential test against bash: brush-parser reads the document's
        // lines as words of `bash` and a command `E`.
        for text in [
            "x $( (( 1 )) ); bash <<'E'\nrm -rf ~\nE",
            "x \"$( for ((i=0;i<2;i++)); do p; done )\"; bash <<E\nrm -rf ~\nE",
        ] {
            let reading = read_shell(text, "/h", "/w");
            assert!(
                reading
                    .notes
                    .iter()
                    .any(|n| n.kind == NoteKind::Unparseable),
                "{text}: {:?}",
                reading.notes
            );
        }
        // Without a here-document, or outside a substitution, nothing is lost.
        assert!(read_shell("x $( (( 1 )) ); p", "/h", "/w").notes.is_empty());
        assert!(
            read_shell("(( 1 )); bash <<E\np\nE", "/h", "/w")
                .notes
                .is_empty()
        );
        assert!(
            read_shell("cat <<E\np\nE\nbash -c '(( 1 ))'", "/h", "/w")
                .notes
                .is_empty()
        );
    }

    #[test]
    fn found_against_bash() {
        // A loop variable is not set in the shell `bash -c` starts.
        let reading = read_shell(
            "for x in a; do bash -c 'p \"$x\"'; p \"$x\"; done",
            "/h",
            "/w",
        );
        let p: Vec<_> = reading.commands.iter().filter(|c| c.name == "p").collect();
        assert!(p[0].argv[1].dynamic);
        assert!(p[1].argv[1].is("a"));
        // A list in the background runs in a child shell: its `cd` stays there.
        let reading = read_shell("cd d && a || b & wait; c", "/h", "/w");
        assert_eq!(reading.commands.last().map(|c| c.cwd.as_str()), Some("/w"));
    }

    #[test]
    fn a_cd_that_may_not_run_leaves_the_directory_unknown() {
        // Found by the differential test against bash: `a || cd d && b` runs `b` in `/w`
        // when `a` succeeds.
        let cwds = |text: &str| -> Vec<String> {
            read_shell(text, "/home/u", "/w")
                .commands
                .iter()
                .map(|c| c.cwd.clone())
                .collect()
        };
        assert_eq!(cwds("cd d && b"), ["/w/d", "/w/d"]);
        assert_eq!(cwds("a || cd d && b; c"), ["/w", "/w/d", "", ""]);
        assert_eq!(cwds("if a; then cd d; fi; b"), ["/w", "/w/d", ""]);
        assert_eq!(cwds("a && cd d && b; c"), ["/w", "/w/d", "/w/d", ""]);
        assert_eq!(cwds("f() { cd d; }; b"), ["", ""]);
        assert_eq!(cwds("f() { c; }; cd /t; f"), ["", "/t", "/t"]);
        assert_eq!(cwds("( cd d; b ); c"), ["/w/d", "/w/d", "/w"]);
        assert_eq!(cwds("for x in a b; do cd d; b; done"), ["", ""]);
        // A loop's condition runs again after a `cd` in its body; what follows the loop runs
        // where the last iteration left it.
        assert_eq!(cwds("while a; do cd d; b; done; c"), ["", "", "", ""]);
        assert_eq!(cwds("until a; do b; done; c"), ["/w", "/w", "/w"]);
        assert_eq!(cwds("case x in a) cd d;; *) b;; esac"), ["/w/d", "/w"]);
        let reading = read_shell("{ cd d && b; } > f", "/home/u", "/w");
        assert_eq!(reading.commands[1].writes[0].text, "/w/f");
    }

    #[test]
    fn an_inner_loop_of_the_same_variable_hides_the_outer_binding() {
        // Found by the differential test against bash: the inner loop's `$y` is `1` or `3`,
        // never the outer `--k=v`.
        let reading = read_shell(
            "for y in --k=v; do for y in 1 $((1 + 2)); do p \"$y\"; done; p \"$y\"; done",
            "/h",
            "/w",
        );
        let p: Vec<_> = reading.commands.iter().filter(|c| c.name == "p").collect();
        assert!(p[0].argv[1].dynamic, "{reading:?}");
        // After the inner loop `$y` is its last word, `3`.
        assert!(p[1].argv[1].dynamic, "{reading:?}");
        let reading = read_shell("for y in a; do p \"$y\"; done", "/h", "/w");
        assert!(reading.commands[0].argv[1].is("a"), "{reading:?}");
    }

    #[test]
    fn time_after_a_bang_is_the_keyword_and_an_alias_is_a_definition() {
        // Found by the differential test against bash: after `!`, `time` is bash's keyword,
        // so `C=x{1,2}` is an assignment for `p`, not a brace-expanded argument of `time`.
        let reading = read_shell("! time -p C=x{1,2} p a > o", "/h", "/w");
        let [p] = &reading.commands[..] else {
            panic!("{reading:?}")
        };
        assert_eq!((p.name.as_str(), p.env[0].1.text.as_str()), ("p", "x{1,2}"));
        assert_eq!(p.writes.len(), 1, "the redirection stays");
        // After a pipe it is the program `time`.
        assert_eq!(names("a | time b"), ["a", "time", "b"]);
        // `sh` expands aliases: a later line's `x` runs `p b`, so the reading says it
        // cannot see every command (the reader does not expand aliases).
        let reading = read_shell("sh -c 'alias x=\"p b\"\nx a'", "/h", "/w");
        assert!(
            reading
                .notes
                .iter()
                .any(|n| n.kind == NoteKind::DynamicCode),
            "{reading:?}"
        );
    }
}
