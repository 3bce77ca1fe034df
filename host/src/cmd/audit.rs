//! `acp-gate audit [summary]` and `acp-gate audit suggest`: an audit log read back (see
//! [`crate::review`]), with the escalations still open.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::args::OutputFormat;
use crate::audit::AuditLog;
use crate::exit;
use crate::review::{self, Counts};
use crate::state::{self, Escalations};

#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub command: Option<AuditCommand>,
    #[command(flatten)]
    pub summary: SummaryArgs,
}

#[derive(Subcommand, Debug)]
pub enum AuditCommand {
    /// Decisions by verdict, kind, handler, tool and session; what was asked about most; the
    /// escalations still open (the default).
    Summary(SummaryArgs),
    /// Org-policy allow rules for the commands people approved again and again, each as
    /// narrow as what they approved, as a handlers.toml to test with `acp-gate check`.
    Suggest(SuggestArgs),
}

#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// The audit log [default: $ACP_GATE_AUDIT_LOG, else audit.jsonl in the state directory].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Args, Debug)]
pub struct SuggestArgs {
    /// The audit log [default: as for `audit`].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// How many approvals a command needs to be suggested.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min: usize,
    /// Output format: `text` is the handlers.toml itself; `json` one suggestion per line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub fn audit(args: AuditArgs) -> Result<u8> {
    match args.command {
        Some(AuditCommand::Suggest(suggest)) => self::suggest(suggest),
        Some(AuditCommand::Summary(summary)) => self::summary(summary),
        None => self::summary(args.summary),
    }
}

fn summary(args: SummaryArgs) -> Result<u8> {
    let path = args.file.unwrap_or_else(AuditLog::default_path);
    let summary = review::summarise(&review::read(&path)?);
    let open: Vec<_> = Escalations::open(&state::dir())?
        .entries
        .into_iter()
        .filter(|(_, granted)| granted.is_none())
        .map(|(entry, _)| entry)
        .collect();
    if args.format == OutputFormat::Json {
        let mut line = json!(summary);
        line["open_escalations"] = json!(open);
        println!("{line}");
        return Ok(exit::OK);
    }
    let counts = |c: &Counts| {
        format!(
            "{} (allow {}, deny {}, ask {}; {} approved by a person)",
            c.total, c.allow, c.deny, c.ask, c.approved
        )
    };
    println!("{}: {}", path.display(), counts(&summary.decisions));
    for (title, groups) in [
        ("by kind", &summary.by_kind),
        ("by tool", &summary.by_tool),
        ("by session", &summary.by_session),
    ] {
        println!("{title}:");
        for (name, c) in groups {
            println!("  {name}  {}", counts(c));
        }
    }
    println!("by handler:");
    for (name, verdicts) in &summary.by_handler {
        let verdicts: Vec<String> = verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
        println!("  {name}  {}", verdicts.join(", "));
    }
    println!("asked about most:");
    for (subject, n) in &summary.most_asked {
        println!("  {n}×  {subject}");
    }
    println!("escalations still open: {}", open.len());
    for entry in &open {
        println!("  {}  {}  {}", entry.id, entry.kind, entry.title);
    }
    Ok(exit::OK)
}

fn suggest(args: SuggestArgs) -> Result<u8> {
    let path = args.file.unwrap_or_else(AuditLog::default_path);
    let suggestions = review::suggest(&review::read(&path)?, args.min);
    match args.format {
        OutputFormat::Json => {
            for suggestion in &suggestions {
                println!("{}", json!(suggestion));
            }
        }
        OutputFormat::Text => print!("{}", review::handlers_toml(&suggestions, &path)),
    }
    Ok(exit::OK)
}
