//! Operands of programs the positive model has no table for that name credential files: reads
//! of secrets (`cat ~/.ssh/id_rsa`, `cp .env x`).

use super::operands;
use crate::context::Context;
use crate::judgement::Findings;
use crate::targets::read_target;
use acp_gate_shell::{Arg, Runs};

/// Operands that name credential files are reads of secrets (`cat ~/.ssh/id_rsa`, `cp .env x`).
pub(crate) fn sensitive_operands(f: &mut Findings, cx: &Context, tabled: bool) {
    // A wrapper's or a shell's command is judged as a command of its own; a program with a
    // table has its operands judged with the access they have (`grep '.env' src` searches
    // for a string).
    if f.inv.runs != Runs::Nothing || tabled || matches!(f.inv.name.as_str(), "sed" | "gsed") {
        return;
    }
    if matches!(
        f.inv.name.as_str(),
        "echo"
            | "printf"
            | "ls"
            | "cd"
            | "test"
            | "["
            | "which"
            | "basename"
            | "dirname"
            | "mkdir"
            | "touch"
    ) {
        return;
    }
    let inv = f.inv;
    for a in operands(inv.args()) {
        let text = a.text.split_once('=').map_or(a.text.as_str(), |(_, v)| v);
        if text.contains('/')
            || text.starts_with('.')
            || text.starts_with('~')
            || text.contains('.')
        {
            read_target(
                f,
                cx,
                &Arg {
                    text: text.into(),
                    ..a.clone()
                },
            );
        }
    }
}
