//! The adversarial corpus (`tests/corpus/*.toml`) through the real default chain: no dangerous
//! command or path may be allowed, and ordinary development work must not be denied. The
//! ordinary coding-session work of `tests/corpus/ordinary*.toml` (issue 27) is measured: the
//! share allowed without asking, per file and in all, at least 90%, and nothing denied.
//!
//! Each case: `command`, `argv`, `path`/`paths` with `kind` (the request, in the short form of
//! `handlers.toml` tests) or `request` (the whole `session/request_permission` params), `expect` (`allow`, `ask`, `deny`, `not-allow`, `not-deny`), `why`, and
//! optionally `setup_files` / `setup_symlinks` / `setup_texts` (a table of files and their
//! contents) created in a fresh workspace first. `$WORKSPACE`
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
        ["setup_files", "setup_symlinks", "setup_texts"]
            .iter()
            .any(|key| self.table.get(*key).is_some())
    }

    fn accepts(&self, decision: &str) -> bool {
        match self.expect() {
            "not-allow" => decision != "allow",
            "not-deny" => decision != "deny",
            exact => decision == exact,
        }
    }
}

/// Whether a corpus file lists ordinary work, measured rather than held case by case.
fn ordinary(file: &str) -> bool {
    file.starts_with("ordinary")
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
    for (name, text) in case
        .table
        .get("setup_texts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = sandbox.workspace.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.as_str().unwrap()).unwrap();
    }
}

/// Decides `cases` in one `check` run inside `sandbox`: each case with its decision and reasons.
fn decide<'c>(cases: &[&'c Case], sandbox: &Sandbox) -> Vec<(&'c Case, String, Value)> {
    let requests: Vec<Value> = cases
        .iter()
        .map(|case| {
            let mut short = substitute(&case.table, sandbox);
            for key in [
                "expect",
                "why",
                "setup_files",
                "setup_symlinks",
                "setup_texts",
            ] {
                short.as_object_mut().unwrap().remove(key);
            }
            acp_gate::shorthand::params(&short).unwrap()
        })
        .collect();
    let (lines, output) = sandbox.check(None, &requests);
    assert_eq!(lines.len(), cases.len(), "{}", stderr(&output));
    cases
        .iter()
        .zip(lines)
        .map(|(case, line)| {
            let decision = line["decision"].as_str().unwrap_or("error").to_owned();
            (*case, decision, line["reasons"].clone())
        })
        .collect()
}

/// Decides every case, each with a fresh sandbox where it needs files of its own.
fn decide_all<'c>(cases: &[&'c Case]) -> Vec<(&'c Case, String, Value)> {
    let sandbox = Sandbox::new();
    let plain: Vec<&Case> = cases.iter().copied().filter(|c| !c.needs_setup()).collect();
    let mut decided = decide(&plain, &sandbox);
    for case in cases.iter().filter(|c| c.needs_setup()) {
        let sandbox = Sandbox::new();
        prepare(case, &sandbox);
        decided.extend(decide(&[case], &sandbox));
    }
    decided
}

/// A case as a line of a failure message.
fn describe(case: &Case, decision: &str, reasons: &Value) -> String {
    format!(
        "{}#{} {}: expected {}, got {decision} — {} ({reasons})",
        case.file,
        case.number,
        ["command", "argv", "path", "paths", "request"]
            .iter()
            .find_map(|k| case.table.get(*k))
            .unwrap_or(&Value::Null),
        case.expect(),
        case.table["why"].as_str().unwrap_or(""),
    )
}

#[test]
fn the_default_chain_decides_the_corpus_as_expected() {
    let cases = cases();
    let held: Vec<&Case> = cases.iter().filter(|c| !ordinary(&c.file)).collect();
    assert!(
        held.len() >= 150,
        "the corpus has only {} cases",
        held.len()
    );
    let failures: Vec<String> = decide_all(&held)
        .into_iter()
        .filter(|(case, decision, _)| !case.accepts(decision))
        .map(|(case, decision, reasons)| describe(case, &decision, &reasons))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases decided wrongly:\n{}",
        failures.len(),
        held.len(),
        failures.join("\n")
    );
}

/// Issue 27: the default chain lets a coding session's ordinary work through. Every case of
/// `ordinary*.toml` expects `allow`; none may be denied, and at least 90% of each file (and of
/// all) must be allowed without asking.
#[test]
fn ordinary_work_is_allowed_without_asking() {
    let cases = cases();
    let ordinary: Vec<&Case> = cases.iter().filter(|c| ordinary(&c.file)).collect();
    assert!(
        ordinary.len() >= 400,
        "only {} ordinary cases",
        ordinary.len()
    );
    let decided = decide_all(&ordinary);
    let share = |of: &[&(&Case, String, Value)]| {
        let allowed = of.iter().filter(|(_, d, _)| d == "allow").count();
        (allowed, 100.0 * allowed as f64 / of.len().max(1) as f64)
    };
    let mut files: Vec<&str> = ordinary.iter().map(|c| c.file.as_str()).collect();
    files.dedup();
    let mut low = Vec::new();
    for file in files {
        let of: Vec<&(&Case, String, Value)> =
            decided.iter().filter(|(c, _, _)| c.file == file).collect();
        let (allowed, percent) = share(&of);
        println!(
            "{file}: {allowed} of {} allowed without asking ({percent:.1}%)",
            of.len()
        );
        if percent < 90.0 {
            low.push(format!("{file}: {percent:.1}%"));
        }
    }
    let all: Vec<&(&Case, String, Value)> = decided.iter().collect();
    let (allowed, percent) = share(&all);
    println!(
        "in all: {allowed} of {} allowed without asking ({percent:.1}%)",
        all.len()
    );
    let lines = |want: &dyn Fn(&str) -> bool| {
        decided
            .iter()
            .filter(|(_, d, _)| want(d))
            .map(|(c, d, r)| describe(c, d, r))
            .collect::<Vec<_>>()
            .join("\n")
    };
    println!("asked:\n{}", lines(&|d| d == "ask"));
    let denied = lines(&|d| d == "deny");
    assert!(denied.is_empty(), "ordinary work denied:\n{denied}");
    assert!(
        low.is_empty() && percent >= 90.0,
        "below the 90% target ({}; in all {percent:.1}%); asked:\n{}",
        low.join(", "),
        lines(&|d| d != "allow")
    );
}
