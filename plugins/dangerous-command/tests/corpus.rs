//! The shared corpus (`tests/corpus/commands.toml` at the repository root, and the ordinary
//! commands of `tests/corpus/ordinary*.toml`), decided by this plugin alone the way the default
//! chain would: an abstention becomes the chain's default, ask. The host's end-to-end test runs
//! the same files through the real binary.

use acp_gate_plugin::{PatchChange, PatchedFile, Resolution};
use acp_gate_shell::patch::Change;
use dangerous_command::judgement::{Level, level_of};
use dangerous_command::testing::{argv_request, request};
use dangerous_command::{Config, Disk, evaluate, evaluate_on};

/// The sandbox layout of the host's corpus test: home and workspace are sibling temp dirs.
const HOME: &str = "/tmp/.tmpSandbox/home";
const WORKSPACE: &str = "/tmp/.tmpSandbox/workspace";

fn chain_decision(level: Level) -> &'static str {
    match level {
        Level::Deny => "deny",
        Level::Ask | Level::Abstain => "ask",
        Level::Allow => "allow",
    }
}

/// The request of a corpus case with a command (`command` or `argv`), as the host's corpus test
/// builds it; `None` for a case without one (a tool call).
fn case_request(case: &toml::Value) -> Option<acp_gate_plugin::Request> {
    let substitute = |s: &str| s.replace("$WORKSPACE", WORKSPACE).replace("$HOME", HOME);
    let mut req = if let Some(command) = case.get("command").and_then(|c| c.as_str()) {
        request(&substitute(command))
    } else {
        let argv: Vec<String> = case
            .get("argv")?
            .as_array()
            .unwrap()
            .iter()
            .map(|w| substitute(w.as_str().unwrap()))
            .collect();
        argv_request(&argv.iter().map(String::as_str).collect::<Vec<_>>())
    };
    req.home_dir = HOME.into();
    req.cwd = WORKSPACE.into();
    req.workspace_roots = vec![WORKSPACE.into()];
    Some(req)
}

/// A host whose file system holds the case's `setup_symlinks` (in the workspace, targets with
/// `$HOME` and `$WORKSPACE` substituted), `setup_files` (in the workspace, with their
/// directories) and `setup_texts` (files with contents) and nothing else: a path resolves as the kernel would walk it, each link
/// followed and each `..` applied after it; a directory lists the names of both under it.
struct Sandbox {
    links: Vec<(String, String)>,
    files: Vec<String>,
    /// `setup_texts`: files with contents (in the workspace).
    texts: Vec<(String, String)>,
}

fn host(case: &toml::Value) -> Sandbox {
    let substitute = |s: &str| s.replace("$WORKSPACE", WORKSPACE).replace("$HOME", HOME);
    let links: Vec<(String, String)> = case
        .get("setup_symlinks")
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
        .map(|pair| {
            let pair = pair.as_array().unwrap();
            let name = format!("{WORKSPACE}/{}", pair[0].as_str().unwrap());
            (name, substitute(pair[1].as_str().unwrap()))
        })
        .collect();
    let files: Vec<String> = case
        .get("setup_files")
        .and_then(|f| f.as_array())
        .into_iter()
        .flatten()
        .map(|file| format!("{WORKSPACE}/{}", file.as_str().unwrap()))
        .collect();
    let texts: Vec<(String, String)> = case
        .get("setup_texts")
        .and_then(|t| t.as_table())
        .into_iter()
        .flatten()
        .map(|(name, text)| {
            let text = text.as_str().unwrap().to_owned();
            (format!("{WORKSPACE}/{name}"), text)
        })
        .collect();
    let files = files
        .into_iter()
        .chain(texts.iter().map(|(name, _)| name.clone()))
        .collect();
    Sandbox {
        links,
        files,
        texts,
    }
}

impl Disk for Sandbox {
    fn resolve(&self, path: &str) -> Resolution {
        let (links, files) = (&self.links, &self.files);
        let mut pending: Vec<String> = path.split('/').rev().map(str::to_owned).collect();
        let (mut done, mut linked) = (String::new(), false);
        while let Some(part) = pending.pop() {
            match part.as_str() {
                "" | "." => {}
                ".." => done.truncate(done.rfind('/').unwrap_or(0)),
                _ => {
                    let next = format!("{done}/{part}");
                    match links.iter().find(|(name, _)| *name == next) {
                        Some((_, target)) => {
                            linked = true;
                            if target.starts_with('/') {
                                done.clear();
                            }
                            pending.extend(target.split('/').rev().map(str::to_owned));
                        }
                        None => done = next,
                    }
                }
            }
        }
        let exists = files
            .iter()
            .any(|f| *f == done || f.starts_with(&format!("{done}/")));
        Resolution {
            canonical: if done.is_empty() { "/".into() } else { done },
            exists,
            through_symlink: linked,
            case_insensitive: false,
        }
    }

    fn entries(&self, dir: &str) -> Option<Vec<String>> {
        let under = format!("{}/", dir.trim_end_matches('/'));
        let mut names: Vec<String> = (self.files.iter())
            .chain(self.links.iter().map(|(name, _)| name))
            .filter_map(|p| p.strip_prefix(&under))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned())
            .collect();
        names.sort();
        names.dedup();
        Some(names)
    }

    fn patch_files(&self, file: &str) -> Option<Vec<PatchedFile>> {
        let (_, text) = self.texts.iter().find(|(name, _)| name == file)?;
        let files = acp_gate_shell::patch::files(text).ok()?;
        Some(
            files
                .into_iter()
                .map(|f| PatchedFile {
                    path: f.path,
                    change: match f.change {
                        Change::Modify => PatchChange::Modify,
                        Change::Create => PatchChange::Create,
                        Change::Delete => PatchChange::Delete,
                        Change::Symlink => PatchChange::Symlink,
                    },
                })
                .collect(),
        )
    }
}

fn corpus_file(name: &str) -> Vec<toml::Value> {
    let path = format!("{}/../../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let corpus: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    corpus["case"].as_array().unwrap().clone()
}

/// Issue 27: ordinary coding-session commands are allowed without asking (at least 90% of them;
/// the list aims at all, and the asked ones are printed), and none is denied.
#[test]
fn ordinary_commands_are_allowed_without_asking() {
    let cases = corpus_file("ordinary.toml");
    assert!(cases.len() >= 400, "only {} ordinary commands", cases.len());
    let mut asked = Vec::new();
    let mut denied = Vec::new();
    for case in &cases {
        let req = case_request(case).expect("ordinary.toml holds commands");
        let verdict = evaluate(&req, &Config::default()).unwrap();
        let line = format!("{:?}: {verdict:?}", req.command.unwrap());
        match chain_decision(level_of(&verdict)) {
            "allow" => {}
            "deny" => denied.push(line),
            _ => asked.push(line),
        }
    }
    let allowed = cases.len() - asked.len() - denied.len();
    let share = 100.0 * allowed as f64 / cases.len() as f64;
    println!(
        "ordinary.toml: {allowed} of {} allowed without asking ({share:.1}%)",
        cases.len()
    );
    for line in &asked {
        println!("asked: {line}");
    }
    for l in asked.iter().chain(&denied) {
        println!("NOT {l}");
    }
    assert!(
        denied.is_empty(),
        "ordinary commands denied:\n{}",
        denied.join("\n")
    );
    assert!(
        share >= 90.0,
        "only {share:.1}% allowed; asked:\n{}",
        asked.join("\n")
    );
}

#[test]
fn the_corpus_is_decided_as_expected() {
    let cases = corpus_file("commands.toml");
    assert!(cases.len() >= 700, "only {} cases", cases.len());
    // Issue 12, class 8: at least 150 everyday commands that must all be allowed.
    let benign = cases
        .iter()
        .filter(|c| c["expect"].as_str() == Some("allow"))
        .count();
    assert!(benign >= 150, "only {benign} everyday commands");
    let mut wrong = Vec::new();
    for (number, case) in cases.iter().enumerate() {
        let req = case_request(case).expect("commands.toml holds commands");
        let verdict = evaluate_on(&req, &Config::default(), &host(case)).unwrap();
        let decision = chain_decision(level_of(&verdict));
        let expect = case["expect"].as_str().unwrap();
        let ok = match expect {
            "not-allow" => decision != "allow",
            "not-deny" => decision != "deny",
            exact => decision == exact,
        };
        if !ok {
            wrong.push(format!(
                "#{number} {:?}: expected {expect}, got {verdict:?} — {}",
                req.command.unwrap(),
                case["why"].as_str().unwrap_or("")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases decided wrongly:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
