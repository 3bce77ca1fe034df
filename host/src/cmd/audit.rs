//! `acp-gate audit [summary]`, `audit suggest`, `audit verify` and `audit ship`: an audit log
//! read back (see [`crate::review`]) with the escalations still open, its hash chain checked
//! (see [`crate::audit::verify`]), and its spool sent to the review service.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::args::{EscalationArgs, OutputFormat};
use crate::audit::AuditLog;
use crate::exit;
use crate::review::{self, Counts};
use crate::service::escalator::{Escalator, Origin};
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
    /// Check the log's hash chain: each line must name the hash of the line before it. Names
    /// the first line where it breaks (exit code 1).
    Verify(VerifyArgs),
    /// Send the records not shipped yet to the review service now (a run ships by itself; this
    /// is for a spool left by a service that was down).
    Ship(ShipArgs),
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The audit log [default: as for `audit`].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Args, Debug)]
pub struct ShipArgs {
    /// The audit log [default: as for `audit`].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The org file, for its `[escalation]` (also $ACP_GATE_ORG_HANDLERS).
    #[arg(long, value_name = "FILE")]
    pub org_handlers: Option<PathBuf>,
    #[command(flatten)]
    pub escalation: EscalationArgs,
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

pub async fn audit(args: AuditArgs) -> Result<u8> {
    match args.command {
        Some(AuditCommand::Suggest(suggest)) => self::suggest(suggest),
        Some(AuditCommand::Summary(summary)) => self::summary(summary),
        Some(AuditCommand::Verify(verify)) => self::verify(verify),
        Some(AuditCommand::Ship(ship)) => self::ship(ship).await,
        None => self::summary(args.summary),
    }
}

fn verify(args: VerifyArgs) -> Result<u8> {
    let path = args.file.unwrap_or_else(AuditLog::default_path);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the audit log {}", path.display()))?;
    let verified = crate::audit::verify(&text);
    let code = match verified.broken {
        Some(_) => exit::ERROR,
        None => exit::OK,
    };
    if args.format == OutputFormat::Json {
        println!("{}", json!({ "file": path, "verified": verified }));
        return Ok(code);
    }
    let unchained = match verified.unchained {
        0 => String::new(),
        n => format!(
            " ({n} line(s) at its start were written before acp-gate chained its audit log)"
        ),
    };
    match &verified.broken {
        None => println!(
            "{}: {} line(s), the chain holds{unchained}",
            path.display(),
            verified.lines
        ),
        Some((line, why)) => eprintln!(
            "acp-gate: {}:{line}: the audit chain breaks here: {why}",
            path.display()
        ),
    }
    Ok(code)
}

async fn ship(args: ShipArgs) -> Result<u8> {
    let path = args.file.unwrap_or_else(AuditLog::default_path);
    let workspace = std::env::current_dir()?;
    let layers =
        crate::config::LayerPaths::discover(args.org_handlers.as_deref(), None, &workspace)?;
    let org = crate::config::load(&crate::config::LayerPaths {
        lower: Vec::new(),
        ..layers
    })?
    .escalation;
    let origin = Origin::here(&workspace, &[]);
    let Some(escalator) = Escalator::configure(&args.escalation, org.as_ref(), origin)? else {
        anyhow::bail!(
            "no review service: give --escalate-to URL, or the org file's [escalation] url"
        );
    };
    let shipped = escalator.shipper(&path).ship().await?;
    println!(
        "{}: {} record(s) shipped to {} ({} new, {} it had already)",
        path.display(),
        shipped.sent,
        escalator.client.url(),
        shipped.ingested.accepted,
        shipped.ingested.duplicates
    );
    for why in &shipped.ingested.breaks {
        eprintln!("acp-gate: the review service found a break in the chain: {why}");
    }
    Ok(exit::OK)
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
