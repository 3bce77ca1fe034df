//! `handlers.toml`: reading the org, project and user layers into one validated [`Policy`].
//!
//! Every mistake is an error that names the file, the line and the key; a policy is used whole
//! or not at all. Layers are tiers: org > project > user > the built-in default chain (the
//! floor). Tiers are combined so that a lower one can only tighten (see `chain.rs`); here we
//! refuse lower layers that try to redefine a higher layer's handler or loosen its settings.
//! The project's file comes with the repository, so it is trusted least: it can only tighten
//! (its handlers' allows count for nothing, its `default` is ask or deny); a file named with
//! `--handlers` is the person's own and counts as the user's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use crate::builtin;
use crate::distribution::reference::Location;
use crate::distribution::signature::PublicKey;
use crate::distribution::{Trust, TrustedKey};
use crate::policy;
use crate::request::ToolKind;
use crate::runtime::{Grant, Limits, default_grants};
use crate::shorthand;
use crate::verdict::Verdict;

/// The largest configuration file acp-gate reads (handlers.toml, CASES.toml, a plugin's
/// config): a file past it (or a link to an endless one) is refused, not read into memory.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// The most handlers a policy may have, all layers together: each decision runs them all.
pub const MAX_HANDLERS: usize = 4096;

/// Reads a configuration file as text, up to [`MAX_FILE_BYTES`].
pub fn read_file(path: &Path) -> Result<String> {
    use std::io::Read;
    crate::stamps::noted(path);
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("{}: cannot read as UTF-8 text", path.display()))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        bail!(
            "{}: larger than {} MiB; acp-gate reads configuration files up to that size",
            path.display(),
            MAX_FILE_BYTES >> 20
        );
    }
    Ok(text)
}

/// Where a layer comes from, most authoritative first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Org,
    Project,
    User,
    /// The built-in default chain: always beneath the files unless the org (or, with no org
    /// file, the user) switches it off with `builtin_chain = false`.
    Builtin,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Org => "org",
            Tier::Project => "project",
            Tier::User => "user",
            Tier::Builtin => "builtin",
        }
    }
}

/// PAM-style control flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Control {
    /// Its verdict always counts.
    Required,
    /// Its verdict counts, and a deny stops the chain at once.
    Requisite,
    /// An allow (with nothing stricter before it in its tier) skips the later sufficient and
    /// optional handlers of its tier; never a required or requisite one.
    Sufficient,
    /// May be skipped by a sufficient allow; may use `on_error = "abstain"`.
    Optional,
}

/// Which plugin a handler runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginRef {
    Builtin(&'static str),
    File(PathBuf),
    /// `oci://…` or `oci-layout://…`: fetched into the local store (`distribution`).
    Oci(Location),
}

impl std::fmt::Display for PluginRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginRef::Builtin(name) => write!(f, "builtin:{name}"),
            PluginRef::File(path) => write!(f, "{}", path.display()),
            PluginRef::Oci(location) => write!(f, "{location}"),
        }
    }
}

/// An inline test: a request in short form and the verdict the handler must give.
#[derive(Debug, Clone)]
pub struct InlineTest {
    pub request: serde_json::Value,
    pub expect: Verdict,
    pub line: usize,
}

/// One validated `[[handler]]` entry.
#[derive(Debug, Clone)]
pub struct HandlerSpec {
    pub name: String,
    pub tier: Tier,
    pub file: PathBuf,
    pub line: usize,
    pub plugin: PluginRef,
    pub sha256: Option<String>,
    pub control: Control,
    /// What a failure (trap, timeout, memory cap, bad result, load failure) counts as: deny,
    /// ask, or (optional handlers only) abstain; never allow.
    pub on_error: Verdict,
    pub limits: Limits,
    pub applies_to: Option<Vec<ToolKind>>,
    pub grants: BTreeSet<Grant>,
    pub config_json: String,
    pub tests: Vec<InlineTest>,
}

/// Every layer read and merged: what the chain is built from.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The decision when every handler abstains: allow, ask or deny.
    pub default: Verdict,
    pub handlers: Vec<HandlerSpec>,
    /// The files read, with their tier, for the trace.
    pub sources: Vec<(Tier, PathBuf)>,
    /// Things the user should know (a layer ignored because the org forbids lower layers).
    pub notices: Vec<String>,
    /// The org file's `cache_dir`: a managed install's compile cache, from which the plugins the
    /// org file pins are read (never written: `acp-gate plugin precompile` fills it).
    pub cache_dir: Option<PathBuf>,
    /// The org file's `[trust]` (or the user file's, when there is no org file): the keys
    /// plugins must be signed with.
    pub trust: Option<Trust>,
    /// The org file's `[escalation]`: the review service its gates escalate to.
    pub escalation: Option<Escalation>,
}

/// The org file's `[escalation]`: where escalations go, the key their decisions are signed
/// with, and how the org tightens what leaves the machine. No lower layer can change it.
#[derive(Debug, Clone)]
pub struct Escalation {
    pub url: String,
    /// The review service's public key (`acp-gate serve key`), and where it was read from.
    pub key: Option<(PathBuf, PublicKey)>,
    /// At most this many characters of written contents are sent as an excerpt.
    pub excerpt_chars: Option<usize>,
    /// More patterns whose matches are redacted.
    pub redact: Vec<regex::Regex>,
    /// Where it was set, for messages.
    pub origin: String,
}

/// Where to look for the layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerPaths {
    pub org: Option<PathBuf>,
    /// Project and user files, in that order. `--handlers FILE` puts FILE here alone.
    pub lower: Vec<(Tier, PathBuf)>,
    /// `--permission-policy`: an acpx permission policy, as JSON or a file's path; a handler
    /// of the user tier (`builtin:acpx-policy`).
    pub permission_policy: Option<String>,
}

impl LayerPaths {
    /// The standard locations: the org file from `org` (a flag), `$ACP_GATE_ORG_HANDLERS` or
    /// `/etc/acp-gate/handlers.toml`; then `handlers` (a flag, the user tier) alone, or the project's
    /// `.acp-gate/handlers.toml` and the user's `~/.config/acp-gate/handlers.toml`
    /// (`$ACP_GATE_USER_HANDLERS` overrides the latter). Files that do not exist are skipped,
    /// except those named by a flag or variable, which must exist.
    pub fn discover(
        org: Option<&Path>,
        handlers: Option<&Path>,
        workspace: &Path,
    ) -> Result<LayerPaths> {
        let org = match (org, std::env::var_os("ACP_GATE_ORG_HANDLERS")) {
            (Some(path), _) => Some(required(path)?),
            (None, Some(path)) => Some(required(Path::new(&path))?),
            (None, None) => {
                Some(PathBuf::from("/etc/acp-gate/handlers.toml")).filter(|p| p.exists())
            }
        };
        let lower = match handlers {
            // The person named it: theirs, as the user file is.
            Some(path) => vec![(Tier::User, required(path)?)],
            None => {
                let project = workspace.join(".acp-gate/handlers.toml");
                let user = match std::env::var_os("ACP_GATE_USER_HANDLERS") {
                    Some(path) => Some(required(Path::new(&path))?),
                    None => user_config_dir().map(|d| d.join("handlers.toml")),
                };
                [(Tier::Project, Some(project)), (Tier::User, user)]
                    .into_iter()
                    .filter_map(|(tier, path)| Some((tier, path.filter(|p| p.exists())?)))
                    .collect()
            }
        };
        Ok(LayerPaths {
            org,
            lower,
            permission_policy: None,
        })
    }
}

fn required(path: &Path) -> Result<PathBuf> {
    if !path.exists() {
        bail!("{}: no such file", path.display());
    }
    Ok(path.to_path_buf())
}

/// `$XDG_CONFIG_HOME/acp-gate`, else `~/.config/acp-gate`.
pub fn user_config_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("acp-gate"))
}

// ---- the file format ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[serde(default)]
    settings: SettingsSpec,
    #[serde(default)]
    handler: Vec<Spanned<HandlerEntry>>,
    trust: Option<Spanned<TrustSpec>>,
    escalation: Option<Spanned<EscalationSpec>>,
}

/// `[escalation]`: the review service (`url`), its public key (`key`, a PEM file relative to
/// the file), and `[escalation.redact]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EscalationSpec {
    url: Spanned<String>,
    key: Option<Spanned<String>>,
    #[serde(default)]
    redact: RedactSpec,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RedactSpec {
    excerpt_chars: Option<usize>,
    #[serde(default)]
    patterns: Vec<Spanned<String>>,
}

/// `[trust]`: public keys (PEM files, relative to the file) and whether every plugin that is
/// not built in must carry a signature by one of them (the default).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustSpec {
    keys: Vec<Spanned<String>>,
    #[serde(default = "yes")]
    require_signatures: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SettingsSpec {
    default: Option<Spanned<Verdict>>,
    /// Org only: `"ignore"` makes acp-gate read no project or user file.
    lower_layers: Option<Spanned<LowerLayers>>,
    /// `false` removes the built-in default chain beneath the files (org, or user with no org).
    builtin_chain: Option<Spanned<bool>>,
    /// Org only: the compile cache of the org's plugins, a directory users cannot write.
    cache_dir: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum LowerLayers {
    Allow,
    Ignore,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandlerEntry {
    name: Spanned<String>,
    plugin: Spanned<String>,
    sha256: Option<Spanned<String>>,
    #[serde(default = "required_control")]
    control: Control,
    #[serde(default = "deny_on_error")]
    on_error: Spanned<Verdict>,
    timeout_ms: Option<Spanned<u64>>,
    memory_mb: Option<Spanned<u64>>,
    applies_to: Option<Vec<Spanned<String>>>,
    imports: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    config: toml::Table,
    #[serde(default)]
    test: Vec<Spanned<toml::Table>>,
}

fn required_control() -> Control {
    Control::Required
}

fn deny_on_error() -> Spanned<Verdict> {
    Spanned::new(0..0, Verdict::Deny)
}

/// A file being read: its path and text, for error positions.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// A path the file names, relative to the file's directory.
    fn resolve(&self, path: &str) -> PathBuf {
        self.dir().join(path)
    }

    fn error<T>(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        message: impl std::fmt::Display,
    ) -> Result<T> {
        bail!(
            "{}:{}: {key}: {message}",
            self.path.display(),
            self.line(span.start)
        )
    }
}

/// Reads every layer and merges them, or fails naming the first mistake.
pub fn load(paths: &LayerPaths) -> Result<Policy> {
    let mut policy = Policy {
        default: Verdict::Ask,
        handlers: Vec::new(),
        sources: Vec::new(),
        notices: Vec::new(),
        cache_dir: None,
        trust: None,
        escalation: None,
    };
    let mut default_set_by: Option<(Tier, Verdict)> = None;
    let mut builtin_chain = true;
    let mut lower: Vec<(Tier, PathBuf)> = paths.lower.clone();
    let mut permission_policy = paths.permission_policy.as_deref();

    let mut layers: Vec<(Tier, PathBuf)> = Vec::new();
    if let Some(org) = &paths.org {
        layers.push((Tier::Org, org.clone()));
    }
    layers.append(&mut lower);

    let mut index = 0;
    while index < layers.len() {
        let (tier, path) = layers[index].clone();
        index += 1;
        let text = read_file(&path)?;
        let source = Source {
            path: &path,
            text: &text,
        };
        let file: FileSpec =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        policy.sources.push((tier, path.clone()));

        if let Some(setting) = &file.settings.lower_layers {
            if tier != Tier::Org {
                return source.error(
                    setting.span(),
                    "settings.lower_layers",
                    "only an org file may set this",
                );
            }
            if *setting.get_ref() == LowerLayers::Ignore {
                for (_, ignored) in layers.drain(index..) {
                    policy.notices.push(format!(
                        "{} ignored: the org file forbids lower layers",
                        ignored.display()
                    ));
                }
                if permission_policy.take().is_some() {
                    policy.notices.push(
                        "--permission-policy ignored: the org file forbids lower layers".into(),
                    );
                }
            }
        }
        if let Some(setting) = &file.settings.cache_dir {
            if tier != Tier::Org {
                return source.error(
                    setting.span(),
                    "settings.cache_dir",
                    "only an org file may set this (the user's cache is `$ACP_GATE_CACHE_DIR`)",
                );
            }
            policy.cache_dir = Some(source.resolve(setting.get_ref()));
        }
        if let Some(spec) = &file.trust {
            let allowed = tier == Tier::Org || (tier == Tier::User && paths.org.is_none());
            if !allowed {
                return source.error(
                    spec.span(),
                    "trust",
                    "only the org file (or the user file when there is none) says which keys to trust",
                );
            }
            policy.trust = Some(trust(&source, spec)?);
        }
        if let Some(spec) = &file.escalation {
            if tier != Tier::Org {
                return source.error(
                    spec.span(),
                    "escalation",
                    "only the org file says where escalations go (a lower layer cannot change it)",
                );
            }
            policy.escalation = Some(escalation(&source, spec)?);
        }
        if let Some(setting) = &file.settings.builtin_chain {
            let allowed = tier == Tier::Org || (tier == Tier::User && paths.org.is_none());
            if !allowed && !*setting.get_ref() {
                return source.error(
                    setting.span(),
                    "settings.builtin_chain",
                    "only the org file (or the user file when there is none) may remove the built-in chain",
                );
            }
            builtin_chain &= *setting.get_ref();
        }
        if let Some(default) = &file.settings.default {
            let value = *default.get_ref();
            if value == Verdict::Abstain {
                return source.error(
                    default.span(),
                    "settings.default",
                    "must be allow, ask or deny: it is what stands when every handler abstains",
                );
            }
            if tier == Tier::Project && value == Verdict::Allow {
                return source.error(
                    default.span(),
                    "settings.default",
                    "a project's file can only tighten (it comes with the repository): ask or deny",
                );
            }
            if let Some((higher, set)) = default_set_by
                && value < set
            {
                return source.error(
                    default.span(),
                    "settings.default",
                    format!("{value:?} would loosen the {} layer's {set:?}; a lower layer can only tighten", higher.as_str()),
                );
            }
            default_set_by = Some((tier, value));
            policy.default = value;
        }
        for (position, entry) in file.handler.iter().enumerate() {
            let spec = handler_spec(&source, tier, position, entry, &mut policy.notices)?;
            if let Some(existing) = policy.handlers.iter().find(|h| h.name == spec.name) {
                return source.error(
                    entry.get_ref().name.span(),
                    &format!("handler[{position}].name"),
                    format!(
                        "`{}` is already defined by the {} layer ({}); a layer cannot redefine or drop another's handler",
                        spec.name,
                        existing.tier.as_str(),
                        existing.file.display()
                    ),
                );
            }
            policy.handlers.push(spec);
            if policy.handlers.len() > MAX_HANDLERS {
                return source.error(
                    entry.span(),
                    &format!("handler[{position}]"),
                    format!("more than {MAX_HANDLERS} handlers in all layers; acp-gate runs at most {MAX_HANDLERS}"),
                );
            }
        }
    }

    if let Some(spec) = permission_policy {
        let (origin, mut handlers) = acpx_policy(spec)?;
        policy.sources.push((Tier::User, origin));
        policy.handlers.append(&mut handlers);
    }

    if builtin_chain {
        let mut floor = builtin_floor()?;
        if let Some(clash) = floor
            .handlers
            .iter()
            .find(|b| policy.handlers.iter().any(|h| h.name == b.name))
        {
            let user = policy
                .handlers
                .iter()
                .find(|h| h.name == clash.name)
                .unwrap();
            bail!(
                "{}:{}: handler.name: `{}` is the name of a handler of the built-in default chain; choose another",
                user.file.display(),
                user.line,
                clash.name
            );
        }
        policy.handlers.append(&mut floor.handlers);
        if default_set_by.is_none() {
            policy.default = floor.default;
        }
    }
    Ok(policy)
}

/// The built-in default chain as a policy layer of its own.
pub fn builtin_floor() -> Result<Policy> {
    let path = Path::new("<builtin default chain>");
    let (file, handlers) = layer(path, builtin::DEFAULT_CHAIN, Tier::Builtin)?;
    Ok(Policy {
        default: file.settings.default.map_or(Verdict::Ask, |d| *d.get_ref()),
        handlers,
        sources: vec![(Tier::Builtin, path.to_path_buf())],
        notices: Vec::new(),
        cache_dir: None,
        trust: None,
        escalation: None,
    })
}

/// The handlers of a layer acp-gate writes itself (the built-in chain, an acpx policy).
fn layer(path: &Path, text: &str, tier: Tier) -> Result<(FileSpec, Vec<HandlerSpec>)> {
    let source = Source { path, text };
    let file: FileSpec =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let handlers = file
        .handler
        .iter()
        .enumerate()
        .map(|(position, entry)| handler_spec(&source, tier, position, entry, &mut Vec::new()))
        .collect::<Result<Vec<_>>>()?;
    Ok((file, handlers))
}

/// `--permission-policy JSON|FILE` (acpx's format) as a handler of the user tier: checked as
/// acpx checks it (an object of `autoApprove`, `autoDeny`, `escalate`, lists of non-empty
/// strings, and `defaultAction`: approve, deny or escalate), each error naming the key.
fn acpx_policy(spec: &str) -> Result<(PathBuf, Vec<HandlerSpec>)> {
    let spec = spec.trim();
    let (origin, text) = match spec.starts_with('{') {
        true => (PathBuf::from("--permission-policy"), spec.to_owned()),
        false => (PathBuf::from(spec), read_file(Path::new(spec))?),
    };
    let at = origin.display();
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{at}: not JSON"))?;
    let Some(object) = value.as_object() else {
        bail!("{at}: a permission policy is a JSON object");
    };
    for (key, entry) in object {
        match key.as_str() {
            "autoApprove" | "autoDeny" | "escalate" => {
                let strings = entry.as_array().is_some_and(|list| {
                    list.iter()
                        .all(|e| e.as_str().is_some_and(|s| !s.trim().is_empty()))
                });
                if !strings {
                    bail!("{at}: {key} must be an array of non-empty strings");
                }
            }
            "defaultAction" => {
                if !matches!(entry.as_str(), Some("approve" | "deny" | "escalate")) {
                    bail!("{at}: defaultAction must be one of approve, deny, escalate");
                }
            }
            other => bail!(
                "{at}: `{other}` is not a key of a permission policy (autoApprove, autoDeny, escalate, defaultAction)"
            ),
        }
    }
    let config = toml::to_string(&value).with_context(|| format!("{at}: cannot be a config"))?;
    let text = format!(
        "[[handler]]\nname = \"acpx-policy\"\nplugin = \"builtin:acpx-policy\"\n[handler.config]\n{config}"
    );
    let (_, handlers) = layer(&origin, &text, Tier::User)?;
    Ok((origin, handlers))
}

/// An org-policy config with `import = { format, path }` (or a list of them): the rules of
/// those files (paths relative to this file), then the config's own `rules`. What a file says
/// that acp-gate cannot express becomes a notice.
fn imported_rules(
    source: &Source,
    config: &toml::Table,
    notices: &mut Vec<String>,
) -> Result<toml::Table> {
    let mut config = config.clone();
    let mut rules = Vec::new();
    for imported in read_imports(source, config.remove("import"))? {
        for (origin, why) in &imported.unsupported {
            notices.push(format!("{origin}: not imported: {why}"));
        }
        for rule in &imported.rules {
            let mut rule = rule.clone();
            if imported.derived_examples {
                rule.matches.clear();
                rule.not_match.clear();
            }
            rules.push(toml::Value::try_from(&rule)?);
        }
    }
    if let Some(own) = config.remove("rules") {
        let own = match own {
            toml::Value::Array(own) => own,
            _ => bail!("`rules` must be a list of rule tables"),
        };
        rules.extend(own);
    }
    config.insert("rules".into(), toml::Value::Array(rules));
    Ok(config)
}

/// The files an org-policy config's `import` names (`{ format, path }` or a list of them,
/// paths relative to `source`), read in order.
fn read_imports(source: &Source, import: Option<toml::Value>) -> Result<Vec<policy::Import>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Import {
        format: policy::Format,
        path: String,
    }
    let specs = match import {
        Some(toml::Value::Array(list)) => list,
        Some(one) => vec![one],
        None => Vec::new(),
    };
    let mut imports = Vec::new();
    for spec in specs {
        let spec: Import = spec.try_into().context(
            "expected `{ format = \"claude\" | \"codex\" | \"gemini\", path = \"FILE\" }`",
        )?;
        let path = source.resolve(&spec.path);
        imports.push(policy::import(spec.format, &path, &read_file(&path)?)?);
    }
    Ok(imports)
}

/// A plugin's error about its config, placed where the config is written: a plugin that words
/// its config errors as a JSON pointer into the config it was given, then `: ` and the message
/// (`/rules/3/regex: rule `x`: ...`, as builtin:org-policy does), gets the pointer replaced by
/// the file and line of that key in the handler's `[handler.config]` (`handlers.toml:42: rule
/// `x`: ...`), or of the rule in the file an `import` read it from. Any other error is kept.
pub fn place_config_error(spec: &HandlerSpec, error: &str) -> String {
    let placed = || {
        let (before, pointer, rest) = split_pointer(error)?;
        let text = read_file(&spec.file).ok()?;
        let source = Source {
            path: &spec.file,
            text: &text,
        };
        let (file, line) = config_place(&source, &spec.name, pointer)?;
        Some(format!("{before}{}:{line}: {rest}", file.display()))
    };
    placed().unwrap_or_else(|| error.to_owned())
}

/// `error` around its first JSON pointer that starts it or follows a `: `.
fn split_pointer(error: &str) -> Option<(&str, &str, &str)> {
    let starts = std::iter::once(0).chain(error.match_indices(": ").map(|(at, _)| at + 2));
    starts.into_iter().find_map(|at| {
        let (pointer, rest) = error[at..].split_once(": ")?;
        let pointer_like = pointer.starts_with('/') && !pointer.contains(char::is_whitespace);
        pointer_like.then(|| (&error[..at], pointer, rest))
    })
}

/// The file and line of `pointer` (RFC 6901, into the JSON config handler `name` of `source`
/// was given): its rules are the imported files' rules, then the config's own.
fn config_place(source: &Source, name: &str, pointer: &str) -> Option<(PathBuf, usize)> {
    let handlers: toml::Table = toml::from_str(source.text).ok()?;
    let position = handlers
        .get("handler")?
        .as_array()?
        .iter()
        .position(|h| h.get("name").and_then(toml::Value::as_str) == Some(name))?;
    let config = handlers["handler"][position].get("config")?.as_table()?;
    let imported: Vec<policy::Rule> = read_imports(source, config.get("import").cloned())
        .ok()?
        .into_iter()
        .flat_map(|import| import.rules)
        .collect();
    let mut segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    if let [rules, number, ..] = &mut segments[..]
        && rules == "rules"
        && let Ok(n) = number.parse::<usize>()
    {
        if let Some(rule) = imported.get(n) {
            return Some((rule.origin.file.clone(), rule.origin.line));
        }
        *number = (n - imported.len()).to_string();
    }
    let document = toml::de::DeTable::parse(source.text).ok()?;
    let toml::de::DeValue::Array(entries) = document.get_ref().get("handler")?.get_ref() else {
        return None;
    };
    let mut value = entries.get(position)?;
    let mut found = 0;
    for segment in std::iter::once("config").chain(segments.iter().map(String::as_str)) {
        let next = match value.get_ref() {
            toml::de::DeValue::Table(table) => table.get(segment),
            toml::de::DeValue::Array(items) => {
                segment.parse().ok().and_then(|i: usize| items.get(i))
            }
            _ => None,
        };
        let Some(next) = next else { break };
        value = next;
        found += 1;
    }
    // The pointer names at least a key of the config (an unrelated `: /path: ` does not).
    (found > 1).then(|| (source.path.to_path_buf(), source.line(value.span().start)))
}

/// `[trust]`: every key read (a key that cannot be read stops the load, naming it).
fn trust(source: &Source, spec: &Spanned<TrustSpec>) -> Result<Trust> {
    let mut keys = Vec::new();
    for (number, name) in spec.get_ref().keys.iter().enumerate() {
        let (path, key) = public_key(source, name, &format!("trust.keys[{number}]"))?;
        keys.push(TrustedKey { path, key });
    }
    Ok(Trust {
        keys,
        require_signatures: spec.get_ref().require_signatures,
        origin: format!(
            "[trust] of {}:{}",
            source.path.display(),
            source.line(spec.span().start)
        ),
    })
}

/// A public key (PEM) the file names by a path relative to itself, under `key`.
fn public_key(source: &Source, name: &Spanned<String>, key: &str) -> Result<(PathBuf, PublicKey)> {
    let path = source.resolve(name.get_ref());
    let read = read_file(&path).and_then(|pem| PublicKey::from_pem(&pem));
    match read {
        Ok(public) => Ok((path, public)),
        Err(why) => source.error(name.span(), key, format!("{}: {why:#}", path.display())),
    }
}

fn escalation(source: &Source, spec: &Spanned<EscalationSpec>) -> Result<Escalation> {
    let entry = spec.get_ref();
    let url = entry.url.get_ref().trim().to_owned();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return source.error(
            entry.url.span(),
            "escalation.url",
            "an http:// or https:// URL of `acp-gate serve`",
        );
    }
    let key = match &entry.key {
        Some(name) => Some(public_key(source, name, "escalation.key")?),
        None => None,
    };
    let mut redact = Vec::new();
    for (number, pattern) in entry.redact.patterns.iter().enumerate() {
        match regex::Regex::new(pattern.get_ref()) {
            Ok(regex) => redact.push(regex),
            Err(why) => {
                return source.error(
                    pattern.span(),
                    &format!("escalation.redact.patterns[{number}]"),
                    format!("not a regular expression: {why}"),
                );
            }
        }
    }
    Ok(Escalation {
        url,
        key,
        excerpt_chars: entry.redact.excerpt_chars,
        redact,
        origin: format!(
            "[escalation] of {}:{}",
            source.path.display(),
            source.line(spec.span().start)
        ),
    })
}

fn handler_spec(
    source: &Source,
    tier: Tier,
    position: usize,
    entry: &Spanned<HandlerEntry>,
    notices: &mut Vec<String>,
) -> Result<HandlerSpec> {
    let entry_span = entry.span();
    let line = source.line(entry.span().start);
    let entry = entry.get_ref();
    let key = |field: &str| format!("handler[{position}].{field}");
    let name = entry.name.get_ref().trim().to_owned();
    if name.is_empty() {
        return source.error(entry.name.span(), &key("name"), "must not be empty");
    }

    let plugin_text = entry.plugin.get_ref();
    let location = Location::parse(plugin_text, source.dir());
    let plugin = match (plugin_text.strip_prefix("builtin:"), location) {
        (Some(builtin_name), _) => match builtin::find(builtin_name) {
            Some(found) => PluginRef::Builtin(found),
            None => {
                return source.error(
                    entry.plugin.span(),
                    &key("plugin"),
                    format!(
                        "unknown built-in plugin `{plugin_text}` (built-ins: {})",
                        builtin::names().join(", ")
                    ),
                );
            }
        },
        (None, Some(location)) => {
            let location = location.or_else(|why| {
                source.error(entry.plugin.span(), &key("plugin"), format!("{why:#}"))
            })?;
            if tier == Tier::Org && location.digest().is_none() {
                return source.error(
                    entry.plugin.span(),
                    &key("plugin"),
                    "an org file must pin an OCI plugin by digest (`oci://REGISTRY/REPOSITORY:TAG@sha256:…`; `acp-gate plugin pull REF` prints it)",
                );
            }
            PluginRef::Oci(location)
        }
        (None, None) => {
            let path = source.resolve(plugin_text);
            if !path.is_file() {
                return source.error(
                    entry.plugin.span(),
                    &key("plugin"),
                    format!("plugin file {} does not exist", path.display()),
                );
            }
            PluginRef::File(path)
        }
    };

    let sha256 = match &entry.sha256 {
        Some(pin) => {
            let pin_text = pin.get_ref().trim().to_ascii_lowercase();
            if pin_text.len() != 64 || !pin_text.bytes().all(|b| b.is_ascii_hexdigit()) {
                return source.error(
                    pin.span(),
                    &key("sha256"),
                    "must be 64 hexadecimal digits (see `acp-gate plugin hash`)",
                );
            }
            Some(pin_text)
        }
        None if tier == Tier::Org && matches!(plugin, PluginRef::File(_)) => {
            return source.error(
                entry.plugin.span(),
                &key("sha256"),
                format!(
                    "an org file must pin every plugin file by sha256: add the `sha256 = \"…\"` line that `acp-gate plugin hash {plugin}` prints"
                ),
            );
        }
        None => None,
    };

    let on_error = *entry.on_error.get_ref();
    if on_error == Verdict::Allow {
        return source.error(
            entry.on_error.span(),
            &key("on_error"),
            "a failing handler never allows: deny, ask or abstain",
        );
    }
    if on_error == Verdict::Abstain && entry.control != Control::Optional {
        return source.error(
            entry.on_error.span(),
            &key("on_error"),
            "`abstain` is only for optional handlers",
        );
    }

    let mut limits = Limits::default();
    if let Some(ms) = &entry.timeout_ms {
        if !(1..=60_000).contains(ms.get_ref()) {
            return source.error(ms.span(), &key("timeout_ms"), "must be between 1 and 60000");
        }
        limits.timeout = Duration::from_millis(*ms.get_ref());
    }
    if let Some(mb) = &entry.memory_mb {
        if !(1..=4096).contains(mb.get_ref()) {
            return source.error(mb.span(), &key("memory_mb"), "must be between 1 and 4096");
        }
        limits.memory_bytes = (*mb.get_ref() as usize) << 20;
    }

    let applies_to = match &entry.applies_to {
        None => None,
        Some(kinds) => {
            let mut parsed = Vec::new();
            for kind in kinds {
                let value = ToolKind::parse(kind.get_ref());
                if value == ToolKind::Other && kind.get_ref() != "other" {
                    return source.error(
                        kind.span(),
                        &key("applies_to"),
                        format!(
                            "unknown tool kind `{}` (kinds: read, edit, delete, move, search, execute, think, fetch, switch_mode, other)",
                            kind.get_ref()
                        ),
                    );
                }
                parsed.push(value);
            }
            Some(parsed)
        }
    };

    let grants = match &entry.imports {
        None => default_grants(),
        Some(names) => {
            let mut grants = BTreeSet::new();
            for name in names {
                let Some(grant) = Grant::parse(name.get_ref()) else {
                    let known: Vec<&str> = Grant::ALL.iter().map(|g| g.name()).collect();
                    return source.error(
                        name.span(),
                        &key("imports"),
                        format!(
                            "unknown grant `{}` (grants: {})",
                            name.get_ref(),
                            known.join(", ")
                        ),
                    );
                };
                grants.insert(grant);
            }
            grants
        }
    };

    let config = match entry.config.get("import") {
        None => entry.config.clone(),
        Some(_) if plugin != PluginRef::Builtin("org-policy") => {
            return source.error(
                entry_span,
                &key("config.import"),
                "only builtin:org-policy reads other agents' rule files",
            );
        }
        Some(_) => imported_rules(source, &entry.config, notices)
            .or_else(|why| source.error(entry_span, &key("config.import"), format!("{why:#}")))?,
    };
    let config_json = serde_json::to_string(&config)?;
    let mut tests = Vec::new();
    for (number, case) in entry.test.iter().enumerate() {
        let table = case.get_ref();
        let test_key = key(&format!("test[{number}]"));
        let expect = match shorthand::expected_verdict(table) {
            Ok(expect) => expect,
            Err(why) => return source.error(case.span(), &format!("{test_key}.expect"), why),
        };
        let mut request = table.clone();
        request.remove("expect");
        tests.push(InlineTest {
            request: serde_json::to_value(&request)?,
            expect,
            line: source.line(case.span().start),
        });
    }

    Ok(HandlerSpec {
        name,
        tier,
        file: source.path.to_path_buf(),
        line,
        plugin,
        sha256,
        control: entry.control,
        on_error,
        limits,
        applies_to,
        grants,
        config_json,
        tests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HANDLERS: &str = r#"[[handler]]
name = "other"
plugin = "builtin:org-policy"

[[handler]]
name = "team"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "a"
decision = "allow"
prefix = ["ls"]

[[handler.config.rules]]
name = "b"
decision = "deny"
reason = "r"
regex = "("
match = [
  "x",
  "y",
]
"#;

    fn place(pointer: &str) -> Option<usize> {
        let source = Source {
            path: Path::new("h.toml"),
            text: HANDLERS,
        };
        config_place(&source, "team", pointer).map(|(_, line)| line)
    }

    /// A plugin's pointer into its config names the line of that key, element or rule.
    #[test]
    fn a_config_pointer_is_a_line_of_the_file() {
        assert_eq!(place("/rules/1/regex"), Some(18));
        assert_eq!(place("/rules/1/match/1"), Some(21));
        assert_eq!(place("/rules/1"), Some(14));
        assert_eq!(place("/rules/0/prefix"), Some(12));
        // A key the file does not have: the nearest place that it has.
        assert_eq!(place("/rules/1/knids"), Some(14));
        assert_eq!(place("/usr/lib"), None);
    }

    #[test]
    fn a_pointer_is_found_after_the_context_of_the_error() {
        assert_eq!(
            split_pointer("refuses its config: /rules/1/regex: rule `b`: x: y"),
            Some(("refuses its config: ", "/rules/1/regex", "rule `b`: x: y"))
        );
        assert_eq!(
            split_pointer("/rules/0: why"),
            Some(("", "/rules/0", "why"))
        );
        assert_eq!(split_pointer("cannot read /a b: why"), None);
    }
}
