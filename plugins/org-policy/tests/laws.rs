//! The laws of the org policy, as properties over the team policy in `examples/policies/`:
//! wrapping or extending a command never makes the verdict more permissive, and nothing that
//! fails to parse is allowed (nor makes the plugin panic).

use org_policy::commands::{Commands, from_shell};
use org_policy::policy::decision_of;
use org_policy::testing::request;
use org_policy::{Config, evaluate};
use proptest::prelude::*;

fn team_config() -> Config {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/policies/team-policy.toml"
    );
    let file: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let config = &file["handler"].as_array().unwrap()[0]["config"];
    serde_json::from_value(serde_json::to_value(config).unwrap()).unwrap()
}

/// How restrictive a verdict is: allow < abstain < ask < deny.
fn strictness(config: &Config, shell: &str) -> u8 {
    let verdict = evaluate(&request(shell), config).expect("the team policy is valid");
    match decision_of(&verdict).map(|d| d.as_str()) {
        Some("allow") => 0,
        None => 1,
        Some("ask") => 2,
        _ => 3,
    }
}

/// Simple commands the team policy allows, asks about, denies or has no rule for.
const SIMPLE: &[&str] = &[
    "cargo test",
    "npm test",
    "npm run build",
    "git status",
    "echo ok",
    "ls -la src",
    "make",
    "./deploy.sh",
    "rm -rf build",
    "npm install left-pad",
    "pip install requests",
    "curl -fsSL https://x.example",
    "wget https://x.example",
    "git push origin main",
    "git push -f",
    "git -C . push origin master",
    "cargo test > out.txt",
    "echo 'unterminated",
];

fn compound() -> impl Strategy<Value = String> {
    let part = prop::sample::select(SIMPLE).prop_map(str::to_owned);
    let op = prop::sample::select(&["&&", "||", ";", "|", "&", "\n"][..]);
    (part.clone(), prop::collection::vec((op, part), 0..3)).prop_map(|(first, rest)| {
        rest.into_iter()
            .fold(first, |acc, (op, part)| format!("{acc} {op} {part}"))
    })
}

fn wrap(kind: usize, command: &str) -> String {
    let quoted = format!("'{}'", command.replace('\'', r"'\''"));
    match kind {
        0 => format!("( {command} )"),
        1 => format!("{{ {command}\n}}"),
        2 => format!("bash -c {quoted}"),
        3 => format!("sh -lc {quoted}"),
        4 => format!("echo ok && {command}"),
        5 => format!("{command}; ./deploy.sh"),
        6 => format!("true | {command}"),
        7 => format!("echo $( {command} )"),
        _ => format!("if true; then {command}\nfi"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn wrapping_never_loosens(command in compound(), kind in 0usize..9) {
        let config = team_config();
        let wrapped = wrap(kind, &command);
        prop_assert!(
            strictness(&config, &wrapped) >= strictness(&config, &command).min(2),
            "{:?} is looser than {:?}", wrapped, command
        );
    }

    #[test]
    fn arbitrary_text_never_panics_and_unparseable_is_never_allowed(
        text in r#"[a-z \-'"$(){}|;&<>`\\\n]{0,40}"#,
        prefix in prop::sample::select(&["", "npm test ", "cargo test && ", "git push origin main "][..]),
    ) {
        let config = team_config();
        let shell = format!("{prefix}{text}");
        let verdict = evaluate(&request(&shell), &config).unwrap();
        if matches!(from_shell(&shell, "/h", ""), Commands::Unparseable { .. }) {
            prop_assert!(decision_of(&verdict).map(|d| d.as_str()) != Some("allow"), "{:?}", shell);
        }
    }
}
