//! {{name}}: an acp-gate permission plugin. Asks before any command that mentions one of the
//! words in its config; abstains on everything else.

// `generate_all`: the interfaces come from a dependency package (acp-gate's contract in wit/deps).
wit_bindgen::generate!({ path: "wit", world: "plugin", generate_all });

use acp_gate::plugin::log::{Level, write as log};
use acp_gate::plugin::types::{Request, ToolKind, Verdict};
use exports::acp_gate::plugin::handler::Guest;

/// The handler's `[handler.config]` table.
#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Config {
    words: Vec<String>,
}

struct Plugin;

impl Guest for Plugin {
    fn evaluate(request: Request, config: String) -> Result<Verdict, String> {
        let config: Config =
            serde_json::from_str(&config).map_err(|e| format!("invalid [handler.config]: {e}"))?;
        let Some(command) = request.command.filter(|_| request.kind == ToolKind::Execute) else {
            return Ok(Verdict::Abstain);
        };
        let text = match (command.shell, command.argv) {
            (Some(shell), _) => shell,
            (None, Some(argv)) => argv.join(" "),
            (None, None) => return Ok(Verdict::Abstain),
        };
        match config.words.iter().find(|w| text.contains(w.as_str())) {
            Some(word) => {
                log(Level::Info, &format!("matched `{word}`"));
                Ok(Verdict::Ask(format!("the command mentions `{word}`")))
            }
            None => Ok(Verdict::Abstain),
        }
    }
}

export!(Plugin);
