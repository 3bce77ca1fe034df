//! Codex's command rules as org-policy rules, and back: `.rules` files of `prefix_rule(...)`
//! calls (Starlark; `~/.codex/rules/`, `<repo>/.codex/rules/`) and the `[rules]` table of an
//! admin's `requirements.toml`.
//!
//! The format (Codex's docs, developers.openai.com/codex/rules, and `codex-rs/execpolicy`):
//! `prefix_rule(pattern = ["gh", "pr", ["view", "list"]], decision = "prompt", justification =
//! "..", match = [..], not_match = [..])`. A pattern is an exact prefix of the command's words,
//! a list being alternatives; `decision` is `allow` (the default), `prompt` or `forbidden`; the
//! most restrictive matching rule wins (forbidden > prompt > allow, org-policy's deny > ask >
//! allow); `match` / `not_match` examples (strings split like a shell, or word lists) are checked
//! when the rules load, as org-policy checks its own. In `requirements.toml`: `[rules]
//! prefix_rules = [{ pattern = [{ token = "rm" }, { any_of = ["-f", "-rf"] }], decision =
//! "forbidden", justification = ".." }]`.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

use super::{
    Check, Decision, Export, Import, Names, Origin, Rule, Token, line_of, parse_toml, shell_words,
};

/// Reads one Codex rules file (`.rules`) or `requirements.toml`.
pub fn import(path: &Path, text: &str) -> Result<Import> {
    if path.extension().is_some_and(|e| e == "toml") {
        return requirements(path, text);
    }
    let calls = Parser::new(path, text).calls()?;
    let mut import = Import::default();
    let mut names = Names::default();
    for call in calls {
        let origin = Origin {
            file: path.to_owned(),
            line: call.line,
            text: call.text.clone(),
        };
        let at = |why: String| anyhow!("{}:{}: {why}", path.display(), call.line);
        match call.name.as_str() {
            "prefix_rule" => {
                let rule = prefix_rule(&call, &mut names).map_err(at)?;
                add(&mut import, rule, origin);
            }
            "host_executable" => import.unsupported.push((
                origin,
                "acp-gate compares a program by its name whatever its path (`/usr/bin/git` is `git`), so it needs no executable paths".into(),
            )),
            other => return Err(at(format!(
                "`{other}(..)` is not a Codex rule function (prefix_rule, host_executable)"
            ))),
        }
    }
    add_checks(&mut import);
    Ok(import)
}

/// One rule with its origin, its notes and its examples as checks.
fn add(import: &mut Import, mut rule: Rule, origin: Origin) {
    rule.origin = origin;
    rule.stricter.push(match rule.decision {
        Decision::Allow => "acp-gate allows a command only when every simple command in it is allowed by some rule, never one that redirects its output into a file, and the built-in checks still judge it".into(),
        _ => "acp-gate also applies the rule behind `sudo`, `env`, `timeout` and `xargs`, inside `bash -c '..'` and `$(..)`, to `/usr/bin/PROGRAM`, and after git's global options (`git -C . push`)".into(),
    });
    import.rules.push(rule);
}

/// The rules' `match` examples expect the rule's decision; `not_match` ones what the whole
/// file gives them (most restrictive matching prefix), or nothing.
fn add_checks(import: &mut Import) {
    let mut checks = Vec::new();
    for rule in &import.rules {
        for example in &rule.matches {
            checks.push(Check {
                example: example.clone(),
                expected: Some(rule.decision),
                origin: rule.origin.clone(),
            });
        }
        for example in &rule.not_match {
            let words = example_words(example);
            let expected = import
                .rules
                .iter()
                .filter(|r| prefix_holds(r.prefix.as_deref().unwrap_or_default(), &words))
                .map(|r| r.decision)
                .max();
            checks.push(Check {
                example: example.clone(),
                expected,
                origin: rule.origin.clone(),
            });
        }
    }
    import.checks.extend(checks);
}

fn example_words(example: &Value) -> Vec<String> {
    match example {
        Value::String(s) => shell_words(s),
        other => other["argv"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(str::to_owned))
            .collect(),
    }
}

/// Codex's own matching: the words start with the pattern, token for token.
fn prefix_holds(prefix: &[Token], words: &[String]) -> bool {
    !prefix.is_empty()
        && prefix.len() <= words.len()
        && prefix.iter().zip(words).all(|(token, word)| match token {
            Token::One(w) => w == word,
            Token::Any(ws) => ws.contains(word),
        })
}

/// A `prefix_rule(..)` call as an org-policy rule.
fn prefix_rule(call: &Call, names: &mut Names) -> Result<Rule, String> {
    // Codex's default decision.
    let mut rule = Rule {
        decision: Decision::Allow,
        ..Rule::default()
    };
    let mut justification = None;
    for (key, value) in &call.args {
        match key.as_str() {
            "pattern" => rule.prefix = Some(pattern(value)?),
            "decision" => {
                rule.decision = decision(value.as_str().ok_or("`decision` must be a string")?)?
            }
            "justification" => {
                justification = Some(
                    value
                        .as_str()
                        .ok_or("`justification` must be a string")?
                        .to_owned(),
                )
            }
            "match" | "not_match" => {
                let examples = examples(key, value)?;
                if key == "match" {
                    rule.matches = examples;
                } else {
                    rule.not_match = examples;
                }
            }
            other => {
                return Err(format!(
                    "prefix_rule: unknown argument `{other}` (pattern, decision, justification, match, not_match)"
                ));
            }
        }
    }
    let prefix = rule
        .prefix
        .as_ref()
        .ok_or("prefix_rule: `pattern` is required")?;
    let command: Vec<String> = prefix
        .iter()
        .map(|t| match t {
            Token::One(w) => w.clone(),
            Token::Any(ws) => ws.join("|"),
        })
        .collect();
    let command = command.join(" ");
    rule.name = names.make(&["codex", &command]);
    if rule.decision != Decision::Allow {
        rule.reason = Some(justification.unwrap_or_else(|| {
            format!(
                "Codex rule `{command}`: {}",
                if rule.decision == Decision::Deny {
                    "forbidden"
                } else {
                    "prompt"
                }
            )
        }));
    }
    Ok(rule)
}

fn decision(word: &str) -> Result<Decision, String> {
    match word {
        "allow" => Ok(Decision::Allow),
        "prompt" => Ok(Decision::Ask),
        "forbidden" => Ok(Decision::Deny),
        other => Err(format!("decision `{other}`: allow, prompt or forbidden")),
    }
}

fn pattern(value: &Arg) -> Result<Vec<Token>, String> {
    let Arg::List(items) = value else {
        return Err("`pattern` must be a list of words".into());
    };
    if items.is_empty() {
        return Err("`pattern` is empty".into());
    }
    items
        .iter()
        .map(|item| match item {
            Arg::Str(word) if !word.is_empty() => Ok(Token::One(word.clone())),
            Arg::List(alternatives) if !alternatives.is_empty() => alternatives
                .iter()
                .map(|a| match a {
                    Arg::Str(word) if !word.is_empty() => Ok(word.clone()),
                    _ => Err("`pattern`: alternatives must be non-empty strings".to_owned()),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Token::Any),
            _ => Err("`pattern`: each element is a non-empty string or a list of them".into()),
        })
        .collect()
}

fn examples(key: &str, value: &Arg) -> Result<Vec<Value>, String> {
    let Arg::List(items) = value else {
        return Err(format!("`{key}` must be a list"));
    };
    items
        .iter()
        .map(|item| match item {
            Arg::Str(command) => Ok(json!(command)),
            Arg::List(words) => {
                let words: Option<Vec<&str>> = words.iter().map(Arg::as_str).collect();
                words
                    .map(|argv| json!({ "argv": argv }))
                    .ok_or_else(|| format!("`{key}`: a word list holds strings only"))
            }
            Arg::Ident(_) => Err(format!("`{key}`: examples are strings or word lists")),
        })
        .collect()
}

/// `requirements.toml`: its `[rules] prefix_rules`; its other keys are listed as not imported.
fn requirements(path: &Path, text: &str) -> Result<Import> {
    let table = parse_toml(path, text)?;
    let mut import = Import::default();
    let mut names = Names::default();
    let line = |key: &str| text.find(key).map_or(1, |at| line_of(text, at));
    for (key, value) in &table {
        if key != "rules" {
            import.unsupported.push((
                Origin { file: path.to_owned(), line: line(key), text: key.clone() },
                "acp-gate does not set Codex's approval policy, sandbox or other settings; it gates what the agent asks for".into(),
            ));
            continue;
        }
        let rules = value
            .get("prefix_rules")
            .and_then(toml::Value::as_array)
            .ok_or_else(|| {
                anyhow!(
                    "{}:{}: `rules.prefix_rules` must be a list of rules",
                    path.display(),
                    line("prefix_rules")
                )
            })?;
        let mut from = 0;
        for (i, entry) in rules.iter().enumerate() {
            let at_line = text[from..]
                .find("pattern")
                .map_or(line("prefix_rules"), |at| {
                    from += at + 1;
                    line_of(text, from)
                });
            let origin = Origin {
                file: path.to_owned(),
                line: at_line,
                text: format!("rules.prefix_rules[{i}]"),
            };
            let rule = requirement(entry, &mut names).map_err(|why| {
                anyhow!(
                    "{}:{}: `rules.prefix_rules[{i}]`: {why}",
                    path.display(),
                    at_line
                )
            })?;
            add(&mut import, rule, origin);
        }
    }
    add_checks(&mut import);
    Ok(import)
}

/// One `{ pattern = [{ token = ".." } | { any_of = [..] }], decision, justification }`.
fn requirement(entry: &toml::Value, names: &mut Names) -> Result<Rule, String> {
    let table = entry.as_table().ok_or("a rule must be a table")?;
    let mut args = Vec::new();
    for (key, value) in table {
        let arg = match key.as_str() {
            "pattern" => {
                let tokens = value.as_array().ok_or("`pattern` must be a list")?;
                let mut items = Vec::new();
                for token in tokens {
                    let item = match (token.get("token"), token.get("any_of")) {
                        (Some(toml::Value::String(word)), None) => Arg::Str(word.clone()),
                        (None, Some(toml::Value::Array(words))) => Arg::List(
                            words
                                .iter()
                                .map(|w| w.as_str().map(|s| Arg::Str(s.to_owned())))
                                .collect::<Option<_>>()
                                .ok_or("`any_of` holds strings only")?,
                        ),
                        _ => return Err(
                            "each `pattern` element is `{ token = \"..\" }` or `{ any_of = [..] }`"
                                .into(),
                        ),
                    };
                    items.push(item);
                }
                Arg::List(items)
            }
            "decision" | "justification" => Arg::Str(
                value
                    .as_str()
                    .ok_or(format!("`{key}` must be a string"))?
                    .to_owned(),
            ),
            other => {
                return Err(format!(
                    "unknown key `{other}` (pattern, decision, justification)"
                ));
            }
        };
        args.push((key.clone(), arg));
    }
    let call = Call {
        name: "prefix_rule".into(),
        args,
        line: 0,
        text: String::new(),
    };
    prefix_rule(&call, names)
}

/// A value in a call: a string, a list, or a bare name (`True`).
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    Str(String),
    List(Vec<Arg>),
    Ident(String),
}

impl Arg {
    fn as_str(&self) -> Option<&str> {
        match self {
            Arg::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A top-level call: `name(key = value, ...)`.
struct Call {
    name: String,
    args: Vec<(String, Arg)>,
    line: usize,
    text: String,
}

/// The Starlark subset rules files use: comments, top-level calls with keyword arguments,
/// strings (single, double, triple-quoted, raw), lists, bare names.
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
        bail!(
            "{}:{}: {why}",
            self.path.display(),
            line_of(self.text, self.at)
        )
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
            if trimmed.starts_with('#') {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip();
        let hit = self.rest().starts_with(c);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn ident(&mut self) -> Option<String> {
        self.skip();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
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
                return self.error(format!("expected `(` after `{name}`"));
            }
            let mut args = Vec::new();
            while !self.eat(')') {
                let Some(key) = self.ident() else {
                    return self.error(format!("`{name}` takes keyword arguments (`key = value`)"));
                };
                if !self.eat('=') {
                    return self.error(format!("expected `=` after `{key}`"));
                }
                let value = self.value()?;
                args.push((key, value));
                if !self.eat(',') && !self.rest().trim_start().starts_with(')') {
                    self.skip();
                    return self.error("expected `,` or `)`");
                }
            }
            let text = one_line(&self.text[start..self.at]);
            calls.push(Call {
                name,
                args,
                line: line_of(self.text, start),
                text,
            });
        }
    }

    fn value(&mut self) -> Result<Arg> {
        self.skip();
        let rest = self.rest();
        if rest.starts_with('[') {
            self.at += 1;
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
        let raw = rest.starts_with(['r', 'R']) && rest[1..].starts_with(['"', '\'']);
        if raw || rest.starts_with(['"', '\'']) {
            return self.string(raw).map(Arg::Str);
        }
        match self.ident() {
            Some(name) => Ok(Arg::Ident(name)),
            None => self.error("expected a string, a list or a name"),
        }
    }

    fn string(&mut self, raw: bool) -> Result<String> {
        if raw {
            self.at += 1;
        }
        let rest = self.rest();
        let quote = &rest[..1];
        let triple = rest.starts_with(&quote.repeat(3));
        let delimiter = if triple {
            quote.repeat(3)
        } else {
            quote.to_owned()
        };
        let start = self.at;
        self.at += delimiter.len();
        let mut out = String::new();
        loop {
            let rest = self.rest();
            if rest.starts_with(&delimiter) {
                self.at += delimiter.len();
                return Ok(out);
            }
            let Some(c) = rest.chars().next() else {
                self.at = start;
                return self.error("this string is not closed");
            };
            if c == '\n' && !triple {
                self.at = start;
                return self.error("this string is not closed on its line");
            }
            self.at += c.len_utf8();
            if c == '\\' && !raw {
                let Some(next) = self.rest().chars().next() else {
                    continue;
                };
                self.at += next.len_utf8();
                out.push(match next {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                });
            } else {
                out.push(c);
            }
        }
    }
}

/// A call's text on one line, without comments, shortened to about 100 characters.
fn one_line(call: &str) -> String {
    let words: Vec<&str> = call
        .lines()
        .map(|l| l.split(" #").next().unwrap_or(l))
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect();
    let text = words
        .join(" ")
        .replace("( ", "(")
        .replace(", )", ")")
        .replace(",)", ")");
    match text.char_indices().nth(100) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

/// Writes org-policy rules as a Codex `.rules` file: the rules that are command prefixes.
pub fn export(rules: &[Rule]) -> Export {
    let mut text = String::from(
        "# Written by `acp-gate policy export --to codex`: the org-policy rules that are command\n# prefixes, as Codex prefix rules.\n",
    );
    let mut unexpressed = Vec::new();
    for rule in rules {
        let only_commands = rule.kinds.as_deref().is_none_or(|k| k == ["execute"]);
        let (Some(prefix), true) = (&rule.prefix, only_commands) else {
            unexpressed.push((
                rule.name.clone(),
                "Codex rules are command prefixes only".into(),
            ));
            continue;
        };
        let extra = [
            (rule.regex.is_some(), "a regex"),
            (rule.paths.is_some(), "path globs"),
            (rule.tools.is_some(), "tool names"),
            (rule.domains.is_some(), "domains"),
            (rule.title.is_some(), "a title"),
            (rule.priority.is_some_and(|p| p != 0), "a priority"),
        ];
        if let Some((_, what)) = extra.iter().find(|(has, _)| *has) {
            unexpressed.push((rule.name.clone(), format!("Codex rules have no {what}")));
            continue;
        }
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let tokens: Vec<String> = prefix
            .iter()
            .map(|t| match t {
                Token::One(w) => quote(w),
                Token::Any(ws) => format!(
                    "[{}]",
                    ws.iter().map(|w| quote(w)).collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        let decision = match rule.decision {
            Decision::Allow => "allow",
            Decision::Ask => "prompt",
            Decision::Deny => "forbidden",
        };
        text.push_str(&format!(
            "\n# {}\nprefix_rule(\n    pattern = [{}],\n    decision = \"{decision}\",\n",
            rule.name,
            tokens.join(", ")
        ));
        if let Some(reason) = &rule.reason {
            text.push_str(&format!("    justification = {},\n", quote(reason)));
        }
        let examples = |list: &[Value]| -> Vec<String> {
            list.iter()
                .filter_map(|e| match e {
                    Value::String(s) => Some(quote(s)),
                    other => other["argv"].as_array().map(|argv| {
                        let words: Vec<String> =
                            argv.iter().filter_map(Value::as_str).map(quote).collect();
                        format!("[{}]", words.join(", "))
                    }),
                })
                .collect()
        };
        for (key, list) in [("match", &rule.matches), ("not_match", &rule.not_match)] {
            let list = examples(list);
            if !list.is_empty() {
                text.push_str(&format!("    {key} = [{}],\n", list.join(", ")));
            }
        }
        text.push_str(")\n");
    }
    Export { text, unexpressed }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules of Codex's rules docs and execpolicy README.
    const DOCS: &str = r#"
# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],
    decision = "prompt",
    justification = "Viewing PRs is allowed with approval",
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
prefix_rule(pattern = ["git", ["push", "fetch"]], match = [["git", "push", "origin"]])
prefix_rule(
    pattern = ["rm"],
    decision = 'forbidden',
    justification = """Use `trash` instead of `rm`.""",
    match = ["rm -rf build"],
)
host_executable(name = "git", paths = ["/usr/bin/git"])
"#;

    fn docs() -> Import {
        import(Path::new("team.rules"), DOCS).unwrap()
    }

    #[test]
    fn the_documented_rules_import_as_org_policy_rules() {
        let import = docs();
        assert_eq!(import.rules.len(), 3);
        let gh = &import.rules[0];
        assert_eq!(gh.decision, Decision::Ask);
        assert_eq!(
            gh.reason.as_deref(),
            Some("Viewing PRs is allowed with approval")
        );
        assert_eq!(
            gh.prefix,
            Some(vec![
                Token::One("gh".into()),
                Token::One("pr".into()),
                Token::One("view".into())
            ])
        );
        assert_eq!(gh.matches.len(), 3);
        assert_eq!(gh.not_match, [json!("gh pr --repo openai/codex view 7888")]);
        assert_eq!(gh.origin.line, 3);
        // `decision` defaults to allow; word-list examples are argv examples.
        let git = &import.rules[1];
        assert_eq!(git.decision, Decision::Allow);
        assert_eq!(
            git.prefix.as_ref().unwrap()[1],
            Token::Any(vec!["push".into(), "fetch".into()])
        );
        assert_eq!(git.matches, [json!({ "argv": ["git", "push", "origin"] })]);
        assert_eq!(import.rules[2].decision, Decision::Deny);
        assert_eq!(
            import.rules[2].reason.as_deref(),
            Some("Use `trash` instead of `rm`.")
        );
        assert_eq!(import.unsupported.len(), 1);
        // The not_match example is left to the rest of the file: no rule of it matches.
        let check = import
            .checks
            .iter()
            .find(|c| c.example == json!("gh pr --repo openai/codex view 7888"))
            .unwrap();
        assert_eq!(check.expected, None);
    }

    #[test]
    fn mistakes_name_the_line() {
        let err = |text: &str| import(Path::new("x.rules"), text).unwrap_err().to_string();
        assert!(
            err("\n\nprefix_rule(pattern = [\"a\"], decision = \"block\")")
                .starts_with("x.rules:3: decision `block`")
        );
        assert!(
            err("prefix_rule(\n  pattern = [\"a\n\"])")
                .starts_with("x.rules:2: this string is not closed")
        );
        assert!(err("load(\"x\")").contains("keyword arguments"));
        assert!(
            err("exec_rule(pattern = [\"a\"])")
                .contains("`exec_rule(..)` is not a Codex rule function")
        );
        assert!(err("prefix_rule(decision = \"allow\")").contains("`pattern` is required"));
        assert!(
            err("prefix_rule(pattern = [\"a\"], colour = \"red\")")
                .contains("unknown argument `colour`")
        );
    }

    #[test]
    fn requirements_toml_rules_import_and_the_rest_is_listed() {
        let text = r#"
allowed_approval_policies = ["untrusted", "on-request"]
allowed_sandbox_modes = ["read-only", "workspace-write"]

[rules]
prefix_rules = [
    { pattern = [{ token = "rm" }], decision = "forbidden", justification = "Use git clean -fd instead." },
    { pattern = [{ token = "git" }, { any_of = ["push", "commit"] }], decision = "prompt", justification = "Require review before mutating history." },
]
"#;
        let import = import(Path::new("requirements.toml"), text).unwrap();
        assert_eq!(import.rules.len(), 2);
        assert_eq!(import.rules[0].decision, Decision::Deny);
        assert_eq!(
            import.rules[1].prefix.as_ref().unwrap()[1],
            Token::Any(vec!["push".into(), "commit".into()])
        );
        assert_eq!(import.rules[1].origin.line, 8);
        assert_eq!(import.unsupported.len(), 2);
        let err = super::import(
            Path::new("requirements.toml"),
            "[rules]\nprefix_rules = [{ pattern = [{ word = \"rm\" }] }]",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`rules.prefix_rules[0]`"), "{err}");
    }

    #[test]
    fn export_then_import_keeps_the_rules() {
        let first = docs();
        let exported = export(&first.rules);
        assert!(exported.unexpressed.is_empty());
        let second = import(Path::new("again.rules"), &exported.text).unwrap();
        let strip = |rules: &[Rule]| -> Vec<Rule> {
            rules
                .iter()
                .map(|r| Rule {
                    origin: Origin::default(),
                    stricter: Vec::new(),
                    ..r.clone()
                })
                .collect()
        };
        assert_eq!(
            strip(&first.rules),
            strip(&second.rules),
            "{}",
            exported.text
        );
        // What a prefix rule cannot say is listed.
        let regex = Rule {
            name: "exact".into(),
            regex: Some("^make$".into()),
            ..Rule::default()
        };
        assert_eq!(export(&[regex]).unexpressed.len(), 1);
    }

    #[test]
    fn shell_words_split_like_shlex() {
        assert_eq!(
            shell_words(r#"git commit -m "a b" 'c d' e\ f"#),
            ["git", "commit", "-m", "a b", "c d", "e f"]
        );
    }
}
