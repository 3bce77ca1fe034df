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
//! The pure logic lives in plain modules, each using only those below it: the shared
//! `acp_gate_shell` reading; `judgement`, `catalog`, `config`, `context` and `targets` (the paths
//! a command reads and writes, judged once for both sides); then `rules` (what is dangerous) and
//! `safe` (what is known harmless), side by side; this file combines them. It is tested
//! natively; only the export at the bottom is WebAssembly glue.

pub mod catalog;
pub mod config;
pub mod context;
pub mod git_call;
pub mod judgement;
pub mod paths;
pub mod rules;
pub mod safe;
pub mod targets;

use acp_gate_plugin::{Plugin, Request, Verdict};
use acp_gate_shell::{Note, NoteKind, Reading, read_command};

pub use config::Config;
pub use context::Disk;
use context::{AsWritten, Context};
use judgement::{Finding, Judgement, one_per_effect};

/// What the checker reads of a request's command: the shared reading of the shell, the same
/// list of simple commands `org-policy` judges. `None` when there is no command.
pub fn reading(request: &Request) -> Option<Reading> {
    let command = request.command.as_ref()?;
    read_command(
        command.argv.as_deref(),
        command.shell.as_deref(),
        &request.home_dir,
        &request.cwd,
    )
}

/// Judges the command of one request as if no path were a symlink (natively, without the
/// host); requests without a command get `abstain`. The plugin itself runs [`evaluate_on`]
/// with the host's resolution.
pub fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
    evaluate_on(request, config, &AsWritten)
}

/// Judges the command of one request, with `disk` telling where the paths it names lead (the
/// host's `paths.resolve`: symlinks, a case-insensitive file system) and what a directory
/// holds (`paths.entries`).
pub fn evaluate_on(request: &Request, config: &Config, disk: &dyn Disk) -> Result<Verdict, String> {
    config.validate()?;
    let Some(reading) = reading(request) else {
        return Ok(Verdict::Abstain);
    };
    let mut findings = Vec::new();
    let command = request.command.as_ref().expect("a reading has a command");
    let words = command.argv.iter().flatten().map(String::as_str);
    for text in words.chain(command.shell.as_deref()) {
        invisible_characters(text, &mut findings);
    }
    Ok(judge(reading, findings, request, config, disk).into_verdict())
}

/// Applies the rules to every invocation and combines everything into one judgement.
fn judge(
    reading: Reading,
    mut findings: Vec<Finding>,
    request: &Request,
    config: &Config,
    disk: &dyn Disk,
) -> Judgement {
    let cx = Context::new(
        &request.home_dir,
        &request.cwd,
        &request.workspace_roots,
        config,
        disk,
    );
    findings.extend(
        reading
            .notes
            .iter()
            .map(finding)
            .filter(|f| config.enabled(f.rule)),
    );
    let mut all_safe = !reading.commands.is_empty();
    for inv in &reading.commands {
        let mut own = Vec::new();
        let tabled = safe::judges_operands(&inv.name);
        rules::check(inv, &cx, tabled, &mut own);
        let clean = own.is_empty();
        let safe = safe::is_known_safe(inv, &cx, &mut own);
        own.retain(|f| config.enabled(f.rule));
        one_per_effect(&mut own);
        findings.extend(own);
        all_safe &= clean && safe;
    }
    // A structural finding (parse failure, dynamic code) also rules out `allow`.
    all_safe &= findings.is_empty();
    Judgement::combine(&findings, all_safe)
}

/// What the checker makes of something the walk could not see through.
fn finding(note: &Note) -> Finding {
    let reason = note.reason.clone();
    match note.kind {
        NoteKind::Unparseable => Finding::ask("unparseable", reason),
        NoteKind::TooComplex => Finding::ask("too-complex", reason),
        NoteKind::DynamicCommand => Finding::ask("dynamic-command", reason),
        NoteKind::DynamicCode | NoteKind::ArithmeticCode | NoteKind::Defines => {
            Finding::ask("dynamic-code", reason)
        }
        NoteKind::RemoteCode => Finding::deny("remote-code", reason),
        NoteKind::DecodedPayload => Finding::deny("decoded-payload", reason),
        NoteKind::StdinScript => Finding::ask("stdin-script", reason),
        NoteKind::ForkBomb => Finding::deny("fork-bomb", reason),
    }
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

    /// Paths are followed and directories listed through the host (`paths`, which the handler
    /// must grant).
    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        evaluate_on(request, config, &Host)
    }
}

/// The file system as the host's `paths` import tells it.
struct Host;

impl Disk for Host {
    fn resolve(&self, path: &str) -> acp_gate_plugin::Resolution {
        acp_gate_plugin::resolve_path(path)
    }

    fn entries(&self, dir: &str) -> Option<Vec<String>> {
        acp_gate_plugin::dir_entries(dir).ok()
    }

    fn patch_files(&self, file: &str) -> Option<Vec<acp_gate_plugin::PatchedFile>> {
        acp_gate_plugin::patch_files(file).ok()
    }
}

acp_gate_plugin::export_plugin!(DangerousCommand);
acp_gate_plugin::use_instance_arena!();

pub use acp_gate_plugin::testing;
