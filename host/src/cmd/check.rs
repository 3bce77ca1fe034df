//! `acp-gate check`: decide recorded permission requests offline and explain each decision.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use crate::args::{OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::chain::{Chain, Decision};
use crate::exit;
use crate::record::{CheckLine, Judged, subject};
use crate::request::{SessionContext, ToolRequest};
use crate::style::Style;
use crate::verdict::Verdict;

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Also append each decision to this audit log.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Files holding the params of a `session/request_permission` (or a whole JSON-RPC message);
    /// `-` reads one JSON document per line from stdin.
    #[arg(required = true, value_name = "REQUEST")]
    pub requests: Vec<PathBuf>,
}

pub async fn check(args: CheckArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
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
                            None,
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
    Ok(if failed { exit::ERROR } else { exit::OK })
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
        let line = CheckLine {
            source: label,
            option_id: option,
            judged: Judged::new(request, decision),
        };
        println!("{}", json!(line));
        return;
    }
    let style = Style::stdout();
    println!(
        "{}  {}  {} {}",
        style.bold(label),
        style.outcome(decision.outcome),
        style.dim(request.kind.as_str()),
        subject(request)
    );
    let answer = match option {
        Some(id) => format!("answer: option `{id}`"),
        None if decision.outcome == Verdict::Ask => "answer: ask the user (or escalate)".to_owned(),
        None => "answer: cancelled (no option of the needed kind offered)".to_owned(),
    };
    println!("  {}", style.dim(&answer));
    for line in style.handler_lines(&decision.handlers, "  ", true) {
        println!("{line}");
    }
    if decision.by_default {
        println!("  {}", style.dim(&decision.reasons.join("; ")));
    }
}
