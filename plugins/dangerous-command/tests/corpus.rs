//! The shared corpus (`tests/corpus/commands.toml` at the repository root), decided by this
//! plugin alone the way the default chain would: an abstention becomes the chain's default, ask.
//! The host's end-to-end test runs the same file through the real binary.

use dangerous_command::judgement::{Level, level_of};
use dangerous_command::testing::{argv_request, request};
use dangerous_command::{Config, evaluate};

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

#[test]
fn the_corpus_is_decided_as_expected() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpus/commands.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let corpus: toml::Table = toml::from_str(&text).unwrap();
    let cases = corpus["case"].as_array().unwrap();
    assert!(cases.len() >= 700, "only {} cases", cases.len());
    // Issue 12, class 8: at least 150 everyday commands that must all be allowed.
    let benign = cases
        .iter()
        .filter(|c| c["expect"].as_str() == Some("allow"))
        .count();
    assert!(benign >= 150, "only {benign} everyday commands");
    let substitute = |s: &str| s.replace("$WORKSPACE", WORKSPACE).replace("$HOME", HOME);
    let mut wrong = Vec::new();
    for (number, case) in cases.iter().enumerate() {
        let mut req = if let Some(command) = case.get("command").and_then(|c| c.as_str()) {
            request(&substitute(command))
        } else {
            let argv: Vec<String> = case["argv"]
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
        let verdict = evaluate(&req, &Config::default()).unwrap();
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
