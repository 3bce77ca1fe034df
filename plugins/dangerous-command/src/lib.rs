//! The built-in dangerous-command checker: parses the command of an `execute` request as a
//! shell would, finds every simple command in it (through `&&`, pipes, subshells, substitutions,
//! `bash -c`, `eval`, `sudo`, `env`, `xargs`, `find -exec` and other wrappers), and judges each
//! against the built-in rules and the handler's config.
//!
//! - any part dangerous: `deny(reason)`; any part needing a person: `ask(reason)`;
//! - every part known safe (tests, builds, listing, status, diff): `allow`;
//! - otherwise `abstain`, so the chain's default (ask) decides.
//!
//! ```
//! use acp_gate_plugin::{CommandLine, Verdict};
//! use dangerous_command::{Config, evaluate};
//! # let mut request = dangerous_command::testing::request("");
//! request.command = Some(CommandLine { argv: None, shell: Some("cd x && /bin/rm -r -f ~".into()) });
//! assert!(matches!(evaluate(&request, &Config::default()), Ok(Verdict::Deny(_))));
//! ```
//!
//! The pure logic lives in plain modules (`extract` -> `rules` / `safe` -> `judgement`) and is
//! tested natively; only the export at the bottom is WebAssembly glue.

pub mod config;
pub mod extract;
pub mod judgement;
pub mod paths;
pub mod programs;
pub mod rules;
pub mod safe;
pub mod words;

use acp_gate_plugin::{Plugin, Request, Verdict};

pub use config::Config;
use extract::{Analysis, analyse_argv, analyse_shell};
use judgement::{Finding, Judgement};

/// Judges the command of one request; requests without a command get `abstain`.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    config.validate()?;
    let Some(command) = &request.command else {
        return Ok(Verdict::Abstain);
    };
    let (home, cwd) = (request.home_dir.as_str(), request.cwd.as_str());
    let mut findings = Vec::new();
    let analysis = if let Some(shell) = &command.shell {
        invisible_characters(shell, &mut findings);
        analyse_shell(shell, home, cwd)
    } else if let Some(argv) = &command.argv {
        for word in argv {
            invisible_characters(word, &mut findings);
        }
        if argv.is_empty() {
            return Ok(Verdict::Abstain);
        }
        analyse_argv(argv, home, cwd)
    } else {
        return Ok(Verdict::Abstain);
    };
    Ok(judge(analysis, findings, request, config).into_verdict())
}

/// Applies the rules to every invocation and combines everything into one judgement.
fn judge(
    analysis: Analysis,
    mut findings: Vec<Finding>,
    request: &Request,
    config: &Config,
) -> Judgement {
    let cx = rules::Context::new(
        &request.home_dir,
        &request.cwd,
        &request.workspace_roots,
        config,
    );
    findings.extend(
        analysis
            .findings
            .into_iter()
            .filter(|f| config.enabled(f.rule)),
    );
    let mut all_safe = !analysis.invocations.is_empty();
    for inv in &analysis.invocations {
        let before = findings.len();
        rules::check(inv, &cx, &mut findings);
        all_safe &= findings.len() == before && safe::is_known_safe(inv, config);
    }
    // A structural finding (parse failure, dynamic code) also rules out `allow`.
    all_safe &= findings.is_empty();
    Judgement::combine(&findings, all_safe)
}

/// Zero-width, bidirectional and other deceptive characters anywhere in the command.
fn invisible_characters(text: &str, findings: &mut Vec<Finding>) {
    if let Some(c) = text.chars().find(|&c| rules::is_deceptive_char(c)) {
        findings.push(Finding::ask(
            "unicode-confusable",
            format!(
                "the command contains the invisible or look-alike character U+{:04X}",
                c as u32
            ),
        ));
    }
}

/// The plugin as the SDK exports it.
pub struct DangerousCommand;

impl Plugin for DangerousCommand {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate(request, config)
    }
}

acp_gate_plugin::export_plugin!(DangerousCommand);

pub use acp_gate_plugin::testing;
