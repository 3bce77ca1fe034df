//! Rules for the network: secrets sent out (`curl -d @~/.ssh/id_rsa`, `scp` of keys) and
//! reverse shells (`nc -e`, `socat exec:`, interpreters opening a socket to a shell).

use super::operands;
use crate::context::Context;
use crate::judgement::Findings;
use crate::targets::is_secret;
use acp_gate_shell::Arg;
use acp_gate_shell::programs::is_interpreter;

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    match inv.name.as_str() {
        "curl" | "wget" | "wget2" | "http" | "https" | "xh" | "xhs" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                // `-d @FILE`, `--data-binary=@FILE`, `-F name=@FILE`, `-T FILE`, `--post-file=F`.
                let (option, glued) = match t.split_once('=') {
                    Some((o, v)) if o.starts_with("--") => (o, Some(v)),
                    _ => (t, None),
                };
                let upload = matches!(
                    option,
                    "-T" | "--upload-file" | "--post-file" | "--body-file"
                );
                let data = matches!(
                    option,
                    "-d" | "--data"
                        | "--data-binary"
                        | "--data-raw"
                        | "--data-ascii"
                        | "--data-urlencode"
                        | "--json"
                        | "-F"
                        | "--form"
                        | "--form-string"
                );
                let value = glued
                    .map(str::to_owned)
                    .or_else(|| {
                        (upload || data)
                            .then(|| args.get(i + 1).map(|v| v.text.clone()))
                            .flatten()
                    })
                    .or_else(|| {
                        ["-d", "-F", "-T"]
                            .iter()
                            .find(|s| t.starts_with(*s) && t.len() > 2)
                            .map(|s| t[s.len()..].to_owned())
                    });
                let Some(value) = value else { continue };
                let file = if upload || t.starts_with("-T") {
                    Some(value.as_str())
                } else {
                    value.split_once('@').map(|(_, file)| file)
                };
                if let Some(file) = file
                    && is_secret(
                        cx,
                        inv,
                        &Arg::literal(file.split(';').next().unwrap_or(file)),
                    )
                {
                    f.deny("exfiltration", "sends a secret file over the network");
                }
            }
        }
        "scp" | "rsync" | "sftp" | "rclone" => {
            let ops: Vec<&Arg> = operands(args).collect();
            let remote = ops.iter().any(|a| a.text.contains(':'));
            if remote && ops.iter().any(|a| is_secret(cx, inv, a)) {
                f.deny("exfiltration", "copies a secret file to another machine");
            }
        }
        "nc" | "ncat" | "netcat" | "nc.openbsd" | "nc.traditional" => {
            let exec = args.iter().any(|a| {
                let t = a.text.as_str();
                matches!(t, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
                    || t.starts_with("--exec=")
                    || t.starts_with("--sh-exec=")
                    || (t.starts_with('-') && !t.starts_with("--") && t.contains(['e', 'c']))
            });
            if exec {
                f.deny(
                    "reverse-shell",
                    "connects a program to the network (`nc -e`): a remote shell",
                );
            }
        }
        "socat" => {
            let exec = args.iter().any(|a| {
                let t = a.text.to_lowercase();
                t.contains("exec:") || t.contains("system:")
            });
            if exec {
                f.deny(
                    "reverse-shell",
                    "connects a program to the network (`socat exec:`): a remote shell",
                );
            }
        }
        name if is_interpreter(name) => {
            let code: String = args
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let socket =
                code.contains("socket") || code.contains("fsockopen") || code.contains("TCPSocket");
            let shell = [
                "dup2",
                "pty",
                "/bin/sh",
                "/bin/bash",
                "subprocess",
                "exec(",
                "popen",
                "spawn",
                "system(",
            ]
            .iter()
            .any(|w| code.contains(w));
            if socket && shell {
                f.deny(
                    "reverse-shell",
                    "opens a network socket and hands it to a shell: a remote shell",
                );
            }
        }
        _ => {}
    }
}
