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

use crate::config::{Control, HandlerSpec, PluginRef, Policy, Tier};
use crate::distribution::{Reach, Trust};
use crate::request::{OptionKind, PermissionOption, SessionContext, ToolKind, ToolRequest};
use crate::resolve::{Resolved, resolve};
use crate::runtime::load::component_digest;
use crate::runtime::{
    Batch, Failure, FromCache, Interest, LoadedPlugin, Lowered, PrepareKey, Ruling, Runtime,
};
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
    plugin: Plugin,
}

/// A handler's plugin, as the chain holds it.
enum Plugin {
    /// Loaded and prepared, and where it came from.
    Loaded(LoadedPlugin, Box<Origin>),
    /// It failed to load: its `on_error` verdict counts on every request it applies to.
    Failed(String),
    /// Not loaded: a chain assembled for some requests only ([`Chain::assemble`]) leaves out the
    /// handlers no such request is for, as its `applies_to` says (no interest known), or as
    /// the interest its plugin declared for its config says (kept from an earlier load).
    Unneeded(Option<Interest>),
}

/// Where a loaded handler's plugin came from and what was checked on the way: what
/// `plugin validate --resolve` and `acp-gate chain` show.
#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    /// `built in`, a file, `the local store`, a registry, an image layout.
    pub from: String,
    /// The OCI manifest's digest, for a distributed plugin.
    pub manifest_digest: Option<String>,
    /// The component's sha256 (what a `sha256` pin holds).
    pub component_sha256: String,
    /// The trusted key that signed it, when the trust policy asked.
    pub signed_by: Option<String>,
}

/// What the inline `[[handler.test]]` entries of a policy found when it was loaded. A test of a
/// handler that did not load fails, whatever it expected (its `on_error` is not the verdict it
/// tests); those failures come first, with the load error.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InlineTests {
    pub run: usize,
    pub passed: usize,
    /// How many handlers have tests.
    pub handlers: usize,
    pub failures: Vec<TestFailure>,
}

/// One failed inline test (or every test of a handler that did not load).
#[derive(Debug, Clone, Serialize)]
pub struct TestFailure {
    pub handler: String,
    /// What failed, naming the file, line, handler and test.
    pub message: String,
}

impl InlineTests {
    /// `3 tests of 2 handlers passed`, or `1 of 3 tests of 2 handlers passed; 2 failed`.
    pub fn summary(&self) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let (tests, handlers) = (plural(self.run, "test"), plural(self.handlers, "handler"));
        match self.run - self.passed {
            0 => format!("{tests} of {handlers} passed"),
            failed => format!(
                "{} of {tests} of {handlers} passed; {failed} failed",
                self.passed
            ),
        }
    }
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
    /// What the inline tests found at load.
    pub tests: InlineTests,
    /// The org file's `[escalation]`: where the gate escalates (see `service`).
    pub escalation: Option<crate::config::Escalation>,
}

impl Chain {
    /// [`Chain::assemble`], refused when an inline test failed: what every session runs on.
    pub async fn load(
        runtime: Arc<Runtime>,
        policy: Policy,
        test_ctx: &SessionContext,
    ) -> Result<Chain> {
        Chain::assemble(runtime, policy, test_ctx, None)
            .await
            .checked()
    }

    /// Loads every handler's plugin, prepares it for its config (once, in the places of
    /// `test_ctx`: see `runtime::prepare`) and runs the inline tests into [`Chain::tests`]. A
    /// plugin that fails to load (bad pin, forbidden import, not a component, a config it
    /// refuses) is kept as failed: it yields its `on_error` verdict at every request, and the
    /// failure is in `notices` and [`Chain::load_failures`].
    ///
    /// With `requests` (a process that decides those and exits), a handler that would abstain
    /// on every one of them unseen is not loaded. That is one none of them is of a kind of its
    /// `applies_to`, or (when an earlier load kept what its plugin's `prepare` said, for the
    /// same plugin, config, grants and places) one outside the interest its plugin declared. A
    /// handler with inline tests is loaded either way (its tests run). Deciding a request it
    /// left out of is a refusal, never a guess: the handler counts as failed.
    pub async fn assemble(
        runtime: Arc<Runtime>,
        policy: Policy,
        test_ctx: &SessionContext,
        requests: Option<&[ToolRequest]>,
    ) -> Chain {
        let mut notices = policy.notices;
        notices.extend(runtime.notice.clone());
        let mut handlers = Vec::new();
        for spec in policy.handlers {
            let only_for = requests.filter(|_| spec.tests.is_empty());
            let applies = |r: &ToolRequest| {
                (spec.applies_to.as_ref()).is_none_or(|kinds| kinds.contains(&r.kind))
            };
            let plugin = match only_for {
                Some(requests) if !requests.iter().any(applies) => Plugin::Unneeded(None),
                _ => {
                    let trust = policy.trust.as_ref();
                    let managed = policy.cache_dir.is_some();
                    match load_handler(&runtime, &spec, trust, managed, test_ctx, only_for).await {
                        Ok(plugin) => plugin,
                        Err(error) => Plugin::Failed(crate::config::place_config_error(
                            &spec,
                            &format!("{error:#}"),
                        )),
                    }
                }
            };
            if let Plugin::Failed(error) = &plugin {
                notices.push(format!(
                    "handler `{}` ({}:{}) failed to load and counts as {} on every request: {error}",
                    spec.name,
                    spec.file.display(),
                    spec.line,
                    spec.on_error
                ));
            }
            handlers.push(Handler { spec, plugin });
        }
        let parallel = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut chain = Chain {
            runtime,
            handlers,
            default: policy.default,
            queue: tokio::sync::Semaphore::new(parallel * 2),
            sources: policy.sources,
            notices,
            tests: InlineTests::default(),
            escalation: policy.escalation,
        };
        chain.tests = chain.run_inline_tests(test_ctx).await;
        chain
    }

    /// The chain, or an error listing every failed inline test (those of handlers that did
    /// not load first) and how many passed.
    pub fn checked(self) -> Result<Chain> {
        if self.tests.failures.is_empty() {
            return Ok(self);
        }
        let failures: Vec<&str> = (self.tests.failures.iter())
            .map(|f| f.message.as_str())
            .collect();
        bail!("{}:\n  {}", self.tests.summary(), failures.join("\n  "))
    }

    /// The decision when every handler abstains.
    pub fn default_verdict(&self) -> Verdict {
        self.default
    }

    /// Every handler in chain order, with where its plugin came from or why it did not load.
    pub fn handlers(&self) -> impl Iterator<Item = (&HandlerSpec, Result<&Origin, &str>)> {
        (self.handlers.iter()).map(|h| {
            let loaded = match &h.plugin {
                Plugin::Loaded(_, origin) => Ok(&**origin),
                Plugin::Failed(error) => Err(error.as_str()),
                Plugin::Unneeded(_) => Err("not loaded: the chain was loaded for other requests"),
            };
            (&h.spec, loaded)
        })
    }

    /// The handlers whose plugin did not load, and why: each counts as its `on_error` on every
    /// request.
    pub fn load_failures(&self) -> impl Iterator<Item = (&HandlerSpec, &str)> {
        self.handlers()
            .filter_map(|(spec, loaded)| Some((spec, loaded.err()?)))
    }

    async fn run_inline_tests(&self, ctx: &SessionContext) -> InlineTests {
        let mut report = InlineTests::default();
        let mut unloaded = Vec::new();
        let mut failed = Vec::new();
        for (index, handler) in self.handlers.iter().enumerate() {
            let spec = &handler.spec;
            if spec.tests.is_empty() {
                continue;
            }
            report.handlers += 1;
            report.run += spec.tests.len();
            if let Plugin::Failed(error) = &handler.plugin {
                let lines: Vec<String> = spec.tests.iter().map(|t| t.line.to_string()).collect();
                let (tests, s) = match lines.len() {
                    1 => ("its test fails".to_owned(), ""),
                    n => (format!("its {n} tests fail"), "s"),
                };
                let message = format!(
                    "{}:{}: handler `{}` did not load, so {tests} (line{s} {}): {error}",
                    spec.file.display(),
                    spec.line,
                    spec.name,
                    lines.join(", "),
                );
                unloaded.push(TestFailure {
                    handler: spec.name.clone(),
                    message,
                });
                continue;
            }
            for (number, test) in spec.tests.iter().enumerate() {
                let location = format!("{}:{}", spec.file.display(), test.line);
                let what = format!("{location}: handler `{}` test[{number}]", spec.name);
                let mut fail = |message: String| {
                    failed.push(TestFailure {
                        handler: spec.name.clone(),
                        message,
                    })
                };
                match self.run_case(index, &test.request, ctx).await {
                    Err(error) => fail(format!("{what}: {error:#}")),
                    Ok(trace) if trace.verdict != test.expect => {
                        let why = trace
                            .error
                            .map(|e| e.to_string())
                            .or(trace.reason)
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default();
                        fail(format!(
                            "{what}: expected {}, got {}{why}",
                            test.expect, trace.verdict
                        ));
                    }
                    Ok(_) => report.passed += 1,
                }
            }
        }
        report.failures = unloaded;
        report.failures.append(&mut failed);
        report
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
            .evaluate_one(&mut self.runtime.batch(), handler, &Lowered::new(&request))
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
        let lowered = Lowered::new(request);
        for handler in &self.handlers {
            let spec = &handler.spec;
            match combiner.runs(spec, request.kind) {
                None => break,
                Some(false) => continue,
                Some(true) => {}
            }
            let trace = self.evaluate_one(&mut batch, handler, &lowered).await;
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
        lowered: &Lowered<'_>,
    ) -> HandlerTrace {
        let (spec, request) = (&handler.spec, lowered.request());
        let (outcome, logs, elapsed) = match &handler.plugin {
            Plugin::Failed(load_error) => (Err(Failure::Load(load_error.clone())), Vec::new(), 0),
            // Outside what its `prepare` declared at load: it would abstain (the default
            // chain's empty org-policy on anything, the path validator without paths).
            Plugin::Loaded(plugin, _) if !plugin.interest.covers(request) => {
                (Ok(Ruling::ABSTAIN), Vec::new(), 0)
            }
            Plugin::Unneeded(Some(interest)) if !interest.covers(request) => {
                (Ok(Ruling::ABSTAIN), Vec::new(), 0)
            }
            Plugin::Unneeded(_) => {
                let why = "not loaded: the chain was loaded for other requests".to_owned();
                (Err(Failure::Load(why)), Vec::new(), 0)
            }
            Plugin::Loaded(plugin, _) => {
                let evaluation = batch
                    .evaluate(plugin, lowered, &spec.config_json, spec.limits)
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
    let (label, resolved) = resolve_plugin(spec, trust).await?;
    let digest = component_digest(&resolved.component);
    let plugin = runtime.load_digested(
        &label,
        &resolved.component,
        digest,
        spec.sha256.as_deref(),
        &spec.grants,
    )?;
    Ok((plugin, resolved))
}

/// A handler's plugin fetched and checked against the trust policy, and its label.
async fn resolve_plugin(spec: &HandlerSpec, trust: Option<&Trust>) -> Result<(String, Resolved)> {
    let label = format!("plugin `{}` of handler `{}`", spec.plugin, spec.name);
    // A project's file comes with the repository: it never makes acp-gate go to a registry.
    let reach = match spec.tier {
        Tier::Project => Reach::StoreOnly,
        _ => Reach::Registry,
    };
    let resolved = resolve(&spec.plugin, trust, reach)
        .await
        .with_context(|| label.clone())?;
    Ok((label, resolved))
}

/// A handler's plugin fetched, loaded and prepared for its config in the places of `ctx`;
/// or, for a chain loaded for `only_for`, left out when what an earlier load kept of its
/// preparation says it would abstain on each of them. `managed`: a managed install, whose
/// org handlers run no code from, and take nothing kept in, the user's cache; nor does a
/// built-in plugin take what its `prepare` said from there (nothing an agent could write may
/// skip its checks).
async fn load_handler(
    runtime: &Runtime,
    spec: &HandlerSpec,
    trust: Option<&Trust>,
    managed: bool,
    ctx: &SessionContext,
    only_for: Option<&[ToolRequest]>,
) -> Result<Plugin> {
    let from_cache = match &spec.plugin {
        _ if spec.tier == Tier::Org && managed => FromCache::Nothing,
        PluginRef::Builtin(_) => FromCache::Snapshot,
        _ => FromCache::All,
    };
    let (label, resolved) = resolve_plugin(spec, trust).await?;
    let component = &resolved.component;
    let digest = component_digest(component);
    let origin = Origin {
        from: resolved.from.clone(),
        manifest_digest: resolved.manifest_digest.clone(),
        component_sha256: digest.clone(),
        signed_by: resolved.signed_by.clone(),
    };
    let key = PrepareKey::new(&digest, &spec.grants, &spec.config_json, ctx);
    let pinned = spec
        .sha256
        .as_deref()
        .is_none_or(|pin| pin.eq_ignore_ascii_case(&digest));
    if let (Some(requests), FromCache::All, true) = (only_for, from_cache, pinned)
        && let Some(kept) = runtime.kept_preparation(&key)
        && !requests.iter().any(|r| kept.interest.covers(r))
    {
        return Ok(Plugin::Unneeded(Some(kept.interest)));
    }
    let pin = spec.sha256.as_deref();
    let plugin = runtime.load_digested(&label, component, digest, pin, &spec.grants)?;
    let config = &spec.config_json;
    let prepared = runtime.prepare(
        plugin,
        component,
        config,
        ctx,
        &key,
        spec.limits,
        from_cache,
    );
    Ok(Plugin::Loaded(prepared.await?, Box::new(origin)))
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
