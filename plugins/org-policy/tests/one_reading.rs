//! One reading of the shell: for any command line, `org-policy` and `dangerous-command` judge
//! the same simple commands, word for word and in the same order, and what one cannot read
//! the other cannot allow either.

use acp_gate_plugin::CommandLine;
use acp_gate_shell::NoteKind;
use org_policy::commands::{Commands, of_request};
use proptest::prelude::*;

const HOME: &str = "/home/u";
const CWD: &str = "/work/p";

/// Both plugins' views of one command line.
fn compare(command: CommandLine) -> Result<(), TestCaseError> {
    let mut request = dangerous_command::testing::request("");
    request.home_dir = HOME.into();
    request.cwd = CWD.into();
    request.command = Some(command.clone());
    let theirs = dangerous_command::reading(&request);
    let ours = of_request(&command, HOME, CWD);
    match (ours, theirs) {
        (Commands::None, None) => {}
        (Commands::Parsed(ours), Some(reading)) => {
            let ours: Vec<Vec<String>> = ours
                .iter()
                .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
                .collect();
            let theirs: Vec<Vec<String>> = reading
                .commands
                .iter()
                .map(|c| c.argv.iter().map(|a| a.text.clone()).collect())
                .collect();
            prop_assert_eq!(ours, theirs, "{:?}", command);
        }
        (Commands::Unparseable { .. }, Some(reading)) => {
            prop_assert!(
                reading.notes.iter().any(|n| matches!(
                    n.kind,
                    NoteKind::Unparseable | NoteKind::TooComplex | NoteKind::ArithmeticCode
                )),
                "{command:?}: unparseable for org-policy only"
            );
        }
        (ours, theirs) => prop_assert!(false, "{command:?}: {ours:?} vs {theirs:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn both_plugins_see_the_same_commands(
        text in r#"([a-z]{1,4}|sudo|env X=1|timeout 5|bash -c|xargs|find . -exec|git|\$\(|\)|`|'|"|\\|\$X|~|\*|\{a,b\}|[|&;<>(){}]|\n| |=|-[a-z]|\(\( a\[\$\(id\)\] \)\)){0,14}"#
    ) {
        compare(CommandLine { argv: None, shell: Some(text) })?;
    }

    #[test]
    fn both_plugins_see_the_same_commands_in_an_argv(
        argv in prop::collection::vec(r#"(bash|-c|-lc|sudo|env|X=1|ls|rm -rf /|\$X|;|&&|'|git push)"#, 0..6)
    ) {
        compare(CommandLine { argv: Some(argv), shell: None })?;
    }
}
