//! acp-gate as the agents' own hook (Claude Code, Codex, Gemini CLI, GitHub Copilot CLI): a
//! front end over the gating core, as `run` and `proxy` are.
//!
//! A hook call is read where the ACP shapes are read ([`crate::request::hook`]), judged and
//! recorded by the [`Gate`](crate::acp::gate::Gate) ([`decide`]: the mode the agent says it
//! is in first, as `run` judges a switch of mode), and answered in the agent's own output
//! shape and exit code ([`reply`]). [`once`] is one hook process (`acp-gate hook AGENT`),
//! which [`resident`] hands to a server kept running for the next calls; [`serve`] answers
//! HTTP hooks; [`install`] puts the hook in an agent's settings file (read and written by
//! [`settings`]) and takes it out again; [`status`] says whether each agent's hook gates.

pub mod decide;
pub mod install;
pub mod once;
pub mod reply;
pub mod resident;
pub mod serve;
mod settings;
pub mod status;
