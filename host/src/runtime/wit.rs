//! The WIT boundary: the bindings generated from `wit/plugin.wit`, and the conversions between
//! the host's types and the contract's records.

use std::path::Path;

use super::{Ruling, clean};
use crate::request::{self, ToolRequest};
use crate::verdict::Verdict;

pub(super) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "plugin",
        exports: { default: async },
        // Read on a thread of its own, awaited: the evaluation's wall clock still applies.
        imports: { "acp-gate:plugin/shell.parse": async },
    });
}

pub(super) use bindings::acp_gate::plugin::{log, paths};
pub(crate) use bindings::acp_gate::plugin::{shell, types};
pub(super) use bindings::{Plugin, PluginIndices};

/// The WIT package version this host implements.
pub const WIT_VERSION: &str = "0.1.0";

/// Whether this host runs a plugin built for WIT `version`: the same major.minor (patch
/// releases only add documentation and compatible fixes).
pub(super) fn runs_plugins_built_for(version: &str) -> bool {
    let major_minor = |v: &str| v.split('.').take(2).map(str::to_owned).collect::<Vec<_>>();
    major_minor(version) == major_minor(WIT_VERSION)
}

pub(super) fn to_wit(r: &ToolRequest) -> types::Request {
    let path_string = |p: &Path| p.display().to_string();
    types::Request {
        session_id: r.session_id.clone(),
        tool_call_id: r.tool_call_id.clone(),
        title: r.title.clone(),
        kind: kind_to_wit(r.kind),
        declared_kind: r.declared_kind.map(kind_to_wit),
        tool_name: r.tool_name.clone(),
        source: match r.source {
            request::RequestSource::PermissionRequest | request::RequestSource::ModeSwitch => {
                types::RequestSource::PermissionRequest
            }
            request::RequestSource::FsRead => types::RequestSource::FsRead,
            request::RequestSource::FsWrite => types::RequestSource::FsWrite,
            request::RequestSource::TerminalCreate => types::RequestSource::TerminalCreate,
        },
        command: r.command.as_ref().map(|c| types::CommandLine {
            argv: c.argv.clone(),
            shell: c.shell.clone(),
        }),
        paths: r
            .paths
            .iter()
            .map(|p| types::PathRef {
                raw: p.raw.clone(),
                absolute: path_string(&p.absolute),
                access: match p.access {
                    request::Access::Read => types::Access::Read,
                    request::Access::Write => types::Access::Write,
                    request::Access::Delete => types::Access::Delete,
                },
                origin: p.origin.clone(),
            })
            .collect(),
        diffs: r
            .diffs
            .iter()
            .map(|d| types::Diff {
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
            .map(|o| types::PermissionOption {
                id: o.id.clone(),
                name: o.name.clone(),
                kind: match o.kind {
                    request::OptionKind::AllowOnce => types::OptionKind::AllowOnce,
                    request::OptionKind::AllowAlways => types::OptionKind::AllowAlways,
                    request::OptionKind::RejectOnce => types::OptionKind::RejectOnce,
                    request::OptionKind::RejectAlways => types::OptionKind::RejectAlways,
                },
            })
            .collect(),
        received_at_ms: r.received_at_ms,
        raw_json: r.raw.to_string(),
    }
}

pub(super) fn kind_to_wit(kind: request::ToolKind) -> types::ToolKind {
    use request::ToolKind as K;
    match kind {
        K::Read => types::ToolKind::Read,
        K::Edit => types::ToolKind::Edit,
        K::Delete => types::ToolKind::Delete,
        K::Move => types::ToolKind::Move,
        K::Search => types::ToolKind::Search,
        K::Execute => types::ToolKind::Execute,
        K::Think => types::ToolKind::Think,
        K::Fetch => types::ToolKind::Fetch,
        K::SwitchMode => types::ToolKind::SwitchMode,
        K::Other => types::ToolKind::Other,
    }
}

pub(super) fn kind_from_wit(kind: types::ToolKind) -> request::ToolKind {
    use request::ToolKind as K;
    match kind {
        types::ToolKind::Read => K::Read,
        types::ToolKind::Edit => K::Edit,
        types::ToolKind::Delete => K::Delete,
        types::ToolKind::Move => K::Move,
        types::ToolKind::Search => K::Search,
        types::ToolKind::Execute => K::Execute,
        types::ToolKind::Think => K::Think,
        types::ToolKind::Fetch => K::Fetch,
        types::ToolKind::SwitchMode => K::SwitchMode,
        types::ToolKind::Other => K::Other,
    }
}

pub(super) fn from_wit(verdict: types::Verdict) -> Ruling {
    let (verdict, reason) = match verdict {
        types::Verdict::Allow => (Verdict::Allow, String::new()),
        types::Verdict::Deny(reason) => (Verdict::Deny, clean(&reason)),
        types::Verdict::Ask(reason) => (Verdict::Ask, clean(&reason)),
        types::Verdict::Abstain => (Verdict::Abstain, String::new()),
    };
    Ruling { verdict, reason }
}
