//! The chain: runs a request through every handler of every tier and combines the verdicts
//! into one [`Decision`].
//!
//! The laws (tested as properties in `tests/`):
//! - deny beats ask beats allow beats abstain, within a tier and across tiers, so a lower tier
//!   can only tighten what a higher one decided;
//! - a `requisite` deny ends the evaluation at once;
//! - a `sufficient` allow skips the later `sufficient` and `optional` handlers of its tier,
//!   never a `required` or `requisite` one;
//! - a handler that fails counts as its `on_error` verdict, which is never allow;
//! - when every handler abstains, the policy's default decides.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::config::{Control, HandlerSpec, Policy, Tier};
use crate::distribution::{Reach, Trust};
use crate::request::{OptionKind, PermissionOption, SessionContext, ToolKind, ToolRequest};
use crate::resolve::{Resolved, resolve};
use crate::runtime::{Batch, Failure, LoadedPlugin, Ruling, Runtime};
use crate::shorthand;
use crate::verdict::Verdict;

/// What one handler said about one request.
#[derive(Debug, Clone, Serialize)]
pub struct HandlerTrace {
    pub name: String,
    pub tier: Tier,
    /// After `on_error` was applied.
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub elapsed_us: u64,
    /// Why the handler failed, when it did (the verdict is then its `on_error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
}

/// The chain's answer to one request, with the trace that explains it.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// Allow, ask or deny: never abstain (the policy default stands in for it).
    pub outcome: Verdict,
    /// The reasons of the handlers whose verdict decided (or the default's).
    pub reasons: Vec<String>,
    pub handlers: Vec<HandlerTrace>,
    /// True when every handler abstained and the policy default decided.
    pub by_default: bool,
}

impl Decision {
    /// A deny made without the chain (a request acp-gate could not read), and why.
    pub fn refused(reason: String) -> Decision {
        Decision {
            outcome: Verdict::Deny,
            reasons: vec![reason],
            handlers: Vec::new(),
            by_default: false,
        }
    }

    /// The offered option this decision selects, by kind only: allow -> `allow_once`,
    /// deny -> `reject_once`. `None` (answer `cancelled`) when no such option is offered, and
    /// for ask, which a person or the orchestrator must answer.
    pub fn select_option<'a>(
        &self,
        options: &'a [PermissionOption],
    ) -> Option<&'a PermissionOption> {
        let kind = match self.outcome {
            Verdict::Allow => OptionKind::AllowOnce,
            Verdict::Deny => OptionKind::RejectOnce,
            Verdict::Ask | Verdict::Abstain => return None,
        };
        options.iter().find(|o| o.kind == kind)
    }

    /// Whether an org handler asked or denied: then only a person may answer, every time.
    pub fn org_insists(&self) -> bool {
        self.handlers
            .iter()
            .any(|h| h.tier == Tier::Org && h.verdict >= Verdict::Ask)
    }
}

/// The combination laws as a state machine, fed one handler verdict at a time in chain order.
#[derive(Debug, Default, Clone)]
pub struct Combiner {
    strongest: Verdict,
    /// The tier whose later sufficient and optional handlers a sufficient allow skipped.
    skipping: Option<Tier>,
    /// Tiers in which some handler already said ask or deny.
    strict_tiers: Vec<Tier>,
    done: bool,
}

impl Combiner {
    /// Whether a handler with this tier and control flag is still to run.
    pub fn should_run(&self, tier: Tier, control: Control) -> bool {
        let skipped = self.skipping == Some(tier)
            && matches!(control, Control::Sufficient | Control::Optional);
        !(self.done || skipped)
    }

    /// True once a requisite deny ended the chain.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether `spec`'s handler runs on a request of `kind`: `None` once the chain has ended
    /// (no later handler runs), `Some(false)` when it does not apply or is skipped.
    pub fn runs(&self, spec: &HandlerSpec, kind: ToolKind) -> Option<bool> {
        if self.done {
            return None;
        }
        let applies = spec
            .applies_to
            .as_ref()
            .is_none_or(|kinds| kinds.contains(&kind));
        Some(applies && self.should_run(spec.tier, spec.control))
    }

    /// Takes one handler's verdict. A project file's allow counts as abstain: that file is
    /// the repository's (a cloned project's, or one the agent wrote), so it may only tighten.
    pub fn record(&mut self, tier: Tier, control: Control, verdict: Verdict) {
        let verdict = match (tier, verdict) {
            (Tier::Project, Verdict::Allow) => Verdict::Abstain,
            _ => verdict,
        };
        self.strongest = self.strongest.max(verdict);
        if verdict >= Verdict::Ask && !self.strict_tiers.contains(&tier) {
            self.strict_tiers.push(tier);
        }
        match (control, verdict) {
            (Control::Requisite, Verdict::Deny) => self.done = true,
            (Control::Sufficient, Verdict::Allow) if !self.strict_tiers.contains(&tier) => {
                self.skipping = Some(tier);
            }
            _ => {}
        }
    }

    /// The combined outcome, and whether the default decided it.
    pub fn finish(self, default: Verdict) -> (Verdict, bool) {
        match self.strongest {
            Verdict::Abstain => (default, true),
            outcome => (outcome, false),
        }
    }
}

/// A handler ready to run: its spec and its loaded plugin (or why it failed to load).
struct Handler {
    spec: HandlerSpec,
    plugin: Result<LoadedPlugin, Failure>,
}

/// The loaded policy: every handler's plugin pre-linked, ready to decide.
pub struct Chain {
    runtime: Arc<Runtime>,
    handlers: Vec<Handler>,
    default: Verdict,
    /// Decisions under way at once; the others queue in arrival order. Decisions are CPU
    /// work: run all at once, every one of a burst would finish at the end of it; queued,
    /// the first are answered first, at the same throughput.
    queue: tokio::sync::Semaphore,
    pub sources: Vec<(Tier, std::path::PathBuf)>,
    pub notices: Vec<String>,
    /// The org file's `[escalation]`: where the gate escalates (see `service`).
    pub escalation: Option<crate::config::Escalation>,
}

impl Chain {
    /// Loads every handler's plugin, prepares it for its config (once, in the places of
    /// `test_ctx`: see `runtime::prepare`) and runs the inline tests. A plugin that fails to
    /// load (bad pin, forbidden import, not a component, a config it refuses) is kept as failed: it yields its `on_error`
    /// verdict at every request, and the failure is in `notices`. A failing inline test, and
    /// a failed plugin that has tests, stop the load.
    pub async fn load(
        runtime: Arc<Runtime>,
        policy: Policy,
        test_ctx: &SessionContext,
    ) -> Result<Chain> {
        let mut notices = policy.notices;
        notices.extend(runtime.notice.clone());
        let mut handlers = Vec::new();
        for spec in policy.handlers {
            let plugin = match load_plugin(&runtime, &spec, policy.trust.as_ref()).await {
                Ok((plugin, resolved)) => {
                    let (config, places) = (&spec.config_json, test_ctx);
                    // A managed install's org handlers run no code from the user's cache.
                    let cached = !(spec.tier == Tier::Org && policy.cache_dir.is_some());
                    let component = &resolved.component;
                    (runtime.prepare(plugin, component, config, places, spec.limits, cached)).await
                }
                Err(error) => Err(error),
            }
            .map_err(|e| {
                Failure::Load(crate::config::place_config_error(&spec, &format!("{e:#}")))
            });
            if let Err(Failure::Load(error)) = &plugin {
                notices.push(format!(
                    "handler `{}` ({}:{}) failed to load and counts as {:?} on every request: {error}",
                    spec.name,
                    spec.file.display(),
                    spec.line,
                    spec.on_error
                ));
            }
            handlers.push(Handler { spec, plugin });
        }
        let parallel = std::thread::available_parallelism().map_or(2, |n| n.get());
        let chain = Chain {
            runtime,
            handlers,
            default: policy.default,
            queue: tokio::sync::Semaphore::new(parallel * 2),
            sources: policy.sources,
            notices,
            escalation: policy.escalation,
        };
        chain.run_inline_tests(test_ctx).await?;
        Ok(chain)
    }

    async fn run_inline_tests(&self, ctx: &SessionContext) -> Result<()> {
        for (index, handler) in self.handlers.iter().enumerate() {
            for (number, test) in handler.spec.tests.iter().enumerate() {
                let location = format!("{}:{}", handler.spec.file.display(), test.line);
                let trace = self
                    .run_case(index, &test.request, ctx)
                    .await
                    .with_context(|| location.clone())?;
                if trace.verdict != test.expect {
                    let why = trace
                        .error
                        .map(|e| e.to_string())
                        .or(trace.reason)
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default();
                    bail!(
                        "{location}: handler `{}` test[{number}]: expected {}, got {}{why}",
                        handler.spec.name,
                        test.expect,
                        trace.verdict
                    );
                }
            }
        }
        Ok(())
    }

    /// Runs one test case on the handler at `index` alone: what inline `[[handler.test]]`
    /// entries and `acp-gate plugin test` do. `case` is the short request form (see
    /// [`shorthand`]); the verdict in the trace is after `on_error`, the failure in `error`.
    pub async fn run_case(
        &self,
        index: usize,
        case: &serde_json::Value,
        ctx: &SessionContext,
    ) -> Result<HandlerTrace> {
        let handler = self
            .handlers
            .get(index)
            .context("no handler at this index")?;
        let request = shorthand::request(case, ctx)?;
        Ok(self
            .evaluate_one(&mut self.runtime.batch(), handler, &request)
            .await)
    }

    /// Decides one request.
    pub async fn decide(&self, request: &ToolRequest) -> Decision {
        // The semaphore is never closed: a permit always comes, in turn.
        let _turn = self.queue.acquire().await;
        let mut traces = Vec::new();
        let mut combiner = Combiner::default();
        // Its instances are cleaned up once the decision is made.
        let mut batch = self.runtime.batch();
        for handler in &self.handlers {
            let spec = &handler.spec;
            match combiner.runs(spec, request.kind) {
                None => break,
                Some(false) => continue,
                Some(true) => {}
            }
            let trace = self.evaluate_one(&mut batch, handler, request).await;
            combiner.record(spec.tier, spec.control, trace.verdict);
            traces.push(trace);
        }
        let (outcome, by_default) = combiner.finish(self.default);
        let reasons = if by_default {
            vec![format!(
                "no handler had an opinion; the policy default is {}",
                outcome.as_str()
            )]
        } else {
            traces
                .iter()
                .filter(|t| t.verdict == outcome)
                .filter_map(|t| t.reason.as_ref().map(|r| format!("{}: {r}", t.name)))
                .collect()
        };
        Decision {
            outcome,
            reasons,
            handlers: traces,
            by_default,
        }
    }

    async fn evaluate_one(
        &self,
        batch: &mut Batch,
        handler: &Handler,
        request: &ToolRequest,
    ) -> HandlerTrace {
        let spec = &handler.spec;
        let (outcome, logs, elapsed) = match &handler.plugin {
            Err(load_error) => (Err(load_error.clone()), Vec::new(), 0),
            // Outside what its `prepare` declared at load: it would abstain (the default
            // chain's empty org-policy on anything, the path validator without paths).
            Ok(plugin) if !plugin.interest.covers(request) => (Ok(Ruling::ABSTAIN), Vec::new(), 0),
            Ok(plugin) => {
                let evaluation = batch
                    .evaluate(plugin, request, &spec.config_json, spec.limits)
                    .await;
                let elapsed = evaluation.elapsed.as_micros() as u64;
                (evaluation.outcome, evaluation.logs, elapsed)
            }
        };
        let (verdict, reason, error) = match outcome {
            Ok(Ruling { verdict, reason }) => {
                let reason = match verdict {
                    Verdict::Deny => Some(non_empty(reason, "denied")),
                    Verdict::Ask => Some(non_empty(reason, "asks for a decision")),
                    Verdict::Allow | Verdict::Abstain => None,
                };
                (verdict, reason, None)
            }
            Err(failure) => {
                let why = format!("handler failed ({failure}); on_error applies");
                (spec.on_error, Some(why), Some(failure))
            }
        };
        HandlerTrace {
            name: spec.name.clone(),
            tier: spec.tier,
            verdict,
            reason,
            elapsed_us: elapsed,
            error,
            logs,
        }
    }
}

fn non_empty(reason: String, fallback: &str) -> String {
    if reason.trim().is_empty() {
        fallback.to_owned()
    } else {
        reason
    }
}

/// A handler's plugin: fetched and checked against the trust policy ([`resolve`]), then
/// loaded (pin, grants, WIT version); errors name the plugin and the handler.
pub async fn load_plugin(
    runtime: &Runtime,
    spec: &HandlerSpec,
    trust: Option<&Trust>,
) -> Result<(LoadedPlugin, Resolved)> {
    let label = format!("plugin `{}` of handler `{}`", spec.plugin, spec.name);
    // A project's file comes with the repository: it never makes acp-gate go to a registry.
    let reach = match spec.tier {
        Tier::Project => Reach::StoreOnly,
        _ => Reach::Registry,
    };
    let resolved = resolve(&spec.plugin, trust, reach)
        .await
        .with_context(|| label.clone())?;
    let plugin = runtime.load(
        &label,
        &resolved.component,
        spec.sha256.as_deref(),
        &spec.grants,
    )?;
    Ok((plugin, resolved))
}

#[cfg(test)]
mod laws {
    use proptest::prelude::*;

    use super::*;

    type Step = (Tier, Control, Verdict);

    /// What `Chain::decide` does with the combiner, for handlers that always apply.
    fn combine(steps: &[Step], default: Verdict) -> (Verdict, bool) {
        let mut combiner = Combiner::default();
        for &(tier, control, verdict) in steps {
            if combiner.should_run(tier, control) {
                combiner.record(tier, control, verdict);
            }
        }
        combiner.finish(default)
    }

    fn step() -> impl Strategy<Value = Step> {
        let tier = prop_oneof![
            Just(Tier::Org),
            Just(Tier::Project),
            Just(Tier::User),
            Just(Tier::Builtin)
        ];
        let control = prop_oneof![
            Just(Control::Required),
            Just(Control::Requisite),
            Just(Control::Sufficient),
            Just(Control::Optional)
        ];
        let verdict = prop_oneof![
            Just(Verdict::Abstain),
            Just(Verdict::Allow),
            Just(Verdict::Ask),
            Just(Verdict::Deny)
        ];
        (tier, control, verdict)
    }

    /// Handlers as config::load orders them: by tier, file order within a tier.
    fn chain() -> impl Strategy<Value = Vec<Step>> {
        prop::collection::vec(step(), 0..10).prop_map(|mut steps| {
            steps.sort_by_key(|s| s.0);
            steps
        })
    }

    fn default() -> impl Strategy<Value = Verdict> {
        prop_oneof![
            Just(Verdict::Allow),
            Just(Verdict::Ask),
            Just(Verdict::Deny)
        ]
    }

    proptest! {
        #[test]
        fn appending_a_handler_never_turns_a_handler_deny_into_anything_else(steps in chain(), extra in step(), d in default()) {
            let (before, by_default) = combine(&steps, d);
            prop_assume!(before == Verdict::Deny && !by_default);
            let mut more = steps.clone();
            more.push((Tier::Builtin, extra.1, extra.2));
            prop_assert_eq!(combine(&more, d).0, Verdict::Deny);
        }

        #[test]
        fn a_project_file_never_allows_anything(steps in chain(), d in default()) {
            let project: Vec<Step> = steps.iter().copied().filter(|s| s.0 == Tier::Project).collect();
            let (outcome, by_default) = combine(&project, d);
            prop_assert!(outcome != Verdict::Allow || by_default);
        }

        #[test]
        fn a_lower_tier_can_only_tighten(steps in chain(), d in default()) {
            for cut in [Tier::Org, Tier::Project, Tier::User] {
                let higher: Vec<Step> = steps.iter().copied().filter(|s| s.0 <= cut).collect();
                let (alone, by_default) = combine(&higher, d);
                if !by_default {
                    prop_assert!(combine(&steps, d).0 >= alone, "{cut:?}: {higher:?} vs {steps:?}");
                }
            }
        }

        #[test]
        fn handlers_that_all_fail_closed_never_allow(controls in prop::collection::vec(step(), 1..8), d in default()) {
            // on_error is deny, ask or (optional only) abstain: never allow.
            let failed: Vec<Step> = controls
                .iter()
                .map(|&(tier, control, _)| {
                    let verdict = match control {
                        Control::Optional => Verdict::Abstain,
                        _ => Verdict::Ask,
                    };
                    (tier, control, verdict)
                })
                .collect();
            let (outcome, by_default) = combine(&failed, d);
            prop_assert!(outcome != Verdict::Allow || (by_default && d == Verdict::Allow));
        }

        #[test]
        fn no_sufficient_allow_ever_skips_a_required_or_requisite_handler(steps in chain(), tier_index in 0usize..4) {
            let tier = [Tier::Org, Tier::Project, Tier::User, Tier::Builtin][tier_index];
            let mut combiner = Combiner::default();
            combiner.record(tier, Control::Sufficient, Verdict::Allow);
            prop_assert!(combiner.should_run(tier, Control::Required));
            prop_assert!(combiner.should_run(tier, Control::Requisite));
            // (A project's allow counts for nothing, so it skips nothing.)
            prop_assert_eq!(combiner.should_run(tier, Control::Optional), tier == Tier::Project);
            for (t, control, verdict) in steps {
                if matches!(control, Control::Required | Control::Requisite) && !combiner.is_done() {
                    prop_assert!(combiner.should_run(t, control));
                }
                combiner.record(t, control, verdict);
            }
        }

        #[test]
        fn deny_beats_ask_beats_allow_beats_abstain(steps in chain(), d in default()) {
            let (outcome, by_default) = combine(&steps, d);
            let strongest = steps.iter().map(|s| s.2).max();
            if let Some(Verdict::Deny) = strongest {
                // A deny anywhere is the answer unless a sufficient allow skipped that handler.
                let skipped_only = steps.iter().filter(|s| s.2 == Verdict::Deny).all(|s| matches!(s.1, Control::Sufficient | Control::Optional));
                prop_assert!(outcome == Verdict::Deny || skipped_only);
            }
            if steps.iter().all(|s| s.2 == Verdict::Abstain) {
                prop_assert!(by_default);
                prop_assert_eq!(outcome.as_str(), format!("{d:?}").to_lowercase());
            }
            if by_default {
                // Only skipped handlers may have had an opinion (a project's allow is none).
                prop_assert!(steps.iter().all(|s| s.2 == Verdict::Abstain
                    || (s.0 == Tier::Project && s.2 == Verdict::Allow)
                    || matches!(s.1, Control::Sufficient | Control::Optional)));
            }
        }
    }

    #[test]
    fn requisite_deny_stops_the_chain() {
        let mut combiner = Combiner::default();
        combiner.record(Tier::Org, Control::Requisite, Verdict::Deny);
        assert!(combiner.is_done());
        assert!(!combiner.should_run(Tier::User, Control::Required));
        assert_eq!(combiner.finish(Verdict::Allow), (Verdict::Deny, false));
    }

    #[test]
    fn a_sufficient_allow_after_an_ask_in_its_tier_skips_nothing() {
        let mut combiner = Combiner::default();
        combiner.record(Tier::User, Control::Optional, Verdict::Ask);
        combiner.record(Tier::User, Control::Sufficient, Verdict::Allow);
        assert!(combiner.should_run(Tier::User, Control::Optional));
        assert_eq!(combiner.finish(Verdict::Allow).0, Verdict::Ask);
    }
}
