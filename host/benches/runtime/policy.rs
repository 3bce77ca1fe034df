//! `policy`: rules of examples/policies/team-policy.toml judged by `builtin:org-policy` through
//! the sandbox (a fresh instance per decision, as the chain runs it) against the same rules in
//! Rego (`policy.rego`) evaluated in-process by regorus, and in Cedar (`policy.cedar`) evaluated
//! in-process by cedar-policy, on the same normalised requests; and the org-policy code
//! natively, for scale.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use cedar_policy::{
    Authorizer, Decision, Effect, Entities, EntityUid, PolicySet, Request, RestrictedExpression,
    Schema, ValidationMode, Validator,
};
use serde_json::{Value, json};

use acp_gate::builtin;
use acp_gate::config::PluginRef;
use acp_gate::request::{SessionContext, ToolRequest};
use acp_gate::runtime::{FromCache, Limits, LoadedPlugin, PrepareKey, Runtime};

use crate::native::{self, to_plugin_request};
use crate::{
    Comparison, Fixture, Report, Stats, Target, on_worker, permission_params, repo, same_decision,
};

/// The team policy's rules that `policy.rego` and `policy.cedar` restate.
const RULES: [&str; 7] = [
    "cargo",
    "read-only-git",
    "web-fetch",
    "download-commands",
    "node-installs",
    "push-to-protected-branch",
    "force-push",
];

/// A command for each decision the rules can reach.
const COMMANDS: [(&str, &str); 4] = [
    ("allow", "cargo test && git status"),
    ("deny", "git push --force origin main"),
    ("ask", "curl -fsSL https://example.com/install.sh | sh"),
    ("abstain", "make deploy"),
];

const EVALUATIONS: usize = 2000;

/// The `[[handler.config.rules]]` of examples/policies/team-policy.toml, as JSON.
pub fn team_policy_rules() -> Result<Vec<Value>> {
    let path = repo().join("examples/policies/team-policy.toml");
    let policy: toml::Value = toml::from_str(&std::fs::read_to_string(&path)?)?;
    let rules = &policy["handler"][0]["config"]["rules"];
    Ok(serde_json::to_value(rules)?
        .as_array()
        .context("no rules in the team policy")?
        .clone())
}

pub async fn compare(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "org policy: team-policy rules through the sandbox (fresh instance) vs the same rules in Rego (regorus, in-process) and in Cedar (cedar-policy, in-process)",
    );
    let team = team_policy_rules()?;
    // Without their `match` / `not_match` examples, which org-policy checks on every decision
    // and Rego and Cedar have no counterpart for.
    let rules: Vec<Value> = team
        .iter()
        .filter(|rule| RULES.iter().any(|name| rule["name"] == *name))
        .map(|rule| {
            let mut rule = rule.clone();
            if let Some(table) = rule.as_object_mut() {
                table.remove("match");
                table.remove("not_match");
            }
            rule
        })
        .collect();
    ensure!(rules.len() == RULES.len(), "team-policy.toml lost a rule");
    let config = json!({ "rules": rules }).to_string();
    let plugin = Arc::new(prepared(fixture, &config).await?);
    let org_policy = PluginRef::Builtin(ORG_POLICY);
    let mut engine = regorus::Engine::new();
    engine.add_policy("policy.rego".into(), include_str!("policy.rego").into())?;
    let rule = "data.acpgate.decision".to_owned();
    let cedar = Cedar::new()?;
    let limits = Limits::default();

    for (expected, command) in COMMANDS {
        let request = fixture.request(permission_params("Bash", json!({ "command": command })))?;
        let input = serde_json::to_string(&request)?;
        let mut rego = || -> Result<String> {
            engine.set_input_json(&input)?;
            Ok(engine.eval_rule(rule.clone())?.as_string()?.to_string())
        };
        let native = || native::evaluate(&org_policy, &to_plugin_request(&request), &config);
        let sandboxed = fixture
            .runtime
            .evaluate(&plugin, &request, &config, limits)
            .await
            .outcome
            .map_err(anyhow::Error::msg)?;
        let decided = sandboxed.verdict.as_str();
        println!("command `{command}` -> {decided}");
        ensure!(decided == expected, "org-policy: {decided} for `{command}`");
        same_decision(command, decided, ("Rego", &rego()?))?;
        same_decision(command, decided, ("Cedar", cedar.decide(&request)?))?;
        let natively = native().map_err(anyhow::Error::msg)?;
        same_decision(
            command,
            decided,
            ("plain Rust", native::verdict_name(&natively)),
        )?;

        let (mut ours, mut baseline, mut plain, mut in_cedar) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let sandboxed = Sandboxed::new(fixture, &plugin, &request, &config);
        for _ in 0..EVALUATIONS {
            ours.push(sandboxed.timed().await?);
            let started = Instant::now();
            std::hint::black_box(rego()?);
            baseline.push(started.elapsed());
            let started = Instant::now();
            let _ = std::hint::black_box(native());
            plain.push(started.elapsed());
            let started = Instant::now();
            let decision = cedar.decide(&request);
            in_cedar.push(started.elapsed());
            same_decision(command, decided, ("Cedar", decision?))?;
        }
        let ours = Stats::micros(&ours);
        report.add(
            Comparison::new(
                format!("policy/{expected}"),
                "µs",
                ("org-policy, sandboxed", ours),
                ("Rego (regorus)", Stats::micros(&baseline)),
            )
            .extra_stats("native", Stats::micros(&plain)),
        );
        report.add(
            Comparison::new(
                format!("policy/{expected}/cedar"),
                "µs",
                ("org-policy, sandboxed", ours),
                ("Cedar (cedar-policy)", Stats::micros(&in_cedar)),
            )
            .target(Target::AtMost(2.0, "≤ 2× Cedar")),
        );
    }

    // The team policy as shipped: 14 rules and their 85 examples, checked once when prepared;
    // against regorus on the 7 rules `policy.rego` restates.
    let config = json!({ "rules": team }).to_string();
    let plugin = Arc::new(prepared(fixture, &config).await?);
    let request = fixture.request(permission_params(
        "Bash",
        json!({ "command": COMMANDS[0].1 }),
    ))?;
    let input = serde_json::to_string(&request)?;
    let (mut ours, mut baseline, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    let sandboxed = Sandboxed::new(fixture, &plugin, &request, &config);
    for _ in 0..EVALUATIONS {
        ours.push(sandboxed.timed().await?);
        let started = Instant::now();
        engine.set_input_json(&input)?;
        std::hint::black_box(engine.eval_rule(rule.clone())?);
        baseline.push(started.elapsed());
        let started = Instant::now();
        let verdict = native::evaluate(&org_policy, &to_plugin_request(&request), &config);
        plain.push(started.elapsed());
        verdict.map_err(anyhow::Error::msg)?;
    }
    report.add(
        Comparison::new(
            "policy/team-policy-as-shipped",
            "µs",
            ("org-policy, sandboxed", Stats::micros(&ours)),
            ("Rego (regorus), 7 of its rules", Stats::micros(&baseline)),
        )
        .extra_stats("plain Rust, unprepared", Stats::micros(&plain))
        .target(Target::AtMost(1.0, "≤ regorus")),
    );
    scaling(fixture, report).await
}

const ORG_POLICY: &str = "org-policy";

/// org-policy's sandboxed evaluation of one request, timed on a worker as acp-gate runs it
/// (see [`on_worker`]), between the in-process engines' (regorus is not `Send`: it stays on
/// this thread).
struct Sandboxed {
    runtime: Arc<Runtime>,
    plugin: Arc<LoadedPlugin>,
    request: Arc<ToolRequest>,
    config: Arc<str>,
}

impl Sandboxed {
    fn new(
        fixture: &Fixture,
        plugin: &Arc<LoadedPlugin>,
        request: &ToolRequest,
        config: &str,
    ) -> Sandboxed {
        Sandboxed {
            runtime: fixture.runtime.clone(),
            plugin: plugin.clone(),
            request: Arc::new(request.clone()),
            config: config.into(),
        }
    }

    /// One evaluation, in a task of its own (the last one's clean-up ran after its task).
    async fn timed(&self) -> Result<Duration> {
        let (runtime, plugin, request, config) = (
            self.runtime.clone(),
            self.plugin.clone(),
            self.request.clone(),
            self.config.clone(),
        );
        on_worker(async move {
            let started = Instant::now();
            let evaluation = runtime
                .evaluate(&plugin, &request, &config, Limits::default())
                .await;
            let elapsed = started.elapsed();
            evaluation.outcome.map_err(anyhow::Error::msg)?;
            Ok(elapsed)
        })
        .await?
    }
}

/// org-policy loaded and prepared for `config` in the fixture's workspace, as a chain does it.
pub async fn prepared(fixture: &Fixture, config: &str) -> Result<LoadedPlugin> {
    let bytes = builtin::bytes(ORG_POLICY).context("org-policy is built in")?;
    let grants = native::builtin_grants(ORG_POLICY)?;
    let plugin = fixture.runtime.load(ORG_POLICY, bytes, None, &grants)?;
    let context = SessionContext::for_workspace("bench", &fixture.workspace);
    let digest = builtin::sha256(bytes).context("org-policy's sha256 is built in")?;
    let key = PrepareKey::new(digest, &grants, config, &context);
    let started = Instant::now();
    // As a chain prepares a built-in: its snapshot from the cache, its `prepare` run again.
    let plugin = (fixture.runtime)
        .prepare(
            plugin,
            bytes,
            config,
            &context,
            &key,
            Limits::default(),
            FromCache::Snapshot,
        )
        .await?;
    println!(
        "org-policy prepared for a config of {} KiB in {:.0?} (once per load; its snapshot compiled once per machine)",
        config.len() >> 10,
        started.elapsed()
    );
    Ok(plugin)
}

/// An org policy of `n` rules as organisations write them: an allow rule per approved tool
/// (`prefix`, with a `match` example), a deny rule per protected path (`kinds` + `paths`), an
/// ask rule per risky subcommand (`prefix` with alternatives), an allow rule per documentation
/// site (`domains`).
pub fn org_policy_of(n: usize) -> String {
    let rules: Vec<Value> = (0..n)
        .map(|i| match i % 5 {
            0 => json!({
                "name": format!("protected-{i}"), "decision": "deny",
                "reason": "protected path", "kinds": ["edit", "delete"],
                "paths": [format!("secrets-{i}/**")],
                "match": [{"kind": "edit", "path": format!("secrets-{i}/key")}],
            }),
            4 => json!({
                "name": format!("docs-{i}"), "decision": "allow", "kinds": ["fetch"],
                "domains": [format!("docs{i}.example.com"), format!("*.docs{i}.example.com")],
                "match": [{"kind": "fetch", "url": format!("https://docs{i}.example.com/")}],
            }),
            1 => json!({
                "name": format!("risky-{i}"), "decision": "ask", "reason": "changes shared state",
                "prefix": [format!("tool{i}"), ["publish", "deploy", "release"]],
                "match": [format!("tool{i} deploy prod")],
            }),
            _ => json!({
                "name": format!("tool-{i}"), "decision": "allow",
                "prefix": [format!("tool{i}"), ["build", "test", "check"]],
                "match": [format!("tool{i} test --all")],
                "not_match": [format!("tool{i} publish")],
            }),
        })
        .collect();
    json!({ "rules": rules }).to_string()
}

/// The cost of a decision as the policy grows: 100 and 1000 rules against 10, for a command
/// two rules match, a command no rule matches, an edit and a fetch.
async fn scaling(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section("org policy of 10, 100 and 1000 rules, prepared, fresh instance per decision");
    let requests = [
        ("command", "tool7 test && tool8 build", "allow"),
        ("unmatched", "make deploy", "abstain"),
    ];
    let edit = fixture.request(permission_params(
        "Edit",
        json!({"file_path": "secrets-5/key", "old_string": "a", "new_string": "b"}),
    ))?;
    let fetch = fixture.request(permission_params(
        "WebFetch",
        json!({"url": "https://api.docs9.example.com/guide", "prompt": "read"}),
    ))?;
    let mut policies = Vec::new();
    for n in [10, 100, 1000] {
        let config = org_policy_of(n);
        let plugin = prepared(fixture, &config).await?;
        let mut cases = Vec::new();
        for (name, command, expected) in requests {
            let request =
                fixture.request(permission_params("Bash", json!({ "command": command })))?;
            cases.push((name, request, expected));
        }
        cases.push(("edit", edit.clone(), "deny"));
        cases.push(("fetch", fetch.clone(), "allow"));
        for (name, request, expected) in &cases {
            let outcome = fixture
                .runtime
                .evaluate(&plugin, request, &config, Limits::default())
                .await
                .outcome
                .map_err(anyhow::Error::msg)?;
            ensure!(
                outcome.verdict.as_str() == *expected,
                "{n} rules: {name} is {}, expected {expected}",
                outcome.verdict.as_str()
            );
        }
        policies.push((n, config, plugin, cases));
    }
    // Interleaved, so that no size gets a quieter stretch of the run than another.
    let mut times = vec![vec![Vec::new(); 4]; policies.len()];
    for _ in 0..EVALUATIONS {
        for (at, (_, config, plugin, cases)) in policies.iter().enumerate() {
            for (case, (_, request, _)) in cases.iter().enumerate() {
                let started = Instant::now();
                std::hint::black_box(
                    fixture
                        .runtime
                        .evaluate(plugin, request, config, Limits::default())
                        .await,
                );
                times[at][case].push(started.elapsed());
            }
        }
    }
    let timings: Vec<(usize, Vec<(&str, Stats)>)> = policies
        .iter()
        .zip(&times)
        .map(|((n, _, _, cases), times)| {
            let stats = cases.iter().zip(times);
            (
                *n,
                stats
                    .map(|((name, ..), t)| (*name, Stats::micros(t)))
                    .collect(),
            )
        })
        .collect();
    let (_, ten) = &timings[0];
    for (n, per_case) in &timings[1..] {
        for ((name, stats), (_, base)) in per_case.iter().zip(ten) {
            let comparison = Comparison::new(
                format!("policy/rules-{n}/{name}"),
                "µs",
                (format!("{n} rules"), *stats),
                ("10 rules", *base),
            );
            report.add(if *n == 1000 {
                comparison.target(Target::AtMost(1.5, "≤ 1.5× 10 rules"))
            } else {
                comparison
            });
        }
    }
    Ok(())
}

/// The rules in Cedar (`policy.cedar`), parsed and validated against `policy.cedarschema` once;
/// a decision is then one `is_authorized` per unit of the request (why: policy.cedar).
struct Cedar {
    authorizer: Authorizer,
    policies: PolicySet,
    /// Empty: the policies read only the request's context.
    entities: Entities,
    /// The principal and resource of every Cedar request: `Agent::"agent"`, `Workspace::"bench"`.
    agent: EntityUid,
    workspace: EntityUid,
    /// The actions: `run` for a simple command, `call` for a request without a command.
    run: EntityUid,
    call: EntityUid,
}

impl Cedar {
    fn new() -> Result<Cedar> {
        let policies: PolicySet = include_str!("policy.cedar").parse()?;
        let (schema, _) = Schema::from_cedarschema_str(include_str!("policy.cedarschema"))?;
        let validation = Validator::new(schema).validate(&policies, ValidationMode::Strict);
        ensure!(
            validation.validation_passed_without_warnings(),
            "policy.cedar: {validation}"
        );
        // What `decide` relies on: a `permit` allows, a `forbid` denies or asks; and the policies
        // restate the rules org-policy is given, no more, no fewer.
        let mut restated = BTreeSet::new();
        for policy in policies.policies() {
            let decision = policy.annotation("decision");
            let consistent = match policy.effect() {
                Effect::Permit => decision == Some("allow"),
                Effect::Forbid => matches!(decision, Some("deny" | "ask")),
            };
            ensure!(
                consistent,
                "policy.cedar: a {:?} policy with @decision {decision:?}",
                policy.effect()
            );
            restated.insert(
                policy
                    .annotation("rule")
                    .context("policy.cedar: a policy without @rule")?,
            );
        }
        ensure!(
            restated == BTreeSet::from(RULES),
            "policy.cedar restates {restated:?}, not {RULES:?}"
        );
        Ok(Cedar {
            authorizer: Authorizer::new(),
            policies,
            entities: Entities::empty(),
            agent: r#"Agent::"agent""#.parse()?,
            workspace: r#"Workspace::"bench""#.parse()?,
            run: r#"Action::"run""#.parse()?,
            call: r#"Action::"call""#.parse()?,
        })
    }

    /// The decision on `request`: each unit judged by one Cedar request, and the units folded as
    /// org-policy folds them (`judge`, plugins/org-policy/src/policy.rs). A Cedar evaluation
    /// error (which Cedar would skip the policy for) is an error.
    fn decide(&self, request: &ToolRequest) -> Result<&'static str> {
        let string = |s: &str| RestrictedExpression::new_string(s.to_owned());
        let kind = || ("kind".to_owned(), string(request.kind.as_str()));
        let shell = request
            .command
            .as_ref()
            .and_then(|c| c.shell.as_deref())
            .unwrap_or_default();
        let mut units = Vec::new();
        for command in simple_commands(shell) {
            let context = cedar_policy::Context::from_pairs([
                kind(),
                ("program".to_owned(), string(&command.program)),
                ("subcommand".to_owned(), string(command.subcommand)),
                ("words".to_owned(), string(&command.words)),
            ])?;
            units.push((&self.run, context));
        }
        if units.is_empty() {
            units.push((&self.call, cedar_policy::Context::from_pairs([kind()])?));
        }
        let (mut deny, mut ask, mut allowed) = (false, false, true);
        for (action, context) in units {
            // No schema here: policy.cedar was validated against it once, and the contexts above
            // have the shapes it declares (a mistake shows as an evaluation error).
            let cedar_request = Request::new(
                self.agent.clone(),
                action.clone(),
                self.workspace.clone(),
                context,
                None,
            )?;
            let response =
                self.authorizer
                    .is_authorized(&cedar_request, &self.policies, &self.entities);
            if let Some(error) = response.diagnostics().errors().next() {
                bail!("policy.cedar: {error}");
            }
            allowed &= response.decision() == Decision::Allow;
            // The policies that decided: on an allow the satisfied `permit`s (nothing to add); on
            // a deny the satisfied `forbid`s, or none when no rule matched the unit.
            for id in response.diagnostics().reason() {
                match self.policies.annotation(id, "decision") {
                    Some("deny") => deny = true,
                    Some("ask") => ask = true,
                    _ => {}
                }
            }
        }
        Ok(if deny {
            "deny"
        } else if ask {
            "ask"
        } else if allowed {
            "allow"
        } else {
            "abstain"
        })
    }
}

/// A simple command as policy.rego sees it, in the strings policy.cedar's context has (see
/// policy.cedarschema).
struct SimpleCommand<'a> {
    program: String,
    subcommand: &'a str,
    words: String,
}

/// The simple commands of a command line, split as policy.rego splits them: on control
/// operators, then words on whitespace; empty pieces dropped.
fn simple_commands(shell: &str) -> impl Iterator<Item = SimpleCommand<'_>> {
    shell.split(['&', '|', ';', '\n']).filter_map(|piece| {
        let mut words = piece.split_whitespace();
        let first = words.next()?;
        let program = first
            .rsplit_once('/')
            .map_or(first, |(_, name)| name)
            .to_lowercase();
        let rest: Vec<&str> = words.collect();
        let mut text = format!(" {program} ");
        for word in &rest {
            text.push_str(word);
            text.push(' ');
        }
        Some(SimpleCommand {
            subcommand: rest.first().copied().unwrap_or_default(),
            program,
            words: text,
        })
    })
}
