//! `acp-gate sessions` and `acp-gate escalations`: what an orchestrator reads to resume a named
//! session and to grant what was escalated in it (see [`crate::acp::orchestrate`]).

use anyhow::Result;
use clap::Args;
use serde_json::json;

use crate::args::OutputFormat;
use crate::exit;
use crate::state::{self, Escalations, Sessions};

#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Args, Debug)]
pub struct EscalationsArgs {
    /// Only the escalations of this session (its `--session` name or its id).
    #[arg(long, value_name = "NAME|ID")]
    pub session: Option<String>,
    /// Also the escalations already granted.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub fn sessions(args: SessionsArgs) -> Result<u8> {
    let sessions = Sessions::open(&state::dir())?;
    if sessions.list().is_empty() && args.format == OutputFormat::Text {
        eprintln!("no named sessions (`acp-gate run --session NAME` names one)");
    }
    for entry in sessions.list() {
        match args.format {
            OutputFormat::Json => println!("{}", json!(entry)),
            OutputFormat::Text => println!(
                "{}  {}  {}  {}",
                entry.name,
                entry.session_id,
                entry.workspace.display(),
                entry.agent.join(" ")
            ),
        }
    }
    Ok(exit::OK)
}

pub fn escalations(args: EscalationsArgs) -> Result<u8> {
    let dir = state::dir();
    let escalations = Escalations::open(&dir)?;
    let session_id = args.session.as_deref().map(|key| {
        Sessions::open(&dir)
            .ok()
            .and_then(|s| s.find(key).map(|e| e.session_id.clone()))
            .unwrap_or_else(|| key.to_owned())
    });
    let shown: Vec<_> = escalations
        .entries
        .iter()
        .filter(|(entry, granted)| {
            (args.all || granted.is_none())
                && session_id.as_ref().is_none_or(|id| &entry.session_id == id)
        })
        .collect();
    if shown.is_empty() && args.format == OutputFormat::Text {
        eprintln!("no {}escalations", if args.all { "" } else { "open " });
    }
    for (entry, granted) in shown {
        match args.format {
            OutputFormat::Json => {
                let mut line = json!(entry);
                line["granted_by"] = json!(granted);
                println!("{line}");
            }
            OutputFormat::Text => {
                let state = match granted {
                    Some(by) if by.is_empty() => "granted".to_owned(),
                    Some(by) => format!("granted by {by}"),
                    None => "open".to_owned(),
                };
                println!(
                    "{}  {state}  {}  {}  {}",
                    entry.id, entry.kind, entry.tool, entry.title
                );
                if let Some(resume) = entry.resume.as_ref().filter(|_| granted.is_none()) {
                    println!("    {resume}");
                }
            }
        }
    }
    Ok(exit::OK)
}
