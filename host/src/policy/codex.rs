//! Codex's command rules as org-policy rules, and back: `.rules` files of `prefix_rule(...)`
//! calls (Starlark, under `rules/` beside each config layer: `~/.codex/rules/`,
//! `<repo>/.codex/rules/`) and the `[rules]` table of an admin's `requirements.toml`.
//!
//! The format, as github.com/openai/codex reads it (`codex-rs/execpolicy/src/parser.rs`,
//! `rule.rs`, `policy.rs`, `README.md`; developers.openai.com/codex/rules):
//! - `prefix_rule(pattern, decision, match, not_match, justification)`: `pattern` is a non-empty
//!   list of words, each a string or a list of alternatives; it matches a command whose argv
//!   starts with it, word for word. `decision` is `allow` (the default), `prompt` or
//!   `forbidden`; `justification`, when given, is not blank. `match` / `not_match` are examples
//!   (a string split like a shell, or a word list) that Codex checks against the rule once the
//!   file is read, refusing the file when one fails. Newer versions add `reviewer`.
//! - `host_executable(name, paths)`: an absolute program path (`/usr/bin/git`) falls back to the
//!   rules for its base name only when no rule names the path itself, and, when `name` has
//!   such an entry, only for the listed paths.
//! - `network_rule(host, protocol, decision, justification)`: the sandbox's network proxy.
//! - `requirements.toml` (`codex-rs/config/src/requirements_exec_policy.rs`): `[rules]
//!   prefix_rules = [{ pattern = [{ token = "rm" }, { any_of = ["-f", "-rf"] }], decision =
//!   "forbidden", justification = ".." }]`, where `decision` is required and `allow` refused.
//!
//! Codex applies every rule that matches and keeps the most restrictive decision, forbidden >
//! prompt > allow, which is org-policy's deny > ask > allow. It matches the command's own argv,
//! or each simple command of a `bash -lc` script made only of plain words joined by `&&`, `||`,
//! `;` and `|` (`codex-rs/core/src/exec_policy.rs`, `codex-rs/shell-command/src/bash.rs`);
//! any other script is one command, `["bash", "-lc", SCRIPT]`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Check, Decision, Export, Form, Import, Names, Origin, Rule, Token, check_forms, line_of,
    parse_toml, plain_words, shell_words,
};

const ALLOW_NOTE: &str = "acp-gate allows a compound command only when every simple command in it is allowed by some rule (Codex lets its own safe-command checks and sandbox cover the rest), never one that redirects its output into a file, and its built-in checks still judge it";
const DENY_NOTE: &str = "acp-gate also applies the rule behind wrappers (`sudo`, `env`, `timeout`, `xargs`), inside `bash -c` scripts Codex takes whole (with redirections, `$(..)`, variables), and past the options before a sub-command (`git -C . push`, `kubectl -n prod delete`)";

/// The absolute paths `host_executable(..)` allows for a program name.
type Hosts = BTreeMap<String, Vec<String>>;

/// Reads one Codex rules file, or a `requirements.toml` (by its `.toml` extension, or by its
/// content when the file is neither `.toml` nor `.rules`).
pub fn import(path: &Path, text: &str) -> Result<Import> {
    let toml = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => true,
        Some("rules") => false,
        _ => looks_like_toml(text),
    };
    if toml {
        let mut import = requirements(path, text)?;
        check_codex_forms(&mut import, &Hosts::new());
        return Ok(import);
    }
    let mut import = Import::default();
    let mut names = Names::default();
    let mut hosts = Hosts::new();
    for call in Parser::new(path, text).calls()? {
        let origin = Origin {
            file: path.to_owned(),
            line: call.line,
            text: call.text.clone(),
        };
        let at = |why: String| anyhow!("{}:{}: {why}", path.display(), call.line);
        match call.name.as_str() {
            "prefix_rule" => {
                let args = call.bind(PREFIX_RULE, &["pattern"]).map_err(at)?;
                let (mut rule, reviewer) = prefix_rule(&args, &mut names).map_err(at)?;
                rule.origin = origin.clone();
                if let Some(reviewer) = reviewer {
                    import.unsupported.push((origin, reviewer_note(&reviewer)));
                }
                import.rules.push(rule);
            }
            "host_executable" => {
                let args = call
                    .bind(&["name", "paths"], &["name", "paths"])
                    .map_err(at)?;
                let name = string(args["name"], "name").map_err(at)?;
                let paths = strings(args["paths"], "paths").map_err(at)?;
                hosts
                    .entry(name.to_owned())
                    .or_default()
                    .extend(paths.into_iter().map(str::to_owned));
                import.unsupported.push((origin, format!(
                    "acp-gate matches a rule's program by its base name whatever its path, so it cannot limit `{name}` to these paths: an allow for `{name}` also allows another `{name}` binary"
                )));
            }
            "network_rule" => {
                let params = ["host", "protocol", "decision", "justification"];
                call.bind(&params, &params[..3]).map_err(at)?;
                import.unsupported.push((origin, "Codex's network rules steer its sandbox's network proxy; acp-gate sees the agent's requests, not a command's connections".into()));
            }
            other => {
                return Err(at(format!(
                    "`{other}(..)` is not a Codex rule function (prefix_rule, host_executable, network_rule)"
                )));
            }
        }
    }
    check_examples(&mut import, &hosts, path)?;
    check_codex_forms(&mut import, &hosts);
    Ok(import)
}

/// Checks for other forms of each deny or ask rule's command, decided as Codex does: it reads
/// an absolute program path as its base name and looks inside `bash -c` scripts of plain
/// words, but not behind wrappers nor past options.
fn check_codex_forms(import: &mut Import, hosts: &Hosts) {
    check_forms(import, |rules, _, form, example| {
        let mut words = example_words(example).unwrap_or_default();
        if form == Form::Shell {
            words = words
                .get(2)
                .map(|script| shell_words(script))
                .unwrap_or_default();
        }
        matching(rules, hosts, &words)
            .iter()
            .map(|r| r.decision)
            .max()
    });
}

/// `prefix_rule`'s parameters, in Codex's order.
const PREFIX_RULE: &[&str] = &[
    "pattern",
    "decision",
    "match",
    "not_match",
    "justification",
    "reviewer",
];

/// A `prefix_rule(..)` call as an org-policy rule, and its `reviewer` if it names one.
fn prefix_rule(args: &Args, names: &mut Names) -> Result<(Rule, Option<String>), String> {
    let prefix = pattern(args["pattern"])?;
    let decision = match args.get("decision") {
        Some(value) => codex_decision(string(value, "decision")?)?,
        None => Decision::Allow,
    };
    let text = |key| args.get(key).map(|v| string(v, key)).transpose();
    let justification = text("justification")?.map(str::to_owned);
    let reviewer = text("reviewer")?.map(str::to_owned);
    let mut rule = new_rule(prefix, decision, justification, reviewer.as_deref(), names)?;
    for (key, list) in [
        ("match", &mut rule.matches),
        ("not_match", &mut rule.not_match),
    ] {
        if let Some(value) = args.get(key) {
            *list = examples(key, value)?;
        }
    }
    Ok((rule, reviewer))
}

/// A rule from Codex's parts, as both file kinds check them.
fn new_rule(
    prefix: Vec<Token>,
    decision: Decision,
    justification: Option<String>,
    reviewer: Option<&str>,
    names: &mut Names,
) -> Result<Rule, String> {
    if justification
        .as_deref()
        .is_some_and(|j| j.trim().is_empty())
    {
        return Err("`justification` cannot be empty".into());
    }
    match reviewer {
        Some(_) if decision != Decision::Ask => {
            return Err("`reviewer` is only valid with decision `prompt`".into());
        }
        Some(r) if r != "user" && r != "auto_review" => {
            return Err(format!("reviewer `{r}`: user or auto_review"));
        }
        _ => {}
    }
    let words: Vec<String> = prefix
        .iter()
        .map(|t| match t {
            Token::One(w) => w.clone(),
            Token::Any(ws) => ws.join("|"),
        })
        .collect();
    let command = words.join(" ");
    let reason = justification.or_else(|| {
        let what = match decision {
            Decision::Allow => return None,
            Decision::Ask => "prompt",
            Decision::Deny => "forbidden",
        };
        Some(format!("Codex rule `{command}`: {what}"))
    });
    let note = match decision {
        Decision::Allow => ALLOW_NOTE,
        _ => DENY_NOTE,
    };
    Ok(Rule {
        name: names.make(&["codex", &command]),
        decision,
        reason,
        prefix: Some(prefix),
        stricter: vec![note.to_owned()],
        ..Rule::default()
    })
}

/// Why a rule's `reviewer` is not imported.
fn reviewer_note(reviewer: &str) -> String {
    format!(
        "`reviewer = \"{reviewer}\"` picks who answers this rule's prompts in Codex; acp-gate asks its own way (the rule itself is imported)"
    )
}

/// A Codex decision in org-policy's words (Codex's forbidden > prompt > allow is org-policy's
/// deny > ask > allow).
fn codex_decision(word: &str) -> Result<Decision, String> {
    match word {
        "allow" => Ok(Decision::Allow),
        "prompt" => Ok(Decision::Ask),
        "forbidden" => Ok(Decision::Deny),
        other => Err(format!("decision `{other}`: allow, prompt or forbidden")),
    }
}

/// One pattern position: a word, or alternatives (a single one is a word, as in Codex).
fn token(mut words: Vec<String>) -> Result<Token, String> {
    if words.iter().any(|w| w.trim().is_empty()) {
        return Err("a pattern word cannot be empty".into());
    }
    match words.len() {
        0 => Err("pattern alternatives cannot be empty".into()),
        1 => Ok(Token::One(words.remove(0))),
        _ => Ok(Token::Any(words)),
    }
}

fn pattern(value: &Arg) -> Result<Vec<Token>, String> {
    let Arg::List(items) = value else {
        return Err("`pattern` must be a list".into());
    };
    if items.is_empty() {
        return Err("`pattern` cannot be empty".into());
    }
    items
        .iter()
        .map(|item| match item {
            Arg::Str(word) => token(vec![word.clone()]),
            list => token(
                strings(list, "pattern")?
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            ),
        })
        .collect()
}

/// Codex's examples as org-policy's: a string of plain words stays a command; a word list, or
/// a string with quotes or operators (which Codex splits into words, never into commands), is
/// an argv.
fn examples(key: &str, value: &Arg) -> Result<Vec<Value>, String> {
    let Arg::List(items) = value else {
        return Err(format!("`{key}` must be a list"));
    };
    let mut out = Vec::new();
    for item in items {
        let words = match item {
            Arg::Str(s) if plain_words(s).is_some_and(|w| !w[0].contains('=')) => {
                out.push(json!(s));
                continue;
            }
            Arg::Str(s) => shell_words(s),
            list => strings(list, key)?.into_iter().map(str::to_owned).collect(),
        };
        if words.is_empty() {
            return Err(format!("`{key}`: an example cannot be empty"));
        }
        out.push(json!({ "argv": words }));
    }
    Ok(out)
}

/// The argv Codex sees for an example: a string split like a shell, or the argv.
fn example_words(example: &Value) -> Option<Vec<String>> {
    let words = |v: &Value| -> Option<Vec<String>> {
        let list = v.as_array()?.iter().map(|w| w.as_str().map(str::to_owned));
        list.collect()
    };
    match example {
        Value::String(s) => Some(shell_words(s)),
        Value::Object(map) => match (map.get("argv"), map.get("command"), map.get("kind")) {
            (Some(argv), None, None) if map.len() == 1 => words(argv),
            (None, Some(Value::String(s)), kind)
                if map.len() == 1 + usize::from(kind.is_some())
                    && kind.is_none_or(|k| k == "execute") =>
            {
                Some(shell_words(s))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Codex's matching: `words` start with the pattern, token for token.
fn prefix_holds(prefix: &[Token], words: &[String]) -> bool {
    !prefix.is_empty()
        && prefix.len() <= words.len()
        && prefix.iter().zip(words).all(|(token, word)| match token {
            Token::One(w) => w == word,
            Token::Any(ws) => ws.contains(word),
        })
}

/// The rules Codex applies to `words`: those whose pattern starts them; when none does and the
/// program is an absolute path, those for its base name, unless `host_executable` lists other
/// paths for it.
fn matching<'r>(rules: &'r [Rule], hosts: &Hosts, words: &[String]) -> Vec<&'r Rule> {
    let applying = |words: &[String]| -> Vec<&'r Rule> {
        let holds = |r: &&Rule| prefix_holds(r.prefix.as_deref().unwrap_or_default(), words);
        rules.iter().filter(holds).collect()
    };
    let exact = applying(words);
    let Some(program) = words
        .first()
        .filter(|p| exact.is_empty() && p.starts_with('/'))
    else {
        return exact;
    };
    let base = program.rsplit('/').next().unwrap_or_default();
    if base.is_empty()
        || hosts
            .get(base)
            .is_some_and(|paths| !paths.contains(program))
    {
        return exact;
    }
    let renamed: Vec<String> = std::iter::once(base.to_owned())
        .chain(words[1..].iter().cloned())
        .collect();
    applying(&renamed)
}

/// Checks each rule's examples as Codex does once the file is read: a `match` example must
/// match the rule, a `not_match` one must not. Each becomes a check: a `match` example expects
/// the rule's decision, a `not_match` one what the whole file gives it (the strictest rule that
/// matches it), or nothing.
fn check_examples(import: &mut Import, hosts: &Hosts, path: &Path) -> Result<()> {
    for rule in &import.rules {
        let matches = rule.matches.iter().map(|e| (e, true));
        for (example, is_match) in matches.chain(rule.not_match.iter().map(|e| (e, false))) {
            let words = example_words(example).unwrap_or_default();
            if matching(std::slice::from_ref(rule), hosts, &words).is_empty() == is_match {
                let (key, how) = match is_match {
                    true => ("match", "does not match"),
                    false => ("not_match", "matches"),
                };
                let line = rule.origin.line;
                bail!(
                    "{}:{line}: `{key}` example {example} {how} this rule, so Codex refuses the file",
                    path.display()
                );
            }
            let by_file = matching(&import.rules, hosts, &words)
                .iter()
                .map(|r| r.decision)
                .max();
            import.checks.push(Check {
                example: example.clone(),
                meant: None,
                expected: if is_match {
                    Some(rule.decision)
                } else {
                    by_file
                },
                origin: rule.origin.clone(),
            });
        }
    }
    // A `not_match` example that acp-gate may well apply the rule to stays a check only.
    for rule in &mut import.rules {
        let prefix = rule.prefix.take().unwrap_or_default();
        for example in std::mem::take(&mut rule.not_match) {
            if acp_gate_may_match(&prefix, &example_words(&example).unwrap_or_default()) {
                rule.stricter.push(format!(
                    "Codex's `not_match` example {example} is only a check here: acp-gate may apply the rule to it"
                ));
            } else {
                rule.not_match.push(example);
            }
        }
        rule.prefix = Some(prefix);
    }
    Ok(())
}

/// Whether acp-gate, which finds a rule's program by its base name, behind wrappers, inside
/// `bash -c`, and reads a deny or ask rule's prefix past options and settings (`-n x`, `--x=y`,
/// `make X=1`) anywhere among its words, may apply `prefix` to `words` where Codex does not.
fn acp_gate_may_match(prefix: &[Token], words: &[String]) -> bool {
    let heads = match prefix.first() {
        Some(Token::One(word)) => std::slice::from_ref(word),
        Some(Token::Any(words)) => words.as_slice(),
        None => &[],
    };
    let options = words
        .iter()
        .skip(1)
        .any(|w| w.starts_with('-') || w.contains('='));
    words.iter().enumerate().any(|(i, word)| {
        let base = word.rsplit('/').next().unwrap_or(word);
        word.contains(|c: char| c.is_whitespace() || "$`|;&<>(".contains(c))
            || (heads.iter().any(|h| h == base) && (i > 0 || base != word || options))
    })
}

/// Text whose first statement is a `[table]` or a `key = value` reads as TOML.
fn looks_like_toml(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim);
    let first = lines.find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| {
        l.starts_with('[')
            || l.find('=')
                .is_some_and(|eq| l.find('(').is_none_or(|p| eq < p))
    })
}

#[derive(Deserialize)]
struct Requirements {
    rules: Option<RequirementRules>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementRules {
    prefix_rules: Vec<toml::Spanned<toml::Table>>,
}

/// `requirements.toml`: the rules of its `[rules] prefix_rules`; its other keys are listed as
/// not imported.
fn requirements(path: &Path, text: &str) -> Result<Import> {
    let fail = |at: Option<std::ops::Range<usize>>, why: &dyn std::fmt::Display| {
        let line = at.map_or(1, |at| line_of(text, at.start));
        anyhow!("{}:{line}: {why}", path.display())
    };
    let table = parse_toml(path, text)?;
    let parsed: Requirements = toml::from_str(text).map_err(|e| fail(e.span(), &e.message()))?;
    let mut import = Import::default();
    for key in table.keys().filter(|k| *k != "rules") {
        let origin = Origin {
            file: path.to_owned(),
            line: key_line(text, key),
            text: key.clone(),
        };
        import
            .unsupported
            .push((origin, requirement_note(key).into()));
    }
    let Some(rules) = parsed.rules else {
        return Ok(import);
    };
    if rules.prefix_rules.is_empty() {
        bail!(
            "{}:{}: `rules.prefix_rules` cannot be empty",
            path.display(),
            key_line(text, "rules")
        );
    }
    let mut names = Names::default();
    for (i, entry) in rules.prefix_rules.iter().enumerate() {
        let line = line_of(text, entry.span().start);
        let why = |why: String| {
            fail(
                Some(entry.span()),
                &format!("`rules.prefix_rules[{i}]`: {why}"),
            )
        };
        let (mut rule, reviewer) = requirement(entry.get_ref(), &mut names).map_err(why)?;
        rule.origin = Origin {
            file: path.to_owned(),
            line,
            text: format!("rules.prefix_rules[{i}]"),
        };
        if let Some(reviewer) = reviewer {
            import
                .unsupported
                .push((rule.origin.clone(), reviewer_note(&reviewer)));
        }
        import.rules.push(rule);
    }
    Ok(import)
}

/// One `{ pattern = [{ token = ".." } | { any_of = [..] }], decision, justification, reviewer }`.
fn requirement(table: &toml::Table, names: &mut Names) -> Result<(Rule, Option<String>), String> {
    const KEYS: [&str; 4] = ["pattern", "decision", "justification", "reviewer"];
    if let Some(key) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unknown key `{key}` ({})", KEYS.join(", ")));
    }
    let text = |key: &str| match table.get(key) {
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or(format!("`{key}` must be a string")),
        None => Ok(None),
    };
    let tokens = table.get("pattern").and_then(toml::Value::as_array);
    let tokens =
        tokens.ok_or("`pattern` must be a list of `{ token = \"..\" }` or `{ any_of = [..] }`")?;
    if tokens.is_empty() {
        return Err("`pattern` cannot be empty".into());
    }
    let prefix = tokens
        .iter()
        .map(|t| match (t.get("token"), t.get("any_of")) {
            (Some(toml::Value::String(word)), None) => token(vec![word.clone()]),
            (None, Some(toml::Value::Array(words))) => {
                let words = words.iter().map(|w| w.as_str().map(str::to_owned));
                token(
                    words
                        .collect::<Option<_>>()
                        .ok_or("`any_of` holds strings only")?,
                )
            }
            _ => {
                Err("each `pattern` element sets either `token = \"..\"` or `any_of = [..]`".into())
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let decision = match text("decision")? {
        None => return Err("`decision` is required: prompt or forbidden".into()),
        Some("allow") => return Err("decision `allow` is not permitted in requirements.toml (Codex keeps the strictest of all rules; use prompt or forbidden)".into()),
        Some(word) => codex_decision(word)?,
    };
    let reviewer = text("reviewer")?.map(str::to_owned);
    let justification = text("justification")?.map(str::to_owned);
    let rule = new_rule(prefix, decision, justification, reviewer.as_deref(), names)?;
    Ok((rule, reviewer))
}

/// Why a `requirements.toml` key other than `[rules]` is not imported.
fn requirement_note(key: &str) -> &'static str {
    if key.starts_with("allowed_") || key == "default_permissions" {
        "acp-gate does not set the agent's approval policy, sandbox or other modes; it judges each request the agent makes, whatever they are"
    } else {
        "a Codex setting, not a rule on what the agent asks for; acp-gate does not configure the agent"
    }
}

/// The line where top-level `key` (a `key = ..` line or a `[key]` / `[key.x]` table) starts.
fn key_line(text: &str, key: &str) -> usize {
    let starts = |line: &str| {
        let line = line.trim_start().trim_start_matches('[');
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(['=', '.', ']']))
    };
    text.lines().position(starts).map_or(1, |i| i + 1)
}

/// A value in a call: a string or a list.
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    Str(String),
    List(Vec<Arg>),
}

/// A call's arguments by parameter name.
type Args<'a> = BTreeMap<&'static str, &'a Arg>;

fn string<'a>(value: &'a Arg, key: &str) -> Result<&'a str, String> {
    match value {
        Arg::Str(s) => Ok(s),
        Arg::List(_) => Err(format!("`{key}` must be a string")),
    }
}

fn strings<'a>(value: &'a Arg, key: &str) -> Result<Vec<&'a str>, String> {
    let Arg::List(items) = value else {
        return Err(format!("`{key}` must be a list"));
    };
    let words = items.iter().map(|i| string(i, key).ok());
    words
        .collect::<Option<_>>()
        .ok_or(format!("`{key}`: a list of strings"))
}

/// A top-level call: `name(value, .., key = value, ..)`.
struct Call {
    name: String,
    args: Vec<(Option<String>, Arg)>,
    line: usize,
    text: String,
}

impl Call {
    /// The arguments by parameter name, positional ones in `params` order, as Starlark binds
    /// them; `required` must be there.
    fn bind(&self, params: &[&'static str], required: &[&str]) -> Result<Args<'_>, String> {
        let name = &self.name;
        let mut bound = Args::new();
        for (i, (key, value)) in self.args.iter().enumerate() {
            let param = match key {
                None => params
                    .get(i)
                    .ok_or(format!("`{name}` takes {} arguments", params.len())),
                Some(key) => params.iter().find(|p| *p == key).ok_or(format!(
                    "`{name}`: unknown argument `{key}` ({})",
                    params.join(", ")
                )),
            }?;
            if bound.insert(*param, value).is_some() {
                return Err(format!("`{name}`: `{param}` is given twice"));
            }
        }
        match required.iter().find(|p| !bound.contains_key(**p)) {
            Some(missing) => Err(format!("`{name}`: `{missing}` is required")),
            None => Ok(bound),
        }
    }
}

/// The Starlark subset rules files use: comments, top-level calls with positional and keyword
/// arguments, strings (single, double, triple-quoted, raw, with Starlark's escapes), lists.
struct Parser<'a> {
    path: &'a Path,
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(path: &'a Path, text: &'a str) -> Parser<'a> {
        Parser { path, text, at: 0 }
    }

    fn error<T>(&self, why: impl std::fmt::Display) -> Result<T> {
        let line = line_of(self.text, self.at);
        bail!("{}:{line}: {why}", self.path.display())
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.at += rest.len() - trimmed.len();
            if !trimmed.starts_with('#') {
                return;
            }
            self.at += trimmed.find('\n').unwrap_or(trimmed.len());
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip();
        let hit = self.rest().starts_with(c);
        if hit {
            self.at += c.len_utf8();
        }
        hit
    }

    fn ident(&mut self) -> Option<String> {
        self.skip();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) || is_raw(rest) {
            return None;
        }
        self.at += len;
        Some(rest[..len].to_owned())
    }

    fn calls(&mut self) -> Result<Vec<Call>> {
        let mut calls = Vec::new();
        loop {
            self.skip();
            if self.rest().is_empty() {
                return Ok(calls);
            }
            let start = self.at;
            let Some(name) = self.ident() else {
                return self.error("expected a call such as `prefix_rule(...)`");
            };
            if !self.eat('(') {
                return self.error(format!(
                    "expected `(` after `{name}`: rules files hold calls only, no variables or other statements"
                ));
            }
            let mut args: Vec<(Option<String>, Arg)> = Vec::new();
            while !self.eat(')') {
                let before = self.at;
                let key = match self.ident() {
                    Some(key) if self.eat('=') => Some(key),
                    _ if args.iter().any(|(k, _)| k.is_some()) => {
                        self.at = before;
                        self.skip();
                        return self.error("a positional argument after keyword arguments");
                    }
                    _ => {
                        self.at = before;
                        None
                    }
                };
                args.push((key, self.value()?));
                if !self.eat(',') && !self.rest().trim_start().starts_with(')') {
                    self.skip();
                    return self.error("expected `,` or `)`");
                }
            }
            calls.push(Call {
                name,
                args,
                line: line_of(self.text, start),
                text: one_line(&self.text[start..self.at]),
            });
            self.eat(';');
        }
    }

    fn value(&mut self) -> Result<Arg> {
        if self.eat('[') {
            let mut items = Vec::new();
            while !self.eat(']') {
                items.push(self.value()?);
                if !self.eat(',') && !self.rest().trim_start().starts_with(']') {
                    self.skip();
                    return self.error("expected `,` or `]`");
                }
            }
            return Ok(Arg::List(items));
        }
        let rest = self.rest();
        if is_raw(rest) || rest.starts_with(['"', '\'']) {
            return self.string().map(Arg::Str);
        }
        match self.ident() {
            Some(name) => self.error(format!(
                "`{name}`: rules files hold no names or variables; write the value itself"
            )),
            None => self.error("expected a string or a list"),
        }
    }

    fn string(&mut self) -> Result<String> {
        let raw = is_raw(self.rest());
        self.at += usize::from(raw);
        let start = self.at;
        let rest = self.rest();
        let quote = &rest[..1];
        let triple = quote.repeat(3);
        let delimiter = if rest.starts_with(&triple) {
            triple.as_str()
        } else {
            quote
        };
        self.at += delimiter.len();
        let mut out = String::new();
        loop {
            let rest = self.rest();
            if rest.starts_with(delimiter) {
                self.at += delimiter.len();
                return Ok(out);
            }
            let mut chars = rest.chars();
            let (Some(c), false) = (chars.next(), rest.starts_with('\n') && delimiter.len() == 1)
            else {
                self.at = start;
                return self.error("this string is not closed");
            };
            self.at += c.len_utf8();
            let Some(next) = chars.next().filter(|_| c == '\\' && !raw) else {
                out.push(c);
                continue;
            };
            self.at += next.len_utf8();
            let code = |parser: &mut Self, digits: usize, radix: u32| {
                let hex: String = parser.rest().chars().take(digits).collect();
                parser.at += hex.len();
                u32::from_str_radix(&hex, radix)
                    .ok()
                    .and_then(char::from_u32)
            };
            let escaped = match next {
                '\n' => continue,
                'n' => Some('\n'),
                't' => Some('\t'),
                'r' => Some('\r'),
                'a' => Some('\x07'),
                'b' => Some('\x08'),
                'f' => Some('\x0c'),
                'v' => Some('\x0b'),
                'x' => code(self, 2, 16),
                'u' => code(self, 4, 16),
                'U' => code(self, 8, 16),
                '0'..='7' => {
                    self.at -= 1;
                    let digits = self.rest().chars().take(3).take_while(|c| c.is_digit(8));
                    let digits = digits.count();
                    code(self, digits, 8)
                }
                '\\' | '\'' | '"' => Some(next),
                other => {
                    out.push('\\');
                    Some(other)
                }
            };
            match escaped {
                Some(c) => out.push(c),
                None => return self.error("an invalid escape in this string"),
            }
        }
    }
}

/// `r"..."`: a raw string starts here.
fn is_raw(text: &str) -> bool {
    text.starts_with(['r', 'R']) && text[1..].starts_with(['"', '\''])
}

/// A call's text on one line, without comments, shortened to about 100 characters.
fn one_line(call: &str) -> String {
    let lines = call.lines().map(|l| l.split(" #").next().unwrap_or(l));
    let words: Vec<&str> = lines
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect();
    let text = words.join(" ").replace("( ", "(").replace(",)", ")");
    let text = text.replace(", )", ")");
    match text.char_indices().nth(100) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

/// Writes org-policy rules as a Codex `.rules` file: the rules that are command prefixes, each
/// with the examples Codex would accept.
pub fn export(rules: &[Rule]) -> Export {
    let mut text = String::from(
        "# Written by `acp-gate policy export --to codex`: the org-policy rules that are command\n# prefixes, as Codex prefix rules.\n",
    );
    let mut unexpressed = Vec::new();
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let list = |words: &[String]| {
        let words: Vec<String> = words.iter().map(|w| quote(w)).collect();
        format!("[{}]", words.join(", "))
    };
    for rule in rules {
        let why = match &rule.prefix {
            _ if rule.kinds.as_deref().is_some_and(|k| k != ["execute"]) => {
                Some("Codex rules are about commands only, not other kinds of request")
            }
            Some(p) if !p.is_empty() && p.iter().all(|t| t != &Token::Any(vec![])) => None,
            _ => Some("Codex rules are command prefixes only"),
        };
        let extra = [
            (rule.regex.is_some(), "Codex rules have no regex"),
            (rule.paths.is_some(), "Codex rules have no path globs"),
            (rule.tools.is_some(), "Codex rules have no tool names"),
            (rule.domains.is_some(), "Codex rules have no domains"),
            (rule.title.is_some(), "Codex rules have no title"),
            (
                rule.priority.is_some_and(|p| p != 0),
                "Codex rules have no priority: the strictest matching rule wins",
            ),
        ];
        let why = why.or(extra.iter().find(|(has, _)| *has).map(|(_, why)| *why));
        let (None, Some(prefix)) = (why, &rule.prefix) else {
            unexpressed.push((rule.name.clone(), why.unwrap_or_default().to_owned()));
            continue;
        };
        let tokens: Vec<String> = prefix
            .iter()
            .map(|t| match t {
                Token::One(w) => quote(w),
                Token::Any(ws) => list(ws),
            })
            .collect();
        let decision = match rule.decision {
            Decision::Allow => "allow",
            Decision::Ask => "prompt",
            Decision::Deny => "forbidden",
        };
        text.push_str(&format!(
            "\n# {}\nprefix_rule(\n    pattern = [{}],\n    decision = \"{decision}\",\n",
            rule.name.replace('\n', " "),
            tokens.join(", ")
        ));
        if let Some(reason) = rule.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            text.push_str(&format!("    justification = {},\n", quote(reason)));
        }
        let this = std::slice::from_ref(rule);
        for (key, examples, wanted) in [
            ("match", &rule.matches, true),
            ("not_match", &rule.not_match, false),
        ] {
            let mut kept = Vec::new();
            for example in examples {
                let Some(words) = example_words(example).filter(|w| !w.is_empty()) else {
                    unexpressed.push((
                        rule.name.clone(),
                        format!("`{key}` example {example} left out: Codex examples are commands"),
                    ));
                    continue;
                };
                if matching(this, &Hosts::new(), &words).is_empty() == wanted {
                    unexpressed.push((rule.name.clone(), format!("`{key}` example {example} left out: Codex matches the pattern at the start of the argv only, and would refuse the file")));
                    continue;
                }
                let command = example.as_str().or(example["command"].as_str());
                kept.push(command.map_or_else(|| list(&words), quote));
            }
            if !kept.is_empty() {
                text.push_str(&format!("    {key} = [{}],\n", kept.join(", ")));
            }
        }
        text.push_str(")\n");
    }
    Export { text, unexpressed }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules of Codex's docs (developers.openai.com/codex/rules, `docs/execpolicy.md`) and
    /// `codex-rs/execpolicy/README.md`, with one forbidden rule over them.
    const DOCS: &str = r#"
# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],

    # The action to take when Codex requests to run a matching command.
    decision = "prompt",

    # Optional rationale for why this rule exists.
    justification = "Viewing PRs is allowed with approval",

    # `match` and `not_match` are optional "inline unit tests" where you can
    # provide examples of commands that should (or should not) match this rule.
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        # Does not match because the `pattern` must be an exact prefix.
        "gh pr --repo openai/codex view 7888",
    ],
)
prefix_rule(
    pattern = ["cmd", ["alt1", "alt2"]], # ordered tokens; list entries denote alternatives
    decision = "prompt",                 # allow | prompt | forbidden; defaults to allow
    justification = "explain why this rule exists",
    match = [["cmd", "alt1"], "cmd alt2"],           # examples that must match this rule
    not_match = [["cmd", "oops"], "cmd alt3"],       # examples that must not match this rule
)
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",  # allow | prompt | forbidden
    match = [["git", "push", "origin", "main"]],  # examples that must match
    not_match = [["git", "status"]],              # examples that must not match
)
host_executable(
    name = "git",
    paths = [
        "/opt/homebrew/bin/git",
        "/usr/bin/git",
    ],
)
host_executable(
    name = "az",
    paths = ["~/.openai/bin/az"],
)
prefix_rule(pattern = ["git"], decision = 'forbidden', justification = """Use `jj` instead of `git`.""")
"#;

    fn rules(name: &str, text: &str) -> Import {
        import(Path::new(name), text).unwrap()
    }

    fn words(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn one(words: &[&str]) -> Option<Vec<Token>> {
        Some(words.iter().map(|w| Token::One(w.to_string())).collect())
    }

    #[test]
    fn the_documented_rules_import_as_org_policy_rules() {
        let file = rules("team.rules", DOCS);
        let names: Vec<&str> = file.rules.iter().map(|r| r.name.as_str()).collect();
        let wanted = [
            "codex-gh-pr-view",
            "codex-cmd-alt1-alt2",
            "codex-git-push-fetch",
            "codex-git",
        ];
        assert_eq!(names, wanted);
        let [gh, cmd, push, git] = &file.rules[..] else {
            unreachable!()
        };
        assert_eq!(
            (gh.decision, &gh.prefix),
            (Decision::Ask, &one(&["gh", "pr", "view"]))
        );
        assert_eq!(
            gh.reason.as_deref(),
            Some("Viewing PRs is allowed with approval")
        );
        assert_eq!(
            (gh.origin.line, gh.origin.file.to_str()),
            (3, Some("team.rules"))
        );
        assert!(
            gh.origin
                .text
                .starts_with(r#"prefix_rule(pattern = ["gh", "pr", "view"],"#)
        );
        assert_eq!(
            cmd.prefix.as_ref().unwrap()[1],
            Token::Any(words(&["alt1", "alt2"]))
        );
        // Without a justification, an ask or deny gets a reason; allow is the default.
        assert_eq!(
            push.reason.as_deref(),
            Some("Codex rule `git push|fetch`: prompt")
        );
        assert_eq!(git.decision, Decision::Deny);
        assert_eq!(git.reason.as_deref(), Some("Use `jj` instead of `git`."));
        assert!(git.stricter[0].contains("behind wrappers"));
        let allow = &rules("a.rules", "prefix_rule(pattern = [\"ls\"])").rules[0];
        assert_eq!((allow.decision, &allow.reason), (Decision::Allow, &None));
        assert!(allow.stricter[0].contains("every simple command"));
        // host_executable is listed, with its line.
        let lines: Vec<usize> = file.unsupported.iter().map(|(o, _)| o.line).collect();
        assert_eq!(lines, [38, 45]);
    }

    #[test]
    fn examples_become_org_policy_examples_and_checks() {
        let file = rules("team.rules", DOCS);
        let (gh, cmd) = (&file.rules[0], &file.rules[1]);
        assert_eq!(gh.matches[0], json!("gh pr view 7888"));
        // acp-gate reads the rule past gh's `--repo`, so this `not_match` is a check only.
        assert!(gh.not_match.is_empty());
        assert!(
            gh.stricter[1].contains("only a check here"),
            "{:?}",
            gh.stricter
        );
        assert_eq!(
            cmd.matches,
            [json!({ "argv": ["cmd", "alt1"] }), json!("cmd alt2")]
        );
        let expected = |example: Value| {
            let check = file.checks.iter().find(|c| c.example == example);
            check.unwrap().expected
        };
        let documented = file.checks.iter().filter(|c| c.meant.is_none());
        assert_eq!(documented.count(), 10);
        assert_eq!(expected(json!("gh pr view 7888")), Some(Decision::Ask));
        // A not_match example gets what the rest of the file gives it.
        assert_eq!(expected(json!("gh pr --repo openai/codex view 7888")), None);
        assert_eq!(expected(json!("cmd alt3")), None);
        assert_eq!(
            expected(json!({ "argv": ["git", "status"] })),
            Some(Decision::Deny)
        );
        // A string Codex splits into words, not commands, is an argv; so is `FOO=1 x`.
        let quoted = rules(
            "q.rules",
            r#"prefix_rule(["echo"], "allow", ["echo 'a && b'"], ["FOO=1 x"])"#,
        );
        assert_eq!(
            quoted.rules[0].matches,
            [json!({ "argv": ["echo", "a && b"] })]
        );
        assert_eq!(
            quoted.rules[0].not_match,
            [json!({ "argv": ["FOO=1", "x"] })]
        );
        // One acp-gate would apply the rule to stays a check, lest org-policy refuse the rule.
        let text = r#"prefix_rule(["git", "push"], "forbidden", not_match = ["git -C . push", "sudo git push", "gitk push"])"#;
        let generous = rules("g.rules", text);
        assert_eq!(generous.rules[0].not_match, [json!("gitk push")]);
        let documented = generous.checks.iter().filter(|c| c.meant.is_none());
        assert_eq!(
            (documented.count(), generous.rules[0].stricter.len()),
            (3, 3)
        );
    }

    #[test]
    fn absolute_programs_fall_back_to_their_base_name_unless_host_executable_says_otherwise() {
        let rule = r#"prefix_rule(pattern = ["git", "status"], match = ["/usr/bin/git status"], not_match = ["/opt/x/git status"])"#;
        let listed = format!("host_executable(name = \"git\", paths = [\"/usr/bin/git\"])\n{rule}");
        assert_eq!(rules("h.rules", &listed).rules.len(), 1);
        let unlisted = import(Path::new("x.rules"), rule).unwrap_err().to_string();
        assert!(
            unlisted.starts_with("x.rules:1: `not_match` example \"/opt/x/git status\" matches")
        );
        let docs = rules("team.rules", DOCS).rules;
        let decided = |argv: &[&str]| {
            let rules = matching(&docs, &Hosts::new(), &words(argv));
            rules.iter().map(|r| r.decision).max()
        };
        assert_eq!(decided(&["/usr/bin/gh", "pr", "view"]), Some(Decision::Ask));
        assert_eq!(decided(&["bin/gh", "pr", "view"]), None);
    }

    #[test]
    fn strings_lists_and_calls_read_as_starlark_does() {
        let text = r#"prefix_rule(["echo", 'it\'s', "tab\there", r"C:\dir", """two
lines""", "\x41\u00e9\101\q",],
  'forbidden', justification = 'x',); prefix_rule(pattern = ["b"]) # done"#;
        let file = rules("s.rules", text);
        let wanted = [
            "echo",
            "it's",
            "tab\there",
            r"C:\dir",
            "two\nlines",
            r"AéA\q",
        ];
        assert_eq!(file.rules[0].prefix, one(&wanted));
        assert_eq!(file.rules[1].origin.line, 3);
        assert_eq!(file.rules[1].origin.text, r#"prefix_rule(pattern = ["b"])"#);
    }

    #[rustfmt::skip]
    const MISTAKES: &[(&str, &str)] = &[
        ("\n\nprefix_rule(pattern = [\"a\"], decision = \"block\")", "x.rules:3: decision `block`: allow, prompt or forbidden"),
        ("prefix_rule(\n  pattern = [\"a\n\"])", "x.rules:2: this string is not closed"),
        ("\nexec_rule(pattern = [\"a\"])", "x.rules:2: `exec_rule(..)` is not a Codex rule function"),
        ("X = [\"a\"]", "x.rules:1: expected `(` after `X`"),
        ("prefix_rule(\npattern = [\"a\"],\n decision = PROMPT)", "x.rules:3: `PROMPT`: rules files hold no names"),
        ("prefix_rule(pattern = [\"a\"], \"allow\")", "x.rules:1: a positional argument after keyword"),
        ("prefix_rule([\"a\"], pattern = [\"b\"])", "x.rules:1: `prefix_rule`: `pattern` is given twice"),
        ("prefix_rule(decision = \"allow\")", "x.rules:1: `prefix_rule`: `pattern` is required"),
        ("prefix_rule(pattern = [\"a\"], colour = \"red\")", "x.rules:1: `prefix_rule`: unknown argument `colour`"),
        ("prefix_rule(pattern = [\"a\", []])", "x.rules:1: pattern alternatives cannot be empty"),
        ("prefix_rule(pattern = [\"a\"], justification = \" \")", "x.rules:1: `justification` cannot be empty"),
        ("prefix_rule(pattern = [\"a\"], reviewer = \"user\")", "x.rules:1: `reviewer` is only valid with decision `prompt`"),
        ("\nprefix_rule(pattern = [\"git\", \"push\"],\n match = [\"git status\"])", "x.rules:2: `match` example \"git status\" does not match this rule"),
        ("prefix_rule(pattern = [\"a\"], match = [\"\"])", "x.rules:1: `match`: an example cannot be empty"),
        ("[rules]\nprefix_rules = [\n  { pattern = [{ token = \"rm\" }] },\n]", "x.toml:3: `rules.prefix_rules[0]`: `decision` is required"),
        ("[rules]\nprefix_rules = [\n  { pattern = [{ token = \"rm\" }], decision = \"allow\" },\n]", "x.toml:3: `rules.prefix_rules[0]`: decision `allow` is not permitted"),
        ("[rules]\nprefix_rules = [{ pattern = [{ token = \"rm\", any_of = [\"x\"] }], decision = \"prompt\" }]", "x.toml:2: `rules.prefix_rules[0]`: each `pattern` element sets either"),
        ("[rules]\nprefix_rules = [{ pattern = [{ word = \"rm\" }], decision = \"prompt\" }]", "x.toml:2: `rules.prefix_rules[0]`: each `pattern` element sets either"),
        ("[rules]\nprefix_rules = [{ pattern = [], decision = \"prompt\" }]", "x.toml:2: `rules.prefix_rules[0]`: `pattern` cannot be empty"),
        ("[rules]\nprefix_rules = []\n", "x.toml:1: `rules.prefix_rules` cannot be empty"),
        ("a = 1\nb = = 2\n", "x.toml:2: "),
    ];

    #[test]
    fn mistakes_name_the_line() {
        for (text, wanted) in MISTAKES {
            let file = if text.contains("rules]") || text.starts_with("a =") {
                "x.toml"
            } else {
                "x.rules"
            };
            let got = import(Path::new(file), text).unwrap_err().to_string();
            assert!(
                got.starts_with(wanted),
                "{text:?}\n got: {got}\nwanted: {wanted}"
            );
        }
        // What Codex has but acp-gate does not do is listed, not an error.
        let text = "network_rule(host = \"example.com\", protocol = \"https\", decision = \"deny\")\nprefix_rule(pattern = [\"a\"], decision = \"prompt\", reviewer = \"auto_review\")";
        let file = rules("n.rules", text);
        let listed: Vec<usize> = file.unsupported.iter().map(|(o, _)| o.line).collect();
        assert_eq!((file.rules.len(), listed), (1, vec![1, 2]));
    }

    const REQUIREMENTS: &str = r#"
allowed_approval_policies = ["untrusted", "on-request"]
allowed_sandbox_modes = ["read-only", "workspace-write"]

[rules]
prefix_rules = [
    { pattern = [{ token = "rm" }], decision = "forbidden", justification = "Use git clean -fd instead." },
    { pattern = [{ token = "git" }, { any_of = ["push", "commit"] }], decision = "prompt", justification = "Require review before mutating history." },
]

[mcp_servers.docs]
identity = { command = "docs-server" }
"#;

    #[test]
    fn requirements_toml_rules_import_and_the_rest_is_listed() {
        let file = rules("requirements.toml", REQUIREMENTS);
        let [rm, git] = &file.rules[..] else {
            unreachable!()
        };
        assert_eq!((rm.decision, rm.origin.line), (Decision::Deny, 7));
        assert_eq!(rm.reason.as_deref(), Some("Use git clean -fd instead."));
        assert_eq!(
            git.prefix.as_ref().unwrap()[1],
            Token::Any(words(&["push", "commit"]))
        );
        assert_eq!((git.decision, git.origin.line), (Decision::Ask, 8));
        assert_eq!(git.origin.text, "rules.prefix_rules[1]");
        let listed: Vec<_> = file
            .unsupported
            .iter()
            .map(|(o, _)| (o.line, o.text.as_str()))
            .collect();
        let wanted = [
            (2, "allowed_approval_policies"),
            (3, "allowed_sandbox_modes"),
            (11, "mcp_servers"),
        ];
        assert_eq!(listed, wanted);
        assert!(file.unsupported[0].1.contains("approval policy"));
        // An array of tables, in a file named otherwise, reads the same.
        let tables = "# managed\n[[rules.prefix_rules]]\npattern = [{ token = \"rm\" }]\ndecision = \"forbidden\"\n";
        let again = &rules("managed", tables).rules[0];
        assert_eq!((again.decision, again.origin.line), (Decision::Deny, 2));
    }

    fn strip(rules: &[Rule]) -> Vec<Rule> {
        // A `not_match` example acp-gate keeps as a check only is not written back.
        let plain = |r: &Rule| Rule {
            origin: Origin::default(),
            stricter: (r.stricter.iter())
                .filter(|s| !s.contains("is only a check here"))
                .cloned()
                .collect(),
            ..r.clone()
        };
        rules.iter().map(plain).collect()
    }

    /// Each deny or ask rule's command in other forms is a check that acp-gate must decide at
    /// least as the rule does; Codex itself reads an absolute path and `bash -c`, nothing else.
    #[test]
    fn other_forms_of_a_rule_are_checks_decided_as_codex_does() {
        let file = rules("team.rules", DOCS);
        let form = |example: &str| {
            let check = file.checks.iter().find(|c| c.example == json!(example));
            check.map(|c| (c.expected, c.meant))
        };
        let ask = Some(Decision::Ask);
        assert_eq!(form("/usr/bin/gh pr view"), Some((ask, ask)));
        assert_eq!(form("bash -c 'gh pr view'"), Some((ask, ask)));
        assert_eq!(form("gh -R owner/repo pr view"), Some((None, ask)));
        assert_eq!(form("sudo git push"), Some((None, ask)));
        let deny = Some(Decision::Deny);
        // Codex's rule for `git` itself forbids this one.
        assert_eq!(form("git -C . push"), Some((deny, ask)));
        assert_eq!(form("timeout 60 git"), Some((None, deny)));
        // An allow rule has no such checks.
        let allow = rules("a.rules", "prefix_rule(pattern = [\"ls\", \"-l\"])");
        assert!(allow.checks.iter().all(|c| c.meant.is_none()));
    }

    #[test]
    fn export_then_import_keeps_the_rules() {
        let first = rules("team.rules", DOCS);
        let exported = export(&first.rules);
        assert!(
            exported
                .text
                .starts_with("# Written by `acp-gate policy export --to codex`")
        );
        assert!(
            exported.unexpressed.is_empty(),
            "{:?}",
            exported.unexpressed
        );
        let second = rules("again.rules", &exported.text);
        assert_eq!(
            strip(&first.rules),
            strip(&second.rules),
            "{}",
            exported.text
        );
        assert_eq!(export(&second.rules).text, exported.text);
        let required = rules("requirements.toml", REQUIREMENTS).rules;
        assert_eq!(
            strip(&required),
            strip(&rules("r.rules", &export(&required).text).rules)
        );
    }

    #[test]
    fn export_lists_what_codex_rules_cannot_say() {
        let rule = |name: &str| Rule {
            name: name.into(),
            decision: Decision::Deny,
            reason: Some("no \"rm\"\n\u{1b}".into()),
            prefix: one(&["rm"]),
            ..Rule::default()
        };
        let examples = vec![
            json!("sudo rm -rf x"),
            json!({ "command": "rm -rf build" }),
            json!({ "path": "x" }),
        ];
        let rules = [
            Rule {
                prefix: None,
                regex: Some("^make$".into()),
                ..rule("regex")
            },
            Rule {
                kinds: Some(vec!["edit".into()]),
                ..rule("edit")
            },
            Rule {
                priority: Some(3),
                ..rule("priority")
            },
            Rule {
                matches: examples,
                not_match: vec![json!({ "argv": ["rmdir", "x"] })],
                ..rule("rm")
            },
        ];
        let exported = export(&rules);
        let unexpressed: Vec<&str> = exported
            .unexpressed
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(unexpressed, ["regex", "edit", "priority", "rm", "rm"]);
        let again = &super::import(Path::new("e.rules"), &exported.text)
            .unwrap()
            .rules[0];
        assert_eq!(
            (&again.reason, &again.not_match),
            (&rules[3].reason, &rules[3].not_match)
        );
        assert_eq!(again.matches, [json!("rm -rf build")]);
    }
}
