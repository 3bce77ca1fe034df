//! Rules for privilege escalation (`sudo` and its relatives) and persistence (schedulers,
//! service managers' user units, login items): clear attacks for an agent, denied.

use crate::judgement::Findings;
use acp_gate_shell::programs::is_escalator;

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings) {
    let inv = f.inv;
    let name = inv.name.as_str();
    if is_escalator(name) {
        f.deny(
            "privilege-escalation",
            format!("runs with raised privileges (`{name}`)"),
        );
        return;
    }
    let args = inv.own_args();
    let has = |words: &[&str]| args.iter().any(|a| words.iter().any(|w| a.is(w)));
    let persists = match name {
        // `crontab -l` only lists.
        "crontab" => !(args.len() == 1 && args[0].is("-l")),
        "at" | "batch" | "atrun" => !has(&["-l", "-V"]) || args.len() > 1,
        "systemctl" => {
            has(&[
                "enable",
                "link",
                "preset",
                "set-property",
                "edit",
                "add-wants",
            ]) || (has(&["--user"]) && has(&["start", "restart", "daemon-reload"]))
        }
        "launchctl" => has(&["load", "bootstrap", "submit", "enable", "kickstart"]),
        "loginctl" => has(&["enable-linger"]),
        "systemd-run" => true,
        _ => false,
    };
    if persists {
        f.deny(
            "persistence",
            "schedules or installs code to run later (a scheduler, a service unit, a login item)",
        );
    }
}
