//! The adversarial corpus (`tests/corpus/*.toml`) through the real default chain: no dangerous
//! command or path may be allowed, and ordinary development work must not be denied.
//!
//! Each case: `command`, `argv`, `path`/`paths` with `kind` (the request, in the short form of
//! `handlers.toml` tests) or `request` (the whole `session/request_permission` params), `expect` (`allow`, `ask`, `deny`, `not-allow`, `not-deny`), `why`, and
//! optionally `setup_files` / `setup_symlinks` created in a fresh workspace first. `$WORKSPACE`
//! and `$HOME` in strings stand for the sandbox's directories.

use serde_json::Value;

use crate::common::{Sandbox, stderr};

struct Case {
    file: String,
    number: usize,
    table: Value,
}

impl Case {
    fn expect(&self) -> &str {
        self.table["expect"]
            .as_str()
            .unwrap_or_else(|| panic!("{}#{}: no expect", self.file, self.number))
    }

    fn needs_setup(&self) -> bool {
        self.table.get("setup_files").is_some() || self.table.get("setup_symlinks").is_some()
    }

    fn accepts(&self, decision: &str) -> bool {
        match self.expect() {
            "not-allow" => decision != "allow",
            "not-deny" => decision != "deny",
            exact => decision == exact,
        }
    }
}

fn cases() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut cases = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed: toml::Table =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for (number, case) in parsed["case"].as_array().unwrap().iter().enumerate() {
            cases.push(Case {
                file: file.clone(),
                number,
                table: serde_json::to_value(case).unwrap(),
            });
        }
    }
    cases
}

/// Replaces `$WORKSPACE` and `$HOME` in every string of `value`.
fn substitute(value: &Value, sandbox: &Sandbox) -> Value {
    match value {
        Value::String(s) => Value::String(
            s.replace("$WORKSPACE", &sandbox.workspace.display().to_string())
                .replace("$HOME", &sandbox.home.display().to_string()),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, sandbox)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, sandbox)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn prepare(case: &Case, sandbox: &Sandbox) {
    for file in case
        .table
        .get("setup_files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = sandbox.workspace.join(file.as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }
    for link in case
        .table
        .get("setup_symlinks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let link = substitute(link, sandbox);
        let (name, target) = (link[0].as_str().unwrap(), link[1].as_str().unwrap());
        let path = sandbox.workspace.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }
}

/// Decides `cases` in one `check` run inside `sandbox`; returns the mismatches.
fn decide(cases: &[&Case], sandbox: &Sandbox) -> Vec<String> {
    let requests: Vec<Value> = cases
        .iter()
        .map(|case| {
            let mut short = substitute(&case.table, sandbox);
            for key in ["expect", "why", "setup_files", "setup_symlinks"] {
                short.as_object_mut().unwrap().remove(key);
            }
            acp_gate::shorthand::params(&short).unwrap()
        })
        .collect();
    let (lines, output) = sandbox.check(None, &requests);
    assert_eq!(lines.len(), cases.len(), "{}", stderr(&output));
    cases
        .iter()
        .zip(&lines)
        .filter(|(case, line)| !case.accepts(line["decision"].as_str().unwrap_or("error")))
        .map(|(case, line)| {
            format!(
                "{}#{} {}: expected {}, got {} — {} ({})",
                case.file,
                case.number,
                ["command", "argv", "path", "paths", "request"]
                    .iter()
                    .find_map(|k| case.table.get(*k))
                    .unwrap_or(&Value::Null),
                case.expect(),
                line["decision"],
                case.table["why"].as_str().unwrap_or(""),
                line["reasons"],
            )
        })
        .collect()
}

#[test]
fn the_default_chain_decides_the_corpus_as_expected() {
    let cases = cases();
    assert!(
        cases.len() >= 150,
        "the corpus has only {} cases",
        cases.len()
    );
    let sandbox = Sandbox::new();
    let plain: Vec<&Case> = cases.iter().filter(|c| !c.needs_setup()).collect();
    let mut failures = decide(&plain, &sandbox);
    for case in cases.iter().filter(|c| c.needs_setup()) {
        let sandbox = Sandbox::new();
        prepare(case, &sandbox);
        failures.extend(decide(&[case], &sandbox));
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases decided wrongly:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
