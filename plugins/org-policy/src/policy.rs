//! Judging one request against the rules, and checking the rules' `match` / `not_match` examples.
//!
//! Precedence: every matching rule counts, and deny > ask > allow. For a command, deny and ask
//! rules apply when ANY of its simple commands matches; allow applies only when EVERY simple
//! command is matched by some allow rule (so nothing it runs is left unjudged) and no deny or ask
//! rule matched. A command that does not parse is never allowed. No rule matching is abstain.

use acp_gate_plugin::{Request, ToolKind, Verdict};

use crate::commands::{self, Commands};
use crate::config::{rule_pointer, tool_kind};
use crate::examples::{Example, ExampleRequest};
use crate::rules::{Decision, Places, RequestFacts, Rule};

mod index;
use index::{Index, Tried};

/// What the rules look at in a request.
#[derive(Clone, Debug)]
pub struct Facts {
    pub kind: ToolKind,
    pub tool: Option<String>,
    pub title: String,
    /// Absolute, normalised paths.
    pub paths: Vec<String>,
    /// The URLs the request fetches (only read when a rule has `domains`).
    pub urls: Vec<String>,
    pub commands: Commands,
    pub places: Places,
}

impl Facts {
    /// The facts of `request`; its URLs only when `urls` (a rule has `domains`).
    pub fn of_request(request: &Request, urls: bool) -> Facts {
        let home = request.home_dir.as_str();
        let commands = match &request.command {
            None => Commands::None,
            Some(c) => commands::of_request(c, home, &request.cwd),
        };
        Facts {
            kind: request.kind,
            tool: request.tool_name.clone(),
            title: request.title.clone(),
            paths: request.paths.iter().map(|p| p.absolute.clone()).collect(),
            urls: if urls {
                urls_of(&request.raw_json, &request.title)
            } else {
                Vec::new()
            },
            commands,
            places: places(home, &request.workspace_roots, &request.cwd),
        }
    }

    /// The request an example stands for, in the same home and workspace.
    pub fn of_example(example: &Example, places: &Places) -> Result<Facts, String> {
        let short;
        let r = match example {
            Example::Command(command) => {
                short = ExampleRequest {
                    command: Some(command.clone()),
                    ..ExampleRequest::default()
                };
                &short
            }
            Example::Request(r) => r,
        };
        let has_command = r.command.is_some() || r.argv.is_some();
        let kind = match &r.kind {
            Some(k) => tool_kind(k).ok_or_else(|| format!("unknown tool kind `{k}`"))?,
            None if has_command => ToolKind::Execute,
            None => ToolKind::Read,
        };
        let cwd = places.workspace.as_deref().unwrap_or("");
        let command = acp_gate_plugin::CommandLine {
            argv: r.argv.clone(),
            shell: r.command.clone(),
        };
        let commands = commands::of_request(&command, &places.home, cwd);
        let paths = r
            .path
            .iter()
            .chain(&r.paths)
            .map(|p| absolute(p, places))
            .collect();
        Ok(Facts {
            kind,
            tool: r.tool.clone(),
            title: r
                .title
                .clone()
                .or_else(|| r.command.clone())
                .unwrap_or_default(),
            paths,
            urls: r.url.iter().cloned().collect(),
            commands,
            places: places.clone(),
        })
    }

    fn request_facts(&self) -> RequestFacts<'_> {
        RequestFacts {
            kind: self.kind,
            tool: self.tool.as_deref(),
            title: &self.title,
            paths: &self.paths,
            urls: &self.urls,
            places: &self.places,
        }
    }
}

/// The URLs in a request: every `http(s)://` URL in the strings of its `rawInput` (a `url`
/// without a scheme counts as `https://`) and in its title.
fn urls_of(raw_json: &str, title: &str) -> Vec<String> {
    fn walk(value: &serde_json::Value, inside: bool, texts: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) if inside => texts.push(s.clone()),
            serde_json::Value::Array(items) => {
                items.iter().for_each(|v| walk(v, inside, texts));
            }
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    if inside && key == "url" && v.as_str().is_some_and(|u| !u.contains("://")) {
                        texts.push(format!("https://{}", v.as_str().unwrap_or_default()));
                    } else {
                        walk(v, inside || key == "rawInput", texts);
                    }
                }
            }
            _ => {}
        }
    }
    let mut texts = vec![title.to_owned()];
    if let Ok(raw) = serde_json::from_str::<serde_json::Value>(raw_json) {
        walk(&raw, false, &mut texts);
    }
    let mut urls = Vec::new();
    for text in &texts {
        for (at, _) in text.match_indices("://") {
            let start = text[..at]
                .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '+' && c != '-' && c != '.')
                .map_or(0, |i| i + 1);
            let scheme = text[start..at].to_ascii_lowercase();
            if scheme != "http" && scheme != "https" {
                continue;
            }
            let end = text[at..]
                .find(|c: char| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | ']' | '`')
                })
                .map_or(text.len(), |i| at + i);
            let url = &text[start..end];
            if !urls.iter().any(|u| u == url) {
                urls.push(url.to_owned());
            }
        }
    }
    urls
}

/// The home and the first workspace root (or the working directory when there is none).
pub fn places(home: &str, workspace_roots: &[String], cwd: &str) -> Places {
    let workspace = workspace_roots
        .first()
        .cloned()
        .or_else(|| (!cwd.is_empty()).then(|| cwd.to_owned()));
    Places {
        home: home.to_owned(),
        workspace,
    }
}

/// An example's path made absolute (`~/`, relative to the workspace) and folded lexically.
fn absolute(path: &str, places: &Places) -> String {
    let joined = if path == "~" || path.starts_with("~/") {
        format!("{}{}", places.home, &path[1..])
    } else if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{}/{path}", places.workspace.as_deref().unwrap_or(""))
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    format!("/{}", segments.join("/"))
}

/// The verdict of `rules` on a request, trying every rule: the reference [`Policy::judge`]
/// must agree with.
///
/// The request is judged in units: one per simple command of a parsed command, else one for
/// the whole request. In each unit, of the rules that fire there, only those of the highest
/// `priority` count. Any counted deny denies, then any counted ask asks; an allow needs every
/// unit covered by a counted allow (a `bash -c SCRIPT` unit needs none: SCRIPT's commands do).
pub fn judge(rules: &[Rule], facts: &Facts) -> Verdict {
    let mut firing = Firing::new(facts);
    let request = facts.request_facts();
    for rule in rules {
        if rule.request_conditions_hold(&request) {
            firing.add(rule, facts, 0..firing.commands.len());
        }
    }
    firing.verdict(facts)
}

/// Rules compiled once, with the index that finds the few that can fire on a request.
#[derive(Clone, Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    index: Index,
    /// Whether a rule has `domains`.
    urls: bool,
}

impl Policy {
    /// Indexes `rules`, keeping their order (each unit's rules, and so the reasons, follow it).
    pub fn new(rules: Vec<Rule>) -> Policy {
        Policy {
            index: Index::new(&rules),
            urls: rules.iter().any(Rule::judges_urls),
            rules,
        }
    }

    /// The rules, in their order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether a rule looks at the URLs a request fetches ([`Facts::of_request`]'s `urls`).
    pub fn judges_urls(&self) -> bool {
        self.urls
    }

    /// The verdict of the rules on a request: [`judge`]'s, from the index's candidates only
    /// (a rule it leaves out cannot fire on the request), visited in rule order.
    pub fn judge(&self, facts: &Facts) -> Verdict {
        let mut firing = Firing::new(facts);
        let request = facts.request_facts();
        let candidates = self.index.candidates(facts);
        for group in candidates.chunk_by(|a, b| a.0 == b.0) {
            let rule = &self.rules[group[0].0];
            if !rule.request_conditions_hold(&request) {
                continue;
            }
            let every = 0..firing.commands.len();
            let tried = group.iter().flat_map(|&(_, tried)| match tried {
                Tried::Command(at) => at..at + 1,
                Tried::Every => every.clone(),
            });
            firing.add(rule, facts, tried);
        }
        firing.verdict(facts)
    }
}

/// For each unit of a request, the rules that fire there, in the order they were added.
struct Firing<'f, 'r> {
    /// The simple commands of a parsed command, one unit each; empty otherwise (one unit).
    commands: &'f [commands::SimpleCommand],
    units: Vec<Vec<&'r Rule>>,
}

impl<'f, 'r> Firing<'f, 'r> {
    fn new(facts: &'f Facts) -> Firing<'f, 'r> {
        let commands: &[commands::SimpleCommand] = match &facts.commands {
            Commands::Parsed(c) if !c.is_empty() => c,
            _ => &[],
        };
        Firing {
            commands,
            units: vec![Vec::new(); commands.len().max(1)],
        }
    }

    /// Adds `rule`, whose request conditions hold, to the units where it fires. Its command
    /// conditions are tried on the simple commands numbered `tried` only (the rest must be
    /// known not to match; each number once).
    fn add(&mut self, rule: &'r Rule, facts: &Facts, tried: impl Iterator<Item = usize>) {
        match (&facts.commands, rule.judges_commands()) {
            (_, false) => self.units.iter_mut().for_each(|unit| unit.push(rule)),
            (Commands::None, true) => {}
            (Commands::Parsed(_), true) => {
                for i in tried {
                    if rule.matches_command(&self.commands[i]) {
                        self.units[i].push(rule);
                    }
                }
            }
            (Commands::Unparseable { raw, pieces, .. }, true) => {
                if rule.matches_raw(raw, pieces) {
                    self.units[0].push(rule);
                }
            }
        }
    }

    /// The verdict of the rules that fire, per unit (see [`judge`]).
    fn verdict(&self, facts: &Facts) -> Verdict {
        let mut denies: Vec<&Rule> = Vec::new();
        let mut asks: Vec<&Rule> = Vec::new();
        let mut first_allow: Option<&Rule> = None;
        let mut covered = true;
        for (i, unit) in self.units.iter().enumerate() {
            let top = unit.iter().map(|r| r.priority).max();
            let counted = unit.iter().filter(|r| Some(r.priority) == top);
            let mut allowed = self.commands.get(i).is_some_and(|c| c.needs_no_allow());
            for rule in counted {
                let list = match rule.decision {
                    Decision::Deny => &mut denies,
                    Decision::Ask => &mut asks,
                    Decision::Allow => {
                        allowed = true;
                        first_allow.get_or_insert(rule);
                        continue;
                    }
                };
                if !list.iter().any(|r| std::ptr::eq(*r, *rule)) {
                    list.push(rule);
                }
            }
            covered &= allowed;
        }
        let reasons = |rules: &[&Rule]| {
            rules
                .iter()
                .map(|r| format!("{} [{}]", r.reason, r.name))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if !denies.is_empty() {
            return Verdict::Deny(reasons(&denies));
        }
        if !asks.is_empty() {
            return Verdict::Ask(reasons(&asks));
        }
        let Some(first) = first_allow else {
            return Verdict::Abstain;
        };
        match &facts.commands {
            Commands::Unparseable { error, .. } => Verdict::Ask(format!(
                "the command cannot be parsed ({error}), so allow rule `{}` does not apply",
                first.name
            )),
            // Every simple command must be covered; `true && x` is not allowed by a rule for `true`.
            _ if covered => Verdict::Allow,
            _ => Verdict::Abstain,
        }
    }
}

/// What a verdict decides, without its reason.
pub fn decision_of(verdict: &Verdict) -> Option<Decision> {
    match verdict {
        Verdict::Allow => Some(Decision::Allow),
        Verdict::Ask(_) => Some(Decision::Ask),
        Verdict::Deny(_) => Some(Decision::Deny),
        Verdict::Abstain => None,
    }
}

/// Checks every rule's examples: a `match` example must get the rule's decision from the rule
/// alone, a `not_match` example must not. The first failure is an error that starts with the
/// example's JSON pointer (`/rules/3/match/1: `) and names the rule and the example.
pub fn check_examples(rules: &[Rule], places: &Places) -> Result<(), String> {
    for (number, rule) in rules.iter().enumerate() {
        let alone = std::slice::from_ref(rule);
        for (key, examples, wanted) in [
            ("match", &rule.matches, true),
            ("not_match", &rule.not_match, false),
        ] {
            for (i, example) in examples.iter().enumerate() {
                let at = rule_pointer(number, &format!("{key}/{i}"));
                let facts = Facts::of_example(example, places)
                    .map_err(|e| format!("{at}: rule `{}`: example {example}: {e}", rule.name))?;
                let verdict = judge(alone, &facts);
                if (decision_of(&verdict) == Some(rule.decision)) != wanted {
                    let outcome = match wanted {
                        true => "does not match it",
                        false => "matches it",
                    };
                    return Err(format!(
                        "{at}: rule `{}`: `{key}` example {example} fails: the rule {outcome} (alone it gives {})",
                        rule.name,
                        decision_of(&verdict).map_or("abstain", Decision::as_str)
                    ));
                }
            }
        }
    }
    Ok(())
}
