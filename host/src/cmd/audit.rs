//! `acp-gate audit [summary]`, `audit suggest`, `audit replay`, `audit verify` and `audit ship`:
//! an audit log read back (see [`crate::review`]) with the escalations still open, decided again
//! under another policy (see [`crate::replay`]), its hash chain checked (see
//! [`crate::audit::verify`]), and its spool sent to the review service.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::exit;
use crate::replay;
use crate::review::{self, Counts};
use crate::service::escalator::Escalator;
use crate::service::origin::Origin;
use crate::state::{self, Escalations};
use crate::style::Style;

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
    /// Decide every recorded request again under another policy (`--handlers NEW.toml`) and
    /// list what would change (allow -> ask or deny, and back), grouped by the rule that
    /// changes it: a policy change reviewed against real traffic before it ships. Exit code 6
    /// when something would change.
    Replay(ReplayArgs),
    /// Check the log's hash chain: each line must name the hash of the line before it. Names
    /// the first line where it breaks (exit code 1).
    Verify(VerifyArgs),
    /// Send the records not shipped yet to the review service, and to the OpenTelemetry
    /// collector `OTEL_EXPORTER_OTLP_ENDPOINT` names, now (a run ships by itself; this is for
    /// a spool left by a service that was down, and for hook calls made without a resident
    /// server).
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

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The audit log [default: as for `audit`].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The policy to decide under: `--handlers NEW.toml` (and `--org-handlers` for the org
    /// layer), as for `acp-gate check`.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Only requests recorded at or after this time: 2026-11-29T10:00:00Z, 2026-11-29, or an
    /// age such as 24h or 7d.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only requests recorded before this time (same forms as `--since`).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Output format: `json` is the whole report as one object.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub async fn audit(args: AuditArgs) -> Result<u8> {
    match args.command {
        Some(AuditCommand::Replay(replay)) => self::replay(replay).await,
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
    let escalator = Escalator::configure(&args.escalation, org.as_ref(), origin)?;
    let service = escalator.as_ref().map(|e| e.shipper(&path));
    let shippers = crate::service::ship::shippers(&path, service)?;
    if shippers.is_empty() {
        anyhow::bail!(
            "nowhere to ship: give --escalate-to URL (or the org file's [escalation] url), or OTEL_EXPORTER_OTLP_ENDPOINT for an OpenTelemetry collector"
        );
    }
    for shipper in shippers {
        let shipped = shipper.ship().await?;
        println!(
            "{}: {} record(s) shipped to {} ({} new, {} it had already)",
            path.display(),
            shipped.sent,
            shipper.url(),
            shipped.ingested.accepted,
            shipped.ingested.duplicates
        );
        for why in &shipped.ingested.breaks {
            eprintln!("acp-gate: the review service found a break in the chain: {why}");
        }
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

async fn replay(args: ReplayArgs) -> Result<u8> {
    let path = args.file.clone().unwrap_or_else(AuditLog::default_path);
    let now = state::now_ms();
    let since = args
        .since
        .as_deref()
        .map(|t| replay::moment(t, now))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|t| replay::moment(t, now))
        .transpose()?;
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the audit log {}", path.display()))?;
    let (mut records, mut skipped) = (Vec::new(), 0);
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not an audit record", path.display(), n + 1))?;
        match replay::Recorded::from_line(&value) {
            Some(record)
                if since.is_none_or(|t| record.timestamp_ms >= t)
                    && until.is_none_or(|t| record.timestamp_ms < t) =>
            {
                records.push(record);
            }
            Some(_) => {}
            None => skipped += 1,
        }
    }
    let options = super::load_options(&args.policy)?;
    let chain = crate::load_chain(&options).await?;
    for notice in &chain.notices {
        eprintln!("acp-gate: {notice}");
    }
    let broken = chain.load_failures().count();
    if broken > 0 {
        anyhow::bail!(
            "{broken} handler(s) failed to load (see above): a replay under a broken policy would only show its failures; `acp-gate plugin validate --resolve FILE` checks a handlers.toml"
        );
    }
    let report = replay::replay(std::sync::Arc::new(chain), records, skipped).await?;
    match args.format {
        OutputFormat::Json => println!("{}", json!(report)),
        OutputFormat::Text => print_replay(&path, &report),
    }
    Ok(if report.changed > 0 {
        exit::REPLAY_CHANGED
    } else {
        exit::OK
    })
}

fn print_replay(path: &std::path::Path, report: &replay::Report) {
    let style = Style::stdout();
    println!(
        "{}: {} request(s) decided again, {} would change",
        path.display(),
        report.decided,
        report.changed
    );
    if report.skipped > 0 {
        println!(
            "  {}",
            style.dim(&format!(
                "{} line(s) left out: written before audit lines carried their request",
                report.skipped
            ))
        );
    }
    for group in &report.groups {
        println!(
            "\n{} -> {}  {}×  {}",
            style.outcome(group.was),
            style.outcome(group.now),
            group.count,
            group.rule
        );
        for change in &group.examples {
            println!("  {} {}", style.dim(change.kind), change.subject);
        }
        if group.count > group.examples.len() {
            println!(
                "  {}",
                style.dim(&format!("and {} more", group.count - group.examples.len()))
            );
        }
    }
}
