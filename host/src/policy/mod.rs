//! Other agents' permission rules as acp-gate policy: import Claude Code, Codex and Gemini CLI
//! rule files into `builtin:org-policy` rules, and export org-policy rules back to them.
//!
//! Every importer reads its format into [`Rule`]s, the org-policy rule schema plus where each
//! rule came from ([`Origin`]), what it could not express ([`Import::unsupported`]) and the
//! format's own examples with the decision its agent gives them ([`Import::checks`]), and each
//! deny or ask command rule's command in the [`forms`] the agent's matching misses, which
//! acp-gate must decide at least as the rule does. The [`tools`] map says which agent tool
//! names are the same tool.

pub mod claude;
pub mod codex;
pub mod gemini;
#[path = "../../../plugins/sdk/src/tools.rs"]
pub mod tools;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The rule formats acp-gate reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Claude Code's `permissions.allow / ask / deny` in settings.json (or managed settings).
    Claude,
    /// Codex's `prefix_rule(...)` rules files (`.rules`, Starlark) and `requirements.toml`.
    Codex,
    /// Gemini CLI's policy TOML (`[[rule]]` tables).
    Gemini,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
        }
    }
}

/// What a rule decides, in org-policy's words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    #[default]
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// One token of an org-policy `prefix`: a word, or alternatives.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Token {
    One(String),
    Any(Vec<String>),
}

/// Where a rule came from: the file, its line (1-based) and the text there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    pub line: usize,
    pub text: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.text)
    }
}

/// One `builtin:org-policy` rule (see `plugins/org-policy/src/config.rs`), with its origin.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Vec<Token>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Examples the rule must match (org-policy `match`): a command string or a short request
    /// table (`{ kind, path, tool, title, url, ... }`).
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_match: Vec<Value>,
    /// Where the rule came from.
    #[serde(skip)]
    pub origin: Origin,
    /// Where acp-gate decides differently from the source agent on purpose, and why.
    #[serde(skip)]
    pub stricter: Vec<String>,
}

/// A documented example of the source format: a request in org-policy's short example form
/// and the decision the source agent gives it (`None`: no rule applies there).
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub example: Value,
    pub expected: Option<Decision>,
    /// For another form of a rule's command ([`forms`]): the rule's decision, which acp-gate
    /// must give it at least, whatever the source agent does.
    pub meant: Option<Decision>,
    pub origin: Origin,
}

/// Another way to write a command: what the source agents' own matching may miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `/usr/bin/git push`.
    AbsolutePath,
    /// `bash -c 'git push'`.
    Shell,
    /// `sudo git push`.
    Sudo,
    /// `env X=1 git push`.
    Env,
    /// `timeout 5 git push`.
    Timeout,
    /// `git -C . push`: an option before the sub-command.
    Option,
}

/// One documented global option of each CLI whose options org-policy's prefix rules read past
/// (all of them are in plugins/shell/src/subcommand.rs), for the [`Form::Option`] form; other
/// programs get an option no table lists, which a deny or ask rule reads past too.
const GLOBAL_OPTIONS: &[(&str, &str)] = &[
    ("kubectl", "-n prod"),
    ("helm", "--namespace=prod"),
    ("docker", "-H tcp://build:2375"),
    ("podman", "--log-level debug"),
    ("terraform", "-chdir=infra"),
    ("pulumi", "--cwd infra"),
    ("cargo", "+nightly --locked"),
    ("npm", "--prefix web"),
    ("pnpm", "--filter web"),
    ("yarn", "--cwd web"),
    ("pip", "--disable-pip-version-check"),
    ("uv", "--directory app"),
    ("aws", "--profile p --region eu-west-1"),
    ("gcloud", "--project p"),
    ("az", "--subscription s"),
    ("gh", "-R owner/repo"),
    ("git", "-C ."),
    ("make", "-C build"),
];

/// The other forms of a deny or ask rule's `prefix` command (each token's first alternative):
/// by an absolute path, inside `bash -c`, behind `sudo`, `env` and `timeout`, and with an option
/// before its sub-command. Empty for an allow rule, or a prefix that is not plain words.
pub fn forms(rule: &Rule) -> Vec<(Form, Value)> {
    let Some(prefix) = rule
        .prefix
        .as_ref()
        .filter(|_| rule.decision != Decision::Allow)
    else {
        return Vec::new();
    };
    let first: Vec<&str> = prefix
        .iter()
        .filter_map(|t| match t {
            Token::One(w) => Some(w.as_str()),
            Token::Any(ws) => ws.first().map(String::as_str),
        })
        .collect();
    let Some(words) = plain_words(&first.join(" ")).filter(|w| w.len() == prefix.len()) else {
        return Vec::new();
    };
    let (program, rest) = (&words[0], words[1..].join(" "));
    let command = words.join(" ");
    let name = program.rsplit('/').next().unwrap_or(program);
    let mut forms = vec![
        (Form::AbsolutePath, format!("/usr/bin/{name} {rest}")),
        (Form::Shell, format!("bash -c '{command}'")),
        (Form::Sudo, format!("sudo {command}")),
        (Form::Env, format!("env LC_ALL=C {command}")),
        (Form::Timeout, format!("timeout 60 {command}")),
    ];
    if !rest.is_empty() {
        let option = GLOBAL_OPTIONS
            .iter()
            .find(|(cli, _)| cli.eq_ignore_ascii_case(name))
            .map_or("--verbose", |(_, option)| option);
        forms.push((Form::Option, format!("{program} {option} {rest}")));
    }
    forms
        .into_iter()
        .map(|(form, text)| (form, Value::from(text.trim_end())))
        .collect()
}

/// Checks for the [`forms`] of every deny or ask rule of `import`: acp-gate must decide each at
/// least as the rule does. `source` says what the source agent gives a form, by the file's
/// rules (`None`: no rule of it applies).
pub fn check_forms(
    import: &mut Import,
    source: impl Fn(&[Rule], &Rule, Form, &Value) -> Option<Decision>,
) {
    let mut checks = Vec::new();
    for rule in &import.rules {
        for (form, example) in forms(rule) {
            checks.push(Check {
                expected: source(&import.rules, rule, form, &example),
                meant: Some(rule.decision),
                example,
                origin: rule.origin.clone(),
            });
        }
    }
    import.checks.extend(checks);
}

/// What a rule file said, as org-policy rules.
#[derive(Clone, Debug, Default)]
pub struct Import {
    pub rules: Vec<Rule>,
    /// What the file says that acp-gate cannot express, with why (never dropped silently).
    pub unsupported: Vec<(Origin, String)>,
    pub checks: Vec<Check>,
    /// The rules' examples were made up by the importer (Claude Code and Gemini CLI files have
    /// none), not written by the file's authors: `policy import` writes them for review, a
    /// handler reading the file directly does not check them on every request.
    pub derived_examples: bool,
}

impl Import {
    /// Appends another file's import.
    pub fn extend(&mut self, other: Import) {
        self.derived_examples |= other.derived_examples;
        self.rules.extend(other.rules);
        self.unsupported.extend(other.unsupported);
        self.checks.extend(other.checks);
    }
}

/// Reads the text of one rule file of `format` (its caller read it with the configuration
/// size cap, `config::read_file`). Errors name the file and line, and never quote it.
pub fn import(format: Format, path: &Path, text: &str) -> anyhow::Result<Import> {
    match format {
        Format::Claude => claude::import(path, text),
        Format::Codex => codex::import(path, text),
        Format::Gemini => gemini::import(path, text),
    }
}

/// Rules written in another format, and what could not be.
#[derive(Clone, Debug, Default)]
pub struct Export {
    pub text: String,
    /// Rule name and why it cannot be expressed.
    pub unexpressed: Vec<(String, String)>,
}

/// Writes org-policy `rules` in `format`.
pub fn export(format: Format, rules: &[Rule]) -> Export {
    match format {
        Format::Claude => claude::export(rules),
        Format::Codex => codex::export(rules),
        Format::Gemini => gemini::export(rules),
    }
}

/// `text` as a TOML table; a mistake is `FILE:LINE: message`, without quoting the file (an
/// import may name a file that is not a rule file at all).
pub fn parse_toml(path: &Path, text: &str) -> anyhow::Result<toml::Table> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        anyhow::anyhow!("{}:{line}: {}", path.display(), e.message())
    })
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// `text` as a regex that matches it literally (org-policy's regex syntax).
pub fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The words of `command` when it is plain words (no quotes, expansions or operators) that a
/// prefix can name one by one; `None` otherwise.
pub fn plain_words(command: &str) -> Option<Vec<String>> {
    let words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    let plain = |w: &String| {
        w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    };
    (!words.is_empty() && words.iter().all(plain)).then_some(words)
}

/// `shlex`-style words: whitespace separates, quotes group, a backslash escapes.
pub fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Every command a `prefix` names, one per combination of its alternatives:
/// `["git", ["push", "fetch"]]` is `git push` and `git fetch`.
pub fn prefix_commands(prefix: &[Token]) -> Vec<String> {
    let mut commands = vec![String::new()];
    for token in prefix {
        let words: &[String] = match token {
            Token::One(w) => std::slice::from_ref(w),
            Token::Any(ws) => ws,
        };
        commands = commands
            .iter()
            .flat_map(|c| {
                words
                    .iter()
                    .map(move |w| format!("{c} {w}").trim_start().to_owned())
            })
            .collect();
    }
    commands
}

/// Rule names unique within one import: `base`, then `base-2`, `base-3`, ...
#[derive(Default)]
pub struct Names(std::collections::BTreeSet<String>);

impl Names {
    /// A unique name made of `parts` (lower-case, runs of other characters as `-`).
    pub fn make(&mut self, parts: &[&str]) -> String {
        let mut base = String::new();
        for c in parts.join("-").chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                base.push(c.to_ascii_lowercase());
            } else if !base.ends_with('-') {
                base.push('-');
            }
        }
        let base: String = base.trim_matches('-').chars().take(60).collect();
        let mut name = base.clone();
        let mut n = 1;
        while !self.0.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        name
    }
}

/// The order `handlers.toml` writes a rule's keys in.
const KEYS: &[&str] = &[
    "name",
    "decision",
    "reason",
    "priority",
    "kinds",
    "tools",
    "title",
    "paths",
    "domains",
    "prefix",
    "regex",
    "match",
    "not_match",
];

/// `rules` as a `handlers.toml` with one `builtin:org-policy` handler: `header` (comment lines,
/// with their `#`), the `[[handler]]` table with `handler_keys` (`name = ..` lines), then each
/// rule after its `comments`.
pub fn handlers_toml(
    header: &str,
    handler_keys: &str,
    rules: &[Rule],
    comments: impl Fn(&Rule) -> Vec<String>,
) -> String {
    let mut text =
        format!("{header}\n[[handler]]\n{handler_keys}plugin = \"builtin:org-policy\"\n");
    for rule in rules {
        text.push('\n');
        for line in comments(rule) {
            text.push_str(&format!("# {line}\n"));
        }
        text.push_str("[[handler.config.rules]]\n");
        let Ok(Value::Object(fields)) = serde_json::to_value(rule) else {
            continue;
        };
        for key in KEYS {
            let Some(value) = fields.get(*key) else {
                continue;
            };
            if let Ok(value) = toml::Value::try_from(value) {
                text.push_str(&format!("{key} = {value}\n"));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::tools::TOOLS;

    /// An import may be pointed at a file that is not a rule file (a key, a dotfile): its
    /// error names the line, never quotes it.
    #[test]
    fn a_file_that_is_not_toml_is_not_quoted_in_the_error() {
        let text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n";
        let err = super::parse_toml(std::path::Path::new("id_ed25519"), text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("id_ed25519:1: "), "{err}");
        assert!(!err.contains("OPENSSH") && !err.contains("b3Bl"), "{err}");
        let json = super::claude::import(std::path::Path::new("id_ed25519"), text)
            .unwrap_err()
            .to_string();
        assert!(
            !json.contains("OPENSSH") && !json.contains("b3Bl"),
            "{json}"
        );
    }

    /// docs/policy-formats.md shows the tool-name map as a table: one row per tool, as in code.
    #[test]
    fn the_documented_tool_map_is_the_one_in_code() {
        let docs = include_str!("../../../docs/policy-formats.md");
        let names = |list: &[&str]| match list {
            [] => "—".to_owned(),
            list => list
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        for tool in TOOLS {
            let row = format!(
                "| `{}` | {} | {} | {} | {} |",
                tool.id,
                names(tool.kinds),
                names(tool.claude),
                names(tool.gemini),
                names(tool.codex)
            );
            assert!(
                docs.contains(&row),
                "docs/policy-formats.md lacks the row\n{row}"
            );
        }
    }
}
