//! From a shell string (or an argv) to the list of simple commands it would run.
//!
//! The shell string is parsed with `brush-parser`; every simple command anywhere in it
//! (lists, pipelines, subshells, brace groups, loops, conditionals, function bodies, command and
//! process substitutions) is collected, with its words resolved as the shell would resolve them
//! (quotes, escapes, `$'..'`, brace expansion, `~`, `$HOME`). Wrappers that run another command
//! (`sudo`, `env`, `timeout`, `xargs`, `find -exec`, `bash -c`, `eval`, ...) are looked through, so
//! the command they run is judged too. What cannot be known without running it (a command word
//! in a variable, `eval "$X"`) becomes a finding, never a pass.

use brush_parser::ast;
use brush_parser::word;
use brush_parser::{Parser, ParserOptions};

use crate::judgement::Finding;
use crate::programs::{command_name, is_escalator, is_interpreter, is_shell, produces};
use crate::words::{Arg, Feed, expand_braces};
use acp_gate_shell::{Piece, scan};

/// How deeply `bash -c`, `eval` and substitutions may nest before the checker gives up (and asks).
pub const MAX_DEPTH: u32 = 12;
/// Commands longer than this are not parsed (and are asked about).
pub const MAX_INPUT: usize = 128 * 1024;
/// The most words one brace expansion may produce.
const MAX_BRACE_WORDS: usize = 64;

/// One simple command, after wrappers have been looked through.
#[derive(Clone, Debug, Default)]
pub struct Invocation {
    /// The program's normalised name (`/bin/RM` -> `rm`); empty when there is no command word
    /// (a bare assignment or redirection) or it is not known statically.
    pub name: String,
    /// The words, the command word first.
    pub argv: Vec<Arg>,
    /// Variables set for it: prefix assignments, `env NAME=value`, `sudo NAME=value`.
    pub env: Vec<(String, Arg)>,
    /// Files its redirections write to.
    pub writes: Vec<Arg>,
    /// Files its redirections read from.
    pub reads: Vec<Arg>,
    /// What its standard input carries.
    pub stdin: Feed,
    /// The directory it runs in (after any `cd` before it); empty when not known statically.
    pub cwd: String,
    /// The wrappers it runs under, outermost first (`sudo`, `timeout`, `xargs`, `bash`, ...).
    pub wrappers: Vec<String>,
}

impl Invocation {
    /// The arguments after the command word.
    pub fn args(&self) -> &[Arg] {
        self.argv.get(1..).unwrap_or_default()
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

/// Everything the checker learned from one command.
#[derive(Debug, Default)]
pub struct Analysis {
    pub invocations: Vec<Invocation>,
    /// Findings about the command's structure (parse failures, dynamic code, fork bombs,
    /// remote code piped into a shell); rules about single invocations come later.
    pub findings: Vec<Finding>,
}

/// Parses a shell string and collects every simple command in it.
pub fn analyse_shell(text: &str, home: &str, cwd: &str) -> Analysis {
    let mut extractor = Extractor::new(home, cwd);
    extractor.script(text, &Ctx::default());
    extractor.finish()
}

/// Collects what an argv (run without a shell) would run.
pub fn analyse_argv(argv: &[String], home: &str, cwd: &str) -> Analysis {
    let mut extractor = Extractor::new(home, cwd);
    let inv = Invocation {
        argv: argv.iter().map(Arg::literal).collect(),
        ..Invocation::default()
    };
    extractor.run(inv, &Ctx::default());
    extractor.finish()
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
}

struct Extractor<'a> {
    home: &'a str,
    /// The shell's working directory at this point of the walk; empty once it is unknown.
    cwd: String,
    options: ParserOptions,
    out: Vec<Invocation>,
    findings: Vec<Finding>,
    /// Functions whose bodies are being walked (for fork bombs).
    defining: Vec<String>,
    /// Variables assigned from the network or a decoder (`a=$(curl ..)`), so `$a` carries it.
    tainted: Vec<(String, Feed)>,
}

impl<'a> Extractor<'a> {
    fn new(home: &'a str, cwd: &'a str) -> Self {
        Self {
            home: if home.is_empty() { "~" } else { home },
            cwd: cwd.to_owned(),
            options: ParserOptions::default(),
            out: Vec::new(),
            findings: Vec::new(),
            defining: Vec::new(),
            tainted: Vec::new(),
        }
    }

    /// Adds an invocation to the result, in the directory the shell is in at that point.
    fn record(&mut self, mut inv: Invocation) {
        inv.cwd.clone_from(&self.cwd);
        self.out.push(inv);
    }

    /// Runs `walk` in a child shell: a `cd` inside it does not change the parent's directory.
    fn in_child<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.cwd.clone();
        let result = walk(self);
        self.cwd = saved;
        result
    }

    /// Follows `cd DIR` / `pushd DIR`, so later relative paths resolve where they will run.
    fn change_directory(&mut self, inv: &Invocation) {
        let operand = inv
            .args()
            .iter()
            .find(|a| a.dynamic || !a.text.starts_with('-') || a.text == "-");
        self.cwd = match operand {
            None => self.home.to_owned(),
            Some(a) if a.dynamic || a.text == "-" => String::new(),
            Some(a) if a.text.starts_with('/') || a.text.starts_with('~') => {
                crate::paths::absolutize(&a.text, self.home, "/")
            }
            Some(_) if self.cwd.is_empty() => String::new(),
            Some(a) => crate::paths::absolutize(&a.text, self.home, &self.cwd),
        };
    }

    fn finish(self) -> Analysis {
        Analysis {
            invocations: self.out,
            findings: self.findings,
        }
    }

    fn ask(&mut self, rule: &'static str, reason: String) {
        self.findings.push(Finding::ask(rule, reason));
    }

    fn deny(&mut self, rule: &'static str, reason: String) {
        self.findings.push(Finding::deny(rule, reason));
    }

    // ----- the syntax tree -----

    /// Parses and walks a shell string (the top level, a `bash -c` payload, a substitution).
    fn script(&mut self, text: &str, ctx: &Ctx) {
        if ctx.depth > MAX_DEPTH {
            self.ask(
                "too-complex",
                "the command nests shells and substitutions too deeply to check".into(),
            );
            return;
        }
        if text.len() > MAX_INPUT {
            self.ask(
                "too-complex",
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
            Err(e) => self.ask(
                "unparseable",
                format!("the command cannot be parsed as a shell command ({e})"),
            ),
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

    /// What the invocations collected since `start` write to their standard output.
    fn produced(&self, start: usize) -> Feed {
        let invocations = &self.out[start..];
        let feed = invocations.iter().fold(Feed::Nothing, |feed, inv| {
            let own = if inv.name.is_empty() && !inv.argv.is_empty() {
                Feed::Unknown
            } else {
                produces(&inv.name, &inv.argv)
            };
            feed.join(own)
        });
        match feed {
            Feed::Text(_) if invocations.len() > 1 => Feed::Unknown,
            Feed::Nothing => Feed::Unknown,
            feed => feed,
        }
    }

    fn command(&mut self, command: &ast::Command, ctx: &Ctx) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, ctx),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, ctx);
                self.redirect_only(redirects.as_ref().map(|r| r.0.as_slice()), ctx);
            }
            ast::Command::Function(function) => {
                let name = command_name(&function.fname.value);
                self.defining.push(name);
                self.compound(&function.body.0, ctx);
                self.defining.pop();
                self.redirect_only(function.body.1.as_ref().map(|r| r.0.as_slice()), ctx);
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, ctx);
                self.redirect_only(redirects.as_ref().map(|r| r.0.as_slice()), ctx);
            }
        }
    }

    /// The redirections of a compound command, as an invocation with no command word.
    fn redirect_only(&mut self, redirects: Option<&[ast::IoRedirect]>, ctx: &Ctx) {
        let Some(redirects) = redirects.filter(|r| !r.is_empty()) else {
            return;
        };
        let mut inv = Invocation::default();
        for r in redirects {
            self.redirect(r, &mut inv, ctx);
        }
        self.record(inv);
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
            E::BinaryTest(_, a, b) => {
                self.words(a, ctx);
                self.words(b, ctx);
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: &Ctx) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => self.arithmetic(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.compound_list(&f.body.list, ctx);
            }
            C::BraceGroup(b) => self.compound_list(&b.list, ctx),
            C::Subshell(s) => self.in_child(|x| x.compound_list(&s.list, ctx)),
            C::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.words(w, ctx);
                }
                self.compound_list(&f.body.list, ctx);
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

    fn arithmetic(&mut self, expr: &str) {
        if expr.contains("$(") || expr.contains('`') {
            self.ask(
                "dynamic-code",
                "a command substitution inside an arithmetic expression cannot be checked".into(),
            );
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: &Ctx) {
        let mut inv = Invocation {
            env: ctx.env.clone(),
            stdin: ctx.stdin.clone(),
            wrappers: ctx.wrappers.clone(),
            ..Invocation::default()
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
        inv: &mut Invocation,
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
                        ast::AssignmentName::VariableName(n)
                        | ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                    };
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
            feed,
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, inv: &mut Invocation, ctx: &Ctx) {
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
                        &command_name(inv.argv.first().map_or("", |a| a.text.as_str())),
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
                self.ask(
                    "unparseable",
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
                Piece::Parameter { name, source } => match name.as_deref() {
                    Some("HOME") => arg.text.push_str(self.home),
                    Some("PWD") if !self.cwd.is_empty() => {
                        let cwd = self.cwd.clone();
                        arg.text.push_str(&cwd);
                    }
                    other => {
                        arg.dynamic = true;
                        arg.text.push_str(source);
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
                    self.arithmetic(expr);
                }
            }
        }
    }

    // ----- looking through wrappers -----

    /// Records one simple command, looking through the wrappers that run another command.
    fn run(&mut self, mut inv: Invocation, ctx: &Ctx) {
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
            let reason = match head.feed {
                Feed::Network => Some((
                    "remote-code",
                    "runs a command name downloaded from the network",
                )),
                Feed::Decoded => {
                    Some(("decoded-payload", "runs a command name decoded at run time"))
                }
                _ => None,
            };
            match reason {
                Some((rule, why)) => self.deny(rule, format!("{why}: `{}`", inv.display())),
                None => self.ask(
                    "dynamic-command",
                    format!(
                        "the command word `{}` is only known when it runs",
                        head.text
                    ),
                ),
            }
            inv.name.clear();
            self.record(inv);
            return;
        }
        let name = command_name(&head.text);
        if self.defining.contains(&name) && ctx.forks {
            self.deny(
                "fork-bomb",
                format!("`{name}` calls itself in a pipeline or in the background: a fork bomb"),
            );
        }
        inv.name = name;
        match inv.name.as_str() {
            "sudo" => self.wrapper(
                inv,
                &[
                    "-u",
                    "-g",
                    "-C",
                    "-D",
                    "-h",
                    "-p",
                    "-r",
                    "-t",
                    "-U",
                    "-T",
                    "-R",
                    "--user",
                    "--group",
                    "--close-from",
                    "--chdir",
                    "--host",
                    "--prompt",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
                0,
                ctx,
            ),
            "doas" => self.wrapper(inv, &["-u", "-C"], 0, ctx),
            "pkexec" | "run0" => self.wrapper(
                inv,
                &[
                    "--user",
                    "-u",
                    "--unit",
                    "--property",
                    "--slice",
                    "--chdir",
                    "-D",
                    "--setenv",
                    "--nice",
                    "--description",
                ],
                0,
                ctx,
            ),
            "su" | "runuser" | "ksu" => self.su(inv, ctx),
            "env" => self.env(inv, ctx),
            "timeout" => self.wrapper(inv, &["-s", "-k", "--signal", "--kill-after"], 1, ctx),
            "nice" => self.wrapper(inv, &["-n", "--adjustment"], 0, ctx),
            "ionice" => self.wrapper(
                inv,
                &[
                    "-c",
                    "-n",
                    "-p",
                    "-P",
                    "-u",
                    "--class",
                    "--classdata",
                    "--pid",
                    "--pgid",
                    "--uid",
                ],
                0,
                ctx,
            ),
            "stdbuf" => self.wrapper(
                inv,
                &["-i", "-o", "-e", "--input", "--output", "--error"],
                0,
                ctx,
            ),
            "time" => self.wrapper(inv, &["-f", "-o", "--format", "--output"], 0, ctx),
            "nohup" | "setsid" | "unbuffer" | "builtin" | "catchsegv" | "torsocks"
            | "dbus-run-session" | "nocache" | "eatmydata" | "fakeroot" | "tsocks" | "sg" => {
                self.wrapper(inv, &[], 0, ctx)
            }
            "exec" => self.wrapper(inv, &["-a"], 0, ctx),
            "caffeinate" => self.wrapper(inv, &["-t", "-w"], 0, ctx),
            "proxychains" | "proxychains4" => self.wrapper(inv, &["-f"], 0, ctx),
            "chrt" | "taskset" => {
                let skip = usize::from(!inv.args().iter().any(|a| a.is("-p") || a.is("--pid")));
                self.wrapper(inv, &["-T", "-P", "-D"], skip, ctx)
            }
            "chroot" => self.wrapper(inv, &["--userspec", "--groups"], 1, ctx),
            "flock" => self.flock(inv, ctx),
            "xvfb-run" => self.wrapper(
                inv,
                &[
                    "-n",
                    "-s",
                    "-f",
                    "-e",
                    "-p",
                    "--server-num",
                    "--server-args",
                    "--auth-file",
                    "--error-file",
                    "--xauth-protocol",
                ],
                0,
                ctx,
            ),
            "command" => {
                let lookup = inv
                    .args()
                    .iter()
                    .take_while(|a| a.text.starts_with('-'))
                    .any(|a| a.text.contains(['v', 'V']));
                if lookup {
                    self.record(inv)
                } else {
                    self.wrapper(inv, &[], 0, ctx)
                }
            }
            "busybox" | "toybox" => {
                if inv.argv.len() > 1 {
                    inv.argv.remove(0);
                    self.run(inv, ctx);
                } else {
                    self.record(inv);
                }
            }
            "cd" | "pushd" => {
                self.change_directory(&inv);
                self.record(inv);
            }
            "xargs" => self.xargs(inv, ctx),
            "find" => self.find(inv, ctx),
            "fd" | "fdfind" => self.fd(inv, ctx),
            "watch" => self.watch(inv, ctx),
            "eval" => {
                let args = inv.args().to_vec();
                self.code_words(&args, &inv, ctx);
            }
            "source" | "." => {
                match inv.argv.get(1) {
                    Some(a) if a.dynamic => self.code_arg(a, &inv, ctx),
                    Some(a)
                        if matches!(
                            a.text.as_str(),
                            "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0"
                        ) =>
                    {
                        self.stdin_code(&inv, true, ctx)
                    }
                    _ => {}
                }
                self.record(inv);
            }
            "alias" => {
                for a in inv.args().to_vec() {
                    if let Some((_, value)) = a.text.split_once('=') {
                        let value = Arg {
                            text: value.to_owned(),
                            ..a.clone()
                        };
                        self.code_arg(&value, &inv, ctx);
                    }
                }
                self.record(inv);
            }
            name if is_shell(name) => self.shell(inv, ctx),
            name if is_interpreter(name) => self.interpreter(inv, ctx),
            _ => self.record(inv),
        }
    }

    /// A wrapper whose options are followed by `skip` operands and then the command it runs.
    /// `NAME=value` words before that command are taken as its environment.
    fn wrapper(&mut self, inv: Invocation, valued: &[&str], skip: usize, ctx: &Ctx) {
        let start = operand_start(&inv.argv, 1, valued) + skip;
        self.run_inner(inv, start, ctx);
    }

    fn run_inner(&mut self, inv: Invocation, start: usize, ctx: &Ctx) {
        let mut i = start.min(inv.argv.len());
        let mut env = inv.env.clone();
        while let Some(assignment) = inv.argv.get(i).and_then(Arg::assignment) {
            env.push(assignment);
            i += 1;
        }
        if i >= inv.argv.len() {
            // The wrapper runs nothing (`sudo -i`, `env`, `nohup`): judge it alone.
            self.record(Invocation { env, ..inv });
            return;
        }
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        let inner = Invocation {
            name: String::new(),
            argv: inv.argv[i..].to_vec(),
            env,
            writes: inv.writes,
            reads: inv.reads,
            stdin: inv.stdin,
            cwd: String::new(),
            wrappers,
        };
        self.run(inner, ctx);
    }

    fn env(&mut self, inv: Invocation, ctx: &Ctx) {
        let mut i = 1;
        while let Some(a) = inv.argv.get(i) {
            let t = a.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if matches!(t, "-S" | "--split-string")
                || t.starts_with("-S")
                || t.starts_with("--split-string=")
            {
                // `env -S 'cmd args'` splits its argument into words, as a shell would.
                let split = match t {
                    "-S" | "--split-string" => inv.argv.get(i + 1).cloned().unwrap_or_default(),
                    _ => Arg {
                        text: t
                            .trim_start_matches("--split-string=")
                            .trim_start_matches("-S")
                            .to_owned(),
                        ..a.clone()
                    },
                };
                let skip = if matches!(t, "-S" | "--split-string") {
                    2
                } else {
                    1
                };
                let mut words = vec![split];
                words.extend(inv.argv.get(i + skip..).unwrap_or_default().iter().cloned());
                self.code_words(&words, &inv, ctx);
                return;
            }
            if !t.starts_with('-') || t == "-" {
                if t == "-" {
                    i += 1;
                }
                break;
            }
            i += if matches!(t, "-u" | "-C" | "--unset" | "--chdir") {
                2
            } else {
                1
            };
        }
        // Its NAME=value words are the environment of the command it runs.
        self.run_inner(inv, i, ctx);
    }

    fn su(&mut self, inv: Invocation, ctx: &Ctx) {
        // `su -c CMD`, `runuser -u USER -- CMD`, `su - user`.
        let args = inv.args();
        if let Some(k) = args.iter().position(|a| {
            matches!(a.text.as_str(), "-c" | "--command") || a.text.starts_with("--command=")
        }) {
            let payload = if args[k].text.starts_with("--command=") {
                Some(Arg {
                    text: args[k].text["--command=".len()..].to_owned(),
                    ..args[k].clone()
                })
            } else {
                args.get(k + 1).cloned()
            };
            if let Some(payload) = payload {
                self.code_arg(&payload, &inv, ctx);
            }
            self.record(Invocation {
                argv: inv.argv[..1].to_vec(),
                ..inv
            });
            return;
        }
        if let Some(k) = args.iter().position(|a| a.is("--")) {
            self.run_inner(inv, k + 2, ctx);
            return;
        }
        self.record(inv);
    }

    fn flock(&mut self, inv: Invocation, ctx: &Ctx) {
        let args = inv.args();
        if let Some(k) = args.iter().position(|a| a.is("-c") || a.is("--command")) {
            if let Some(payload) = args.get(k + 1).cloned() {
                self.code_arg(&payload, &inv, ctx);
            }
            self.record(Invocation {
                argv: inv.argv[..1].to_vec(),
                ..inv
            });
            return;
        }
        self.wrapper(
            inv,
            &["-w", "-E", "--timeout", "--conflict-exit-code"],
            1,
            ctx,
        );
    }

    fn xargs(&mut self, inv: Invocation, ctx: &Ctx) {
        let valued = [
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ];
        let start = operand_start(&inv.argv, 1, &valued);
        let replace = inv.argv[1..start.min(inv.argv.len())]
            .windows(2)
            .find(|w| w[0].is("-I") || w[0].is("--replace"))
            .map(|w| w[1].text.clone())
            .or_else(|| {
                inv.argv.iter().find_map(|a| {
                    a.text
                        .strip_prefix("-I")
                        .filter(|r| !r.is_empty())
                        .map(str::to_owned)
                })
            });
        let mut inner = inv.clone();
        if start >= inner.argv.len() {
            // `xargs` alone runs `echo`.
            self.record(inv);
            return;
        }
        match replace {
            Some(r) => {
                for a in inner.argv.iter_mut().skip(start) {
                    if a.text.contains(&r) {
                        a.dynamic = true;
                    }
                }
            }
            None => inner.argv.push(Arg::unknown("<input>")),
        }
        inner.stdin = Feed::Nothing;
        self.run_inner(inner, start, ctx);
    }

    fn find(&mut self, inv: Invocation, ctx: &Ctx) {
        let mut i = 1;
        while i < inv.argv.len() {
            let a = &inv.argv[i];
            if matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") && !a.dynamic {
                let end = (i + 1..inv.argv.len())
                    .find(|&k| inv.argv[k].is(";") || inv.argv[k].is("+"))
                    .unwrap_or(inv.argv.len());
                self.placeholder_command(&inv, i + 1, end, &["{}"], ctx);
                i = end + 1;
            } else {
                i += 1;
            }
        }
        self.record(inv);
    }

    fn fd(&mut self, inv: Invocation, ctx: &Ctx) {
        if let Some(k) = inv
            .argv
            .iter()
            .position(|a| matches!(a.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
        {
            let end = (k + 1..inv.argv.len())
                .find(|&j| inv.argv[j].is(";"))
                .unwrap_or(inv.argv.len());
            self.placeholder_command(&inv, k + 1, end, &["{}", "{/}", "{//}", "{.}", "{/.}"], ctx);
        }
        self.record(inv);
    }

    /// The command `find -exec` or `fd -x` runs, with its placeholders standing for unknown paths.
    fn placeholder_command(
        &mut self,
        inv: &Invocation,
        start: usize,
        end: usize,
        placeholders: &[&str],
        ctx: &Ctx,
    ) {
        if start >= end {
            return;
        }
        let mut argv: Vec<Arg> = inv.argv[start..end].to_vec();
        for a in &mut argv {
            if placeholders.iter().any(|p| a.text.contains(p)) {
                a.dynamic = true;
            }
        }
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        let inner = Invocation {
            name: String::new(),
            argv,
            env: inv.env.clone(),
            wrappers,
            ..Invocation::default()
        };
        self.run(inner, ctx);
    }

    fn watch(&mut self, inv: Invocation, ctx: &Ctx) {
        let start = operand_start(&inv.argv, 1, &["-n", "--interval", "-q", "--equexit"]);
        let exec = inv.argv[1..start.min(inv.argv.len())]
            .iter()
            .any(|a| a.is("-x") || a.is("--exec"));
        if exec {
            self.run_inner(inv, start, ctx);
        } else {
            let words = inv.argv.get(start..).unwrap_or_default().to_vec();
            self.code_words(&words, &inv, ctx);
            self.record(Invocation {
                argv: inv.argv[..1].to_vec(),
                ..inv
            });
        }
    }

    fn shell(&mut self, inv: Invocation, ctx: &Ctx) {
        let mut i = 1;
        let (mut command_mode, mut stdin_mode) = (false, false);
        while let Some(a) = inv.argv.get(i) {
            let t = a.text.as_str();
            if a.dynamic && !t.starts_with('-') {
                break;
            }
            if t == "--" || t == "-" {
                stdin_mode |= t == "-";
                i += 1;
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                if matches!(long, "rcfile" | "init-file") {
                    self.ask(
                        "dynamic-code",
                        format!("`{}` loads start-up code from a file", inv.display()),
                    );
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                let cluster = &t[1..];
                command_mode |= cluster.contains('c');
                stdin_mode |= cluster.contains('s');
                i += if cluster.ends_with('o') || cluster.ends_with('O') {
                    2
                } else {
                    1
                };
                continue;
            }
            break;
        }
        if command_mode {
            match inv.argv.get(i).cloned() {
                Some(payload) => self.code_arg(&payload, &inv, ctx),
                None => self.record(inv),
            }
            return;
        }
        match inv.argv.get(i) {
            Some(script) if !stdin_mode => {
                if script.dynamic {
                    let script = script.clone();
                    self.code_arg(&script, &inv, ctx);
                }
            }
            _ => self.stdin_code(&inv, true, ctx),
        }
        self.record(inv);
    }

    fn interpreter(&mut self, inv: Invocation, ctx: &Ctx) {
        let php = inv.name.starts_with("php");
        let mut i = 1;
        let mut from_stdin = true;
        while let Some(a) = inv.argv.get(i) {
            let t = a.text.as_str();
            let code_flag = matches!(
                t,
                "-c" | "-e"
                    | "-E"
                    | "-m"
                    | "--eval"
                    | "-p"
                    | "--print"
                    | "-x"
                    | "-Command"
                    | "-command"
                    | "-EncodedCommand"
                    | "-enc"
            ) || (php && t == "-r")
                || (t.starts_with("-e") && t.len() > 2 && !t.starts_with("--"));
            if code_flag {
                from_stdin = false;
                break;
            }
            if t == "-" {
                break;
            }
            if t == "--" {
                from_stdin = inv.argv.get(i + 1).is_none_or(|a| a.is("-"));
                if let Some(script) = inv.argv.get(i + 1).filter(|a| a.dynamic).cloned() {
                    self.code_arg(&script, &inv, ctx);
                }
                break;
            }
            if !t.starts_with('-') || a.dynamic {
                from_stdin = false;
                if a.dynamic {
                    let script = a.clone();
                    self.code_arg(&script, &inv, ctx);
                }
                break;
            }
            let valued = matches!(
                t,
                "-W" | "-X"
                    | "-I"
                    | "--require"
                    | "--import"
                    | "--loader"
                    | "--experimental-loader"
                    | "--input-type"
            ) || (!php && t == "-r");
            i += if valued { 2 } else { 1 };
        }
        if from_stdin {
            self.stdin_code(&inv, false, ctx);
        }
        self.record(inv);
    }

    /// Code passed as one argument (`bash -c CODE`, `su -c CODE`, `alias x=CODE`).
    fn code_arg(&mut self, code: &Arg, inv: &Invocation, ctx: &Ctx) {
        if code.dynamic {
            self.dynamic_code(&code.feed, &code.text, inv);
            return;
        }
        let inner = self.inner_ctx(inv, ctx);
        self.in_child(|x| x.script(&code.text, &inner));
    }

    /// Code passed as words joined by spaces (`eval`, `watch`).
    fn code_words(&mut self, words: &[Arg], inv: &Invocation, ctx: &Ctx) {
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

    fn dynamic_code(&mut self, feed: &Feed, shown: &str, inv: &Invocation) {
        match feed {
            Feed::Network => self.deny(
                "remote-code",
                format!("runs code downloaded from the network: `{}`", inv.display()),
            ),
            Feed::Decoded => self.deny(
                "decoded-payload",
                format!("runs code decoded at run time: `{}`", inv.display()),
            ),
            _ => self.ask(
                "dynamic-code",
                format!(
                    "the code `{}` runs (`{shown}`) is only known when it runs",
                    inv.display()
                ),
            ),
        }
    }

    /// A shell or interpreter reading the code it runs from its standard input.
    fn stdin_code(&mut self, inv: &Invocation, shell: bool, ctx: &Ctx) {
        match &inv.stdin {
            Feed::Network => self.deny(
                "remote-code",
                format!("pipes code downloaded from the network into `{}`", inv.name),
            ),
            Feed::Decoded => self.deny(
                "decoded-payload",
                format!("pipes decoded or unpacked code into `{}`", inv.name),
            ),
            Feed::Unknown => self.ask(
                "stdin-script",
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
                    self.in_child(|x| x.script(code, &inner));
                }
            }
            Feed::Text(_) | Feed::Nothing => {}
        }
    }

    fn inner_ctx(&self, inv: &Invocation, ctx: &Ctx) -> Ctx {
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        Ctx {
            stdin: inv.stdin.clone(),
            wrappers,
            env: inv.env.clone(),
            depth: ctx.depth + 1,
            forks: ctx.forks,
        }
    }
}

/// The index of the first operand at or after `from`, skipping options; `valued` lists the
/// options that take a separate value (`-u root`, `--user root`).
pub fn operand_start(argv: &[Arg], from: usize, valued: &[&str]) -> usize {
    let mut i = from;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" || (a.dynamic && !t.starts_with('-')) {
            return i;
        }
        if t.starts_with("--") {
            i += if !t.contains('=') && valued.contains(&t) {
                2
            } else {
                1
            };
            continue;
        }
        // A short cluster such as `-iu` or `-uroot`: a valued letter takes the rest, or the next word.
        let cluster = &t[1..];
        let mut takes_next = false;
        for (k, c) in cluster.char_indices() {
            if valued
                .iter()
                .any(|v| v.len() == 2 && v.ends_with(c) && !v.starts_with("--"))
            {
                takes_next = k + c.len_utf8() == cluster.len();
                break;
            }
        }
        i += if takes_next { 2 } else { 1 };
    }
    i
}

/// Whether the command runs with raised privileges.
pub fn escalated(inv: &Invocation) -> Option<&str> {
    if is_escalator(&inv.name) {
        return Some(&inv.name);
    }
    inv.wrappers
        .iter()
        .find(|w| is_escalator(w))
        .map(String::as_str)
}
