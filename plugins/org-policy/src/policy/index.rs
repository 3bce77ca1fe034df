//! Which rules can fire on a request, found by its tool kind, its programs' names, its URLs'
//! hosts and its paths.
//!
//! A rule is filed under every kind its `kinds` allow (a rule without `kinds` under every kind),
//! and there by what it needs of the request:
//!
//! - a `prefix`: a simple command whose first word is literal and has the normalised name
//!   (`commands::program_name`) of one of the first token's alternatives, exactly what
//!   `rules::prefix_matches` requires first, whether the rule is generous or not;
//! - a `regex` alone: a command (parsed or not);
//! - no command condition but `domains`: a URL whose host is one of them, or under a
//!   `*.parent` one (see [`keys_of_domains`]);
//! - no command condition but `paths` whose every glob has a literal segment: a path with that
//!   segment (see [`key_of_glob`]);
//! - nothing else: any request.
//!
//! A rule filed nowhere for a request cannot fire on it, so judging only the candidates gives
//! the linear verdict.

use std::collections::BTreeMap;

use acp_gate_plugin::ToolKind;

use crate::commands::{Commands, SimpleCommand, program_name};
use crate::policy::Facts;
use crate::rules::{Condition, Rule, host_of};

/// Which of a request's simple commands a candidate rule is tried on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tried {
    /// The simple command at this position (the only ones whose program the rule names).
    Command(usize),
    /// Every one.
    Every,
}

/// The rules filed by kind, then by what they need of the request.
#[derive(Clone, Debug)]
pub struct Index {
    /// The kinds some rule lists in its `kinds`, each with the rules it allows.
    kinds: Vec<(ToolKind, Shelf)>,
    /// For a kind no rule lists: the rules without `kinds`.
    unlisted: Shelf,
}

/// The rules that allow one kind, by what they need of the request; rule numbers ascending.
#[derive(Clone, Debug, Default)]
struct Shelf {
    /// The rules without command conditions, not filed in `paths`: candidates for any request.
    anywhere: Vec<usize>,
    /// `anywhere` and the rules with a `regex` and no `prefix`: candidates for a request with
    /// a command.
    with_command: Vec<usize>,
    /// The rules with a `prefix`, by the normalised names of its first token's alternatives.
    programs: BTreeMap<String, Vec<usize>>,
    /// The rules without command conditions whose `paths` globs all have a key, by those keys.
    paths: BTreeMap<String, Vec<usize>>,
    /// The rules without command conditions with `domains`, by the domain each names (for
    /// `*.parent`, the parent).
    domains: BTreeMap<String, Vec<usize>>,
}

impl Index {
    /// Files every rule of `rules`, by its position in the slice.
    pub fn new(rules: &[Rule]) -> Index {
        let mut listed: Vec<ToolKind> = Vec::new();
        for rule in rules {
            for condition in &rule.conditions {
                if let Condition::Kinds(kinds) = condition {
                    for kind in kinds {
                        if !listed.contains(kind) {
                            listed.push(*kind);
                        }
                    }
                }
            }
        }
        Index {
            kinds: listed
                .into_iter()
                .map(|kind| (kind, Shelf::new(rules, Some(kind))))
                .collect(),
            unlisted: Shelf::new(rules, None),
        }
    }

    /// The rules that may fire on the request of `facts`, ascending by rule number, each with
    /// the simple commands it is tried on.
    pub fn candidates(&self, facts: &Facts) -> Vec<(usize, Tried)> {
        let shelf = self
            .kinds
            .iter()
            .find(|(k, _)| *k == facts.kind)
            .map_or(&self.unlisted, |(_, shelf)| shelf);
        // The simple commands whose programs are looked up: for a command that does not parse,
        // its rough pieces (`Rule::matches_raw` tries them).
        let commands: Option<&[SimpleCommand]> = match &facts.commands {
            Commands::Parsed(c) if !c.is_empty() => Some(c),
            Commands::None | Commands::Parsed(_) => None,
            Commands::Unparseable { pieces, .. } => Some(pieces),
        };
        let mut found: Vec<(usize, Tried)> = Vec::new();
        for path in &facts.paths {
            for segment in path.split('/').filter(|s| !s.is_empty()) {
                if let Some(rules) = shelf.paths.get(segment.to_lowercase().as_str()) {
                    found.extend(rules.iter().map(|&r| (r, Tried::Every)));
                }
            }
        }
        for host in facts.urls.iter().filter_map(|url| host_of(url)) {
            // The host, and each parent domain a `*.parent` pattern could name.
            let parents = host.match_indices('.').map(|(at, _)| &host[at + 1..]);
            for key in std::iter::once(host.as_str()).chain(parents) {
                if let Some(rules) = shelf.domains.get(key) {
                    found.extend(rules.iter().map(|&r| (r, Tried::Every)));
                }
            }
        }
        for (at, command) in commands.unwrap_or_default().iter().enumerate() {
            // As `prefix_matches`: a first word known only at run time matches no prefix.
            let Some(head) = command.words.first().filter(|w| !w.dynamic) else {
                continue;
            };
            if let Some(rules) = shelf.programs.get(program_name(&head.text).as_str()) {
                found.extend(rules.iter().map(|&r| (r, Tried::Command(at))));
            }
        }
        found.sort_unstable();
        found.dedup();
        let always = match commands {
            Some(_) => &shelf.with_command,
            None => &shelf.anywhere,
        };
        // A rule is in `always` or found, never both: merge the two ascending.
        let mut merged = Vec::with_capacity(always.len() + found.len());
        let mut found = found.into_iter().peekable();
        for &rule in always {
            while let Some(f) = found.next_if(|(r, _)| *r < rule) {
                merged.push(f);
            }
            merged.push((rule, Tried::Every));
        }
        merged.extend(found);
        merged
    }
}

impl Shelf {
    /// The shelf of the rules that allow `kind` (`None`: a kind no rule lists).
    fn new(rules: &[Rule], kind: Option<ToolKind>) -> Shelf {
        let mut shelf = Shelf::default();
        for (number, rule) in rules.iter().enumerate() {
            let allowed = rule.conditions.iter().all(|c| match c {
                Condition::Kinds(kinds) => kind.is_some_and(|k| kinds.contains(&k)),
                _ => true,
            });
            if !allowed {
                continue;
            }
            let prefix = rule.conditions.iter().find_map(|c| match c {
                Condition::Prefix(prefix) => Some(prefix),
                _ => None,
            });
            match prefix {
                // An empty prefix matches nothing: the rule is filed nowhere.
                Some(prefix) => {
                    let alternatives = prefix.first().map_or(&[][..], |t| t.alternatives());
                    let keys = alternatives.iter().map(|a| program_name(a));
                    file(&mut shelf.programs, keys, number);
                }
                None if rule.judges_commands() => shelf.with_command.push(number),
                None => {
                    if let Some(keys) = keys_of_domains(rule) {
                        file(&mut shelf.domains, keys, number);
                    } else if let Some(keys) = keys_of_paths(rule) {
                        file(&mut shelf.paths, keys, number);
                    } else {
                        shelf.anywhere.push(number);
                        shelf.with_command.push(number);
                    }
                }
            }
        }
        shelf
    }
}

/// Files rule `number` under each of `keys` (once per key; rules come in ascending order).
fn file(
    map: &mut BTreeMap<String, Vec<usize>>,
    keys: impl IntoIterator<Item = String>,
    number: usize,
) {
    for key in keys {
        let numbers = map.entry(key).or_default();
        if numbers.last() != Some(&number) {
            numbers.push(number);
        }
    }
}

/// The keys of a rule's first `domains` condition: each domain as `rules::domain_matches`
/// reads it (trailing dots dropped, lower-cased), `*.parent` as its parent. A domain rule fires
/// only on a request with a URL whose host matches one of its domains (any URL for deny and
/// ask, every URL and at least one for allow): that host is the domain itself, or has the
/// parent as a suffix after a dot, and [`Index::candidates`] looks up the host and each such
/// suffix.
fn keys_of_domains(rule: &Rule) -> Option<impl Iterator<Item = String>> {
    let domains = rule.conditions.iter().find_map(|c| match c {
        Condition::Domains(domains) => Some(domains),
        _ => None,
    })?;
    Some(domains.iter().map(|d| {
        let d = d.trim_end_matches('.').to_ascii_lowercase();
        d.strip_prefix("*.")
            .map_or_else(|| d.clone(), str::to_owned)
    }))
}

/// The keys of a rule's first `paths` condition (all its conditions must hold), when every
/// glob has one: a request path without any of them matches none of its globs, and the rule,
/// generous (any path) or strict (every path, and there is one), cannot fire.
fn keys_of_paths(rule: &Rule) -> Option<Vec<String>> {
    let globs = rule.conditions.iter().find_map(|c| match c {
        Condition::Paths(globs) => Some(globs),
        _ => None,
    })?;
    globs.iter().map(|g| key_of_glob(g)).collect()
}

/// A segment every path the glob matches has, lower-cased (request path segments are looked up
/// lower-cased): the glob's last literal segment of its own (none: `None`).
///
/// `rules::PathGlob::matcher` hands the SDK's matcher the glob as written, or a relative one
/// after the workspace root with `./` trimmed; `~` stands for the home. Every other segment of
/// the glob as written is then a segment of the SDK's pattern, and the SDK matches each such
/// segment against one path segment, a literal one (no `*` or `?`) only against the same text:
/// equal for an allow rule (ignoring ASCII case for a glob naming a file at any depth), equal
/// lower-cased for a deny or ask rule, so always equal lower-cased. `~`, `.` and `..` are left
/// out (the first two are not pattern segments as written).
fn key_of_glob(glob: &str) -> Option<String> {
    glob.split('/')
        .rfind(|s| !matches!(*s, "" | "~" | "." | "..") && !s.contains(['*', '?']))
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::from_shell;
    use crate::config::Config;
    use crate::rules::Places;
    use serde_json::json;

    fn rules(json: serde_json::Value) -> Vec<Rule> {
        serde_json::from_value::<Config>(json!({ "rules": json }))
            .unwrap()
            .compile()
            .unwrap()
    }

    fn facts(kind: ToolKind, shell: Option<&str>, paths: &[&str]) -> Facts {
        Facts {
            kind,
            tool: None,
            title: String::new(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            urls: Vec::new(),
            commands: shell.map_or(Commands::None, |s| from_shell(s, "/h", "/w")),
            places: Places {
                home: "/h".into(),
                workspace: Some("/w".into()),
            },
        }
    }

    #[test]
    fn a_request_meets_only_the_rules_for_its_programs_and_paths() {
        let mut list: Vec<serde_json::Value> = (0..1000)
            .map(|i| json!({ "name": format!("p{i}"), "decision": "allow", "prefix": [format!("tool{i}"), "run"] }))
            .collect();
        list.push(json!({ "name": "rx", "decision": "allow", "regex": "^x" }));
        list.push(json!({ "name": "edits", "decision": "allow", "kinds": ["edit"] }));
        list.push(json!({ "name": "git", "decision": "allow", "prefix": [["Git", "/usr/bin/git"], "status"] }));
        list.push(json!({ "name": "keys", "decision": "deny", "reason": "k", "kinds": ["edit"], "paths": ["~/.SSH/*", "secrets/**"] }));
        list.push(json!({ "name": "pem", "decision": "deny", "reason": "k", "kinds": ["edit"], "paths": ["**/*.pem"] }));
        let index = Index::new(&rules(serde_json::Value::Array(list)));
        let shell = "tool7 run && /usr/local/bin/GIT status | $X y";
        assert_eq!(
            index.candidates(&facts(ToolKind::Execute, Some(shell), &[])),
            [
                (7, Tried::Command(0)),
                (1000, Tried::Every),
                (1002, Tried::Command(1))
            ]
        );
        assert_eq!(index.candidates(&facts(ToolKind::Execute, None, &[])), []);
        assert_eq!(
            index.candidates(&facts(ToolKind::Edit, None, &["/w/src/a.rs"])),
            [(1001, Tried::Every), (1004, Tried::Every)]
        );
        assert_eq!(
            index.candidates(&facts(
                ToolKind::Edit,
                None,
                &["/H/.ssh/id", "/w/secrets/k"]
            )),
            [
                (1001, Tried::Every),
                (1003, Tried::Every),
                (1004, Tried::Every)
            ]
        );
        assert_eq!(
            index.candidates(&facts(ToolKind::Edit, Some("echo 'open"), &[])),
            [
                (1000, Tried::Every),
                (1001, Tried::Every),
                (1004, Tried::Every)
            ]
        );
    }

    #[test]
    fn a_glob_is_keyed_by_its_last_literal_segment_of_its_own() {
        assert_eq!(key_of_glob("~/.SSH/**").as_deref(), Some(".ssh"));
        assert_eq!(key_of_glob("./src/*.rs").as_deref(), Some("src"));
        assert_eq!(key_of_glob("/etc/ssh/x?.conf").as_deref(), Some("ssh"));
        assert_eq!(key_of_glob("**/*.pem"), None);
        assert_eq!(key_of_glob("~"), None);
        assert_eq!(key_of_glob("../*"), None);
    }
}
