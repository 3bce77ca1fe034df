//! Judging one request against the rules, and checking the rules' `match` / `not_match` examples.
//!
//! Precedence: every matching rule counts, and deny > ask > allow. For a command, deny and ask
//! rules apply when ANY of its simple commands matches; allow applies only when EVERY simple
//! command is matched by some allow rule (so nothing it runs is left unjudged) and no deny or ask
//! rule matched. A command that does not parse is never allowed. No rule matching is abstain.

use acp_gate_plugin::{Request, ToolKind, Verdict};

use crate::commands::{self, Commands};
use crate::config::{Example, ExampleRequest, tool_kind};
use crate::rules::{Decision, Places, Rule};

/// What the rules look at in a request.
#[derive(Clone, Debug)]
pub struct Facts {
    pub kind: ToolKind,
    pub tool: Option<String>,
    pub title: String,
    /// Absolute, normalised paths.
    pub paths: Vec<String>,
    pub commands: Commands,
    pub places: Places,
}

impl Facts {
    pub fn of_request(request: &Request) -> Facts {
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
            commands,
            places: places.clone(),
        })
    }
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

/// The verdict of `rules` on a request.
pub fn judge(rules: &[Rule], facts: &Facts) -> Verdict {
    let mut denies = Vec::new();
    let mut asks = Vec::new();
    // Allow rules whose request conditions hold, and which simple commands they cover.
    let mut allows: Vec<&Rule> = Vec::new();
    let commands: &[commands::SimpleCommand] = match &facts.commands {
        Commands::Parsed(c) => c,
        _ => &[],
    };
    // `bash -c SCRIPT` itself needs no allow rule: the commands of SCRIPT do.
    let mut covered: Vec<bool> = commands.iter().map(|c| c.needs_no_allow()).collect();
    for rule in rules {
        let holds = rule.request_conditions_hold(
            facts.kind,
            facts.tool.as_deref(),
            &facts.title,
            &facts.paths,
            &facts.places,
        );
        if !holds {
            continue;
        }
        let fires = match (&facts.commands, rule.judges_commands()) {
            (_, false) => {
                covered.iter_mut().for_each(|c| *c = true);
                true
            }
            (Commands::None, true) => false,
            (Commands::Parsed(_), true) if rule.generous() => {
                commands.iter().any(|c| rule.matches_command(c))
            }
            (Commands::Parsed(_), true) => {
                let mut any = false;
                for (i, c) in commands.iter().enumerate() {
                    if rule.matches_command(c) {
                        covered[i] = true;
                        any = true;
                    }
                }
                any
            }
            (Commands::Unparseable { raw, pieces, .. }, true) => rule.matches_raw(raw, pieces),
        };
        if !fires {
            continue;
        }
        match rule.decision {
            Decision::Deny => denies.push(rule),
            Decision::Ask => asks.push(rule),
            Decision::Allow => allows.push(rule),
        }
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
    let Some(first) = allows.first() else {
        return Verdict::Abstain;
    };
    match &facts.commands {
        Commands::Unparseable { error, .. } => Verdict::Ask(format!(
            "the command cannot be parsed ({error}), so allow rule `{}` does not apply",
            first.name
        )),
        // Every simple command must be covered; `true && x` is not allowed by a rule for `true`.
        Commands::Parsed(_) if covered.iter().all(|c| *c) => Verdict::Allow,
        Commands::Parsed(_) => Verdict::Abstain,
        Commands::None => Verdict::Allow,
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
/// alone, a `not_match` example must not. The first failure is an error naming the rule and
/// the example.
pub fn check_examples(rules: &[Rule], places: &Places) -> Result<(), String> {
    for rule in rules {
        let alone = std::slice::from_ref(rule);
        for (examples, wanted) in [(&rule.matches, true), (&rule.not_match, false)] {
            for example in examples {
                let facts = Facts::of_example(example, places)
                    .map_err(|e| format!("rule `{}`: example {example}: {e}", rule.name))?;
                let verdict = judge(alone, &facts);
                if (decision_of(&verdict) == Some(rule.decision)) != wanted {
                    let (key, outcome) = if wanted {
                        ("match", "does not match it")
                    } else {
                        ("not_match", "matches it")
                    };
                    return Err(format!(
                        "rule `{}`: `{key}` example {example} fails: the rule {outcome} (alone it gives {})",
                        rule.name,
                        decision_of(&verdict).map_or("abstain", Decision::as_str)
                    ));
                }
            }
        }
    }
    Ok(())
}
