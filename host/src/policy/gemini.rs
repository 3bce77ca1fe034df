//! Gemini CLI's policy TOML (`[[rule]]` tables) as org-policy rules, and back.
//!
//! The format (Gemini CLI's `docs/reference/policy-engine.md`, checked against its loader
//! `packages/core/src/policy/toml-loader.ts` and `utils.ts`):
//! - a rule has `toolName` (a name or a list, `*` wildcards), `mcpName`, `argsPattern` (a regex
//!   over the call's JSON arguments), `commandPrefix` (a string or a list) or `commandRegex`
//!   (only with `toolName = "run_shell_command"`, not together, not with `argsPattern`),
//!   `decision = "allow" | "deny" | "ask_user"`, `priority` (an integer 0-999, required),
//!   `modes`, `interactive`, `subagent`, `toolAnnotations`, `allowRedirection` and
//!   `denyMessage`;
//! - the highest-priority matching rule decides, per sub-command of a compound shell command;
//!   a file's tier adds to its priorities (`tier + priority / 1000`: user 4, admin 5). Here a
//!   rule's org-policy `priority` is `tier * 1000 + priority`, so the order holds across files;
//! - `commandPrefix = "git status"` matches `"command":"git status` followed by a space or the
//!   end: the words `git status` and anything after them, which is an org-policy `prefix`;
//!   `commandRegex = R` matches `"command":"R`, from the start of the command;
//! - MCP tools are `mcp_SERVER_TOOL`; `mcpName = "s"` is every tool of server `s`.
//!
//! A rule limited to some modes, environments, subagents or tool annotations, or narrowed by
//! `argsPattern`, cannot be stated exactly: a deny or ask is imported for every call of its tool
//! (stricter, noted), an allow is not imported (listed).

use std::path::Path;

use anyhow::{Result, anyhow};
use serde_json::json;

use super::{
    Check, Decision, Export, Import, Names, Origin, Rule, Token, check_forms, escape_regex,
    line_of, parse_toml, plain_words, prefix_commands, tools,
};

/// Every key Gemini CLI's loader accepts in a `[[rule]]`.
const KEYS: &[&str] = &[
    "toolName",
    "subagent",
    "mcpName",
    "argsPattern",
    "commandPrefix",
    "commandRegex",
    "decision",
    "priority",
    "modes",
    "interactive",
    "toolAnnotations",
    "allowRedirection",
    "allow_redirection",
    "denyMessage",
    "deny_message",
];

/// Gemini CLI's tier of a policy file, from where it is: its admin directories, else the
/// user's.
fn tier(path: &Path) -> i64 {
    let admin = [
        "/etc/gemini-cli/policies",
        "/Library/Application Support/GeminiCli/policies",
        "C:\\ProgramData\\gemini-cli\\policies",
    ];
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    if admin.iter().any(|dir| absolute.starts_with(dir)) {
        5
    } else {
        4
    }
}

/// Reads one Gemini CLI policy file.
pub fn import(path: &Path, text: &str) -> Result<Import> {
    let file = parse_toml(path, text)?;
    let tier = tier(path);
    let mut import = Import {
        derived_examples: true,
        ..Import::default()
    };
    let mut names = Names::default();
    let headers: Vec<usize> = text
        .match_indices("[[rule]]")
        .map(|(at, _)| line_of(text, at))
        .collect();
    for (key, value) in &file {
        let origin = Origin {
            file: path.to_owned(),
            line: text.find(key.as_str()).map_or(1, |at| line_of(text, at)),
            text: format!("[[{key}]]"),
        };
        match key.as_str() {
            "rule" => {}
            "safety_checker" => {
                import.unsupported.push((
                    origin,
                    "Gemini CLI's safety checkers run its own code; in acp-gate that is a plugin"
                        .into(),
                ));
                continue;
            }
            other => {
                return Err(anyhow!(
                    "{}:{}: unknown table `{other}` (rule, safety_checker)",
                    path.display(),
                    origin.line
                ));
            }
        }
        let rules = value
            .as_array()
            .ok_or_else(|| anyhow!("{}: `rule` must be [[rule]] tables", path.display()))?;
        for (i, rule) in rules.iter().enumerate() {
            let line = headers.get(i).copied().unwrap_or(1);
            let table = rule.as_table().ok_or_else(|| {
                anyhow!("{}:{line}: rule #{}: not a table", path.display(), i + 1)
            })?;
            let origin = Origin {
                file: path.to_owned(),
                line,
                text: summary(table),
            };
            let at = |why: String| anyhow!("{}:{line}: rule #{}: {why}", path.display(), i + 1);
            match convert(table, tier, &mut names).map_err(at)? {
                Converted::Rules(rules) => {
                    for mut rule in rules {
                        rule.origin = origin.clone();
                        for example in &rule.matches {
                            import.checks.push(Check {
                                example: example.clone(),
                                expected: Some(rule.decision),
                                meant: None,
                                origin: origin.clone(),
                            });
                        }
                        import.rules.push(rule);
                    }
                }
                Converted::Unsupported(why) => import.unsupported.push((origin, why)),
            }
        }
    }
    // Gemini CLI matches `commandPrefix` against the command's text from its start: another
    // form of the command is not matched.
    check_forms(&mut import, |_, _, _, _| None);
    Ok(import)
}

/// `toolName = .., commandPrefix = .., decision = ..` in one line.
fn summary(table: &toml::Table) -> String {
    [
        "toolName",
        "mcpName",
        "commandPrefix",
        "commandRegex",
        "argsPattern",
        "decision",
        "priority",
    ]
    .iter()
    .filter_map(|k| table.get(*k).map(|v| format!("{k} = {v}")))
    .collect::<Vec<_>>()
    .join(", ")
}

enum Converted {
    Rules(Vec<Rule>),
    Unsupported(String),
}

fn strings(table: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(toml::Value::Array(list)) => list
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a string or a list of strings")),
        Some(_) => Err(format!("`{key}` must be a string or a list of strings")),
    }
}

fn string<'t>(table: &'t toml::Table, key: &str) -> Result<Option<&'t str>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or(format!("`{key}` must be a string")),
    }
}

/// One `[[rule]]`, checked as Gemini CLI's loader checks it.
fn convert(table: &toml::Table, tier: i64, names: &mut Names) -> Result<Converted, String> {
    if let Some(key) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unknown key `{key}` ({})", KEYS.join(", ")));
    }
    let decision = match string(table, "decision")? {
        Some("allow") => Decision::Allow,
        Some("ask_user") => Decision::Ask,
        Some("deny") => Decision::Deny,
        Some(other) => return Err(format!("`decision = \"{other}\"`: allow, deny or ask_user")),
        None => return Err("`decision` is required".into()),
    };
    let priority = match table.get("priority") {
        Some(toml::Value::Integer(p)) if (0..=999).contains(p) => *p,
        Some(_) => return Err("`priority` must be an integer from 0 to 999".into()),
        None => return Err("`priority` is required".into()),
    };
    let tool_names = strings(table, "toolName")?;
    let mcp = string(table, "mcpName")?;
    let prefixes = strings(table, "commandPrefix")?;
    let regex = string(table, "commandRegex")?;
    let args = string(table, "argsPattern")?;
    if prefixes.is_some() || regex.is_some() {
        if tool_names.as_deref() != Some(&["run_shell_command".to_owned()]) {
            return Err("commandPrefix and commandRegex can only be used with toolName = \"run_shell_command\"".into());
        }
        if args.is_some() {
            return Err("cannot use both commandPrefix/commandRegex and argsPattern".into());
        }
        if prefixes.is_some() && regex.is_some() {
            return Err("cannot use both commandPrefix and commandRegex".into());
        }
    }
    if tool_names.is_none() && mcp.is_none() {
        return Err("`toolName` is required (or `mcpName`)".into());
    }
    let reason = string(table, "denyMessage")?
        .or(string(table, "deny_message")?)
        .map(str::to_owned);

    // What narrows the rule in ways acp-gate cannot see.
    let mut narrowed = Vec::new();
    let modes = strings(table, "modes")?.unwrap_or_default();
    if !modes.is_empty() && !modes.iter().any(|m| m == "default") {
        narrowed.push(format!("only in Gemini CLI's {modes:?} mode(s)"));
    }
    for (key, what) in [
        ("interactive", "only in (non-)interactive runs"),
        ("subagent", "only for one subagent"),
        ("toolAnnotations", "only for tools with some annotations"),
        (
            "argsPattern",
            "only for some arguments (a regex over their JSON)",
        ),
    ] {
        if table.contains_key(key) {
            narrowed.push(what.to_owned());
        }
    }
    if !narrowed.is_empty() && decision == Decision::Allow {
        return Ok(Converted::Unsupported(format!(
            "an allow {}: acp-gate cannot tell when it applies, so it does not allow",
            narrowed.join(", ")
        )));
    }

    let base = Rule {
        decision,
        priority: Some(tier * 1000 + priority),
        reason: match decision {
            Decision::Allow => None,
            _ => Some(reason.unwrap_or_else(|| {
                format!(
                    "Gemini CLI policy: {} ({})",
                    summary(table),
                    if decision == Decision::Deny {
                        "deny"
                    } else {
                        "ask_user"
                    }
                )
            })),
        },
        stricter: narrowed
            .iter()
            .map(|n| format!("Gemini CLI applies it {n}; acp-gate to every such call"))
            .collect(),
        ..Rule::default()
    };

    let mut rules = Vec::new();
    if let Some(server) = mcp {
        let tool = tool_names
            .as_ref()
            .and_then(|t| t.first().cloned())
            .unwrap_or_else(|| "*".into());
        let mut rule = base.clone();
        rule.name = names.make(&["gemini-mcp", server, &tool]);
        rule.tools = Some(mcp_names(server, &tool));
        rule.matches.push(json!({ "kind": "other", "tool": format!("mcp_{}_{}", server.replace('*', "srv"), tool.replace('*', "tool")) }));
        return Ok(Converted::Rules(vec![rule]));
    }
    let tool_names = tool_names.unwrap_or_default();
    if tool_names == ["run_shell_command"] && (prefixes.is_some() || regex.is_some()) {
        for prefix in prefixes.iter().flatten() {
            let mut rule = base.clone();
            rule.name = names.make(&["gemini", prefix]);
            rule.kinds = Some(vec!["execute".into()]);
            match plain_words(prefix) {
                Some(words) => {
                    rule.matches.push(json!(words.join(" ")));
                    rule.prefix = Some(words.into_iter().map(Token::One).collect());
                }
                // Quotes or operators in the prefix: the same text from the start, then a
                // space or the end.
                None => rule.regex = Some(format!("^{}(\\s|$)", escape_regex(prefix.trim()))),
            }
            rules.push(rule);
        }
        if let Some(regex) = regex {
            let mut rule = base.clone();
            rule.name = names.make(&["gemini-regex", regex]);
            rule.kinds = Some(vec!["execute".into()]);
            rule.regex = Some(format!("^(?:{regex})"));
            rule.stricter.push("Gemini CLI tests the regex against the command inside its JSON arguments (quotes escaped, from the start); acp-gate tests it against each simple command's text".into());
            rules.push(rule);
        }
        return Ok(Converted::Rules(rules));
    }
    for tool in &tool_names {
        let mut rule = base.clone();
        rule.name = names.make(&["gemini", tool]);
        if tool == "*" {
            rule.kinds = Some(
                [
                    "read",
                    "edit",
                    "delete",
                    "move",
                    "search",
                    "execute",
                    "think",
                    "fetch",
                    "switch_mode",
                    "other",
                ]
                .map(String::from)
                .to_vec(),
            );
            rule.matches
                .push(json!({ "kind": "other", "tool": "any_tool" }));
        } else if tool == "run_shell_command" {
            rule.kinds = Some(vec!["execute".into()]);
            rule.matches.push(json!("make"));
        } else if let Some(server) = tool.strip_prefix("mcp_") {
            let (server, name) = server.split_once('_').unwrap_or((server, "*"));
            rule.tools = Some(mcp_names(server, name));
            rule.matches
                .push(json!({ "kind": "other", "tool": tool.replace('*', "x") }));
        } else {
            rule.tools = Some(vec![tool.clone()]);
            let kind = tools::find(tool).map_or("other", |t| t.kinds[0]);
            rule.matches
                .push(json!({ "kind": kind, "tool": tool.replace('*', "x") }));
        }
        rules.push(rule);
    }
    Ok(Converted::Rules(rules))
}

/// An MCP tool's names in Gemini CLI's form (`mcp_SERVER_TOOL`) and Claude Code's
/// (`mcp__SERVER__TOOL`), so that the rule holds for either agent.
fn mcp_names(server: &str, tool: &str) -> Vec<String> {
    let (server, tool) = (server, if tool.is_empty() { "*" } else { tool });
    if server == "*" && tool == "*" {
        return vec!["mcp_*".into()];
    }
    vec![
        format!("mcp_{server}_{tool}"),
        format!("mcp__{server}__{tool}"),
    ]
}

/// Writes org-policy rules as a Gemini CLI policy file.
pub fn export(rules: &[Rule]) -> Export {
    let mut text = String::from(
        "# Written by `acp-gate policy export --to gemini`. Put it in ~/.gemini/policies/ (user)\n\
         # or /etc/gemini-cli/policies/ (admin).\n",
    );
    let mut unexpressed = Vec::new();
    for rule in rules {
        match export_rule(rule) {
            Ok(tables) => text.push_str(&tables),
            Err(why) => unexpressed.push((rule.name.clone(), why)),
        }
    }
    Export { text, unexpressed }
}

fn export_rule(rule: &Rule) -> Result<String, String> {
    for (has, what) in [
        (rule.paths.is_some(), "path globs"),
        (rule.domains.is_some(), "domains"),
        (rule.title.is_some(), "a title regex"),
    ] {
        if has {
            return Err(format!("Gemini CLI rules have no {what}"));
        }
    }
    // Without a priority, org-policy's deny > ask > allow is Gemini CLI's order by priority.
    let priority = match rule.priority {
        Some(p) => p.rem_euclid(1000),
        None => match rule.decision {
            Decision::Deny => 300,
            Decision::Ask => 200,
            Decision::Allow => 100,
        },
    };
    let decision = match rule.decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask_user",
        Decision::Deny => "deny",
    };
    let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let mut keys: Vec<String> = Vec::new();
    if let Some(prefix) = &rule.prefix {
        keys.push("toolName = \"run_shell_command\"".into());
        keys.push(format!(
            "commandPrefix = {}",
            toml_list(prefix_commands(prefix))
        ));
    } else if let Some(regex) = &rule.regex {
        let body = regex.strip_prefix('^').ok_or_else(|| {
            format!("regex `{regex}` is not anchored at the start, as Gemini CLI's commandRegex is")
        })?;
        keys.push("toolName = \"run_shell_command\"".into());
        keys.push(format!(
            "commandRegex = {}",
            quote(
                body.strip_prefix("(?:")
                    .and_then(|b| b.strip_suffix(')'))
                    .unwrap_or(body)
            )
        ));
    } else if let Some(names) = &rule.tools {
        let mut gemini: Vec<String> = Vec::new();
        let mut mcp_server = None;
        for name in names {
            if let Some(rest) = name.strip_prefix("mcp__") {
                continue_if_pair(&mut mcp_server, rest, "__");
            } else if let Some(rest) = name.strip_prefix("mcp_") {
                continue_if_pair(&mut mcp_server, rest, "_");
            } else {
                match tools::find(name).and_then(|t| t.gemini.first()) {
                    Some(n) => gemini.push(n.to_string()),
                    None => gemini.push(name.clone()),
                }
            }
        }
        if let Some((server, tool)) = mcp_server {
            keys.push(format!("mcpName = {}", quote(&server)));
            if tool != "*" {
                keys.push(format!("toolName = {}", quote(&tool)));
            }
        } else {
            gemini.dedup();
            keys.push(format!("toolName = {}", toml_list(gemini)));
        }
    } else if let Some(kinds) = &rule.kinds {
        let mut gemini: Vec<&str> = tools::TOOLS
            .iter()
            .filter(|t| kinds.iter().any(|k| k == t.kinds[0]))
            .flat_map(|t| t.gemini.first().copied())
            .collect();
        if kinds.len() >= 10 {
            gemini = vec!["*"];
        }
        if gemini.is_empty() {
            return Err(format!("no Gemini CLI tool has the kinds {kinds:?}"));
        }
        keys.push(format!("toolName = {}", toml_list(gemini)));
    } else {
        return Err("no condition Gemini CLI can state".into());
    }
    let mut table = format!("\n# {}\n[[rule]]\n", rule.name);
    for key in keys {
        table.push_str(&key);
        table.push('\n');
    }
    table.push_str(&format!(
        "decision = \"{decision}\"\npriority = {priority}\n"
    ));
    if let (Decision::Deny, Some(reason)) = (rule.decision, &rule.reason) {
        table.push_str(&format!("denyMessage = {}\n", quote(reason)));
    }
    Ok(table)
}

/// `["a", "b"]`, as TOML writes it.
fn toml_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<toml::Value> = items
        .into_iter()
        .map(|s| toml::Value::String(s.as_ref().to_owned()))
        .collect();
    toml::Value::Array(items).to_string()
}

/// Records the MCP server and tool of `rest` (`SERVER<sep>TOOL`).
fn continue_if_pair(found: &mut Option<(String, String)>, rest: &str, sep: &str) {
    if found.is_none() {
        let (server, tool) = rest.split_once(sep).unwrap_or((rest, "*"));
        *found = Some((server.to_owned(), tool.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of Gemini CLI's policy-engine docs and its default policies.
    const DOCS: &str = include_str!("../../../tests/fixtures/policies/gemini-policy.toml");

    fn docs() -> Import {
        import(Path::new("/home/u/.gemini/policies/team.toml"), DOCS).unwrap()
    }

    #[test]
    fn the_documented_rules_import_with_their_priorities() {
        let import = docs();
        let named = |name: &str| import.rules.iter().find(|r| r.name == name).unwrap();
        let rm = named("gemini-rm-rf");
        assert_eq!(rm.decision, Decision::Deny);
        assert_eq!(
            rm.prefix,
            Some(vec![Token::One("rm".into()), Token::One("-rf".into())])
        );
        assert_eq!(rm.priority, Some(4100));
        assert_eq!(rm.origin.line, 3);
        assert_eq!(named("gemini-git-status").priority, Some(4200));
        assert!(named("gemini-git-log").prefix.is_some());
        let all = named("gemini-run_shell_command");
        assert_eq!(
            (all.kinds.clone(), all.priority),
            (Some(vec!["execute".into()]), Some(4010))
        );
        assert_eq!(
            named("gemini-regex-git-commit-push").regex.as_deref(),
            Some("^(?:git (commit|push))")
        );
        assert_eq!(
            named("gemini-write_file").tools,
            Some(vec!["write_file".into()])
        );
        assert_eq!(named("gemini-replace").decision, Decision::Ask);
        let mcp = named("gemini-mcp-untrusted-server");
        assert_eq!(
            mcp.reason.as_deref(),
            Some("This server is not trusted by the admin.")
        );
        assert_eq!(
            mcp.tools,
            Some(vec![
                "mcp_untrusted-server_*".into(),
                "mcp__untrusted-server__*".into()
            ])
        );
        // The autoEdit-only allow is listed, not imported.
        assert_eq!(import.unsupported.len(), 1);
        assert!(import.unsupported[0].1.contains("autoEdit"));
    }

    #[test]
    fn mistakes_name_the_line_and_key() {
        let err = |text: &str| import(Path::new("p.toml"), text).unwrap_err().to_string();
        assert!(
            err("[[rule]]\ntoolName = \"x\"\ndecision = \"maybe\"\npriority = 1")
                .starts_with("p.toml:1: rule #1: `decision = \"maybe\"`")
        );
        assert!(
            err("[[rule]]\ntoolName = \"x\"\ndecision = \"allow\"\npriority = 1000")
                .contains("0 to 999")
        );
        assert!(
            err("[[rule]]\ntoolName = \"x\"\ndecision = \"allow\"")
                .contains("`priority` is required")
        );
        assert!(err("\n[[rule]]\ntoolName = \"read_file\"\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 1").starts_with("p.toml:2: rule #1: commandPrefix and commandRegex can only be used"));
        assert!(err("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"a\"\ncommandRegex = \"b\"\ndecision = \"deny\"\npriority = 1").contains("both commandPrefix and commandRegex"));
        assert!(
            err("[[rule]]\ntoolname = \"x\"\ndecision = \"deny\"\npriority = 1")
                .contains("unknown key `toolname`")
        );
        assert!(err("[[rule]]\ntoolName = \"x\"\ndecision = \n").starts_with("p.toml:3"));
    }

    #[test]
    fn admin_files_outrank_user_files() {
        let text = "[[rule]]\ntoolName = \"web_fetch\"\ndecision = \"deny\"\npriority = 1\n";
        let admin = import(Path::new("/etc/gemini-cli/policies/a.toml"), text).unwrap();
        let user = import(Path::new("/home/u/.gemini/policies/a.toml"), text).unwrap();
        assert_eq!(admin.rules[0].priority, Some(5001));
        assert_eq!(user.rules[0].priority, Some(4001));
    }

    #[test]
    fn narrowed_denies_cover_every_call_and_narrowed_allows_are_listed() {
        let text = "[[rule]]\ntoolName = \"write_file\"\nargsPattern = '\"file_path\":\".*\\\\.env\"'\ndecision = \"deny\"\npriority = 5\n\n[[rule]]\ntoolName = \"write_file\"\nargsPattern = 'docs/'\ndecision = \"allow\"\npriority = 6\n";
        let import = import(Path::new("p.toml"), text).unwrap();
        assert_eq!(import.rules.len(), 1);
        assert_eq!(import.rules[0].decision, Decision::Deny);
        assert!(import.rules[0].stricter[0].contains("some arguments"));
        assert_eq!(import.unsupported.len(), 1);
    }

    #[test]
    fn export_then_import_keeps_the_rules() {
        let first = docs();
        let exported = export(&first.rules);
        assert!(
            exported.unexpressed.is_empty(),
            "{:?}",
            exported.unexpressed
        );
        let second = import(
            Path::new("/home/u/.gemini/policies/again.toml"),
            &exported.text,
        )
        .unwrap();
        let key = |r: &Rule| {
            (
                r.decision,
                r.priority,
                r.kinds.clone(),
                r.tools.clone(),
                r.prefix.clone(),
                r.regex.clone(),
            )
        };
        let mut a: Vec<_> = first.rules.iter().map(key).collect();
        let mut b: Vec<_> = second.rules.iter().map(key).collect();
        a.sort_by_key(|k| format!("{k:?}"));
        b.sort_by_key(|k| format!("{k:?}"));
        assert_eq!(a, b, "{}", exported.text);
        let paths = Rule {
            name: "p".into(),
            paths: Some(vec!["src/**".into()]),
            ..Rule::default()
        };
        assert_eq!(export(&[paths]).unexpressed.len(), 1);
    }
}
