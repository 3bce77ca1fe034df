//! handlers.toml: bad files are refused naming the file, line and key; layers only tighten;
//! inline tests run at load; `check` reads requests in every documented form.

use serde_json::{Value, json};

use crate::common::{Sandbox, claude_bash, sha256_of, stderr, test_plugin, verdict_of};

/// Runs `check` with `handlers` and returns stderr, asserting that it failed.
fn refused(sandbox: &Sandbox, handlers: &str) -> String {
    let path = sandbox.write("cfg/handlers.toml", handlers);
    let (lines, output) = sandbox.check(Some(&path), &[claude_bash("Bash", "ls")]);
    assert!(!output.status.success(), "accepted:\n{handlers}");
    assert!(
        lines.is_empty(),
        "a refused policy must decide nothing: {lines:?}"
    );
    stderr(&output)
}

#[test]
fn malformed_files_are_refused_naming_file_line_and_key() {
    let sandbox = Sandbox::new();
    let file = sandbox.root.join("cfg/handlers.toml").display().to_string();

    let error = refused(&sandbox, "[[handler]\nname = 1\n");
    assert!(error.contains(&file) && error.contains("line 1"), "{error}");

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"a\"\nplugin = \"builtin:org-policy\"\ntimeout = 5\n",
    );
    assert!(
        error.contains(&file)
            && error.contains("line 4")
            && error.contains("unknown field `timeout`"),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "\n[[handler]]\nname = \"a\"\nplugin = \"builtin:nope\"\n",
    );
    assert!(
        error.contains(&format!(
            "{file}:4: handler[0].plugin: unknown built-in plugin `builtin:nope`"
        )),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"a\"\nplugin = \"missing.wasm\"\n",
    );
    assert!(
        error.contains("handler[0].plugin: plugin file")
            && error.contains("missing.wasm does not exist"),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"a\"\nplugin = \"builtin:org-policy\"\ncontrol = \"mandatory\"\n",
    );
    assert!(
        error.contains("line 4") && error.contains("unknown variant `mandatory`"),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"a\"\nplugin = \"builtin:org-policy\"\napplies_to = [\"exec\"]\n",
    );
    assert!(
        error.contains(":4: handler[0].applies_to: unknown tool kind `exec`"),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"a\"\nplugin = \"builtin:org-policy\"\nimports = [\"network\"]\n",
    );
    assert!(
        error.contains(":4: handler[0].imports: unknown grant `network`"),
        "{error}"
    );

    let error = refused(
        &sandbox,
        "[[handler]]\nname = \"builtin-paths\"\nplugin = \"builtin:org-policy\"\n",
    );
    assert!(
        error.contains("`builtin-paths` is the name of a handler of the built-in default chain"),
        "{error}"
    );
}

#[test]
fn a_missing_handlers_file_or_request_file_is_named() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["check", "--handlers", "nope.toml", "-"], "");
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("nope.toml: no such file"),
        "{}",
        stderr(&output)
    );

    let output = sandbox.run(&["check", "missing.json"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("missing.json: cannot read"),
        "{}",
        stderr(&output)
    );
}

/// An org file that denies `rm` (via the test plugin), and a project file below it.
fn org_and_project(sandbox: &Sandbox, org_extra: &str, project: &str) -> std::process::Output {
    let plugin = test_plugin("misbehaving");
    let digest = sha256_of(&plugin);
    let org = sandbox.write(
        "org/handlers.toml",
        &format!(
            "[settings]\ndefault = \"ask\"\n{org_extra}\n[[handler]]\nname = \"org-rm\"\nplugin = \"{}\"\nsha256 = \"{digest}\"\nconfig = {{ behaviour = \"allow-unless-rm\" }}\n",
            plugin.display()
        ),
    );
    sandbox.write("workspace/.acp-gate/handlers.toml", project);
    let stdin = format!("{}\n", claude_bash("rm -rf build", "rm -rf build"));
    sandbox.run(
        &[
            "check",
            "--format",
            "json",
            "--org-handlers",
            org.to_str().unwrap(),
            "-",
        ],
        &stdin,
    )
}

#[test]
fn a_lower_layer_cannot_drop_or_loosen_the_org_layer() {
    let sandbox = Sandbox::new();
    let output = org_and_project(
        &sandbox,
        "",
        "[[handler]]\nname = \"org-rm\"\nplugin = \"builtin:org-policy\"\ncontrol = \"optional\"\non_error = \"abstain\"\n",
    );
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(error.contains(".acp-gate/handlers.toml:2: handler[0].name: `org-rm` is already defined by the org layer"), "{error}");

    let output = org_and_project(&sandbox, "", "[settings]\ndefault = \"allow\"\n");
    assert!(
        stderr(&output).contains("settings.default: a project's file can only tighten"),
        "{}",
        stderr(&output)
    );

    let output = org_and_project(&sandbox, "", "[settings]\nbuiltin_chain = false\n");
    assert!(
        stderr(&output).contains("settings.builtin_chain: only the org file"),
        "{}",
        stderr(&output)
    );

    // A project allow rule cannot beat the org deny: tiers only tighten.
    let output = org_and_project(
        &sandbox,
        "",
        "[[handler]]\nname = \"yes\"\nplugin = \"builtin:org-policy\"\ncontrol = \"sufficient\"\n[[handler.config.rules]]\nname = \"all\"\nkinds = [\"execute\"]\ndecision = \"allow\"\nreason = \"trust me\"\n",
    );
    let line: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{}", stderr(&output)));
    assert_eq!(line["decision"], "deny", "{line}");
    assert_eq!(verdict_of(&line, "org-rm")["tier"], "org");
}

#[test]
fn a_project_file_can_only_tighten_never_allow() {
    // A cloned repository's `.acp-gate/handlers.toml`: its allow counts for nothing, and it
    // cannot make allow the default.
    let sandbox = Sandbox::new();
    let allow_all = "[[handler]]\nname = \"yes\"\nplugin = \"builtin:org-policy\"\n[[handler.config.rules]]\nname = \"all\"\nkinds = [\"fetch\"]\ndecision = \"allow\"\nreason = \"trust me\"\n";
    let project = sandbox.write("workspace/.acp-gate/handlers.toml", allow_all);
    let fetch = json!({"toolCall": {"toolCallId": "f", "title": "Fetch https://example.com", "kind": "fetch", "rawInput": {"url": "https://example.com"}}});
    let (lines, _) = sandbox.check(None, std::slice::from_ref(&fetch));
    assert_eq!(verdict_of(&lines[0], "yes")["verdict"], "allow");
    assert_eq!(lines[0]["decision"], "ask", "{}", lines[0]);
    // The same file named by the person (`--handlers`) is theirs: its allow counts.
    let (lines, _) = sandbox.check(Some(&project), &[fetch]);
    assert_eq!(lines[0]["decision"], "allow", "{}", lines[0]);

    sandbox.write(
        "workspace/.acp-gate/handlers.toml",
        "[settings]\ndefault = \"allow\"\n",
    );
    let output = sandbox.run(&["check", "-"], "{}\n");
    assert!(
        stderr(&output).contains("settings.default: a project's file can only tighten"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_org_file_can_forbid_lower_layers() {
    let sandbox = Sandbox::new();
    let output = org_and_project(
        &sandbox,
        "lower_layers = \"ignore\"",
        "this is not even TOML [",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains(".acp-gate/handlers.toml ignored: the org file forbids lower layers"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn inline_tests_run_at_load_and_a_failing_one_stops_it() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("misbehaving");
    let policy = |expect: &str| {
        format!(
            "[[handler]]\nname = \"rm-guard\"\nplugin = \"{}\"\nconfig = {{ behaviour = \"allow-unless-rm\" }}\n\n[[handler.test]]\ntitle = \"ls\"\nexpect = \"allow\"\n\n[[handler.test]]\ntitle = \"rm -rf x\"\nexpect = \"{expect}\"\n",
            plugin.display()
        )
    };
    let path = sandbox.write("t/handlers.toml", &policy("deny"));
    let (lines, output) = sandbox.check(Some(&path), &[claude_bash("ls", "ls")]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(lines.len(), 1);

    let path = sandbox.write("t/handlers.toml", &policy("allow"));
    let (_, output) = sandbox.check(Some(&path), &[claude_bash("ls", "ls")]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "t/handlers.toml:10: handler `rm-guard` test[1]: expected allow, got deny (mentions rm)"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn check_reads_params_jsonrpc_messages_and_lines_and_reports_bad_ones() {
    let sandbox = Sandbox::new();
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": claude_bash("Bash", "ls")});
    let stdin = format!(
        "{message}\n{{not json\n{}\n\n",
        json!({"jsonrpc": "2.0", "method": "session/prompt", "params": {}})
    );
    let output = sandbox.run(&["check", "--format", "json", "-"], &stdin);
    assert_eq!(
        output.status.code(),
        Some(1),
        "bad lines make the exit code 1"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["source"], "stdin:1");
    assert!(lines[0]["decision"].is_string());
    assert_eq!(lines[1]["source"], "stdin:2");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("`session/prompt` message, not session/request_permission")
    );
}

#[test]
fn audit_log_gets_one_line_per_decision() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit/log.jsonl");
    let stdin = format!(
        "{}\n{}\n",
        claude_bash("a", "ls"),
        claude_bash("b", "cargo test")
    );
    let output = sandbox.run(&["check", "--audit", audit.to_str().unwrap(), "-"], &stdin);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for (line, title) in lines.iter().zip(["a", "b"]) {
        assert_eq!(line["title"], title);
        assert_eq!(line["session_id"], "s");
        assert_eq!(line["tool_call_id"], "t");
        assert_eq!(line["request_digest"].as_str().unwrap().len(), 64);
        assert!(line["timestamp_ms"].as_u64().unwrap() > 1_600_000_000_000);
        assert_eq!(line["handlers"].as_array().unwrap().len(), 3);
        assert!(line["decision"].is_string() && line["answer"].is_string());
    }
}

#[test]
fn text_output_shows_decision_option_and_each_handler() {
    let sandbox = Sandbox::new();
    let path = sandbox.write("req.json", &claude_bash("Bash", "cargo test").to_string());
    let output = sandbox.run(&["check", path.to_str().unwrap()], "");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("req.json") && text.contains("cargo test"),
        "{text}"
    );
    for handler in ["builtin-paths", "builtin-commands", "builtin-policy"] {
        assert!(text.contains(handler), "{text}");
    }
    assert!(text.contains(" µs"), "{text}");
    assert!(
        !text.contains('\x1b'),
        "no colours when stdout is not a terminal"
    );
}

/// `count` handlers running the built-in dangerous-command checker, named `cmd-N`.
fn many_handlers(count: usize) -> String {
    (0..count)
        .map(|n| format!("[[handler]]\nname = \"cmd-{n}\"\nplugin = \"builtin:dangerous-command\"\napplies_to = [\"execute\"]\nimports = [\"log\", \"wasi-cli\", \"paths\"]\n\n"))
        .collect()
}

#[test]
fn five_hundred_handlers_decide_as_one_does() {
    // More handlers than the plugin instance pool has slots: each decides, none times out.
    let sandbox = Sandbox::new();
    let path = sandbox.write("cfg/handlers.toml", &many_handlers(500));
    let (lines, output) = sandbox.check(
        Some(&path),
        &[
            claude_bash("Bash", "cargo test"),
            claude_bash("Bash", "rm -rf ~"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(lines[0]["decision"], "allow", "{}", lines[0]["reasons"]);
    assert_eq!(lines[1]["decision"], "deny");
    for line in &lines {
        let handlers = line["handlers"].as_array().unwrap();
        let ours: Vec<&Value> = handlers
            .iter()
            .filter(|h| h["name"].as_str().unwrap().starts_with("cmd-"))
            .collect();
        assert_eq!(ours.len(), 500);
        assert!(
            ours.iter()
                .all(|h| h["verdict"] == line["decision"] && h.get("error").is_none())
        );
    }
}

#[test]
fn too_many_handlers_and_endless_files_are_refused_by_name() {
    let sandbox = Sandbox::new();
    let error = refused(&sandbox, &many_handlers(4097));
    assert!(error.contains("more than 4096 handlers"), "{error}");
    assert!(error.contains("cfg/handlers.toml"), "{error}");

    // A handlers.toml that is a link to an endless file is not read into memory.
    let link = sandbox.root.join("endless.toml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let (lines, output) = sandbox.check(Some(&link), &[claude_bash("Bash", "ls")]);
    assert!(!output.status.success() && lines.is_empty());
    assert!(
        stderr(&output).contains("endless.toml: larger than 4 MiB"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn check_piped_into_a_reader_that_stops_early_ends_quietly() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let sandbox = Sandbox::new();
    let requests: String = (0..1000)
        .map(|_| format!("{}\n", claude_bash("Bash", "ls")))
        .collect();
    let mut child = sandbox
        .command(&["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    // `acp-gate check - | head -1`.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("ALLOW"), "{first}");
    let output = child.wait_with_output().unwrap();
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
}
