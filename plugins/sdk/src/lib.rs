//! Write acp-gate permission plugins in Rust: implement [`Plugin`] over the normalised
//! [`Request`], export it with [`export_plugin!`], build with
//! `cargo build --target wasm32-wasip2 --release`.
//!
//! ```no_run
//! use acp_gate_plugin::{Plugin, Request, ToolKind, Verdict};
//!
//! #[derive(serde::Deserialize, Default)]
//! #[serde(default, deny_unknown_fields)]
//! struct Config { forbidden_words: Vec<String> }
//!
//! struct NoForbiddenWords;
//!
//! impl Plugin for NoForbiddenWords {
//!     type Config = Config;
//!     fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
//!         let Some(shell) = request.command.as_ref().and_then(|c| c.shell.as_deref()) else {
//!             return Ok(Verdict::Abstain);
//!         };
//!         Ok(match config.forbidden_words.iter().find(|w| shell.contains(w.as_str())) {
//!             Some(word) => Verdict::Deny(format!("the command mentions `{word}`")),
//!             None => Verdict::Abstain,
//!         })
//!     }
//! }
//!
//! acp_gate_plugin::export_plugin!(NoForbiddenWords);
//! ```
//!
//! The config arrives as the handler's `[handler.config]` table, deserialised into the plugin's
//! own type; a table that does not deserialise is an error, which the host turns into the
//! handler's `on_error` verdict (never `allow`). So is a panic.

#[cfg(feature = "bindings")]
pub mod arena;
#[cfg(feature = "bindings")]
mod guest;
#[cfg(feature = "bindings")]
pub use guest::*;

pub mod path_rules;
pub mod sensitive;
pub mod tools;
