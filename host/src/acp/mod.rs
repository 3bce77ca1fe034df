//! acp-gate on the Agent Client Protocol: the [`gate`] that both front ends share, `run`'s
//! front end ([`client`], driven by [`session`]) and `proxy`'s ([`proxy`], relaying lines with
//! [`stream`]; in a conductor's chain, framing its successor's messages with [`conductor`]).
//!
//! A permission request, `fs/*` or `terminal/create` call is read by the [`gate`] (with what
//! the [`tracker`] knows of its tool call; [`calls`] reads the client calls), decided by the
//! chain, recorded, and answered; so is a switch of the session's mode ([`switch`]), asked for
//! by the editor or reported by the agent. In `run`, an ask is settled by a session rule ([`rules`]),
//! the person at the terminal ([`ask`]), or, with nobody to ask, rejected and escalated (to a
//! review service, where a reviewer may decide while it waits: [`escalation`]); acp-gate
//! itself carries out the `fs` ([`fs`]) and `terminal` ([`terminal`]) calls it allowed, and keeps
//! its named session, escalations and grants for an orchestrator ([`orchestrate`]). An adapter
//! that runs some calls without asking gets acp-gate as its own hook for the session
//! ([`own_hooks`]). What either front end shows goes through [`output`].

pub mod ask;
pub mod calls;
pub mod client;
pub mod conductor;
pub mod escalation;
pub mod fs;
pub mod gate;
pub mod orchestrate;
pub mod output;
pub mod own_hooks;
pub mod proxy;
pub mod rules;
pub mod session;
pub mod stream;
pub mod switch;
pub mod terminal;
pub mod tracker;
