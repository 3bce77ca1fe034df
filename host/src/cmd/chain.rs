//! `acp-gate chain`: the chain that applies here, as a session would load it: each layer's
//! file (org, project, user, the built-in default chain), each handler with its plugin,
//! control, `on_error`, kinds and grants, what each built-in plugin is for, whether it loaded,
//! and what the inline tests found.

use anyhow::Result;
use clap::Args;
use serde_json::json;

use crate::args::{OutputFormat, PolicyArgs};
use crate::builtin;
use crate::chain::Chain;
use crate::config::{HandlerSpec, PluginRef, Tier};
use crate::exit;
use crate::style::Style;

#[derive(Args)]
pub struct ChainArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// Where each layer's file is looked for when none was read, for the reader who wants one.
pub(super) fn looked_for(tier: Tier, handlers_flag: bool) -> &'static str {
    match tier {
        Tier::Org => "/etc/acp-gate/handlers.toml, --org-handlers or $ACP_GATE_ORG_HANDLERS",
        Tier::Project if handlers_flag => "not read: --handlers replaces it",
        Tier::Project => ".acp-gate/handlers.toml in the workspace",
        Tier::User => "~/.config/acp-gate/handlers.toml or $ACP_GATE_USER_HANDLERS",
        Tier::Builtin => "removed by `builtin_chain = false`",
    }
}

/// `acp-gate chain`. Exit 1 when a handler does not load or an inline test fails.
pub async fn chain(args: ChainArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let chain = assemble(&options).await?;
    match args.format {
        OutputFormat::Json => println!("{}", describe(&chain, &options.workspace)),
        OutputFormat::Text => print_text(&chain, &options, args.policy.handlers.is_some()),
    }
    Ok(if broken(&chain) {
        exit::ERROR
    } else {
        exit::OK
    })
}

/// The chain that applies where `options` say, as a session would load it, its inline tests
/// run and reported.
pub(super) async fn assemble(options: &crate::LoadOptions) -> Result<Chain> {
    crate::assemble_chain(&crate::layer_paths(options)?, &options.workspace).await
}

/// Whether a session could not run on `chain`: a handler did not load, or an inline test failed.
pub(super) fn broken(chain: &Chain) -> bool {
    chain.load_failures().count() > 0 || !chain.tests.failures.is_empty()
}

/// Whether the handler's plugin is pinned by its digest (`None`: a built-in one, which is part
/// of this binary).
pub(super) fn pinned(spec: &HandlerSpec) -> Option<bool> {
    match &spec.plugin {
        PluginRef::Builtin(_) => None,
        PluginRef::File(_) => Some(spec.sha256.is_some()),
        PluginRef::Oci(location) => Some(spec.sha256.is_some() || location.digest().is_some()),
    }
}

/// What the plugin of `spec` is for, when it is a built-in one.
fn purpose(spec: &HandlerSpec) -> Option<&'static str> {
    match &spec.plugin {
        PluginRef::Builtin(name) => builtin::purpose(name),
        _ => None,
    }
}

/// The chain as `chain --format json` prints it.
pub(super) fn describe(chain: &Chain, workspace: &std::path::Path) -> serde_json::Value {
    let handlers: Vec<_> = chain
        .handlers()
        .map(|(spec, loaded)| {
            let mut line = json!({
                "name": spec.name,
                "tier": spec.tier,
                "file": spec.file,
                "line": spec.line,
                "plugin": spec.plugin.to_string(),
                "pinned": pinned(spec),
                "purpose": purpose(spec),
                "control": spec.control,
                "on_error": spec.on_error,
                "applies_to": spec.applies_to,
                "grants": spec.grants,
                "tests": spec.tests.len(),
                "ok": loaded.is_ok(),
            });
            let (key, value) = match loaded {
                Ok(origin) => ("origin", json!(origin)),
                Err(error) => ("error", json!(error)),
            };
            line[key] = value;
            line
        })
        .collect();
    let layers: Vec<_> = (chain.sources.iter())
        .map(|(tier, file)| json!({ "tier": tier, "file": file }))
        .collect();
    json!({
        "workspace": workspace,
        "layers": layers,
        "handlers": handlers,
        "default": chain.default_verdict(),
        "tests": chain.tests,
        "notices": chain.notices,
    })
}

/// The files of `tier`'s layer: those read, and those its handlers were named in (the built-in
/// chain's own text, which is no file).
pub(super) fn layer_files(chain: &Chain, tier: Tier) -> Vec<&std::path::Path> {
    let mut files: Vec<&std::path::Path> = Vec::new();
    let read = (chain.sources.iter())
        .filter(|(t, _)| *t == tier)
        .map(|(_, f)| f);
    let named = (chain.handlers())
        .filter(|(s, _)| s.tier == tier)
        .map(|(s, _)| &s.file);
    for file in read.chain(named) {
        if !files.contains(&file.as_path()) {
            files.push(file);
        }
    }
    files
}

/// Where a loaded plugin came from and what was checked: its source, sha256 and signer.
pub(super) fn provenance(origin: &crate::chain::Origin) -> String {
    format!(
        "from {}, sha256 {}{}",
        origin.from,
        origin.component_sha256,
        (origin.signed_by.as_ref())
            .map(|k| format!(", signed by {k}"))
            .unwrap_or_default()
    )
}

fn print_text(chain: &Chain, options: &crate::LoadOptions, handlers_flag: bool) {
    let style = Style::stdout();
    println!(
        "{}",
        style.bold(&format!(
            "The chain in {}, most authoritative layer first",
            options.workspace.display()
        ))
    );
    println!(
        "{}",
        style.dim("Every handler that applies judges the request; the strictest verdict wins (deny > ask > allow > abstain), and a lower layer can only tighten.")
    );
    for tier in [Tier::Org, Tier::Project, Tier::User, Tier::Builtin] {
        let files = layer_files(chain, tier);
        println!();
        if files.is_empty() {
            let none = format!("none ({})", looked_for(tier, handlers_flag));
            println!("{:<8} {}", style.bold(tier.as_str()), style.dim(&none));
            continue;
        }
        for file in files {
            let name = match tier {
                Tier::Builtin => "the built-in default chain".to_owned(),
                _ => file.display().to_string(),
            };
            println!("{:<8} {name}", style.bold(tier.as_str()));
            let mut any = false;
            for (spec, loaded) in chain.handlers().filter(|(s, _)| s.tier == tier) {
                if spec.file != *file {
                    continue;
                }
                any = true;
                print_handler(style, spec, loaded);
            }
            if !any {
                println!("  {}", style.dim("(no handlers)"));
            }
        }
    }
    println!();
    println!(
        "{:<8} {} when every handler abstains",
        style.bold("default"),
        chain.default_verdict()
    );
    if chain.tests.run > 0 {
        println!("{:<8} {}", style.bold("tests"), chain.tests.summary());
        for failure in &chain.tests.failures {
            println!("  {} {}", style.red("FAILED"), failure.message);
        }
    }
    for notice in &chain.notices {
        println!("{:<8} {notice}", style.bold("notice"));
    }
}

fn print_handler(style: Style, spec: &HandlerSpec, loaded: Result<&crate::chain::Origin, &str>) {
    println!("  {}  {}", style.bold(&spec.name), spec.plugin);
    let kinds = match &spec.applies_to {
        None => "every kind".to_owned(),
        Some(kinds) => (kinds.iter().map(|k| k.as_str()))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let grants: Vec<&str> = spec.grants.iter().map(|g| g.name()).collect();
    println!(
        "      {} · on error {} · applies to {kinds} · grants {}{}",
        format!("{:?}", spec.control).to_lowercase(),
        spec.on_error,
        grants.join(", "),
        match spec.tests.len() {
            0 => String::new(),
            n => format!(" · {n} inline test{}", if n == 1 { "" } else { "s" }),
        }
    );
    if let Some(purpose) = purpose(spec) {
        println!("      {}", style.dim(purpose));
    }
    match loaded {
        Ok(origin) if !matches!(spec.plugin, PluginRef::Builtin(_)) => {
            println!("      {}", style.dim(&provenance(origin)))
        }
        Ok(_) => {}
        Err(error) => println!(
            "      {} {error} (in a session it counts as {} on every request)",
            style.red("FAILED to load:"),
            spec.on_error
        ),
    }
}
