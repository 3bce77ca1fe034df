//! Rules for the network: secrets sent out (`curl -d @~/.ssh/id_rsa`, `scp` of keys), local
//! files fetched as URLs (`curl file:///...`, judged as reads), and reverse shells (`nc -e`,
//! `socat exec:`, interpreters opening a socket to a shell).

use super::operands;
use crate::context::Context;
use crate::judgement::Findings;
use crate::targets::{is_secret, read_target};
use acp_gate_shell::Arg;
use acp_gate_shell::programs::is_interpreter;

/// `file://` URLs (`curl file:///home/u/.ssh/id_rsa`, `--url file:...`, `lynx -dump
/// file:///...`): a read of that path, judged as such.
fn local_files(f: &mut Findings, cx: &Context, args: &[Arg]) {
    for (i, a) in args.iter().enumerate() {
        let url = match a.text.strip_prefix("--url=") {
            Some(url) => url,
            None if i > 0 && args[i - 1].is("--url") => a.text.as_str(),
            None => a.text.as_str(),
        };
        let Some(path) = file_url_path(url) else {
            continue;
        };
        if a.dynamic {
            f.ask("local-file", "fetches a local file only known when it runs");
            continue;
        }
        match path {
            Some(path) if !path.contains(['{', '[', '*', '?']) => {
                read_target(f, cx, &Arg::literal(path));
            }
            _ => f.ask(
                "local-file",
                format!("fetches local files by a pattern or from another host: `{url}`"),
            ),
        }
    }
}

/// The path a `file:` URL names (`file:///p`, `file://localhost/p`, `file:/p`), decoded;
/// `Some(None)` for a file URL it cannot read (another host); `None` for another URL.
fn file_url_path(url: &str) -> Option<Option<String>> {
    let scheme = url.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &url[5..];
    let path = match rest.strip_prefix("//") {
        Some(authority) => {
            let at = authority.find('/').unwrap_or(authority.len());
            let host = &authority[..at];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Some(None);
            }
            &authority[at..]
        }
        None => rest,
    };
    Some(percent_decode(path))
}

/// `%2e` and the like decoded, as curl decodes a file URL's path; `None` for a broken escape.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%' {
            let hex = text.get(k + 1..k + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            k += 3;
        } else {
            out.push(bytes[k]);
            k += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The rules of this family for one command.
/// A package runner that fetches a package the workspace does not pin and runs it: `npx`,
/// `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`, `uv tool run`, `uv run --with`, `pipx
/// run`, `go run PKG@VERSION`. (A runner of the workspace's own environment, `uv run`, `poetry
/// run`, `bundle exec`, runs what it declares.)
fn fetched_code(f: &mut Findings) {
    let own = f.inv.own_args();
    let word = |k: usize| own.get(k).map_or("", |a| a.text.as_str());
    let fetches = match f.inv.name.as_str() {
        "npx" | "pnpx" | "bunx" | "uvx" => true,
        "npm" => matches!(word(0), "exec" | "x"),
        "pnpm" | "yarn" => word(0) == "dlx",
        "bun" => word(0) == "x",
        "uv" => {
            (word(0) == "tool" && word(1) == "run")
                || (word(0) == "run" && own.iter().any(|a| a.text.starts_with("--with")))
        }
        "pipx" => word(0) == "run",
        "go" => {
            word(0) == "run"
                && own[1..]
                    .iter()
                    .any(|a| !a.text.starts_with('-') && a.text.contains('@'))
        }
        _ => false,
    };
    if fetches {
        f.ask(
            "fetched-code",
            "may fetch a package the workspace does not pin, and runs it",
        );
    }
}

pub(crate) fn check(f: &mut Findings, cx: &Context) {
    fetched_code(f);
    let inv = f.inv;
    let args = inv.args();
    match inv.name.as_str() {
        "curl" | "wget" | "wget2" | "http" | "https" | "xh" | "xhs" => {
            if inv.name == "curl" {
                local_files(f, cx, args);
            }
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
        "lynx" | "links" | "elinks" | "w3m" => local_files(f, cx, args),
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
