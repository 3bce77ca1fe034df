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
//! The pure logic lives in plain modules (`config` -> `rules` -> `examples`; `policy`, whose
//! `index` finds the few rules that can fire on a request; `commands` reads shell through the
//! shared `acp-gate-shell` crate) and is tested natively; only the export at the bottom is
//! WebAssembly glue. Loaded by acp-gate, the rules are compiled, indexed and their examples checked
//! once, at load ([`Ready`], the `prepare` export): each request's fresh instance starts from that.

pub mod commands;
pub mod config;
pub mod examples;
pub mod policy;
pub mod rules;

use acp_gate_plugin::{Places, Plugin, Prepare, Request, Verdict};

pub use config::Config;
use policy::{Facts, Policy, check_examples, places};
use rules::Places as RulePlaces;

/// Compiles the rules, checks their examples, then judges the request (no rules: abstains at
/// once). A bad rule or a failing example is an error (the host applies the handler's
/// `on_error`, never allow). Loaded by acp-gate, the first two steps run once per load
/// ([`Ready`]); here, for one request, they run every time.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    match Ready::new(config, places_of(request))? {
        Some(ready) => ready.judge(request),
        // No rules (the default chain's): nothing to read the request for.
        None => Ok(Verdict::Abstain),
    }
}

/// A config made ready: its rules compiled and indexed, their examples checked in `checked`.
pub struct Ready {
    policy: Policy,
    checked: RulePlaces,
}

impl Ready {
    /// `None` when there are no rules.
    pub fn new(config: &Config, places: RulePlaces) -> Result<Option<Ready>, String> {
        let rules = config.compile()?;
        if rules.is_empty() {
            return Ok(None);
        }
        check_examples(&rules, &places)?;
        Ok(Some(Ready {
            policy: Policy::new(rules),
            checked: places,
        }))
    }

    /// The verdict on `request`. Examples say what the rules do in a home and a workspace:
    /// they are checked again in a request's own, when those are not the ones checked.
    pub fn judge(&self, request: &Request) -> Result<Verdict, String> {
        let places = places_of(request);
        if places != self.checked {
            check_examples(self.policy.rules(), &places)?;
        }
        let facts = Facts::of_request(request, self.policy.judges_urls());
        Ok(self.policy.judge(&facts))
    }
}

fn places_of(request: &Request) -> RulePlaces {
    places(&request.home_dir, &request.workspace_roots, &request.cwd)
}

/// The plugin as the SDK exports it.
pub struct OrgPolicy;

impl Plugin for OrgPolicy {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config)
    }
}

impl Prepare for OrgPolicy {
    type Ready = Ready;

    fn prepare(config: &Config, at: &Places) -> Result<Option<Ready>, String> {
        Ready::new(config, places(&at.home_dir, &at.workspace_roots, &at.cwd))
    }

    fn evaluate_ready(request: &Request, ready: &Ready) -> Result<Verdict, String> {
        ready.judge(request)
    }
}

acp_gate_plugin::export_prepared_plugin!(OrgPolicy);
acp_gate_plugin::use_instance_arena!();

pub use acp_gate_plugin::testing;
