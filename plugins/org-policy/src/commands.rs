//! From the command of a request to the simple commands the rules judge.
//!
//! A shell string is parsed with `brush-parser`'s `Parser::parse_program`, and every simple
//! command anywhere in it is collected: across pipelines, `&&`, `||`, `;`, `&`, newlines,
//! subshells, brace groups, `if`/`for`/`while`/`case` bodies, function bodies, `$( )`, backticks,
//! `<( )` / `>( )` and here-documents. Each word is resolved as the shell would (quotes,
//! escapes, `$'..'`, `~`, `$HOME`); what is only known at run time (`$X`, `$(..)`, globs, brace
//! expansion) is marked dynamic. A simple command that is a shell's `-c` (or `eval`) with a static
//! payload is replaced by the commands of the payload.
//!
//! An argv is one simple command already and is judged word by word, never re-parsed from a
//! join, unless it is `bash -c STRING`-like: then the string is parsed.

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions};

use acp_gate_shell::{Piece, scan};

/// How deeply `bash -c`, `eval` and substitutions may nest before the command counts as
/// unparseable.
pub const MAX_DEPTH: u32 = 8;
/// Commands longer than this are not parsed (they count as unparseable).
pub const MAX_INPUT: usize = 64 * 1024;

/// One word of a simple command, after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The word as the command receives it, or its source text when `dynamic`.
    pub text: String,
    /// Only known when the command runs (`$X`, `$(..)`, an unquoted glob or brace expansion).
    pub dynamic: bool,
}

impl Word {
    pub fn literal(text: &str) -> Word {
        Word {
            text: text.to_owned(),
            dynamic: false,
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

pub use acp_gate_shell::program_name;

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

/// Collects the simple commands of a shell string.
pub fn from_shell(text: &str, home: &str) -> Commands {
    let mut walker = Walker::new(home);
    let result = walker.script(text, 0);
    walker.finish(result, text)
}

/// Collects the simple commands of an argv (run without a shell): one, unless it is
/// `bash -c SCRIPT`-like.
pub fn from_argv(argv: &[String], home: &str) -> Commands {
    let mut walker = Walker::new(home);
    let result = walker.record(argv.iter().map(|w| Word::literal(w)).collect(), 0);
    walker.finish(result, &argv.join(" "))
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

/// Shells whose `-c` runs a shell string.
pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "rbash"
    )
}

/// The static script of `bash -c SCRIPT` (any option cluster containing `c`, as in `-lc`) or
/// `eval WORDS`; `None` for anything else, or when the script is only known at run time.
pub fn shell_payload(words: &[Word]) -> Option<String> {
    let head = words.first().filter(|w| !w.dynamic)?;
    let name = program_name(&head.text);
    if name == "eval" {
        let rest = &words[1..];
        return (!rest.is_empty() && rest.iter().all(|w| !w.dynamic)).then(|| {
            rest.iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        });
    }
    let start = if is_shell(&name) {
        1
    } else if name == "busybox" {
        // `busybox sh -c ..`
        let applet = words.get(1).filter(|w| !w.dynamic)?;
        is_shell(&program_name(&applet.text)).then_some(2)?
    } else {
        return None;
    };
    let mut i = start;
    let mut command_mode = false;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if w.dynamic {
            return None;
        }
        if t == "--" {
            i += 1;
            break;
        }
        match t.strip_prefix('-') {
            Some(long) if long.starts_with('-') => i += 1,
            Some(cluster) if !cluster.is_empty() => {
                command_mode |= cluster.contains('c');
                // `-o pipefail` takes the next word.
                i += if cluster.ends_with(['o', 'O']) { 2 } else { 1 };
            }
            _ => break,
        }
    }
    if !command_mode {
        return None;
    }
    words.get(i).filter(|w| !w.dynamic).map(|w| w.text.clone())
}

struct Walker<'a> {
    home: &'a str,
    options: ParserOptions,
    out: Vec<SimpleCommand>,
    /// The innermost script that failed to parse.
    failed: Option<String>,
}

impl<'a> Walker<'a> {
    fn new(home: &'a str) -> Self {
        Walker {
            home,
            options: ParserOptions::default(),
            out: Vec::new(),
            failed: None,
        }
    }

    fn finish(self, result: Result<(), String>, raw: &str) -> Commands {
        let error = match result {
            Ok(()) => return Commands::Parsed(self.out),
            Err(error) => error,
        };
        let mut pieces = rough_pieces(raw);
        // A payload that fails inside `bash -c '..'`: its own pieces too.
        if let Some(inner) = self.failed.filter(|f| f != raw) {
            pieces.extend(rough_pieces(&inner));
        }
        Commands::Unparseable {
            raw: raw.to_owned(),
            error,
            pieces,
        }
    }

    fn script(&mut self, text: &str, depth: u32) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("shells and substitutions nest too deeply".into());
        }
        if text.len() > MAX_INPUT {
            return Err(format!("the command is too long ({} bytes)", text.len()));
        }
        let mut parser = Parser::new(std::io::Cursor::new(text.as_bytes()), &self.options);
        let program = parser.parse_program().map_err(|e| {
            self.failed.get_or_insert_with(|| text.to_owned());
            e.to_string()
        })?;
        for list in &program.complete_commands {
            self.compound_list(list, depth)?;
        }
        Ok(())
    }

    fn compound_list(&mut self, list: &ast::CompoundList, depth: u32) -> Result<(), String> {
        for ast::CompoundListItem(and_or, _separator) in &list.0 {
            self.pipeline(&and_or.first, depth)?;
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p, depth)?;
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: u32) -> Result<(), String> {
        for command in &pipeline.seq {
            self.command(command, depth)?;
        }
        Ok(())
    }

    fn command(&mut self, command: &ast::Command, depth: u32) -> Result<(), String> {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, depth),
            ast::Command::Compound(compound, redirects) => {
                let start = self.out.len();
                self.compound(compound, depth)?;
                let writes = self.redirects(redirects.iter().flat_map(|r| r.0.iter()), depth)?;
                self.writes_since(start, writes);
                Ok(())
            }
            ast::Command::Function(function) => {
                let start = self.out.len();
                self.compound(&function.body.0, depth)?;
                let redirects = function.body.1.iter().flat_map(|r| r.0.iter());
                let writes = self.redirects(redirects, depth)?;
                self.writes_since(start, writes);
                Ok(())
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, depth)?;
                self.redirects(redirects.iter().flat_map(|r| r.0.iter()), depth)
                    .map(drop)
            }
        }
    }

    /// `{ ..; } > file`: every command inside writes to `file`.
    fn writes_since(&mut self, start: usize, writes: Vec<Word>) {
        if writes.is_empty() {
            return;
        }
        for command in &mut self.out[start..] {
            command.writes.extend(writes.iter().cloned());
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, depth: u32) -> Result<(), String> {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, depth)?;
                self.extended_test(b, depth)
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, depth),
            E::UnaryTest(_, w) => self.word(&w.value, depth).map(drop),
            E::BinaryTest(_, a, b) => {
                self.word(&a.value, depth)?;
                self.word(&b.value, depth).map(drop)
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, depth: u32) -> Result<(), String> {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => arithmetic(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    arithmetic(&e.value)?;
                }
                self.compound_list(&f.body.list, depth)
            }
            C::BraceGroup(b) => self.compound_list(&b.list, depth),
            C::Subshell(s) => self.compound_list(&s.list, depth),
            C::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, depth)?;
                }
                self.compound_list(&f.body.list, depth)
            }
            C::CaseClause(c) => {
                self.word(&c.value.value, depth)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, depth)?;
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, depth)?;
                    }
                }
                Ok(())
            }
            C::IfClause(i) => {
                self.compound_list(&i.condition, depth)?;
                self.compound_list(&i.then, depth)?;
                for e in i.elses.iter().flatten() {
                    if let Some(condition) = &e.condition {
                        self.compound_list(condition, depth)?;
                    }
                    self.compound_list(&e.body, depth)?;
                }
                Ok(())
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.compound_list(&w.0, depth)?;
                self.compound_list(&w.1.list, depth)
            }
            C::Coprocess(c) => self.command(&c.body, depth),
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: u32) -> Result<(), String> {
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, true, &mut words, &mut redirects, depth)?;
        }
        if let Some(w) = &simple.word_or_name {
            words.push(self.word(&w.value, depth)?);
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            self.item(item, false, &mut words, &mut redirects, depth)?;
        }
        let writes = self.redirects(redirects.into_iter(), depth)?;
        let start = self.out.len();
        self.record(words, depth)?;
        self.writes_since(start, writes);
        Ok(())
    }

    fn item<'t>(
        &mut self,
        item: &'t ast::CommandPrefixOrSuffixItem,
        in_prefix: bool,
        words: &mut Vec<Word>,
        redirects: &mut Vec<&'t ast::IoRedirect>,
        depth: u32,
    ) -> Result<(), String> {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => redirects.push(r),
            I::Word(w) => words.push(self.word(&w.value, depth)?),
            // A prefix assignment is not a word of the command, but its substitutions run.
            I::AssignmentWord(assignment, _) if in_prefix => match &assignment.value {
                ast::AssignmentValue::Scalar(v) => {
                    self.word(&v.value, depth)?;
                }
                ast::AssignmentValue::Array(values) => {
                    for (_, v) in values {
                        self.word(&v.value, depth)?;
                    }
                }
            },
            I::AssignmentWord(_, w) => words.push(self.word(&w.value, depth)?),
            I::ProcessSubstitution(_, subshell) => {
                self.compound_list(&subshell.list, depth + 1)?;
                words.push(Word {
                    text: "<(…)".into(),
                    dynamic: true,
                });
            }
        }
        Ok(())
    }

    /// Adds a simple command, or the commands of its payload when it is `bash -c SCRIPT`.
    fn record(&mut self, words: Vec<Word>, depth: u32) -> Result<(), String> {
        if words.is_empty() {
            return Ok(());
        }
        if let Some(script) = shell_payload(&words) {
            self.out.push(SimpleCommand {
                words,
                runs_payload: true,
                ..SimpleCommand::default()
            });
            return self.script(&script, depth + 1);
        }
        self.out.push(SimpleCommand::of_words(words));
        Ok(())
    }

    /// Walks the substitutions in redirections; returns the files written.
    fn redirects<'r>(
        &mut self,
        redirects: impl Iterator<Item = &'r ast::IoRedirect>,
        depth: u32,
    ) -> Result<Vec<Word>, String> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T};
        let mut writes = Vec::new();
        for redirect in redirects {
            match redirect {
                ast::IoRedirect::File(_, kind, target) => match target {
                    T::Filename(w) => {
                        let target = self.word(&w.value, depth)?;
                        if matches!(kind, K::Write | K::Append | K::Clobber | K::ReadAndWrite) {
                            writes.push(target);
                        }
                    }
                    T::Duplicate(w) => {
                        let target = self.word(&w.value, depth)?;
                        // `>&file` is `&>file` when the word is not a descriptor number.
                        let descriptor =
                            target.text.chars().all(|c| c.is_ascii_digit() || c == '-');
                        if matches!(kind, K::DuplicateOutput) && (target.dynamic || !descriptor) {
                            writes.push(target);
                        }
                    }
                    T::Fd(_) => {}
                    T::ProcessSubstitution(_, subshell) => {
                        self.compound_list(&subshell.list, depth + 1)?;
                    }
                },
                ast::IoRedirect::HereDocument(_, doc) => {
                    if doc.requires_expansion {
                        // The body expands like a double-quoted string in which `"` is literal.
                        let quoted = format!("\"{}\"", doc.doc.value.replace('"', "\\\""));
                        self.word(&quoted, depth)?;
                    }
                }
                ast::IoRedirect::HereString(_, w) => {
                    self.word(&w.value, depth)?;
                }
                ast::IoRedirect::OutputAndError(w, _) => {
                    writes.push(self.word(&w.value, depth)?);
                }
            }
        }
        writes.retain(|w| {
            w.dynamic
                || !matches!(
                    w.text.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
                )
        });
        Ok(writes)
    }

    /// Resolves one word, walking the commands its substitutions run.
    fn word(&mut self, raw: &str, depth: u32) -> Result<Word, String> {
        let pieces = scan(raw).map_err(|e| {
            self.failed.get_or_insert_with(|| raw.to_owned());
            format!("the word `{raw}` cannot be parsed ({e})")
        })?;
        let mut word = Word::default();
        for piece in pieces {
            match piece {
                Piece::Literal { text, quoted } => {
                    if !quoted
                        && (text.contains(['*', '?'])
                            || (text.contains('[') && text.contains(']'))
                            || (text.contains('{') && (text.contains(',') || text.contains(".."))))
                    {
                        word.dynamic = true;
                    }
                    word.text.push_str(&text);
                }
                Piece::Tilde(user) if user.is_empty() => word.text.push_str(self.home),
                Piece::Tilde(user) => {
                    word.dynamic |= user == "+" || user == "-";
                    word.text.push('~');
                    word.text.push_str(&user);
                }
                Piece::Parameter { name, source } => {
                    if name.as_deref() == Some("HOME") {
                        word.text.push_str(self.home);
                    } else {
                        word.dynamic = true;
                        word.text.push_str(&source);
                    }
                }
                Piece::Substitution { script, source } => {
                    word.dynamic = true;
                    word.text.push_str(&source);
                    self.script(&script, depth + 1)?;
                }
                Piece::Arithmetic { expr, source } => {
                    word.dynamic = true;
                    word.text.push_str(&source);
                    arithmetic(&expr)?;
                }
            }
        }
        Ok(word)
    }
}

/// A command substitution inside arithmetic is not walked: refuse it rather than miss it.
fn arithmetic(expr: &str) -> Result<(), String> {
    if expr.contains("$(") || expr.contains('`') {
        return Err("a command substitution inside an arithmetic expression".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(shell: &str) -> Vec<String> {
        match from_shell(shell, "/home/u") {
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
        let writes = |shell: &str| match from_shell(shell, "/h") {
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
        let Commands::Parsed(c) = from_shell("rm *.o", "/h") else {
            panic!()
        };
        assert!(c[0].words[1].dynamic);
    }

    #[test]
    fn argv_is_one_command_unless_it_is_a_shell_payload() {
        let argv =
            |a: &[&str]| from_argv(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "/h");
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
    fn unparseable_commands_keep_a_rough_split() {
        let Commands::Unparseable { pieces, .. } = from_shell("npm test && echo 'open", "/h")
        else {
            panic!()
        };
        let texts: Vec<String> = pieces.iter().map(SimpleCommand::text).collect();
        assert_eq!(texts, ["npm test", "echo open"]);
        let Commands::Unparseable { pieces, .. } = from_shell("if x; then git push 'a", "/h")
        else {
            panic!()
        };
        assert_eq!(pieces[1].text(), "git push a");
        assert!(matches!(
            from_shell("echo $((1 + $(id)))", "/h"),
            Commands::Unparseable { .. }
        ));
    }
}
