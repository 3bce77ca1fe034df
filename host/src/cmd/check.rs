//! `acp-gate check`: decide recorded permission requests offline and explain each decision.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::audit::AuditLog;
use crate::chain::{Chain, Decision};
use crate::cli::{CheckArgs, OutputFormat, exit};
use crate::request::{SessionContext, ToolRequest};
use crate::style::Style;

pub async fn run(args: CheckArgs) -> Result<ExitCode> {
    let options = args.policy.load_options()?;
    let chain = crate::load_chain(&options).await?;
    for notice in &chain.notices {
        eprintln!("acp-gate: {notice}");
    }
    let audit = args.audit.as_deref().map(AuditLog::open).transpose()?;
    let ctx = SessionContext::for_workspace("check", &options.workspace);
    let mut failed = false;
    for source in &args.requests {
        for (label, document) in read_documents(source)? {
            let result = match document {
                Ok(message) => decide(&chain, &message, &ctx).await,
                Err(error) => Err(error),
            };
            match result {
                Ok((request, decision)) => {
                    let option = decision
                        .select_option(&request.options)
                        .map(|o| o.id.clone());
                    if let Some(audit) = &audit {
                        audit.record(
                            &request,
                            &decision,
                            option.as_deref().unwrap_or("none (check)"),
                        )?;
                    }
                    print_decision(args.format, &label, &request, &decision, option.as_deref());
                }
                Err(error) => {
                    failed = true;
                    match args.format {
                        OutputFormat::Json => println!(
                            "{}",
                            json!({ "source": label, "error": format!("{error:#}") })
                        ),
                        OutputFormat::Text => eprintln!("acp-gate: {label}: {error:#}"),
                    }
                }
            }
        }
    }
    Ok(ExitCode::from(if failed { exit::ERROR } else { exit::OK }))
}

/// The JSON documents in `source`: the whole file, or one per line for `-` (stdin).
fn read_documents(source: &Path) -> Result<Vec<(String, Result<Value>)>> {
    let parse = |text: &str| serde_json::from_str::<Value>(text).context("not valid JSON");
    if source == Path::new("-") {
        let mut documents = Vec::new();
        for (number, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.context("reading stdin")?;
            if !line.trim().is_empty() {
                documents.push((format!("stdin:{}", number + 1), parse(&line)));
            }
        }
        return Ok(documents);
    }
    let label = source.display().to_string();
    let document = std::fs::read_to_string(source)
        .context("cannot read")
        .and_then(|text| parse(&text));
    Ok(vec![(label, document)])
}

async fn decide(
    chain: &Chain,
    message: &Value,
    ctx: &SessionContext,
) -> Result<(ToolRequest, Decision)> {
    // A whole JSON-RPC message carries the params under `params`.
    let params = match message.get("method") {
        Some(method) if method != "session/request_permission" => {
            anyhow::bail!(
                "is a `{}` message, not session/request_permission",
                method.as_str().unwrap_or("?")
            )
        }
        Some(_) => message
            .get("params")
            .context("the JSON-RPC message has no `params`")?,
        None => message,
    };
    let request = ToolRequest::from_permission_request(params, None, ctx)?;
    let decision = chain.decide(&request).await;
    Ok((request, decision))
}

fn print_decision(
    format: OutputFormat,
    label: &str,
    request: &ToolRequest,
    decision: &Decision,
    option: Option<&str>,
) {
    if format == OutputFormat::Json {
        let line = json!({
            "source": label,
            "decision": decision.outcome,
            "option_id": option,
            "kind": request.kind,
            "title": request.title,
            "reasons": decision.reasons,
            "by_default": decision.by_default,
            "handlers": decision.handlers,
        });
        println!("{line}");
        return;
    }
    let style = Style::stdout();
    let subject = match &request.command {
        Some(command) => command
            .shell
            .clone()
            .or_else(|| command.argv.as_deref().map(shell_words))
            .unwrap_or_default(),
        None => request
            .paths
            .first()
            .map_or_else(|| request.title.clone(), |p| p.raw.clone()),
    };
    println!(
        "{}  {}  {} {}",
        style.bold(label),
        style.outcome(decision.outcome),
        style.dim(request.kind.as_str()),
        subject
    );
    let answer = match option {
        Some(id) => format!("answer: option `{id}`"),
        None if decision.outcome == crate::chain::Outcome::Ask => {
            "answer: ask the user (or escalate)".to_owned()
        }
        None => "answer: cancelled (no option of the needed kind offered)".to_owned(),
    };
    println!("  {}", style.dim(&answer));
    let width = decision
        .handlers
        .iter()
        .map(|h| h.name.len())
        .max()
        .unwrap_or(0);
    for handler in &decision.handlers {
        let reason = handler.reason.as_deref().unwrap_or("");
        println!(
            "  {:<width$}  {}  {:>7}  {reason}",
            handler.name,
            style.verdict(&handler.verdict, 7),
            format!("{} µs", handler.elapsed_us),
        );
        for log in &handler.logs {
            println!("  {:<width$}  {}", "", style.dim(&format!("log {log}")));
        }
    }
    if decision.by_default {
        println!("  {}", style.dim(&decision.reasons.join("; ")));
    }
}

/// An argv as a shell would show it: words with spaces or metacharacters single-quoted.
fn shell_words(argv: &[String]) -> String {
    let quote = |word: &String| {
        let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
        if !word.is_empty() && word.chars().all(plain) {
            word.clone()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    argv.iter().map(quote).collect::<Vec<_>>().join(" ")
}
