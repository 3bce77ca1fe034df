//! `acp-gate plugin`: inspect, validate, hash and test a plugin component before it goes into
//! `handlers.toml`, start a new one from a template, and precompile plugins into a cache.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use super::{distribute, read, runtime};
use crate::args::OutputFormat;
use crate::cache::{CacheDirs, CompileCache};
use crate::chain::{Chain, load_plugin};
use crate::config::{self, Control, HandlerSpec, LayerPaths, PluginRef, Policy, Tier};
use crate::digest::sha256_hex;
use crate::exit;
use crate::request::SessionContext;
use crate::runtime::{Grant, Limits, Need, Runtime, WIT_VERSION, default_grants};
use crate::scaffold::{self, Lang};
use crate::shorthand::{self, Expect};
use crate::style::Style;
use crate::verdict::Verdict;

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
    /// Run a component on the test cases of a CASES.toml and compare its verdicts.
    Test(TestArgs),
    /// Write a new plugin project (source, build.sh, CASES.toml, handlers.toml) from a template.
    New(NewArgs),
    /// Compile plugins into a compile cache ahead of time: for a managed install, into the org
    /// file's `cache_dir`, which users cannot write.
    Precompile(PrecompileArgs),
    /// Push a component to an OCI registry (Wasm OCI artifact format) and print the pinned
    /// `plugin = "oci://…@sha256:…"` line for handlers.toml.
    Push(distribute::PushArgs),
    /// Pull a plugin into the local store (later loads are offline) and print its pinned line.
    Pull(distribute::PullArgs),
    /// Write plugins (files, or `oci://` references with their signatures) into an OCI image
    /// layout directory, for sites with no registry: `plugin = "oci-layout://DIR@sha256:…"`.
    Package(distribute::PackageArgs),
    /// Sign a plugin with a cosign-compatible key: in its registry (beside it, as cosign
    /// does), in its image layout, or a file's FILE.sig.
    Sign(distribute::SignArgs),
    /// Check a plugin's signature against a public key, offline once pulled.
    Verify(distribute::VerifyArgs),
    /// Make a key pair for `plugin sign` (cosign's formats: cosign can use it, and the reverse).
    Keygen(distribute::KeygenArgs),
}

#[derive(Args)]
pub struct PrecompileArgs {
    /// An org handlers.toml (every plugin file it names, checked as it would load), or a
    /// plugin component.
    #[arg(required = true, value_name = "HANDLERS.toml|FILE")]
    files: Vec<PathBuf>,
    /// The cache to fill [default: the handlers.toml's `[settings] cache_dir`, else the user's
    /// cache].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct TestArgs {
    file: PathBuf,
    /// The test cases: `[[case]]` tables in the short request form of `[[handler.test]]`.
    cases: PathBuf,
    /// The grants its handler would give, comma-separated [default: CASES.toml's `imports`,
    /// else log,wasi-cli].
    #[arg(long, value_delimiter = ',', value_name = "GRANTS")]
    imports: Option<Vec<String>>,
    /// The plugin's config: a .json file, or a .toml file holding the `[handler.config]` table
    /// [default: CASES.toml's `[config]`].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The workspace root the cases' relative paths are taken against [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
}

#[derive(Args)]
pub struct NewArgs {
    /// The plugin's name: lowercase letters, digits and dashes.
    name: String,
    #[arg(long, value_enum)]
    lang: Lang,
    /// Where to create the project [default: ./NAME].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct ValidateArgs {
    /// A plugin component, or with `--resolve` / `--as` a handlers.toml.
    file: PathBuf,
    /// FILE is a handlers.toml: load every handler as a session would (each plugin fetched and
    /// checked: digest pins, `[trust]` signatures, grants, WIT version; each config prepared;
    /// the inline tests run), FILE read as an org file unless `--as` says otherwise. Exit 1
    /// if a handler would not load or a test fails.
    #[arg(long)]
    resolve: bool,
    /// FILE is a handlers.toml read as this layer's file (implies `--resolve`): `org` applies
    /// the org file's own requirements (every plugin pinned by sha256 or digest, `[trust]`).
    #[arg(long = "as", value_enum, value_name = "LAYER")]
    layer: Option<Layer>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
    /// The grants its handler would give, comma-separated [default: log,wasi-cli].
    #[arg(long, value_delimiter = ',', value_name = "GRANTS", conflicts_with_all = ["resolve", "layer"])]
    imports: Option<Vec<String>>,
}

/// Which layer a handlers.toml is checked as.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Layer {
    Org,
    Project,
    User,
}

pub async fn plugin(command: PluginCommand) -> Result<u8> {
    match command {
        PluginCommand::Hash { file } => {
            println!("sha256 = \"{}\"", sha256_hex(&read(&file)?));
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
        PluginCommand::Test(args) => return test(args).await,
        PluginCommand::New(args) => scaffold::new(&args.name, args.lang, args.dir)?,
        PluginCommand::Precompile(args) => precompile(args).await?,
        PluginCommand::Push(args) => return distribute::push(args).await,
        PluginCommand::Pull(args) => return distribute::pull(args).await,
        PluginCommand::Package(args) => return distribute::package(args).await,
        PluginCommand::Sign(args) => return distribute::sign(args).await,
        PluginCommand::Verify(args) => return distribute::verify(args).await,
        PluginCommand::Keygen(args) => return distribute::keygen(args),
        PluginCommand::Validate(args) if args.resolve || args.layer.is_some() => {
            return validate_policy(&args.file, args.layer.unwrap_or(Layer::Org), args.format)
                .await;
        }
        PluginCommand::Validate(args) => {
            let grants = match &args.imports {
                None => default_grants(),
                Some(names) => parse_grants(names, "--imports")?,
            };
            let plugin = runtime()?.load(&label(&args.file), &read(&args.file)?, None, &grants)?;
            println!(
                "{}: ok, a plugin for acp-gate:plugin@{WIT_VERSION} (sha256 {})",
                args.file.display(),
                plugin.info.digest
            );
        }
    }
    Ok(exit::OK)
}

fn parse_grants(names: &[String], key: &str) -> Result<BTreeSet<Grant>> {
    names
        .iter()
        .map(|n| Grant::parse(n).with_context(|| format!("{key}: unknown grant `{n}`")))
        .collect()
}

fn label(file: &Path) -> String {
    file.display().to_string()
}

// ---- acp-gate plugin validate --resolve ----

/// `plugin validate --resolve [--as LAYER] HANDLERS`: the file read as that layer's, beneath it
/// the built-in chain unless the file removes it, every handler loaded as a session loads it
/// and the inline tests run. One line per handler of the file (JSON: with its tests), the
/// failing tests, and what ran. Exit 1 if anything failed.
async fn validate_policy(file: &Path, layer: Layer, format: OutputFormat) -> Result<u8> {
    let tier = match layer {
        Layer::Org => Tier::Org,
        Layer::Project => Tier::Project,
        Layer::User => Tier::User,
    };
    let layers = LayerPaths {
        org: (tier == Tier::Org).then(|| file.to_path_buf()),
        lower: match tier {
            Tier::Org => Vec::new(),
            _ => vec![(tier, file.to_path_buf())],
        },
        permission_policy: None,
    };
    let chain = crate::assemble_chain(&layers, &std::env::current_dir()?).await?;
    let style = Style::stdout();
    let tests = &chain.tests;
    let mut failed = 0;
    for (spec, loaded) in chain
        .handlers()
        .filter(|(spec, _)| spec.tier != Tier::Builtin)
    {
        let own_failures: Vec<&str> = (tests.failures.iter())
            .filter(|f| f.handler == spec.name)
            .map(|f| f.message.as_str())
            .collect();
        let ok = loaded.is_ok() && own_failures.is_empty();
        failed += usize::from(!ok);
        if format == OutputFormat::Json {
            let mut line = serde_json::json!({
                "handler": spec.name,
                "plugin": spec.plugin.to_string(),
                "ok": ok,
            });
            let fields = match loaded {
                Ok(origin) => serde_json::to_value(origin)?,
                Err(error) => serde_json::json!({ "error": error }),
            };
            let object = line.as_object_mut().expect("an object");
            object.extend(fields.as_object().expect("an object").clone());
            if !spec.tests.is_empty() {
                let passed = match loaded {
                    Ok(_) => spec.tests.len() - own_failures.len(),
                    Err(_) => 0,
                };
                object.insert(
                    "tests".into(),
                    serde_json::json!({ "passed": passed, "failed": own_failures }),
                );
            }
            println!("{line}");
            continue;
        }
        match loaded {
            Ok(origin) => println!(
                "{} {}  {}  component sha256 {}{}",
                style.green("ok"),
                spec.name,
                origin.from,
                origin.component_sha256,
                origin
                    .signed_by
                    .as_ref()
                    .map(|k| format!(", signed by {k}"))
                    .unwrap_or_default()
            ),
            Err(error) => println!("{} {}  {error}", style.red("FAILED"), spec.name),
        }
    }
    if format == OutputFormat::Text {
        for failure in &tests.failures {
            println!("{} {}", style.red("FAILED"), failure.message);
        }
        if tests.run > 0 {
            println!("{}", tests.summary());
        }
    }
    let unloaded = chain.load_failures().count();
    if unloaded > 0 && format == OutputFormat::Text {
        eprintln!(
            "{unloaded} handler(s) would not load: each would count as its on_error on every request"
        );
    }
    Ok(
        if failed > 0 || unloaded > 0 || !tests.failures.is_empty() {
            exit::ERROR
        } else {
            exit::OK
        },
    )
}

// ---- acp-gate plugin precompile ----

async fn precompile(args: PrecompileArgs) -> Result<()> {
    for file in &args.files {
        let policy = match file.extension().is_some_and(|e| e == "toml") {
            // Read as the org file it is meant to be: every plugin pinned.
            true => Some(config::load(&LayerPaths {
                org: Some(file.clone()),
                lower: Vec::new(),
                permission_policy: None,
            })?),
            false => None,
        };
        let dir = args
            .cache_dir
            .clone()
            .or_else(|| policy.as_ref().and_then(|p| p.cache_dir.clone()))
            .or_else(CompileCache::default_dir)
            .context("no cache directory: pass --cache-dir")?;
        let runtime = Runtime::with_cache(CacheDirs {
            writable: Some(dir.clone()),
            managed: None,
            precompile: true,
        })?;
        let Some(policy) = policy else {
            let info = runtime.inspect(&label(file), &read(file)?)?;
            println!(
                "{}: compiled into {} (sha256 {})",
                file.display(),
                dir.display(),
                info.digest
            );
            continue;
        };
        // The built-in plugins' native code is in the binary already.
        for spec in &policy.handlers {
            if let PluginRef::Builtin(_) = &spec.plugin {
                continue;
            }
            let (plugin, _) = load_plugin(&runtime, spec, policy.trust.as_ref()).await?;
            println!(
                "{}: compiled into {} (sha256 {})",
                plugin.label,
                dir.display(),
                plugin.info.digest
            );
        }
    }
    Ok(())
}

// ---- acp-gate plugin test ----

/// A CASES.toml: the plugin's default grants and config, and its test cases.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CasesFile {
    imports: Option<Vec<String>>,
    config: Option<toml::Table>,
    #[serde(default)]
    case: Vec<toml::Spanned<toml::Table>>,
}

/// One case's result, as `--format json` prints it.
#[derive(serde::Serialize)]
struct CaseResult {
    name: String,
    line: usize,
    /// A verdict, or `error`.
    expect: String,
    verdict: String,
    reason: Option<String>,
    error: Option<String>,
    pass: bool,
    elapsed_us: u64,
}

async fn test(args: TestArgs) -> Result<u8> {
    let cases_text = config::read_file(&args.cases)?;
    let file: CasesFile = toml::from_str(&cases_text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.cases.display()))?;
    if file.case.is_empty() {
        bail!("{}: no [[case]] tables", args.cases.display());
    }
    let grants = match (&args.imports, &file.imports) {
        (Some(names), _) => parse_grants(names, "--imports")?,
        (None, Some(names)) => parse_grants(names, &format!("{}: imports", args.cases.display()))?,
        (None, None) => default_grants(),
    };
    let config_json = match &args.config {
        Some(path) => config_from_file(path)?,
        None => serde_json::to_string(&file.config.clone().unwrap_or_default())?,
    };
    let workspace = std::path::absolute(match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    })?;

    let spec = HandlerSpec {
        name: label(&args.file),
        tier: Tier::Project,
        file: args.cases.clone(),
        line: 1,
        plugin: PluginRef::File(args.file.clone()),
        sha256: None,
        control: Control::Required,
        on_error: Verdict::Deny,
        limits: Limits::default(),
        applies_to: None,
        grants,
        config_json,
        tests: Vec::new(),
    };
    // The handler alone, no built-in chain: the same path as inline `[[handler.test]]` entries.
    let policy = Policy {
        default: Verdict::Ask,
        handlers: vec![spec],
        sources: vec![(Tier::Project, args.cases.clone())],
        notices: Vec::new(),
        cache_dir: None,
        trust: None,
        escalation: None,
    };
    let ctx = SessionContext::for_workspace("plugin-test", &workspace);
    let chain = Chain::load(runtime()?, policy, &ctx).await?;
    if let Some(notice) = chain.notices.first() {
        // The plugin did not load: no case can pass; say why once.
        bail!("{notice}");
    }

    let source_line = |offset: usize| cases_text[..offset].matches('\n').count() + 1;
    let mut results = Vec::new();
    for (number, case) in file.case.iter().enumerate() {
        let line = source_line(case.span().start);
        let table = case.get_ref();
        let at = |key: &str| format!("{}:{line}: case[{number}].{key}", args.cases.display());
        if let Some(key) = table
            .keys()
            .find(|k| !shorthand::KEYS.contains(&k.as_str()))
        {
            bail!(
                "{}: unknown key (keys: {})",
                at(key),
                shorthand::KEYS.join(", ")
            );
        }
        let expect =
            shorthand::expected(table).map_err(|why| anyhow::anyhow!("{}: {why}", at("expect")))?;
        let request = serde_json::to_value(table)?;
        let trace = chain
            .run_case(0, &request, &ctx)
            .await
            .with_context(|| at("request"))?;
        let reason_ok = match table.get("reason").and_then(|v| v.as_str()) {
            None => true,
            Some(part) => {
                trace.reason.as_deref().is_some_and(|r| r.contains(part))
                    || trace
                        .error
                        .as_ref()
                        .is_some_and(|e| e.to_string().contains(part))
            }
        };
        // A failure counts as `on_error` in a chain; here it is a result of its own.
        let got = match &trace.error {
            Some(_) => Expect::Failure,
            None => Expect::Verdict(trace.verdict),
        };
        let word = |e: Expect| match e {
            Expect::Verdict(verdict) => verdict.as_str(),
            Expect::Failure => "error",
        };
        results.push(CaseResult {
            name: case_name(table, number),
            line,
            pass: got == expect && reason_ok,
            expect: word(expect).to_owned(),
            verdict: word(got).to_owned(),
            reason: trace.reason,
            error: trace.error.map(|e| e.to_string()),
            elapsed_us: trace.elapsed_us,
        });
    }

    let failed = results.iter().filter(|r| !r.pass).count();
    let passed = results.len() - failed;
    match args.format {
        OutputFormat::Json => {
            for result in &results {
                println!("{}", serde_json::to_string(result)?);
            }
            println!(
                "{}",
                serde_json::json!({ "passed": passed, "failed": failed })
            );
        }
        OutputFormat::Text => {
            let style = Style::stdout();
            let width = results
                .iter()
                .map(|r| r.name.chars().count())
                .max()
                .unwrap_or(0);
            let shown = |word: &str| match Verdict::parse(word) {
                Some(verdict) => style.verdict(verdict, 7),
                None => style.red(&format!("{word:<7}")),
            };
            for r in &results {
                let mark = if r.pass {
                    style.green("PASS")
                } else {
                    style.red("FAIL")
                };
                let why = r.error.as_deref().or(r.reason.as_deref()).unwrap_or("");
                let time = style.dim(&format!("{:>6} µs", r.elapsed_us));
                if r.pass {
                    println!(
                        "{mark}  {:<width$}  {} {time}  {why}",
                        r.name,
                        shown(&r.verdict)
                    );
                } else {
                    println!(
                        "{mark}  {:<width$}  expected {}, got {} {time}  {why}  ({}:{})",
                        r.name,
                        r.expect,
                        shown(&r.verdict),
                        args.cases.display(),
                        r.line
                    );
                }
            }
            println!("{passed} passed, {failed} failed");
        }
    }
    Ok(if failed == 0 { exit::OK } else { exit::ERROR })
}

/// A case's name: its `name`, else what it asks about.
fn case_name(table: &toml::Table, number: usize) -> String {
    if let Some(name) = table.get("name").and_then(|v| v.as_str()) {
        return name.to_owned();
    }
    let what = ["command", "url", "path", "title"]
        .iter()
        .find_map(|key| table.get(*key).and_then(|v| v.as_str()))
        .map(str::to_owned)
        .or_else(|| table.get("argv").map(|v| v.to_string()));
    match (table.get("kind").and_then(|v| v.as_str()), what) {
        (Some(kind), Some(what)) => format!("{kind} {what}"),
        (None, Some(what)) => what,
        _ => format!("case {number}"),
    }
}

/// A config file: JSON as it is; TOML (the `[handler.config]` table's content) turned into JSON.
fn config_from_file(path: &Path) -> Result<String> {
    let text = config::read_file(path)?;
    if path.extension().is_some_and(|e| e == "json") {
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        if !value.is_object() {
            bail!("{}: the config must be a JSON object", path.display());
        }
        return Ok(value.to_string());
    }
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(serde_json::to_string(&table)?)
}
