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

/// Compiles the rules, checks their examples, then judges the request (no rules: abstains at
/// once). A bad rule or a failing example is an error (the host applies the handler's
/// `on_error`, never allow). Nothing is cached: the host gives every request a fresh instance.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    let rules = config.compile()?;
    if rules.is_empty() {
        // No rules (the default chain's): nothing to read the request for.
        return Ok(Verdict::Abstain);
    }
    let places = places(&request.home_dir, &request.workspace_roots, &request.cwd);
    check_examples(&rules, &places)?;
    let urls = rules.iter().any(|r| r.judges_urls());
    Ok(judge(&rules, &Facts::of_request(request, urls)))
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

pub use acp_gate_plugin::testing;
