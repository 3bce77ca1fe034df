//! The exit codes of every command, named (README.md's table), and the signal that stops a
//! long-running one, as its code. A leaf: it imports nothing of the crate.

/// Everything ran; nothing was escalated.
pub const OK: u8 = 0;
/// An error: bad policy, bad input, a plugin that cannot be loaded, an I/O failure.
pub const ERROR: u8 = 1;
/// Bad command-line usage (clap's own code).
pub const USAGE: u8 = 2;
/// `hook AGENT`: the call is blocked, acp-gate could not decide it (the code Claude Code, Codex
/// and Gemini CLI read as a block, the reason on stderr).
pub const HOOK_BLOCKED: u8 = 2;
/// `run`: at least one ask had nobody to answer it; it was rejected and an escalation record
/// was printed.
pub const ESCALATED: u8 = 3;
/// `run`, `proxy`: the agent died, never answered, or broke the protocol.
pub const AGENT_FAILED: u8 = 4;
/// `run`, `proxy`: at least one decision could not be written to the audit log (that request
/// was refused: a decision that is not recorded is not made).
pub const UNRECORDED: u8 = 5;
/// `audit replay`: under the policy replayed, at least one recorded request would be decided
/// otherwise (so a CI job can hold a policy change back until its changes are looked at).
pub const REPLAY_CHANGED: u8 = 6;
/// SIGHUP (128 + 1): `proxy` stops the agent first.
pub const HANGUP: u8 = 129;
/// SIGINT or Ctrl-C (128 + 2): `run` cancelled a one-shot turn or was interrupted twice.
pub const INTERRUPTED: u8 = 130;
/// SIGTERM (128 + 15): `proxy` stops the agent first.
pub const TERMINATED: u8 = 143;

/// SIGINT, SIGTERM or SIGHUP: the exit code (128 + the signal).
pub async fn terminated() -> u8 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => INTERRUPTED,
        _ = term.recv() => TERMINATED,
        _ = hup.recv() => HANGUP,
    }
}
