//! `acp-gate doctor` on a sandboxed machine: agents "installed" as programs on a `PATH` of the
//! sandbox's own, their hooks put in by `hook install` or by hand; a hook installed and
//! trusted gates, one Codex has not trusted, one that runs another or a missing acp-gate, or
//! one the agent's settings switch off does not (exit 1); a workspace's switch is a warning;
//! a handler that does not load fails the chain; the review service is reached with the gate's
//! token; `--format json` is one object with all of it. Gates report to the service's fleet
//! view, which flags another policy, an ungated agent and silence.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{BIN, Sandbox, pipe, stderr};

/// `command` confined to the sandbox: its `bin/` as the whole `PATH` (an agent is installed
/// when its program is there), the agents' settings where `hook install` puts them by default,
/// Gemini CLI's system settings in the sandbox, no service token from outside.
fn confined(sandbox: &Sandbox, mut command: Command) -> Command {
    for var in [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "COPILOT_HOME",
        "ACP_GATE_SERVICE_TOKEN",
    ] {
        command.env_remove(var);
    }
    command
        .env("PATH", sandbox.root.join("bin"))
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", gemini_system(sandbox));
    command
}

fn gemini_system(sandbox: &Sandbox) -> PathBuf {
    sandbox.root.join("etc/gemini-cli/settings.json")
}

/// `acp-gate doctor ARGS` in the sandbox.
fn doctor(sandbox: &Sandbox, args: &[&str]) -> Output {
    let command = sandbox.command(&[&["doctor"][..], args].concat());
    pipe(&mut confined(sandbox, command), "")
}

/// `acp-gate doctor --format json ARGS`: its one line, read, and its exit code.
fn doctor_json(sandbox: &Sandbox, args: &[&str]) -> (Value, Option<i32>) {
    let output = doctor(sandbox, &[&["--format", "json"][..], args].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}{}", stderr(&output));
    (serde_json::from_str(&stdout).unwrap(), output.status.code())
}

/// `acp-gate hook ARGS` in the sandbox, as doctor sees it; asserts that it succeeded.
fn hook(sandbox: &Sandbox, args: &[&str]) {
    let command = sandbox.command(&[&["hook"][..], args].concat());
    let output = pipe(&mut confined(sandbox, command), "");
    assert!(output.status.success(), "{}", stderr(&output));
}

/// An executable file at `relative` in the sandbox (an agent's program, or an acp-gate that
/// is not this one).
fn program(sandbox: &Sandbox, relative: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = sandbox.write(relative, "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The agent `name`'s part of a report.
fn agent<'a>(report: &'a Value, name: &str) -> &'a Value {
    (report["agents"].as_array().unwrap().iter())
        .find(|agent| agent["agent"] == name)
        .unwrap_or_else(|| panic!("no agent {name} in {report}"))
}

/// The line of `text` that starts with `start`.
fn line<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|line| line.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting `{start}` in\n{text}"))
}

fn this() -> PathBuf {
    std::fs::canonicalize(BIN).unwrap()
}

#[test]
fn an_agent_with_its_hook_installed_and_trusted_is_gated() {
    let sandbox = Sandbox::new();
    program(&sandbox, "bin/claude");
    program(&sandbox, "bin/codex");
    hook(&sandbox, &["install", "claude"]);
    hook(&sandbox, &["install", "codex"]);
    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    for title in ["Claude Code", "Codex"] {
        let said = line(&text, title);
        assert!(
            said.contains(" gated ") && said.contains("on PATH"),
            "{said}"
        );
    }
    assert!(
        line(&text, "Gemini CLI").ends_with("not installed"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  user     {}: acp-gate's hook, running this acp-gate\n",
            sandbox.home.join(".codex/config.toml").display()
        )),
        "{text}"
    );
    assert!(
        text.contains("Every agent on this machine is gated, and the chain loads."),
        "{text}"
    );

    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(report["ok"], true);
    assert_eq!(report["ungated"], json!([]));
    for name in ["claude", "codex"] {
        let agent = agent(&report, name);
        assert_eq!(agent["gated"], true, "{agent}");
        let user = &agent["hooks"][0];
        assert_eq!(user["scope"], "user");
        assert_eq!(user["installed"], true);
        assert_eq!(user["runs"], json!(this()));
        assert_eq!(user["problems"], json!([]), "{user}");
    }
    assert_eq!(agent(&report, "codex")["hooks"][0]["trusted"], true);
    assert_eq!(agent(&report, "claude")["hooks"][0]["trusted"], Value::Null);
    assert_eq!(agent(&report, "gemini")["found"], Value::Null);
}

#[test]
fn a_codex_hook_installed_by_hand_without_trust_is_not_gated_until_trusted() {
    let sandbox = Sandbox::new();
    program(&sandbox, "bin/codex");
    let config = sandbox.home.join(".codex/config.toml");
    let by_hand = format!(
        "model = \"gpt-5.5\"\n\n[[hooks.PreToolUse]]\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{} hook codex\"\ntimeout = 30\n",
        this().display()
    );
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, &by_hand).unwrap();

    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(line(&text, "Codex").contains("NOT GATED"), "{text}");
    assert!(text.contains("problem: Codex has not trusted it"), "{text}");
    assert!(text.contains("Not gated: Codex."), "{text}");
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(report["ok"], false);
    assert_eq!(report["ungated"], json!(["codex"]));
    let user = &agent(&report, "codex")["hooks"][0];
    assert_eq!(user["installed"], true, "{user}");
    assert_eq!(user["trusted"], false, "{user}");
    assert_eq!(user["gates"], false, "{user}");
    assert!(
        user["problems"][0].as_str().unwrap().contains("/hooks"),
        "{user}"
    );

    // `hook install` trusts it as Codex's `/hooks` screen would.
    hook(&sandbox, &["install", "codex"]);
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(agent(&report, "codex")["hooks"][0]["trusted"], true);

    // Changed by hand after it was trusted: Codex skips it again.
    let trusted = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, trusted.replacen("timeout = 30", "timeout = 45", 1)).unwrap();
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(agent(&report, "codex")["hooks"][0]["trusted"], false);
}

#[test]
fn a_hook_that_runs_another_or_a_missing_acp_gate_is_not_gated() {
    let sandbox = Sandbox::new();
    program(&sandbox, "bin/claude");
    program(&sandbox, "bin/gemini");
    let other = program(&sandbox, "old/acp-gate");
    hook(
        &sandbox,
        &[
            "install",
            "claude",
            "--command",
            "/nowhere/acp-gate hook claude",
        ],
    );
    let command = format!("{} hook gemini", other.display());
    hook(&sandbox, &["install", "gemini", "--command", &command]);

    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(
        text.contains("problem: it runs `/nowhere/acp-gate`, which is not there"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "problem: it runs another acp-gate ({}), not this one ({})",
            other.display(),
            this().display()
        )),
        "{text}"
    );
    assert!(
        text.contains("Not gated: Claude Code, Gemini CLI."),
        "{text}"
    );

    let (report, _) = doctor_json(&sandbox, &[]);
    assert_eq!(report["ungated"], json!(["claude", "gemini"]));
    let claude = &agent(&report, "claude")["hooks"][0];
    assert_eq!(claude["installed"], true);
    assert_eq!(claude["command"], "/nowhere/acp-gate hook claude");
    assert_eq!(agent(&report, "gemini")["hooks"][0]["runs"], json!(other));

    // Pointed at this acp-gate again, both gate.
    hook(&sandbox, &["install", "claude"]);
    hook(&sandbox, &["install", "gemini"]);
    assert_eq!(doctor(&sandbox, &[]).status.code(), Some(0));
}

#[test]
fn the_agents_own_settings_switch_it_off_and_the_workspaces_are_warned_of() {
    let sandbox = Sandbox::new();
    program(&sandbox, "bin/claude");
    program(&sandbox, "bin/gemini");
    hook(&sandbox, &["install", "claude"]);
    hook(&sandbox, &["install", "gemini"]);
    // A repository can switch hooks off: still gated, with a warning.
    sandbox.write(
        "workspace/.claude/settings.local.json",
        "{\"disableAllHooks\": true}\n",
    );
    sandbox.write(
        "workspace/.gemini/settings.json",
        "{\"hooksConfig\": {\"disabled\": [\"acp-gate\"]}}\n",
    );
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(0), "{report}");
    let warnings = |name: &str| agent(&report, name)["hooks"][0]["warnings"].to_string();
    assert!(warnings("claude").contains("disableAllHooks"), "{report}");
    assert!(
        warnings("gemini").contains("hooksConfig.disabled"),
        "{report}"
    );
    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "warning: {} sets `disableAllHooks`",
            sandbox
                .workspace
                .join(".claude/settings.local.json")
                .display()
        )),
        "{text}"
    );

    // The agents' own settings do switch it off.
    let settings = sandbox.home.join(".claude/settings.json");
    let mut claude: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    claude["disableAllHooks"] = true.into();
    std::fs::write(&settings, claude.to_string()).unwrap();
    sandbox.write(
        "etc/gemini-cli/settings.json",
        "{\"hooksConfig\": {\"disabled\": [\"acp-gate\"]}}\n",
    );
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["ungated"], json!(["claude", "gemini"]));
    let problems = |name: &str| agent(&report, name)["hooks"][0]["problems"].to_string();
    assert!(problems("claude").contains("disableAllHooks"), "{report}");
    assert!(
        problems("gemini").contains("the system settings list `acp-gate`"),
        "{report}"
    );
}

#[test]
fn a_user_handler_whose_plugin_does_not_load_fails_the_chain() {
    let sandbox = Sandbox::new();
    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(
        text.contains("No agent was found on this machine; the chain loads."),
        "{text}"
    );

    sandbox.write("home/.config/acp-gate/broken.wasm", "not a component");
    let user = sandbox.write(
        "home/.config/acp-gate/handlers.toml",
        "[[handler]]\nname = \"mine\"\nplugin = \"broken.wasm\"\n",
    );
    let output = doctor(&sandbox, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(line(&text, "chain").contains("DOES NOT LOAD"), "{text}");
    assert!(
        text.contains(&format!("  user     {}\n    mine", user.display())),
        "{text}"
    );
    assert!(text.contains("FAILED to load: plugin"), "{text}");
    assert!(text.contains("The chain does not load."), "{text}");
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(report["ok"], false);
    assert_eq!(report["ungated"], json!([]));
    assert_eq!(report["chain"]["loads"], false);
    let mine = (report["chain"]["handlers"].as_array().unwrap().iter())
        .find(|handler| handler["name"] == "mine")
        .unwrap();
    assert_eq!(mine["ok"], false, "{mine}");
    assert_eq!(mine["pinned"], false, "{mine}");
    assert!(
        mine["error"].as_str().unwrap().contains("component"),
        "{mine}"
    );

    // A plugin file that is not there: the file itself is refused.
    std::fs::write(
        &user,
        "[[handler]]\nname = \"mine\"\nplugin = \"gone.wasm\"\n",
    )
    .unwrap();
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(report["chain"]["loads"], false);
    assert!(
        report["chain"]["error"]
            .as_str()
            .unwrap()
            .contains("gone.wasm"),
        "{report}"
    );
    assert_eq!(
        report["service"]["error"],
        "not checked: the policy did not load"
    );
}

#[test]
fn the_review_service_is_reached_with_the_gates_token() {
    let review = crate::serve::Review::sqlite(&[]);
    let sandbox = &review.sandbox;
    let key = review.key.display().to_string();
    let reached = |url: &str, token: &str| {
        let args = [
            "doctor",
            "--format",
            "json",
            "--escalate-to",
            url,
            "--service-key",
            &key,
        ];
        let mut command = confined(sandbox, sandbox.command(&args));
        command.env("ACP_GATE_SERVICE_TOKEN", token);
        let output = pipe(&mut command, "");
        // The service is no part of whether the agents are gated.
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report["service"].clone()
    };
    let url = &review.service.url;
    let service = reached(url, &review.gate);
    assert_eq!(
        service,
        json!({"configured": true, "url": url, "key": key, "reached": true,
               "fleet": {"published": null, "flags": []}, "error": null})
    );
    let service = reached(url, &review.reviewer);
    assert_eq!(service["reached"], false);
    assert!(
        service["error"].as_str().unwrap().contains("403"),
        "{service}"
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let service = reached(&nowhere, &review.gate);
    assert!(
        service["error"]
            .as_str()
            .unwrap()
            .contains("cannot reach it"),
        "{service}"
    );
}

#[test]
fn doctor_json_is_one_object_with_every_part() {
    let sandbox = Sandbox::new();
    program(&sandbox, "bin/claude");
    hook(&sandbox, &["install", "claude"]);
    let (report, code) = doctor_json(&sandbox, &[]);
    assert_eq!(code, Some(0), "{report}");
    let keys = |value: &Value| {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(&report),
        [
            "acp_gate",
            "agents",
            "chain",
            "ok",
            "resident_servers",
            "service",
            "ungated",
            "workspace"
        ]
    );
    assert_eq!(report["acp_gate"]["path"], json!(this()));
    assert_eq!(report["workspace"], json!(sandbox.workspace));
    let names: Vec<&str> = (report["agents"].as_array().unwrap().iter())
        .map(|agent| agent["agent"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["claude", "codex", "gemini", "copilot"]);
    let claude = agent(&report, "claude");
    assert_eq!(keys(claude), ["agent", "found", "gated", "hooks", "title"]);
    let scopes: Vec<&Value> = (claude["hooks"].as_array().unwrap().iter())
        .map(|hook| &hook["scope"])
        .collect();
    assert_eq!(scopes, ["user", "managed"]);
    assert_eq!(
        keys(&claude["hooks"][0]),
        [
            "command",
            "file",
            "gates",
            "installed",
            "problems",
            "runs",
            "scope",
            "trusted",
            "warnings"
        ]
    );
    // Copilot has no managed settings.
    assert_eq!(
        agent(&report, "copilot")["hooks"].as_array().unwrap().len(),
        1
    );
    // The chain as `acp-gate chain --format json` describes it, and whether it loads.
    let chain = &report["chain"];
    assert_eq!(chain["loads"], true);
    for key in ["layers", "handlers", "default", "tests", "notices"] {
        assert!(chain.get(key).is_some(), "no {key} in {chain}");
    }
    assert_eq!(chain["handlers"][0]["pinned"], Value::Null);
    assert_eq!(report["service"]["configured"], false);
    // The sandbox runs every hook call in its own process.
    assert_eq!(report["resident_servers"]["enabled"], false);
    assert!(report["resident_servers"]["running"].is_u64());
}

/// The gates of the org (two `doctor`s and a running `acp-gate run`) report to the review
/// service's fleet view: it lists each with its policy, agents and last report, and flags the
/// gate on a policy other than the org's published one, the one with an agent ungated, the
/// one with no org file, and one gone silent; a gate is told what is wrong with it.
fn the_fleet_lists_every_gate_and_flags_another_policy_an_ungated_agent_and_silence(
    database: Option<String>,
) {
    use crate::serve::{Review, call, finished, gated_run, tamper, token};
    let org = tempfile::tempdir().unwrap();
    let published = org.path().join("org.toml");
    std::fs::write(&published, "[settings]\ndefault = \"ask\"\n").unwrap();
    let changed = org.path().join("changed.toml");
    std::fs::write(
        &changed,
        "[settings]\ndefault = \"ask\"\n# changed on one laptop\n",
    )
    .unwrap();
    let extra = ["--fleet-policy", published.to_str().unwrap()];
    let review = match database {
        None => Review::sqlite(&extra),
        Some(database) => Review::on(Sandbox::new(), database, &extra),
    };
    let sandbox = &review.sandbox;
    let url = &review.service.url;
    let key = review.key.display().to_string();
    let doctor_with = |token: &str, org: &std::path::Path| {
        let args = [
            "doctor",
            "--format",
            "json",
            "--escalate-to",
            url,
            "--service-key",
            &key,
            "--org-handlers",
            org.to_str().unwrap(),
        ];
        let mut command = confined(sandbox, sandbox.command(&args));
        command.env("ACP_GATE_SERVICE_TOKEN", token);
        let output = pipe(&mut command, "");
        let report: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("{}", stderr(&output)));
        (report, output.status.code())
    };
    // Alice's laptop runs the org's policy, and no agent on it is ungated.
    let (alice, code) = doctor_with(&review.gate, &published);
    assert_eq!(code, Some(0), "{alice}");
    let digest = alice["service"]["fleet"]["published"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(digest.starts_with("sha256:"), "{alice}");
    assert_eq!(alice["service"]["fleet"]["flags"], json!([]), "{alice}");
    // A run of erin's reports as it ships (it has no org file).
    let erin = token(sandbox, &review.database, "gate", "erin@ci", None);
    let (code, _, output) = finished(gated_run(sandbox, url, &erin, &review.key, &[], "hello"));
    assert_eq!(code, Some(0), "{output}");
    // Dave's desktop runs a changed org file, and has Codex without acp-gate's hook.
    program(sandbox, "bin/codex");
    let dave = token(
        sandbox,
        &review.database,
        "gate",
        "dave@desktop",
        Some("infra"),
    );
    let (told, code) = doctor_with(&dave, &changed);
    assert_eq!(code, Some(1), "Codex is not gated: {told}");
    let flags = told["service"]["fleet"]["flags"].to_string();
    assert!(flags.contains("not the org's published"), "{flags}");
    assert!(flags.contains("Codex is not gated"), "{flags}");

    let fleet = |token: &str| call("GET", &format!("{url}/v1/gates"), token, None);
    let (status, listed) = fleet(&review.reviewer);
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["published"], digest.as_str());
    let gates = listed["gates"].as_array().unwrap();
    let by = |name: &str| {
        (gates.iter())
            .find(|g| g["token"] == name)
            .unwrap_or_else(|| panic!("no gate of {name} in {listed}"))
            .clone()
    };
    let kinds = |gate: &Value| -> Vec<String> {
        (gate["flags"].as_array().unwrap().iter())
            .map(|f| f["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    let alice = by("alice@laptop");
    assert_eq!(kinds(&alice), Vec::<String>::new(), "{alice}");
    assert_eq!(alice["report"]["via"], "doctor");
    assert_eq!(alice["report"]["policy"], digest.as_str());
    let dave = by("dave@desktop");
    assert_eq!(kinds(&dave), ["policy", "ungated"], "{dave}");
    assert_eq!(dave["team"], "infra");
    let erin = by("erin@ci");
    assert_eq!(erin["report"]["via"], "run", "{erin}");
    assert_eq!(erin["report"]["policy"], Value::Null, "{erin}");
    assert!(kinds(&erin).contains(&"policy".to_owned()), "{erin}");
    assert_eq!(listed["flagged"], 2, "flagged first: {listed}");
    assert_eq!(gates.last().unwrap()["token"], "alice@laptop", "{listed}");

    // Alice's laptop goes quiet for two days.
    tamper(
        &review.database,
        "UPDATE gates SET last_ms = last_ms - 172800000 WHERE token_id = (SELECT id FROM tokens WHERE name = $1)",
        "alice@laptop",
    );
    let (_, listed) = fleet(&review.reviewer);
    let alice = (listed["gates"].as_array().unwrap().iter())
        .find(|g| g["token"] == "alice@laptop")
        .unwrap()
        .clone();
    assert_eq!(
        alice["flags"][0]["text"], "silent for 2 days (allowed: 24 h)",
        "{alice}"
    );
    assert_eq!(listed["silent"], 1);

    // A token reports at most 256 gates: a gate cannot fill the database with made-up
    // machines (its own gates still report).
    let url_report = format!("{url}/v1/gates/report");
    let mallory = token(sandbox, &review.database, "gate", "mallory@ci", None);
    let mut made_up = alice["report"].clone();
    for n in 0..256 {
        made_up["machine"] = json!(format!("runner-{n}"));
        let (status, said) = call("POST", &url_report, &mallory, Some(made_up.clone()));
        assert_eq!(status, 200, "{said}");
    }
    made_up["machine"] = json!("runner-256");
    let (status, said) = call("POST", &url_report, &mallory, Some(made_up.clone()));
    assert_eq!(status, 409, "{said}");
    made_up["machine"] = json!("runner-7");
    assert_eq!(call("POST", &url_report, &mallory, Some(made_up)).0, 200);

    // Only reviewers read the fleet; a report is checked field by field.
    assert_eq!(fleet(&review.gate).0, 403);
    let mut bad = alice["report"].clone();
    bad["developer"] = json!("");
    let (status, said) = call(
        "POST",
        &format!("{url}/v1/gates/report"),
        &review.gate,
        Some(bad),
    );
    assert_eq!(status, 400);
    assert!(said.to_string().contains("developer"), "{said}");
}

#[test]
fn the_fleet_lists_every_gate_and_flags_another_policy_an_ungated_agent_and_silence_on_sqlite() {
    the_fleet_lists_every_gate_and_flags_another_policy_an_ungated_agent_and_silence(None);
}

#[test]
fn the_fleet_lists_every_gate_and_flags_another_policy_an_ungated_agent_and_silence_on_postgres() {
    the_fleet_lists_every_gate_and_flags_another_policy_an_ungated_agent_and_silence(Some(
        crate::serve::postgres_database("fleet"),
    ));
}
