//! The floor of a decision: the built-in plugins' own Rust code (the plugin crates, linked
//! natively) called as plain functions on the same normalised request, combined by the chain's
//! own [`Combiner`]. What the sandbox costs is the default chain's time over this.

use std::path::Path;

use anyhow::Result;

use std::collections::BTreeSet;

use acp_gate::chain::Combiner;
use acp_gate::config::{self, PluginRef, Policy};
use acp_gate::request::{self, ToolRequest};
use acp_gate::runtime::{Grant, default_grants};
use acp_gate::verdict::Verdict;
use acp_gate_plugin as sdk;

/// A policy whose handlers are built-in plugins, judged without a sandbox.
pub struct NativeChain {
    policy: Policy,
}

impl NativeChain {
    /// The built-in default chain (its handlers, `applies_to`, control flags and config).
    pub fn default_chain() -> Result<NativeChain> {
        Ok(NativeChain {
            policy: config::builtin_floor()?,
        })
    }

    /// What `Chain::decide` decides, handler by handler, with plain calls instead of sandboxed
    /// evaluations.
    pub fn decide(&self, request: &ToolRequest) -> Verdict {
        let plugin_request = to_plugin_request(request);
        let mut combiner = Combiner::default();
        for spec in &self.policy.handlers {
            match combiner.runs(spec, request.kind) {
                None => break,
                Some(false) => continue,
                Some(true) => {}
            }
            let verdict = match evaluate(&spec.plugin, &plugin_request, &spec.config_json) {
                Ok(verdict) => Verdict::parse(verdict_name(&verdict)).expect("a verdict word"),
                Err(_) => spec.on_error,
            };
            combiner.record(spec.tier, spec.control, verdict);
        }
        combiner.finish(self.policy.default).0
    }
}

/// What the default chain grants built-in plugin `name` (where it is not in the chain: the
/// default grants).
pub fn builtin_grants(name: &str) -> Result<BTreeSet<Grant>> {
    Ok(config::builtin_floor()?
        .handlers
        .into_iter()
        .find(|h| matches!(h.plugin, PluginRef::Builtin(builtin) if builtin == name))
        .map_or_else(default_grants, |h| h.grants))
}

/// One built-in plugin's verdict: what its component's `evaluate` export runs (the config
/// parsed, then the plugin's logic), as a plain call.
pub fn evaluate(
    plugin: &PluginRef,
    request: &sdk::Request,
    config: &str,
) -> Result<sdk::Verdict, String> {
    match plugin {
        // Both resolve paths through the host import; natively the host's own resolution (what
        // that import runs) is passed in.
        PluginRef::Builtin("dangerous-command") => {
            let config: dangerous_command::Config = serde_json::from_str(config)
                .map_err(|e| format!("invalid [handler.config]: {e}"))?;
            dangerous_command::evaluate_on(request, &config, &HostDisk(request))
        }
        PluginRef::Builtin("acpx-policy") => {
            sdk::evaluate_with::<acpx_policy::AcpxPolicy>(request, config)
        }
        PluginRef::Builtin("mode-guard") => {
            sdk::evaluate_with::<mode_guard::ModeGuard>(request, config)
        }
        PluginRef::Builtin("org-policy") => {
            sdk::evaluate_with::<org_policy::OrgPolicy>(request, config)
        }
        PluginRef::Builtin("path-validator") => {
            let config: path_validator::Config = serde_json::from_str(config)
                .map_err(|e| format!("invalid [handler.config]: {e}"))?;
            path_validator::evaluate(request, &config, &host_resolution(request))
        }
        other => Err(format!("no native build of {other}")),
    }
}

/// What the `paths.resolve` import answers a plugin judging `request`.
fn host_resolution(request: &sdk::Request) -> impl Fn(&str) -> sdk::Resolution + '_ {
    move |path| {
        let (cwd, home) = (Path::new(&request.cwd), Path::new(&request.home_dir));
        let r = acp_gate::paths::resolve(path, cwd, home);
        sdk::Resolution {
            canonical: r.canonical.display().to_string(),
            exists: r.exists,
            through_symlink: r.through_symlink,
            case_insensitive: r.case_insensitive,
        }
    }
}

/// The command checker's view of the file system natively: paths resolved as the host's
/// `paths.resolve` resolves them; no directory listed and no patch read (none of the
/// benchmark's requests globs or applies a patch, so neither is on its path).
struct HostDisk<'r>(&'r sdk::Request);

impl dangerous_command::Disk for HostDisk<'_> {
    fn resolve(&self, path: &str) -> sdk::Resolution {
        host_resolution(self.0)(path)
    }

    fn entries(&self, _: &str) -> Option<Vec<String>> {
        None
    }

    fn patch_files(&self, _: &str) -> Option<Vec<sdk::PatchedFile>> {
        None
    }
}

/// The plugin crates' `Request` (the WIT record) for a normalised request: the copy the host
/// hands a sandboxed plugin.
pub fn to_plugin_request(r: &ToolRequest) -> sdk::Request {
    let path_string = |p: &Path| p.display().to_string();
    sdk::Request {
        session_id: r.session_id.clone(),
        tool_call_id: r.tool_call_id.clone(),
        title: r.title.clone(),
        kind: kind(r.kind),
        declared_kind: r.declared_kind.map(kind),
        tool_name: r.tool_name.clone(),
        source: match r.source {
            request::RequestSource::PermissionRequest | request::RequestSource::ModeSwitch => {
                sdk::RequestSource::PermissionRequest
            }
            request::RequestSource::FsRead => sdk::RequestSource::FsRead,
            request::RequestSource::FsWrite => sdk::RequestSource::FsWrite,
            request::RequestSource::TerminalCreate => sdk::RequestSource::TerminalCreate,
        },
        command: r.command.as_ref().map(|c| sdk::CommandLine {
            argv: c.argv.clone(),
            shell: c.shell.clone(),
        }),
        paths: r
            .paths
            .iter()
            .map(|p| sdk::PathRef {
                raw: p.raw.clone(),
                absolute: path_string(&p.absolute),
                access: match p.access {
                    request::Access::Read => sdk::Access::Read,
                    request::Access::Write => sdk::Access::Write,
                    request::Access::Delete => sdk::Access::Delete,
                },
                origin: p.origin.clone(),
            })
            .collect(),
        diffs: r
            .diffs
            .iter()
            .map(|d| sdk::Diff {
                path: path_string(&d.path),
                old_text: d.old_text.clone(),
                new_text: d.new_text.clone(),
            })
            .collect(),
        cwd: path_string(&r.cwd),
        workspace_roots: r.workspace_roots.iter().map(|p| path_string(p)).collect(),
        home_dir: path_string(&r.home),
        options: r
            .options
            .iter()
            .map(|o| sdk::PermissionOption {
                id: o.id.clone(),
                name: o.name.clone(),
                kind: match o.kind {
                    request::OptionKind::AllowOnce => sdk::OptionKind::AllowOnce,
                    request::OptionKind::AllowAlways => sdk::OptionKind::AllowAlways,
                    request::OptionKind::RejectOnce => sdk::OptionKind::RejectOnce,
                    request::OptionKind::RejectAlways => sdk::OptionKind::RejectAlways,
                },
            })
            .collect(),
        received_at_ms: r.received_at_ms,
        raw_json: r.raw.to_string(),
    }
}

fn kind(kind: request::ToolKind) -> sdk::ToolKind {
    use request::ToolKind as K;
    match kind {
        K::Read => sdk::ToolKind::Read,
        K::Edit => sdk::ToolKind::Edit,
        K::Delete => sdk::ToolKind::Delete,
        K::Move => sdk::ToolKind::Move,
        K::Search => sdk::ToolKind::Search,
        K::Execute => sdk::ToolKind::Execute,
        K::Think => sdk::ToolKind::Think,
        K::Fetch => sdk::ToolKind::Fetch,
        K::SwitchMode => sdk::ToolKind::SwitchMode,
        K::Other => sdk::ToolKind::Other,
    }
}

/// `allow`, `deny`, `ask` or `abstain`.
pub fn verdict_name(verdict: &sdk::Verdict) -> &'static str {
    match verdict {
        sdk::Verdict::Allow => "allow",
        sdk::Verdict::Deny(_) => "deny",
        sdk::Verdict::Ask(_) => "ask",
        sdk::Verdict::Abstain => "abstain",
    }
}
