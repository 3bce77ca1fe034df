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

/// A package runner that fetches a package the workspace does not pin and runs it: `npx`,
/// `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`, `uv tool run`, `uv run --with`, `pipx
/// run`, `go run PKG@VERSION`. (A runner of the workspace's own environment, `uv run`, `poetry
/// run`, `bundle exec`, runs what it declares; so does `npx NAME` where the workspace has
/// installed `node_modules/.bin/NAME`, which npx runs before fetching anything.) A package
/// installer fetches packages and may run code they ship: asked, saying so, unless it installs
/// only what the workspace's lockfile pins.
fn fetched_code(f: &mut Findings, cx: &Context) {
    let own = f.inv.own_args();
    let word = |k: usize| own.get(k).map_or("", |a| a.text.as_str());
    let fetches = match f.inv.name.as_str() {
        "npx" | "bunx" => !workspace_bin(f, cx, own),
        "pnpx" | "uvx" => true,
        "npm" => matches!(word(0), "exec" | "x") && !workspace_bin(f, cx, &own[1..]),
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
    let stem = f
        .inv
        .name
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let installs = match stem {
        "npm" | "pnpm" | "bun" => matches!(word(0), "install" | "i" | "add" | "ci" | "update"),
        "yarn" => own.is_empty() || matches!(word(0), "install" | "add" | "up" | "upgrade"),
        "pip" | "pipx" | "gem" | "conda" | "mamba" | "brew" => word(0) == "install",
        "python" => word(0) == "-m" && word(1) == "pip" && word(2) == "install",
        "uv" => matches!(word(0), "add" | "sync") || (word(0) == "pip" && word(1) == "install"),
        "poetry" | "pdm" | "hatch" => matches!(word(0), "add" | "install" | "update"),
        "cargo" => word(0) == "install",
        "go" => matches!(word(0), "install" | "get") || word(0) == "mod" && word(1) == "tidy",
        "bundle" | "bundler" => own.is_empty() || matches!(word(0), "install" | "add" | "update"),
        "composer" => matches!(word(0), "install" | "require" | "update"),
        "dotnet" => {
            word(0) == "add" && word(1) == "package" || word(0) == "tool" && word(1) == "install"
        }
        _ => false,
    };
    let help = own.iter().any(|a| a.is("--help") || a.is("-h"));
    if installs && !lockfile_install(stem, own) && !help {
        f.ask(
            "package-install",
            "installs packages from a registry, and may run code they ship (install scripts, build hooks)",
        );
    }
}

/// Whether `PROGRAM OWN...` installs exactly what the workspace's lockfile pins (`npm ci`, `uv
/// sync`, a frozen lockfile): what a build fetches first, as `cargo build` does.
pub(crate) fn lockfile_install(program: &str, own: &[Arg]) -> bool {
    let word = |k: usize| own.get(k).map_or("", |a| a.text.as_str());
    let any = |options: &[&str]| own.iter().any(|a| options.contains(&a.text.as_str()));
    match program {
        "npm" => word(0) == "ci",
        "uv" => word(0) == "sync" && !any(&["--upgrade", "-U", "--upgrade-package", "-P"]),
        "pnpm" | "yarn" | "bun" => {
            matches!(word(0), "install" | "i" | "") && any(&["--frozen-lockfile", "--immutable"])
        }
        _ => false,
    }
}

/// Whether the package runner's command (`words`, the first one its name) is one the workspace
/// installed: a plain name (no version, scope or path: those are fetched) with
/// `node_modules/.bin/NAME` where the command runs, inside the workspace through its links.
fn workspace_bin(f: &Findings, cx: &Context, words: &[Arg]) -> bool {
    let Some(name) = words.first().filter(|a| !a.dynamic) else {
        return false;
    };
    let name = name.text.as_str();
    if name.is_empty() || name.starts_with(['-', '.', '@']) || name.contains(['@', '/', '\\']) {
        return false;
    }
    cx.real(f.inv, &format!("node_modules/.bin/{name}"), true)
        .is_some_and(|real| real.exists && cx.real_inside(&real))
}

pub(crate) fn check(f: &mut Findings, cx: &Context) {
    fetched_code(f, cx);
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
