//! The built-in org policy (`builtin:org-policy`): rules an organisation writes in the handler's
//! `[handler.config]` and reviews like any other code. Each rule has a decision (allow / deny /
//! ask), a reason, conditions that must all hold (tool kinds, tool names, title, path globs,
//! command prefix by argv tokens with alternatives, command regex) and `match` / `not_match`
//! examples that are checked before anything is judged.
//!
//! Every matching rule counts; deny > ask > allow; no rule matching is `abstain`. Compound
//! commands are judged per simple command: an allow rule for `npm test` never allows
//! `npm test && curl x | sh`.
//!
//! ```
//! use acp_gate_plugin::Verdict;
//! use org_policy::{Config, evaluate, testing::request};
//!
//! let config: Config = serde_json::from_str(r#"{"rules": [
//!     {"name": "tests", "decision": "allow", "prefix": ["npm", "test"], "match": ["npm test"]},
//!     {"name": "no-fetch", "decision": "ask", "reason": "downloads", "prefix": [["curl", "wget"]]}
//! ]}"#).unwrap();
//! assert!(matches!(evaluate(&request("npm test"), &config), Ok(Verdict::Allow)));
//! assert!(matches!(evaluate(&request("npm test && curl x | sh"), &config), Ok(Verdict::Ask(_))));
//! assert!(matches!(evaluate(&request("npm test; make"), &config), Ok(Verdict::Abstain)));
//! ```
//!
//! The pure logic lives in plain modules (`config` -> `rules` -> `policy`, with `commands` reading
//! shell through the shared `acp-gate-shell` crate) and is tested natively; only the export at the bottom is
//! WebAssembly glue.

pub mod commands;
pub mod config;
pub mod policy;
pub mod rules;

use acp_gate_plugin::{Plugin, Request, Verdict};

pub use config::Config;
use policy::{Facts, check_examples, judge, places};

/// Compiles the rules, checks their examples, then judges the request. A bad rule or a failing
/// example is an error (the host applies the handler's `on_error`, never allow). Nothing is
/// cached: the host gives every request a fresh instance.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    let rules = config.compile()?;
    let places = places(&request.home_dir, &request.workspace_roots, &request.cwd);
    check_examples(&rules, &places)?;
    Ok(judge(&rules, &Facts::of_request(request)))
}

/// The plugin as the SDK exports it.
pub struct OrgPolicy;

impl Plugin for OrgPolicy {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config)
    }
}

acp_gate_plugin::export_plugin!(OrgPolicy);

/// Building requests in tests and doc examples.
#[doc(hidden)]
pub mod testing {
    use acp_gate_plugin::{Access, CommandLine, PathRef, Request, RequestSource, ToolKind};

    pub const HOME: &str = "/home/user";
    pub const WORKSPACE: &str = "/work/project";

    /// An `execute` request for a shell string, in `WORKSPACE`, with `HOME`.
    pub fn request(shell: &str) -> Request {
        Request {
            session_id: "s".into(),
            tool_call_id: "t".into(),
            title: shell.into(),
            kind: ToolKind::Execute,
            declared_kind: None,
            tool_name: None,
            source: RequestSource::PermissionRequest,
            command: Some(CommandLine {
                argv: None,
                shell: Some(shell.into()),
            }),
            paths: Vec::new(),
            diffs: Vec::new(),
            cwd: WORKSPACE.into(),
            workspace_roots: vec![WORKSPACE.into()],
            home_dir: HOME.into(),
            options: Vec::new(),
            received_at_ms: 0,
            raw_json: "{}".into(),
        }
    }

    /// The same for an argv.
    pub fn argv_request(argv: &[&str]) -> Request {
        let mut r = request("");
        r.command = Some(CommandLine {
            argv: Some(argv.iter().map(|s| s.to_string()).collect()),
            shell: None,
        });
        r
    }

    /// A request of `kind` touching absolute `paths`, with no command.
    pub fn path_request(kind: ToolKind, paths: &[&str]) -> Request {
        let mut r = request("");
        r.kind = kind;
        r.command = None;
        r.title = format!("{kind:?} {}", paths.join(" "));
        r.paths = paths
            .iter()
            .map(|p| PathRef {
                raw: p.to_string(),
                absolute: p.to_string(),
                access: if kind == ToolKind::Read {
                    Access::Read
                } else {
                    Access::Write
                },
                origin: "locations".into(),
            })
            .collect();
        r
    }
}
