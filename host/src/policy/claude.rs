//! Claude Code's permission rules (`permissions.allow / ask / deny` in `settings.json` and
//! managed settings) as org-policy rules, and back.
//!
//! The format, from Claude Code's docs (code.claude.com/docs/en/permissions and /settings):
//! - a rule is `Tool` (every use of the tool) or `Tool(spec)`; deny > ask > allow, whatever the
//!   order or the file (managed settings sit above all others: import them as the org file);
//! - `Bash(spec)`: `npm run build` is that exact command; `npm run test:*` (legacy) and
//!   `npm run test *` are the command and anything after it, at a word boundary; any other `*`
//!   matches any characters (`git * main`, `ls*`); compound commands are split, so an allow for
//!   `safe-cmd *` does not allow `safe-cmd && other-cmd`;
//! - `Read(spec)` and `Edit(spec)`: gitignore-style paths: `//abs` is absolute, `~/p` is in the
//!   home directory, `/p` is relative to the settings file's project, `p` or `./p` relative to
//!   the working directory, and a pattern without a slash matches at any depth. Read rules also
//!   apply to Grep, Glob and LS; Edit rules to every tool that edits files;
//! - `WebFetch(domain:example.com)`, and MCP tools as `mcp__server` / `mcp__server__tool`.
//!
//! acp-gate reads the same rules with real shell parsing, so the bypasses Claude Code's docs
//! admit (`/bin/rm`, `bash -c 'rm ..'`, `git -C . push`) are caught; [`Rule::stricter`] says so.

use std::path::Path;

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use super::{
    Check, Decision, Export, Form, Import, Names, Origin, Rule, Token, check_forms, escape_regex,
    forms, line_of, plain_words, prefix_commands, shell_words,
};

/// Reads one Claude Code settings file.
pub fn import(path: &Path, text: &str) -> Result<Import> {
    let settings: Value = serde_json::from_str(text)
        .map_err(|e| anyhow!("{}:{}: not valid JSON: {e}", path.display(), e.line()))?;
    let mut import = Import {
        derived_examples: true,
        ..Import::default()
    };
    let Some(permissions) = settings.get("permissions") else {
        return Ok(import);
    };
    let permissions = permissions.as_object().ok_or_else(|| {
        anyhow!(
            "{}:{}: `permissions` must be an object",
            path.display(),
            key_line(text, "permissions")
        )
    })?;
    let base = SettingsBase::of(path);
    let mut names = Names::default();
    for (key, value) in permissions {
        let decision = match key.as_str() {
            "deny" => Decision::Deny,
            "ask" => Decision::Ask,
            "allow" => Decision::Allow,
            other => {
                let why = match other {
                    "defaultMode" => {
                        "acp-gate does not set the agent's permission mode; its own mode guard judges mode switches"
                    }
                    "additionalDirectories" => {
                        "acp-gate's workspace is the session's roots; give more with `--workspace`"
                    }
                    "disableBypassPermissionsMode" => {
                        "acp-gate gates every request whatever the agent's mode; builtin:mode-guard asks before a switch to bypassPermissions"
                    }
                    "allowManagedPermissionRulesOnly" => MANAGED_ONLY,
                    _ => "not a permission rule list",
                };
                import
                    .unsupported
                    .push((origin(path, text, key, key), why.to_owned()));
                continue;
            }
        };
        let entries = value.as_array().ok_or_else(|| {
            anyhow!(
                "{}:{}: `permissions.{key}` must be a list of rules",
                path.display(),
                key_line(text, key)
            )
        })?;
        for (i, entry) in entries.iter().enumerate() {
            let at = |why: String| {
                anyhow!(
                    "{}:{}: `permissions.{key}[{i}]`: {why}",
                    path.display(),
                    key_line(text, key)
                )
            };
            let entry = entry.as_str().ok_or_else(|| at("not a string".into()))?;
            let origin = origin(path, text, key, entry);
            let parsed = parse(entry).map_err(&at)?;
            match convert(&parsed, decision, &base, &mut names) {
                Ok(mut rule) => {
                    rule.origin = origin.clone();
                    if decision != Decision::Allow {
                        rule.reason = Some(format!("Claude Code rule `{entry}` ({key} list)"));
                    }
                    for example in &rule.matches {
                        import.checks.push(Check {
                            example: example.clone(),
                            expected: Some(decision),
                            meant: None,
                            origin: origin.clone(),
                        });
                    }
                    // Forms Claude Code's own rule misses (its docs admit some): acp-gate's
                    // catches them, and the written rule says so.
                    rule.matches
                        .extend(forms(&rule).into_iter().map(|(_, form)| form));
                    import.rules.push(rule);
                }
                Err(why) => import.unsupported.push((origin, why)),
            }
        }
    }
    for key in ["hooks", "sandbox", "allowManagedPermissionRulesOnly"] {
        if settings.get(key).is_some() {
            let why = match key {
                "hooks" => {
                    "acp-gate does not run Claude Code hooks; a hook's logic belongs in a plugin (docs/plugin-authors.md)"
                }
                "sandbox" => {
                    "acp-gate does not sandbox the agent's commands; it decides before they run"
                }
                _ => MANAGED_ONLY,
            };
            import
                .unsupported
                .push((origin(path, text, key, key), why.to_owned()));
        }
    }
    // Claude Code strips a few wrappers (`timeout`, `nohup`, ...) before matching; it misses
    // the other forms.
    check_forms(&mut import, |_, rule, form, _| {
        (form == Form::Timeout).then_some(rule.decision)
    });
    Ok(import)
}

/// Why `allowManagedPermissionRulesOnly` has no rule of its own.
const MANAGED_ONLY: &str = "acp-gate's org file does this with `[settings] lower_layers = \"ignore\"`: no project or user handlers.toml then applies";

/// A rule as written: the tool and its spec.
struct Parsed<'a> {
    tool: &'a str,
    spec: Option<&'a str>,
}

fn parse(entry: &str) -> Result<Parsed<'_>, String> {
    let entry = entry.trim();
    let (tool, spec) = match entry.split_once('(') {
        None => (entry, None),
        Some((tool, rest)) => {
            let spec = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("`{entry}`: the `(` is not closed by a final `)`"))?;
            (tool, Some(spec))
        }
    };
    if tool.is_empty()
        || !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-*.".contains(c))
    {
        return Err(format!("`{entry}`: `{tool}` is not a tool name"));
    }
    Ok(Parsed {
        tool,
        spec: spec.filter(|s| !s.is_empty() && *s != "*"),
    })
}

/// Where `/p` path specs point: the project of a `.claude/` settings file, the home directory
/// for the user's, or the settings file's own directory (managed settings).
enum SettingsBase {
    Workspace,
    Home,
    Dir(String),
}

impl SettingsBase {
    fn of(path: &Path) -> SettingsBase {
        let dir = path.parent().unwrap_or(Path::new(""));
        if dir.file_name().is_some_and(|n| n == ".claude") {
            let project = dir.parent().unwrap_or(Path::new(""));
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            if home.is_some_and(|h| h == project) {
                return SettingsBase::Home;
            }
            return SettingsBase::Workspace;
        }
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        SettingsBase::Dir(absolute.display().to_string())
    }
}

fn convert(
    parsed: &Parsed<'_>,
    decision: Decision,
    base: &SettingsBase,
    names: &mut Names,
) -> Result<Rule, String> {
    let Parsed { tool, spec } = *parsed;
    let mut rule = Rule {
        name: names.make(&["claude", tool, spec.unwrap_or("")]),
        decision,
        ..Rule::default()
    };
    let list = |items: &[&str]| Some(items.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    match (tool, spec) {
        ("Bash", None) => rule.kinds = list(&["execute"]),
        ("Bash", Some(spec)) => {
            rule.kinds = list(&["execute"]);
            command_condition(&mut rule, spec);
        }
        ("Read", spec) => {
            rule.kinds = list(&["read", "search"]);
            if let Some(spec) = spec {
                path_condition(&mut rule, spec, base, "read")?;
            }
        }
        ("Edit", spec) | ("Write" | "MultiEdit" | "NotebookEdit", spec @ Some(_)) => {
            rule.kinds = list(&["edit", "delete", "move"]);
            if let Some(spec) = spec {
                path_condition(&mut rule, spec, base, "edit")?;
            }
            if tool != "Edit" {
                rule.stricter.push(format!(
                    "Claude Code's docs give paths to Read and Edit rules; `{tool}(..)` is read as `Edit(..)`, which covers every tool that edits files"
                ));
            }
        }
        ("WebFetch", Some(spec)) => {
            let domain = spec
                .strip_prefix("domain:")
                .ok_or_else(|| format!("`WebFetch({spec})`: only `domain:HOST` specs exist"))?;
            rule.kinds = list(&["fetch"]);
            rule.domains = list(&[domain]);
            rule.matches.push(
                json!({ "kind": "fetch", "url": format!("https://{}/", example_host(domain)) }),
            );
        }
        (mcp, spec) if mcp.starts_with("mcp__") => {
            if spec.is_some() {
                return Err(format!(
                    "`{mcp}(..)`: MCP rules take no spec in Claude Code; write `{mcp}` or `{mcp}__TOOL`"
                ));
            }
            let pattern = match mcp.matches("__").count() {
                1 => format!("{mcp}__*"),
                _ => mcp.to_owned(),
            };
            rule.matches
                .push(json!({ "kind": "other", "tool": pattern.replace('*', "tool") }));
            rule.tools = Some(vec![pattern]);
        }
        (tool, None) => {
            rule.tools = list(&[tool]);
            rule.matches
                .push(json!({ "tool": tool, "kind": tool_kind(tool) }));
        }
        (tool, Some(spec)) if decision != Decision::Allow => {
            // acp-gate does not see what `Task(explore)` or `Skill(x)` names: deny or ask
            // every use of the tool instead.
            rule.tools = list(&[tool]);
            rule.matches
                .push(json!({ "tool": tool, "kind": tool_kind(tool) }));
            rule.stricter.push(format!(
                "acp-gate cannot see `{spec}` in a `{tool}` request, so the rule applies to every `{tool}` request"
            ));
        }
        (tool, Some(spec)) => {
            return Err(format!(
                "`{tool}({spec})`: acp-gate cannot see `{spec}` in a `{tool}` request, and allowing every `{tool}` would allow more than the rule"
            ));
        }
    }
    Ok(rule)
}

/// The ACP kind of a tool's requests, from the tool map.
fn tool_kind(tool: &str) -> &'static str {
    super::tools::find(tool).map_or("other", |t| t.kinds[0])
}

/// `Bash(spec)` as a `prefix` (the command and anything after it) or a `regex`, with examples.
fn command_condition(rule: &mut Rule, spec: &str) {
    let stem = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))
        .filter(|s| !s.contains('*'));
    match stem.and_then(plain_words) {
        Some(words) => {
            let command = words.join(" ");
            rule.prefix = Some(words.into_iter().map(Token::One).collect());
            rule.matches.push(json!(command));
            rule.matches.push(json!(format!("{command} --example")));
        }
        None => {
            let open = stem.is_some();
            // org-policy sees a simple command as its program's name and its words, unquoted.
            let text = command_text(stem.unwrap_or(spec));
            let body = if open {
                format!("{}(\\s.*)?", escape_regex(&text))
            } else {
                text.split('*')
                    .map(escape_regex)
                    .collect::<Vec<_>>()
                    .join(".*")
            };
            rule.regex = Some(format!("^{body}$"));
            if !text.contains(['$', '`', '\\', '|', ';', '&', '<', '>', '(']) {
                rule.matches.push(json!(text.replace('*', "x")));
            }
        }
    }
    if rule.decision == Decision::Allow {
        rule.stricter.push(
            "acp-gate never allows a command that redirects its output into a file, and the built-in checks still judge what the rule allows".into(),
        );
    } else {
        rule.stricter.push(
            "acp-gate also applies the rule to `/usr/bin/PROGRAM`, behind `sudo`, `env`, `timeout`, `xargs`, inside `bash -c '..'` and `$(..)`, and past the options before a sub-command (`git -C . push`, `kubectl -n prod delete`): the bypasses Claude Code's docs admit".into(),
        );
    }
}

/// A command as org-policy's regexes see it: the program by its name (`/bin/rm` is `rm`) and the
/// words with their quotes removed (`git commit -m "a b"` is `git commit -m a b`).
fn command_text(spec: &str) -> String {
    let words = if spec.contains(['\'', '"']) {
        shell_words(spec)
    } else {
        spec.split_whitespace().map(str::to_owned).collect()
    };
    let mut words = words.into_iter();
    let program = words.next().unwrap_or_default();
    let program = match program.contains('*') {
        true => program,
        false => program
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase(),
    };
    std::iter::once(program)
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A gitignore-style path spec as org-policy globs, with an example path.
fn path_condition(
    rule: &mut Rule,
    spec: &str,
    base: &SettingsBase,
    kind: &str,
) -> Result<(), String> {
    let mut globs = Vec::new();
    for pattern in expand_braces(spec) {
        if pattern.contains(['[', ']']) {
            return Err(format!(
                "`{spec}`: character classes (`[..]`) cannot be written as org-policy globs; write one rule per alternative"
            ));
        }
        let glob = if let Some(abs) = pattern.strip_prefix("//") {
            format!("/{abs}")
        } else if pattern == "~" || pattern.starts_with("~/") {
            pattern.clone()
        } else if let Some(rel) = pattern.strip_prefix('/') {
            match base {
                SettingsBase::Workspace => rel.to_owned(),
                SettingsBase::Home => format!("~/{rel}"),
                SettingsBase::Dir(dir) => format!("{}/{rel}", dir.trim_end_matches('/')),
            }
        } else if let Some(rel) = pattern.strip_prefix("./") {
            rel.to_owned()
        } else if !pattern.trim_end_matches('/').contains('/') {
            // gitignore: a name without a slash matches at any depth.
            format!("**/{pattern}")
        } else {
            pattern.clone()
        };
        let glob = glob.trim_end_matches('/').to_owned();
        if glob.is_empty() {
            return Err(format!("`{spec}`: an empty path"));
        }
        // A pattern naming a directory covers what is inside it, as in gitignore.
        let inside = (!glob.ends_with("**")).then(|| format!("{glob}/**"));
        globs.push(glob);
        globs.extend(inside);
    }
    let example = globs[0].replace("**", "a").replace(['*', '?'], "x");
    rule.matches
        .push(json!({ "kind": kind, "path": example.trim_start_matches("a/") }));
    rule.paths = Some(globs);
    Ok(())
}

/// `src/{a,b}/*.{ts,tsx}` -> every combination.
fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_owned()];
    };
    let Some(close) = pattern[open..].find('}').map(|i| open + i) else {
        return vec![pattern.to_owned()];
    };
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    pattern[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{alt}{tail}")))
        .collect()
}

fn example_host(domain: &str) -> String {
    domain.replace("*.", "www.")
}

/// The line of the first `"key"` in `text`.
fn key_line(text: &str, key: &str) -> usize {
    text.find(&format!("\"{key}\""))
        .map_or(1, |at| line_of(text, at))
}

/// Where `entry` is written in the list `key` (or the key itself).
fn origin(path: &Path, text: &str, key: &str, entry: &str) -> Origin {
    let start = text.find(&format!("\"{key}\"")).unwrap_or(0);
    let quoted = serde_json::to_string(entry).unwrap_or_default();
    let at = text[start..].find(&quoted).map_or(start, |i| start + i);
    Origin {
        file: path.to_owned(),
        line: line_of(text, at),
        text: if key == entry {
            key.to_owned()
        } else {
            format!("{key}: {entry}")
        },
    }
}

/// Writes org-policy rules as a Claude Code settings file's `permissions`.
pub fn export(rules: &[Rule]) -> Export {
    let mut lists: [(Decision, Vec<String>); 3] = [
        (Decision::Allow, Vec::new()),
        (Decision::Ask, Vec::new()),
        (Decision::Deny, Vec::new()),
    ];
    let mut unexpressed = Vec::new();
    for rule in rules {
        match export_rule(rule) {
            Ok(entries) => {
                let list = lists
                    .iter_mut()
                    .find(|(d, _)| *d == rule.decision)
                    .map(|(_, l)| l);
                list.into_iter().for_each(|l| l.extend(entries.clone()));
            }
            Err(why) => unexpressed.push((rule.name.clone(), why)),
        }
    }
    let mut permissions = serde_json::Map::new();
    for (decision, mut entries) in lists {
        entries.dedup();
        if !entries.is_empty() {
            permissions.insert(decision.as_str().to_owned(), json!(entries));
        }
    }
    let text = serde_json::to_string_pretty(&json!({ "permissions": permissions }))
        .unwrap_or_default()
        + "\n";
    Export { text, unexpressed }
}

/// One rule as Claude Code rule strings; `Err` says what they cannot express.
fn export_rule(rule: &Rule) -> Result<Vec<String>, String> {
    if rule.priority.is_some_and(|p| p != 0) {
        return Err("Claude Code rules have no priority (deny > ask > allow always)".into());
    }
    if rule.title.is_some() {
        return Err("Claude Code rules cannot match a request's title".into());
    }
    let kinds: Vec<&str> = rule.kinds.iter().flatten().map(String::as_str).collect();
    if let Some(prefix) = &rule.prefix {
        if rule.regex.is_some() || rule.paths.is_some() || rule.tools.is_some() {
            return Err("a command prefix with other conditions".into());
        }
        return Ok(prefix_commands(prefix)
            .into_iter()
            .map(|c| format!("Bash({c} *)"))
            .collect());
    }
    if let Some(regex) = &rule.regex {
        return regex_as_spec(regex)
            .map(|spec| vec![format!("Bash({spec})")])
            .ok_or_else(|| format!("regex `{regex}` is not a literal command with `*`"));
    }
    if let Some(domains) = &rule.domains {
        return Ok(domains
            .iter()
            .map(|d| format!("WebFetch(domain:{d})"))
            .collect());
    }
    if let Some(paths) = &rule.paths {
        let tool = match kinds.as_slice() {
            ["read", ..] | ["search", ..] => "Read",
            ["edit", ..] | ["delete", ..] | ["move", ..] => "Edit",
            _ => return Err("path globs without a read or edit kind".into()),
        };
        let mut specs: Vec<String> = Vec::new();
        for glob in paths {
            let spec = if let Some(abs) = glob.strip_prefix('/') {
                format!("//{abs}")
            } else if glob.starts_with("~/") {
                glob.clone()
            } else {
                format!("./{glob}")
            };
            // `dir` and `dir/**` (what an import writes for a directory) are one gitignore spec.
            let dir = spec.strip_suffix("/**").map(str::to_owned);
            if !dir.is_some_and(|d| specs.contains(&d)) {
                specs.push(spec);
            }
        }
        return Ok(specs.into_iter().map(|s| format!("{tool}({s})")).collect());
    }
    if let Some(tools) = &rule.tools {
        return Ok(tools
            .iter()
            .map(|t| {
                super::tools::find(t)
                    .and_then(|tool| tool.claude.first())
                    .map_or_else(|| t.trim_end_matches("__*").to_owned(), |n| n.to_string())
            })
            .collect());
    }
    match kinds.as_slice() {
        ["execute"] => Ok(vec!["Bash".into()]),
        ["read", ..] => Ok(vec!["Read".into()]),
        ["edit", ..] => Ok(vec!["Edit".into()]),
        _ => Err(format!("kinds {kinds:?} have no Claude Code tool")),
    }
}

/// `^literal(.*literal)*$` (what an import writes for a `*` spec) back to the spec.
fn regex_as_spec(regex: &str) -> Option<String> {
    let body = regex.strip_prefix('^')?.strip_suffix('$')?;
    if let Some(stem) = body.strip_suffix("(\\s.*)?") {
        return unescape(stem).map(|s| format!("{s}:*"));
    }
    let parts: Option<Vec<String>> = body.split(".*").map(unescape).collect();
    Some(parts?.join("*"))
}

/// A regex that is a literal, as its text.
fn unescape(regex: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = regex.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            c if "\\.+*?()|[]{}^$".contains(c) => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import_text(text: &str) -> Import {
        import(Path::new("/repo/.claude/settings.json"), text).unwrap()
    }

    fn rule<'a>(import: &'a Import, text: &str) -> &'a Rule {
        import
            .rules
            .iter()
            .find(|r| r.origin.text.ends_with(text))
            .unwrap_or_else(|| panic!("no rule for {text}: {:#?}", import.rules))
    }

    /// The examples of Claude Code's permissions docs.
    const DOCS: &str = r#"{
      "permissions": {
        "allow": [
          "Bash(npm run build)",
          "Bash(npm run test:*)",
          "Bash(git commit *)",
          "Bash(git * main)",
          "Read(~/Documents/*.pdf)",
          "Edit(/src/**/*.ts)",
          "WebFetch(domain:example.com)",
          "mcp__puppeteer",
          "mcp__puppeteer__puppeteer_navigate"
        ],
        "ask": ["Bash(git push:*)"],
        "deny": [
          "Bash(curl:*)",
          "Read(./.env)",
          "Read(./secrets/**)",
          "Read(//Users/alice/secrets/**)",
          "Read(*.env)",
          "WebFetch",
          "Task(Explore)"
        ],
        "defaultMode": "acceptEdits"
      }
    }"#;

    #[test]
    fn the_documented_rules_import_as_org_policy_rules() {
        let import = import_text(DOCS);
        let exact = rule(&import, "Bash(npm run build)");
        assert_eq!(exact.regex.as_deref(), Some("^npm run build$"));
        assert_eq!(exact.decision, Decision::Allow);
        let prefix = rule(&import, "Bash(npm run test:*)");
        assert_eq!(
            prefix.prefix,
            Some(vec![
                Token::One("npm".into()),
                Token::One("run".into()),
                Token::One("test".into())
            ])
        );
        assert!(rule(&import, "Bash(git commit *)").prefix.is_some());
        assert_eq!(
            rule(&import, "Bash(git * main)").regex.as_deref(),
            Some("^git .* main$")
        );
        assert_eq!(
            rule(&import, "Read(~/Documents/*.pdf)").paths,
            Some(vec![
                "~/Documents/*.pdf".into(),
                "~/Documents/*.pdf/**".into()
            ])
        );
        // `/src` is the project's: the workspace root.
        assert_eq!(
            rule(&import, "Edit(/src/**/*.ts)").paths.as_ref().unwrap()[0],
            "src/**/*.ts"
        );
        assert_eq!(
            rule(&import, "Read(//Users/alice/secrets/**)").paths,
            Some(vec!["/Users/alice/secrets/**".into()])
        );
        assert_eq!(
            rule(&import, "Read(*.env)").paths.as_ref().unwrap()[0],
            "**/*.env"
        );
        assert_eq!(
            rule(&import, "WebFetch(domain:example.com)").domains,
            Some(vec!["example.com".into()])
        );
        assert_eq!(
            rule(&import, "allow: mcp__puppeteer").tools,
            Some(vec!["mcp__puppeteer__*".into()])
        );
        let task = rule(&import, "Task(Explore)");
        assert_eq!(task.tools, Some(vec!["Task".into()]));
        assert!(!task.stricter.is_empty());
        assert_eq!(rule(&import, "Bash(git push:*)").decision, Decision::Ask);
        assert!(
            import
                .unsupported
                .iter()
                .any(|(o, _)| o.text == "defaultMode")
        );
        // Each rule names its line.
        assert_eq!(rule(&import, "Bash(curl:*)").origin.line, 16);
    }

    #[test]
    fn deny_rules_carry_the_bypasses_claude_code_admits() {
        let import = import_text(DOCS);
        let curl = rule(&import, "Bash(curl:*)");
        assert!(curl.matches.contains(&json!("/usr/bin/curl")));
        assert!(curl.matches.contains(&json!("bash -c 'curl'")));
        let push = rule(&import, "Bash(git push:*)");
        assert!(push.matches.contains(&json!("git -C . push")));
        assert!(
            import
                .checks
                .iter()
                .any(|c| c.expected.is_none() && c.example == json!("git -C . push"))
        );
    }

    #[test]
    fn mistakes_name_the_line_and_rule() {
        let err = import(
            Path::new("s.json"),
            "{\"permissions\": {\n \"deny\": [\"Bash(rm\"]}}",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("s.json:2: `permissions.deny[0]`"), "{err}");
        let err = import(
            Path::new("s.json"),
            "{\"permissions\": {\"allow\": \"Bash\"}}",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("must be a list"), "{err}");
        let err = import(Path::new("s.json"), "{\n\n oops")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.json:3: not valid JSON"), "{err}");
        // What cannot be expressed is listed, not imported.
        let import =
            import_text(r#"{"permissions": {"allow": ["Task(Explore)", "Read(src/[ab].rs)"]}}"#);
        assert!(import.rules.is_empty());
        assert_eq!(import.unsupported.len(), 2);
    }

    #[test]
    fn export_then_import_keeps_the_rules() {
        let first = import_text(DOCS);
        let exported = export(&first.rules);
        assert!(
            exported.unexpressed.is_empty(),
            "{:?}",
            exported.unexpressed
        );
        let second = import_text(&exported.text);
        let conditions = |i: &Import| {
            let mut rules: Vec<_> = i
                .rules
                .iter()
                .map(|r| {
                    (
                        r.decision,
                        r.kinds.clone(),
                        r.tools.clone(),
                        r.prefix.clone(),
                        r.regex.clone(),
                        r.paths.clone(),
                        r.domains.clone(),
                    )
                })
                .collect();
            rules.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            rules
        };
        assert_eq!(conditions(&first), conditions(&second), "{}", exported.text);
    }

    #[test]
    fn exact_commands_are_read_as_org_policy_sees_them() {
        let import = import_text(
            r#"{"permissions": {"deny": ["Bash(git commit -m \"wip work\")", "Bash(/bin/RM -rf /)"]}}"#,
        );
        assert_eq!(
            import.rules[0].regex.as_deref(),
            Some("^git commit \\-m wip work$")
        );
        assert_eq!(import.rules[1].regex.as_deref(), Some("^rm \\-rf /$"));
    }

    #[test]
    fn braces_expand_and_names_stay_unique() {
        assert_eq!(
            expand_braces("src/{a,b}/*.{ts,tsx}"),
            ["src/a/*.ts", "src/a/*.tsx", "src/b/*.ts", "src/b/*.tsx"]
        );
        let import = import_text(r#"{"permissions": {"deny": ["Bash(rm:*)", "Bash(rm *)"]}}"#);
        assert_ne!(import.rules[0].name, import.rules[1].name);
    }
}
