use acp_gate_plugin::testing::request;
use acp_gate_plugin::{OptionKind, PermissionOption, Request, ToolKind, Verdict};
use serde_json::json;

use super::{Config, evaluate};

fn switch(raw: serde_json::Value) -> Request {
    let mut request = request("");
    request.command = None;
    request.kind = ToolKind::SwitchMode;
    request.raw_json = raw.to_string();
    request
}

fn to_mode(mode: &str) -> Verdict {
    let raw = json!({"method": "session/set_mode", "sessionId": "s", "modeId": mode});
    evaluate(&switch(raw), &Config::default()).unwrap()
}

#[test]
fn modes_in_which_the_agent_keeps_asking_are_let_through() {
    for mode in ["default", "plan", "read-only", "readOnly"] {
        assert!(matches!(to_mode(mode), Verdict::Allow), "{mode}");
    }
}

#[test]
fn the_agents_modes_that_stop_asking_are_asked_about_with_what_they_stop() {
    for (mode, says) in [
        ("bypassPermissions", "anything"),
        ("dontAsk", "anything"),
        ("acceptEdits", "file edits"),
        ("auto", "judges safe itself"),
        ("yolo", "anything"),
        ("autoEdit", "file edits"),
        ("auto_edit", "file edits"),
        ("full-access", "outside its sandbox"),
        ("FULL_ACCESS", "outside its sandbox"),
    ] {
        match to_mode(mode) {
            Verdict::Ask(reason) => {
                assert!(reason.contains(says), "{mode}: {reason}");
                assert!(reason.contains("acp-gate would see none"), "{reason}");
            }
            other => panic!("{mode}: {other:?}"),
        }
    }
}

#[test]
fn an_unknown_mode_is_asked_about_never_allowed() {
    for mode in [
        "dangerously-skip-permissions",
        "approve-all",
        "never-ask",
        "no_sandbox",
        "YOLO-mode",
    ] {
        match to_mode(mode) {
            Verdict::Ask(reason) => assert!(reason.contains("looks like"), "{mode}: {reason}"),
            other => panic!("{mode}: {other:?}"),
        }
    }
    match to_mode("architect") {
        Verdict::Ask(reason) => assert!(reason.contains("not one acp-gate knows"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_handler_names_the_modes_of_other_agents() {
    let config = Config {
        keeps_asking: vec!["architect".into(), "yolo".into()],
        stops_asking: vec!["autopilot".into(), "yolo".into()],
    };
    let verdict = |mode: &str| {
        let raw = json!({"method": "session/set_mode", "modeId": mode});
        evaluate(&switch(raw), &config).unwrap()
    };
    assert!(matches!(verdict("architect"), Verdict::Allow));
    assert!(matches!(verdict("autopilot"), Verdict::Ask(_)));
    assert!(matches!(verdict("yolo"), Verdict::Ask(_)));
}

#[test]
fn settings_of_the_model_are_let_through_and_others_asked_about() {
    let setting = |id: &str, value: serde_json::Value| {
        let raw = json!({"method": "session/set_config_option", "configId": id, "value": value});
        evaluate(&switch(raw), &Config::default()).unwrap()
    };
    assert!(matches!(setting("model", json!("opus")), Verdict::Allow));
    assert!(matches!(
        setting("thought_level", json!("high")),
        Verdict::Allow
    ));
    assert!(matches!(setting("model", json!("yolo")), Verdict::Ask(_)));
    assert!(matches!(setting("sandbox", json!("none")), Verdict::Ask(_)));
    assert!(matches!(
        setting("auto_approve", json!(true)),
        Verdict::Ask(_)
    ));
}

#[test]
fn a_permission_request_to_leave_plan_mode_is_judged_by_the_option_an_allow_selects() {
    // Claude Code's `ExitPlanMode`: the option ids are the modes.
    let option = |id: &str, kind| PermissionOption {
        id: id.into(),
        name: id.into(),
        kind,
    };
    let mut request = switch(json!({"toolCall": {"title": "Ready to code?"}}));
    request.options = vec![
        option("acceptEdits", OptionKind::AllowAlways),
        option("default", OptionKind::AllowOnce),
        option("plan", OptionKind::RejectOnce),
    ];
    assert!(matches!(
        evaluate(&request, &Config::default()).unwrap(),
        Verdict::Allow
    ));
    request.options[1].id = "bypassPermissions".into();
    assert!(matches!(
        evaluate(&request, &Config::default()).unwrap(),
        Verdict::Ask(_)
    ));
    // An option id that names no mode says nothing.
    request.options[1].id = "proceed_once".into();
    assert!(matches!(
        evaluate(&request, &Config::default()).unwrap(),
        Verdict::Abstain
    ));
    request.options.remove(1);
    assert!(matches!(
        evaluate(&request, &Config::default()).unwrap(),
        Verdict::Abstain
    ));
}

#[test]
fn requests_that_are_not_switches_are_left_to_the_others() {
    let mut request = request("rm -rf ~");
    request.raw_json = json!({"modeId": "bypassPermissions"}).to_string();
    assert!(matches!(
        evaluate(&request, &Config::default()).unwrap(),
        Verdict::Abstain
    ));
}
