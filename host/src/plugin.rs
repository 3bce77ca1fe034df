//! `acp-gate plugin`: inspect, validate and hash a plugin component before it goes into
//! `handlers.toml`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};

use crate::cache::CompileCache;
use crate::cli::{OutputFormat, exit};
use crate::runtime::{Grant, Need, Runtime, WIT_VERSION, default_grants, hex};
use crate::style::Style;

#[derive(Subcommand)]
pub enum PluginCommand {
    /// Show a component's digest, size, imports (with the grant each needs) and exports.
    Inspect {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
    },
    /// Check that a component loads as an acp-gate plugin with the given grants.
    Validate(ValidateArgs),
    /// Print the `sha256 = "..."` line that pins the component in handlers.toml.
    Hash { file: PathBuf },
}

#[derive(Args)]
pub struct ValidateArgs {
    file: PathBuf,
    /// The grants its handler would give, comma-separated [default: log,wasi-cli].
    #[arg(long, value_delimiter = ',', value_name = "GRANTS")]
    imports: Option<Vec<String>>,
}

pub fn run(command: PluginCommand) -> Result<ExitCode> {
    match command {
        PluginCommand::Hash { file } => {
            let bytes = read(&file)?;
            println!("sha256 = \"{}\"", hex(&Sha256::digest(&bytes)));
        }
        PluginCommand::Inspect { file, format } => {
            let info = runtime()?.inspect(&label(&file), &read(&file)?)?;
            match format {
                OutputFormat::Json => println!("{}", serde_json::to_string(&info)?),
                OutputFormat::Text => {
                    let style = Style::stdout();
                    println!("{}", style.bold(&file.display().to_string()));
                    println!("  sha256   {}", info.digest);
                    println!("  size     {} KiB", info.size.div_ceil(1024));
                    println!("  host WIT acp-gate:plugin@{WIT_VERSION}");
                    for export in &info.exports {
                        println!("  export   {export}");
                    }
                    for (import, need) in &info.imports {
                        let needs = match need {
                            Need::Nothing => "no grant needed".to_owned(),
                            Need::Grant(grant) => format!("grant `{}`", grant.name()),
                            Need::Refused => style.red("never granted"),
                        };
                        println!("  import   {import}  {}", style.dim(&format!("({needs})")));
                    }
                }
            }
        }
        PluginCommand::Validate(args) => {
            let grants = match &args.imports {
                None => default_grants(),
                Some(names) => names
                    .iter()
                    .map(|n| {
                        Grant::parse(n).with_context(|| format!("--imports: unknown grant `{n}`"))
                    })
                    .collect::<Result<BTreeSet<_>>>()?,
            };
            let plugin = runtime()?.load(&label(&args.file), &read(&args.file)?, None, &grants)?;
            println!(
                "{}: ok, a plugin for acp-gate:plugin@{WIT_VERSION} (sha256 {})",
                args.file.display(),
                plugin.info.digest
            );
        }
    }
    Ok(ExitCode::from(exit::OK))
}

fn runtime() -> Result<std::sync::Arc<Runtime>> {
    Runtime::new(CompileCache::default_dir())
}

fn read(file: &Path) -> Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))
}

fn label(file: &Path) -> String {
    file.display().to_string()
}
