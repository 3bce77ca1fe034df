//! `acp-gate serve`: run the review service (see [`crate::serve`]), and manage its tokens
//! and key from the command line (`serve token create|list|revoke`, `serve key`).

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::args::OutputFormat;
use crate::exit;
use crate::serve::auth;
use crate::serve::db::{Db, Role};
use crate::serve::fleet::Fleet;
use crate::serve::settings::{Settings, SettingsFile};

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    #[command(flatten)]
    pub options: ServeOptions,
}

#[derive(Args, Debug, Clone)]
pub struct ServeOptions {
    /// A serve.toml with the settings below (flags win over it).
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// The database: a postgres:// URL, or a SQLite file's path [default: review.db in the
    /// state directory].
    #[arg(long, value_name = "URL", global = true)]
    pub database: Option<String>,
    /// Where to listen [default: 127.0.0.1:8470].
    #[arg(long, value_name = "ADDRESS:PORT")]
    pub listen: Option<String>,
    /// The address reviewers reach the page at, for links in notifications.
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// The TLS certificate chain (PEM) to serve with.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Serve plain HTTP on a non-loopback address because a TLS proxy is in front (cookies
    /// are marked Secure, and the proxy's X-Forwarded-For is trusted).
    #[arg(long)]
    pub behind_tls_proxy: bool,
    /// Post a Slack-compatible message to this URL on each new escalation.
    #[arg(long, value_name = "URL")]
    pub webhook: Option<String>,
    /// Requests per second per token (bursts of ten times that); 0: no limit [default: 100].
    #[arg(long, value_name = "N")]
    pub rate_limit: Option<u32>,
    /// The org's published policy, which the fleet page holds every gate to: the org file
    /// (`handlers.toml`) the gates should run, or its digest (`sha256:…`).
    #[arg(long, value_name = "FILE|DIGEST")]
    pub fleet_policy: Option<String>,
    /// How long a gate may go without reporting before the fleet page flags it silent (at
    /// least 10m: a running gate reports every 10 minutes) [default: 24h].
    #[arg(long, value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub silent_after: Option<std::time::Duration>,
}

#[derive(Subcommand, Debug)]
pub enum ServeCommand {
    /// Manage the tokens of gates, reviewers and admins.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Print the public key decisions are signed with (PEM), for the org file's
    /// `[escalation] key`.
    Key,
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Make a token and print it once (it is stored only as a hash).
    Create {
        /// gate (a developer's machine: submits and waits), reviewer (decides) or admin.
        #[arg(long, value_parser = ["gate", "reviewer", "admin"])]
        role: String,
        /// Who it is for: a person, or PERSON@MACHINE for a gate (a reviewer never decides
        /// the escalations of a gate of the same person).
        #[arg(long)]
        name: String,
        /// The team a gate's escalations are filed under.
        #[arg(long)]
        team: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
    },
    /// List the tokens (never their secrets).
    List {
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
    },
    /// Revoke a token by its id (its page sessions end too).
    Revoke { id: String },
}

/// The default address.
const LISTEN: &str = "127.0.0.1:8470";

fn database(options: &ServeOptions, file: &SettingsFile) -> String {
    options
        .database
        .clone()
        .or_else(|| file.database.clone())
        .unwrap_or_else(|| crate::state::dir().join("review.db").display().to_string())
}

pub async fn serve(args: ServeArgs) -> Result<u8> {
    let options = args.options;
    let file = match &options.config {
        Some(path) => SettingsFile::read(path)?,
        None => SettingsFile::default(),
    };
    let database = database(&options, &file);
    match args.command {
        None => {
            let silent_after = match (options.silent_after, &options.config) {
                (Some(flag), _) => Some(flag),
                (None, Some(path)) => file.silent_after(path)?,
                (None, None) => None,
            };
            let policy = options.fleet_policy.or(file.fleet_policy.clone());
            let fleet = Fleet::resolve(policy.as_deref(), silent_after)?;
            let mut settings = Settings::resolve(
                options
                    .listen
                    .as_deref()
                    .or(file.listen.as_deref())
                    .unwrap_or(LISTEN),
                database,
                options.public_url.or(file.public_url),
                (
                    options.tls_cert.or(file.tls_cert),
                    options.tls_key.or(file.tls_key),
                ),
                options.behind_tls_proxy || file.behind_tls_proxy,
                options.webhook.or(file.webhook),
                options.rate_limit.or(file.rate_limit),
            )?;
            settings.fleet = fleet;
            crate::serve::run(settings).await?;
            Ok(exit::OK)
        }
        Some(ServeCommand::Key) => {
            let db = Db::open(&database).await?;
            print!("{}", db.signing_key().await?.public_key().to_pem());
            Ok(exit::OK)
        }
        Some(ServeCommand::Token(command)) => token(&Db::open(&database).await?, command).await,
    }
}

async fn token(db: &Db, command: TokenCommand) -> Result<u8> {
    match command {
        TokenCommand::Create {
            role,
            name,
            team,
            format,
        } => {
            let name = name.trim();
            if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
                bail!("--name: 1 to 128 printable characters");
            }
            let (token, secret) =
                auth::issue(db, name, Role::parse(&role)?, team.as_deref()).await?;
            match format {
                OutputFormat::Json => println!(
                    "{}",
                    json!({ "token": secret, "id": token.id, "name": token.name, "role": token.role })
                ),
                OutputFormat::Text => {
                    println!("{secret}");
                    eprintln!(
                        "acp-gate serve: {} token `{}` made (id {}); it is shown this once",
                        token.role.as_str(),
                        token.name,
                        token.id
                    );
                }
            }
        }
        TokenCommand::List { format } => {
            for token in db.tokens().await? {
                match format {
                    OutputFormat::Json => println!("{}", json!(token)),
                    OutputFormat::Text => println!(
                        "{}  {:8}  {}{}{}",
                        token.id,
                        token.role.as_str(),
                        token.name,
                        token
                            .team
                            .map(|t| format!("  team {t}"))
                            .unwrap_or_default(),
                        if token.revoked_ms.is_some() {
                            "  (revoked)"
                        } else {
                            ""
                        }
                    ),
                }
            }
        }
        TokenCommand::Revoke { id } => {
            if !db.revoke_token(&id).await? {
                bail!("no live token with id {id} (see `acp-gate serve token list`)");
            }
            eprintln!("acp-gate serve: token {id} revoked");
        }
    }
    Ok(exit::OK)
}
