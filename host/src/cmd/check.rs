//! `acp-gate check`: decide permission requests offline and explain each decision (every
//! handler's verdict, and what the request does: [`crate::effects`]): recorded ones (files,
//! stdin) or one written on the command line in the short form of tests (`--command 'git
//! push'`, `--kind edit --path src/x.rs`, `--url https://…`).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use crate::args::{OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::chain::{Chain, Decision};
use crate::effects::Effects;
use crate::exit;
use crate::record::{CheckLine, Judged, subject};
use crate::request::{SessionContext, ToolKind, ToolRequest};
use crate::shorthand;
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
    #[arg(value_name = "REQUEST", required_unless_present_any = ["command", "argv", "paths", "url"])]
    pub requests: Vec<PathBuf>,
    #[command(flatten)]
    pub short: ShortRequest,
}

/// A request written on the command line, in the short form of `[[handler.test]]` entries
/// (see `shorthand`): decided before any REQUEST file.
#[derive(Args, Default)]
#[command(next_help_heading = "A request in short form")]
pub struct ShortRequest {
    /// A shell command, as an agent's shell tool sends it: `--command 'git push origin main'`.
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,
    /// A command as words, run without a shell (Codex, `terminal/create`); takes the rest of
    /// the line: `--argv rm -rf build`.
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "WORD")]
    pub argv: Option<Vec<String>>,
    /// The tool kind the agent declares: read, edit, delete, move, search, execute, fetch, ...
    #[arg(long, value_parser = tool_kind, value_name = "KIND")]
    pub kind: Option<String>,
    /// A path the request touches (again for more), relative to the workspace.
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<String>,
    /// A URL to fetch.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The text an edit writes.
    #[arg(long, value_name = "TEXT")]
    pub content: Option<String>,
    /// The agent's name for the tool (`Bash`, `Write`, `run_shell_command`, ...).
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
}

impl ShortRequest {
    /// The request as a short-form case, with a label for the output; `None` when no option
    /// of the short form was given.
    fn case(&self) -> Option<(String, Value)> {
        let mut case = serde_json::Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                case.insert(key.to_owned(), value);
            }
        };
        put("command", self.command.clone().map(Value::from));
        put("argv", self.argv.clone().map(Value::from));
        put("kind", self.kind.clone().map(Value::from));
        put("url", self.url.clone().map(Value::from));
        put("content", self.content.clone().map(Value::from));
        put("tool", self.tool.clone().map(Value::from));
        match self.paths.as_slice() {
            [] => {}
            [one] => put("path", Some(one.clone().into())),
            several => put("paths", Some(several.to_vec().into())),
        }
        if case.is_empty() {
            return None;
        }
        Some(("command line".to_owned(), Value::Object(case)))
    }
}

/// `--kind`: a tool kind as ACP and handlers.toml write it.
fn tool_kind(text: &str) -> Result<String, String> {
    match ToolKind::parse(text).as_str() == text {
        true => Ok(text.to_owned()),
        false => Err(
            "kinds: read, edit, delete, move, search, execute, think, fetch, switch_mode, other"
                .to_owned(),
        ),
    }
}

pub async fn check(args: CheckArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let chain = crate::load_chain(&options).await?;
    for notice in &chain.notices {
        eprintln!("acp-gate: {notice}");
    }
    if chain.tests.run > 0 {
        eprintln!("acp-gate: inline tests: {}", chain.tests.summary());
    }
    let audit = args.audit.as_deref().map(AuditLog::open).transpose()?;
    let ctx = SessionContext::for_workspace("check", &options.workspace);
    let mut failed = false;
    let short = args
        .short
        .case()
        .map(|(label, case)| (label, Ok(Form::Short(case))));
    let mut documents: Vec<(String, Result<Form>)> = short.into_iter().collect();
    for source in &args.requests {
        let read = read_documents(source)?.into_iter();
        documents.extend(read.map(|(label, document)| (label, document.map(Form::Recorded))));
    }
    for (label, document) in documents {
        let result = match document {
            Ok(form) => decide(&chain, &form, &ctx).await,
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
                let effects = Effects::of(&request).await;
                let shown = Shown {
                    label: &label,
                    request: &request,
                    decision: &decision,
                    option: option.as_deref(),
                    effects: &effects,
                };
                shown.print(args.format);
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
    // A handler that did not load denies (or asks) everything in a session: the policy is
    // broken, whatever the decisions above say.
    let broken = chain.load_failures().count();
    if broken > 0 {
        eprintln!(
            "acp-gate: {broken} handler(s) failed to load (see above); `acp-gate plugin validate --resolve FILE` checks a handlers.toml"
        );
    }
    Ok(if failed || broken > 0 {
        exit::ERROR
    } else {
        exit::OK
    })
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

/// A request as `check` reads it.
enum Form {
    /// Recorded: a `session/request_permission`'s params, or the whole JSON-RPC message.
    Recorded(Value),
    /// The short form of tests, from the command line.
    Short(Value),
}

async fn decide(
    chain: &Chain,
    form: &Form,
    ctx: &SessionContext,
) -> Result<(ToolRequest, Decision)> {
    let message = match form {
        Form::Recorded(message) => message,
        Form::Short(case) => {
            let request = shorthand::request(case, ctx)?;
            let decision = chain.decide(&request).await;
            return Ok((request, decision));
        }
    };
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

/// One decision as `check` shows it.
struct Shown<'a> {
    label: &'a str,
    request: &'a ToolRequest,
    decision: &'a Decision,
    option: Option<&'a str>,
    effects: &'a Effects,
}

impl Shown<'_> {
    fn print(&self, format: OutputFormat) {
        let (request, decision) = (self.request, self.decision);
        if format == OutputFormat::Json {
            let line = CheckLine {
                source: self.label,
                option_id: self.option,
                judged: Judged::new(request, decision),
                effects: self.effects,
            };
            println!("{}", json!(line));
            return;
        }
        let style = Style::stdout();
        println!(
            "{}  {}  {} {}",
            style.bold(self.label),
            style.outcome(decision.outcome),
            style.dim(request.kind.as_str()),
            subject(request)
        );
        let answer = match self.option {
            Some(id) => format!("answer: option `{id}`"),
            None if decision.outcome == Verdict::Ask => {
                "answer: ask the user (or escalate)".to_owned()
            }
            None => "answer: cancelled (no option of the needed kind offered)".to_owned(),
        };
        println!("  {}", style.dim(&answer));
        for line in style.handler_lines(&decision.handlers, "  ", true) {
            println!("{line}");
        }
        if decision.by_default {
            println!("  {}", style.dim(&decision.reasons.join("; ")));
        }
        let effects = self.effects.lines("    ");
        if !effects.is_empty() {
            println!("  {}", style.dim("what it does:"));
            for line in effects {
                println!("{}", style.dim(&line));
            }
        }
    }
}
