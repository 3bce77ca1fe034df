//! A config prepared once (as acp-gate does at load, through the SDK's `prepare` glue) decides
//! every request as `evaluate` does on its own: the same verdicts, examples checked again when
//! a request's home or workspace is not the prepared one; a broken config refused at once.

use acp_gate_plugin::testing::{HOME, WORKSPACE, path_request, request};
use acp_gate_plugin::{Interest, Places, Preparation, Prepared, Request, ToolKind, Verdict};
use acp_gate_plugin::{judge_with, prepare_with};
use org_policy::{Config, OrgPolicy, evaluate};

const RULES: &str = r#"{"rules": [
    {"name": "tests", "decision": "allow", "prefix": [["npm", "pnpm"], "test"], "match": ["npm test"]},
    {"name": "fetchers", "decision": "ask", "reason": "network", "prefix": [["curl", "wget"]]},
    {"name": "sources", "decision": "allow", "kinds": ["edit"], "paths": ["src/**"],
     "match": [{"kind": "edit", "path": "src/main.rs"}]},
    {"name": "keys", "decision": "deny", "reason": "keys", "paths": ["~/.ssh/**"],
     "match": [{"kind": "read", "path": "~/.ssh/id_ed25519"}]}
]}"#;

/// A config prepared and kept, for any request.
const READY: Preparation = Preparation {
    ready: true,
    interest: Interest::ANY,
};

fn places(home: &str, workspace: &str) -> Places {
    Places {
        home_dir: home.into(),
        cwd: workspace.into(),
        workspace_roots: vec![workspace.into()],
    }
}

/// The requests the test decides, in `WORKSPACE` with `HOME`.
fn requests() -> Vec<Request> {
    let mut list: Vec<Request> = [
        "npm test",
        "pnpm test && curl -s x",
        "npm test; make",
        "git status",
    ]
    .iter()
    .map(|shell| request(shell))
    .collect();
    list.push(path_request(
        ToolKind::Edit,
        &[&format!("{WORKSPACE}/src/lib.rs")],
    ));
    list.push(path_request(
        ToolKind::Read,
        &[&format!("{HOME}/.ssh/id_rsa")],
    ));
    list
}

/// Verdicts and preparations compare by what they print (WIT types have no `PartialEq`).
fn shown<T: std::fmt::Debug>(outcome: Result<T, String>) -> String {
    format!("{outcome:?}")
}

fn config() -> Config {
    serde_json::from_str(RULES).unwrap()
}

#[test]
fn a_prepared_config_decides_every_request_as_evaluate_does() {
    let ready = Prepared::<OrgPolicy>::new();
    assert_eq!(
        shown(prepare_with::<OrgPolicy>(
            &ready,
            RULES,
            &places(HOME, WORKSPACE)
        )),
        shown(Ok(READY))
    );
    for request in requests() {
        assert_eq!(
            shown(judge_with::<OrgPolicy>(&ready, &request)),
            shown(evaluate(&request, &config())),
            "{}",
            request.title
        );
    }
}

#[test]
fn a_request_in_other_places_has_the_examples_checked_there() {
    let ready = Prepared::<OrgPolicy>::new();
    prepare_with::<OrgPolicy>(&ready, RULES, &places(HOME, WORKSPACE)).unwrap();
    // `src/**` and `~/.ssh/**` follow the request's workspace and home, and so do the examples.
    let mut elsewhere = path_request(ToolKind::Edit, &["/srv/other/src/lib.rs"]);
    elsewhere.workspace_roots = vec!["/srv/other".into()];
    elsewhere.cwd = "/srv/other".into();
    assert_eq!(
        shown(judge_with::<OrgPolicy>(&ready, &elsewhere)),
        shown(Ok(Verdict::Allow))
    );
    // A rule whose example holds only in the prepared workspace: it loads there, and a request
    // from another workspace gets the example's failure, as `evaluate` gives it.
    let pinned = r#"{"rules": [{"name": "here", "decision": "allow", "kinds": ["edit"],
        "paths": ["/work/project/**"], "match": [{"kind": "edit", "path": "src/main.rs"}]}]}"#;
    let ready = Prepared::<OrgPolicy>::new();
    assert_eq!(
        shown(prepare_with::<OrgPolicy>(
            &ready,
            pinned,
            &places(HOME, WORKSPACE)
        )),
        shown(Ok(READY))
    );
    let prepared = judge_with::<OrgPolicy>(&ready, &elsewhere);
    let alone = evaluate(&elsewhere, &serde_json::from_str(pinned).unwrap());
    assert_eq!(shown(prepared.clone()), shown(alone));
    let error = prepared.unwrap_err();
    assert!(
        error.contains("rule `here`") && error.contains("src/main.rs"),
        "{error}"
    );
}

#[test]
fn a_broken_config_is_refused_when_prepared_and_an_unprepared_instance_does_not_judge() {
    let failing = r#"{"rules": [{"name": "tests", "decision": "allow", "prefix": ["npm", "test"], "match": ["npm run build"]}]}"#;
    let at = places(HOME, WORKSPACE);
    let error = prepare_with::<OrgPolicy>(&Prepared::<OrgPolicy>::new(), failing, &at).unwrap_err();
    assert!(
        error.contains("rule `tests`") && error.contains("npm run build"),
        "{error}"
    );
    let not_rules = r#"{"rules": 3}"#;
    assert!(prepare_with::<OrgPolicy>(&Prepared::<OrgPolicy>::new(), not_rules, &at).is_err());
    // No rules: it abstains on everything, and says so (the host then skips it).
    let empty = Prepared::<OrgPolicy>::new();
    let abstains = Preparation {
        ready: false,
        interest: Interest::NONE,
    };
    assert_eq!(
        shown(prepare_with::<OrgPolicy>(&empty, "{}", &at)),
        shown(Ok(abstains))
    );
    let error = judge_with::<OrgPolicy>(&empty, &request("npm test")).unwrap_err();
    assert!(error.contains("not prepared"), "{error}");
}
