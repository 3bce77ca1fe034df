//! `acp-gate policy import` and `policy export`: other agents' rule files as a reviewable
//! `handlers.toml`, checked against the source format's own examples, and back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::args::OutputFormat;
use crate::policy::{self, Check, Format, Import, Rule};
use crate::request::SessionContext;
use crate::style::Style;
use crate::verdict::Verdict;
use crate::{LoadOptions, exit, shorthand};

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Read Claude Code settings, Codex rules or Gemini CLI policy files into a handlers.toml
    /// (one org-policy handler, a comment per rule naming its source line).
    Import(ImportArgs),
    /// Write the org-policy rules of a handlers.toml in another agent's format; what the format
    /// cannot express is listed on stderr.
    Export(ExportArgs),
}

#[derive(Args)]
pub struct ImportArgs {
    /// The format of the files.
    #[arg(long, value_enum)]
    pub from: Format,
    /// The rule files (rules of later files come after earlier ones).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the handlers.toml here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Decide the format's own examples (and the bypasses its docs admit) through the imported
    /// rules and the built-in chain, and show where acp-gate decides differently and why.
    #[arg(long)]
    pub check: bool,
    /// The workspace the examples are decided in [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Output format of `--check`.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Args)]
pub struct ExportArgs {
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: Format,
    /// A handlers.toml; every builtin:org-policy handler's rules are exported.
    #[arg(value_name = "HANDLERS")]
    pub file: PathBuf,
    /// Write here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Fail (exit 1, writing nothing) when a deny or ask rule cannot be exported: the written
    /// file would let through what the rule stops.
    #[arg(long)]
    pub strict: bool,
}

pub async fn policy(command: PolicyCommand) -> Result<u8> {
    match command {
        PolicyCommand::Import(args) => import(args).await,
        PolicyCommand::Export(args) => export(args),
    }
}

async fn import(args: ImportArgs) -> Result<u8> {
    let mut imported = Import::default();
    for file in &args.files {
        let text = crate::config::read_file(file)?;
        imported.extend(policy::import(args.from, file, &text)?);
    }
    for (origin, why) in &imported.unsupported {
        eprintln!("acp-gate: {origin}: not imported: {why}");
    }
    let text = handlers_toml(&args, &imported);
    if let Some(output) = &args.output {
        std::fs::write(output, &text)
            .with_context(|| format!("{}: cannot write", output.display()))?;
        eprintln!(
            "acp-gate: wrote {} rule(s) to {}",
            imported.rules.len(),
            output.display()
        );
    }
    if !args.check {
        if args.output.is_none() {
            print!("{text}");
        }
        return Ok(exit::OK);
    }
    check(&args, &imported, &text).await
}

/// The imported rules as a handlers.toml: its header says where they came from and what was
/// left out; each rule's comment names its source line and where acp-gate is stricter.
fn handlers_toml(args: &ImportArgs, imported: &Import) -> String {
    let files: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let mut header = format!(
        "# Imported by `acp-gate policy import --from {} {}`.\n\
         # Review it, then install it as the org file (/etc/acp-gate/handlers.toml) or use it with\n\
         # `--handlers`. Or let the org-policy handler read the files itself, with no copy to keep\n\
         # in step: [handler.config] import = {{ format = \"{}\", path = \"FILE\" }}.\n\
         # The built-in chain still judges every request beneath these rules: the strictest\n\
         # verdict wins, so an allow here never overrides a built-in deny or ask.\n",
        args.from.as_str(),
        files.join(" "),
        args.from.as_str(),
    );
    if !imported.unsupported.is_empty() {
        header.push_str("#\n# Not imported (acp-gate cannot express these):\n");
        for (origin, why) in &imported.unsupported {
            header.push_str(&format!("#   {origin}\n#     {why}\n"));
        }
    }
    let handler = format!(
        "name = \"imported-{}\"\ncontrol = \"required\"\non_error = \"deny\"\n",
        args.from.as_str()
    );
    policy::handlers_toml(&header, &handler, &imported.rules, |rule| {
        std::iter::once(rule.origin.to_string())
            .chain(
                rule.stricter
                    .iter()
                    .map(|s| format!("stricter on purpose: {s}")),
            )
            .collect()
    })
}

/// How acp-gate's decision of an example compares with the source agent's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Same,
    /// acp-gate asks or denies where the agent decides less strictly (or has no rule).
    Stricter,
    /// acp-gate decides less strictly than the agent: never expected; an error.
    Looser,
    /// The agent has no rule for it and acp-gate allows it (or leaves it to its default).
    Unruled,
}

/// How acp-gate's verdict `got` compares with the source agent's (`wanted`; `None`: no rule of
/// the file applies) and with `meant`, the least a form of a rule's command must get: short
/// of that, acp-gate is looser than the rule, whatever the source agent does with the form.
fn compare(
    wanted: Option<Verdict>,
    meant: Option<policy::Decision>,
    got: Verdict,
    by_default: bool,
) -> Comparison {
    match wanted {
        _ if meant.is_some_and(|m| rank(got) < rank(verdict(m))) => Comparison::Looser,
        Some(w) if w == got => Comparison::Same,
        Some(w) if rank(got) > rank(w) => Comparison::Stricter,
        Some(_) => Comparison::Looser,
        None if rank(got) >= rank(Verdict::Ask) && !by_default => Comparison::Stricter,
        None => Comparison::Unruled,
    }
}

fn verdict(decision: policy::Decision) -> Verdict {
    match decision {
        policy::Decision::Allow => Verdict::Allow,
        policy::Decision::Ask => Verdict::Ask,
        policy::Decision::Deny => Verdict::Deny,
    }
}

fn rank(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Abstain => 0,
        Verdict::Allow => 1,
        Verdict::Ask => 2,
        Verdict::Deny => 3,
    }
}

/// Decides every check through the imported rules and the built-in chain.
async fn check(args: &ImportArgs, imported: &Import, text: &str) -> Result<u8> {
    let workspace = std::path::absolute(match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    })?;
    let scratch = std::env::temp_dir().join(format!("acp-gate-import-{}.toml", std::process::id()));
    std::fs::write(&scratch, text)
        .with_context(|| format!("{}: cannot write", scratch.display()))?;
    let chain = crate::load_chain(&LoadOptions {
        handlers: Some(scratch.clone()),
        workspace: workspace.clone(),
        ..LoadOptions::default()
    })
    .await;
    let _ = std::fs::remove_file(&scratch);
    let chain = chain?;
    let ctx = SessionContext::for_workspace("policy-import", &workspace);
    let style = Style::stdout();
    let source = args.from.as_str();
    let mut counts = [0usize; 4];
    for Check {
        example,
        expected,
        meant,
        origin,
    } in &imported.checks
    {
        let case = match example {
            serde_json::Value::String(command) => json!({ "command": command }),
            other => other.clone(),
        };
        let request = shorthand::request(&case, &ctx)
            .with_context(|| format!("{origin}: example {example}"))?;
        let decision = chain.decide(&request).await;
        let got = decision.outcome;
        // The agent decides a documented example by all of the file's rules, with its own
        // precedence: what the imported handler alone gives it (when it did not fail).
        let handler = format!("imported-{source}");
        let by_file = decision
            .handlers
            .iter()
            .find(|h| h.name == handler && h.error.is_none() && h.verdict != Verdict::Abstain)
            .map(|h| h.verdict);
        let wanted = expected.map(|d| by_file.unwrap_or(verdict(d)));
        let comparison = compare(wanted, *meant, got, decision.by_default);
        counts[comparison as usize] += 1;
        // The rule's note explains a difference only where the imported rules had a say.
        let rule = imported
            .rules
            .iter()
            .find(|r| r.origin == *origin)
            .filter(|_| by_file.is_some());
        let why = why_different(comparison, rule, &decision.reasons);
        let subject = match example {
            serde_json::Value::String(command) => command.clone(),
            other => other.to_string(),
        };
        let theirs = wanted.map_or("no rule", Verdict::as_str);
        match args.format {
            OutputFormat::Json => println!(
                "{}",
                json!({
                    "example": example,
                    "source": origin.to_string(),
                    source: theirs,
                    "acp_gate": got.as_str(),
                    "comparison": label(comparison),
                    "why": why,
                })
            ),
            OutputFormat::Text => {
                let padded = format!("{:<8}", label(comparison));
                let mark = match comparison {
                    Comparison::Same | Comparison::Unruled => style.dim(&padded),
                    Comparison::Stricter => style.yellow(&padded),
                    Comparison::Looser => style.red(&padded),
                };
                println!(
                    "{mark} {subject}\n         {source}: {theirs}, acp-gate: {}   ({origin})",
                    got.as_str()
                );
                if let Some(why) = why {
                    println!("         {}", style.dim(&why));
                }
            }
        }
    }
    let [same, stricter, looser, unruled] = counts;
    eprintln!(
        "acp-gate: {} example(s): {same} decided as {source} does, {stricter} stricter on purpose, {unruled} without a {source} rule, {looser} looser",
        imported.checks.len()
    );
    Ok(if looser > 0 { exit::ERROR } else { exit::OK })
}

fn label(comparison: Comparison) -> &'static str {
    match comparison {
        Comparison::Same => "same",
        Comparison::Stricter => "stricter",
        Comparison::Looser => "LOOSER",
        Comparison::Unruled => "no rule",
    }
}

/// Why acp-gate decides differently: the rule's own note, else the chain's reasons.
fn why_different(
    comparison: Comparison,
    rule: Option<&Rule>,
    reasons: &[String],
) -> Option<String> {
    if matches!(comparison, Comparison::Same | Comparison::Unruled) {
        return None;
    }
    let note = rule.and_then(|r| r.stricter.first());
    Some(match note {
        Some(note) if reasons.is_empty() => note.clone(),
        Some(note) => format!("{} ({note})", reasons.join("; ")),
        None => reasons.join("; "),
    })
}

fn export(args: ExportArgs) -> Result<u8> {
    let rules = org_policy_rules(&args.file)?;
    let exported = policy::export(args.to, &rules);
    let format = args.to.as_str();
    for (rule, why) in &exported.unexpressed {
        eprintln!("acp-gate: rule `{rule}` not exported: {why} ({format} cannot express it)");
    }
    // What the written file loses: the deny and ask rules it does not carry.
    let dropped = |decision: policy::Decision| -> Vec<String> {
        let names = exported.unexpressed.iter().map(|(name, _)| name);
        names
            .filter(|name| {
                rules
                    .iter()
                    .any(|r| &r.name == *name && r.decision == decision)
            })
            .map(|name| format!("`{name}`"))
            .collect()
    };
    let (denies, asks) = (
        dropped(policy::Decision::Deny),
        dropped(policy::Decision::Ask),
    );
    let strict_fails = args.strict && !(denies.is_empty() && asks.is_empty());
    if !strict_fails {
        match &args.output {
            Some(output) => std::fs::write(output, &exported.text)
                .with_context(|| format!("{}: cannot write", output.display()))?,
            None => print!("{}", exported.text),
        }
    }
    let mut last = format!(
        "acp-gate: {} of {} rule(s) exported",
        rules.len() - exported.unexpressed.len(),
        rules.len()
    );
    if !denies.is_empty() {
        last += &format!(
            "; {} deny rule(s) could not be exported: {} ({format} will not refuse what they refuse)",
            denies.len(),
            denies.join(", ")
        );
    }
    if !asks.is_empty() {
        last += &format!(
            "; {} ask rule(s) could not be exported: {} ({format} will not ask where they ask)",
            asks.len(),
            asks.join(", ")
        );
    }
    if strict_fails {
        last += "; nothing written (--strict)";
    }
    eprintln!("{last}");
    Ok(if strict_fails { exit::ERROR } else { exit::OK })
}

/// The rules of every builtin:org-policy handler of `file`, as the chain would load them
/// (`import` tables read).
fn org_policy_rules(file: &Path) -> Result<Vec<Rule>> {
    let loaded = crate::config::load(&crate::config::LayerPaths {
        org: None,
        lower: vec![(crate::config::Tier::User, file.to_owned())],
        permission_policy: None,
    })?;
    let mut rules = Vec::new();
    for handler in loaded
        .handlers
        .iter()
        .filter(|h| h.file == file && h.plugin == crate::config::PluginRef::Builtin("org-policy"))
    {
        let config: serde_json::Value = serde_json::from_str(&handler.config_json)?;
        for (i, value) in config["rules"].as_array().into_iter().flatten().enumerate() {
            let rule: Rule = serde_json::from_value(value.clone()).with_context(|| {
                format!(
                    "{}:{}: handler `{}`: rules[{i}]",
                    file.display(),
                    handler.line,
                    handler.name
                )
            })?;
            rules.push(rule);
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::Decision;

    /// A form of a deny rule's command that acp-gate only asks about is looser than the rule,
    /// even where the source agent has no rule for it.
    #[test]
    fn a_form_decided_short_of_its_rule_is_looser() {
        let deny = Some(Decision::Deny);
        let cases = [
            (None, deny, Verdict::Deny, Comparison::Stricter),
            (None, deny, Verdict::Ask, Comparison::Looser),
            (None, deny, Verdict::Abstain, Comparison::Looser),
            (Some(Verdict::Deny), deny, Verdict::Deny, Comparison::Same),
            (
                Some(Verdict::Ask),
                None,
                Verdict::Deny,
                Comparison::Stricter,
            ),
            (Some(Verdict::Deny), None, Verdict::Ask, Comparison::Looser),
            (None, None, Verdict::Allow, Comparison::Unruled),
        ];
        for (wanted, meant, got, comparison) in cases {
            assert!(
                compare(wanted, meant, got, false) == comparison,
                "{wanted:?} {meant:?} {got:?}"
            );
        }
    }
}
