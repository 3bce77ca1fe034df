//! The files a command reads or writes, judged against the sensitive paths, the devices and
//! other users' homes: the one reading of targets that the rules and the positive model share.

use acp_gate_plugin::sensitive::{PathGlob, PathSegments, is_env_template, strip_home};
use acp_gate_shell::paths::is_same_or_ancestor;
use acp_gate_shell::{Arg, Command as Invocation};

use crate::context::{Context, Real};
use crate::judgement::{Effect, Findings, Level};

/// A file `f`'s command writes, moves or deletes (`how` says how): a network device is a remote
/// shell, a disk device or another device is denied or asked about, a sensitive path is denied,
/// a project's own file that runs code later is asked about in a workspace and denied
/// elsewhere; a symlink on the way is followed (the last one too unless the link itself is
/// deleted or moved), and where it leads is judged the same.
pub fn write_target(f: &mut Findings, cx: &Context, target: &Arg, how: &str, effect: Effect) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    let abs = cx.absolute_anywhere(f.inv, text);
    let real = cx.real(
        f.inv,
        text,
        !matches!(effect, Effect::Delete | Effect::Move),
    );
    let folded = real.as_ref().is_some_and(|r| r.folded);
    if write_at(f, cx, &abs, folded, &format!("`{text}`"), how, effect) == Some(Level::Deny) {
        return;
    }
    let real = real.filter(|r| r.linked);
    if let Some(real) = &real {
        let shown = format!("`{}` (through the link `{text}`)", real.path);
        if write_at(f, cx, &real.path, real.folded, &shown, how, effect) == Some(Level::Deny) {
            return;
        }
    }
    // Where the command runs is known: the place itself is judged.
    if let Some(abs) = cx.absolute(f.inv, text)
        && !inside(cx, &abs, real.as_ref())
    {
        outside_write(f, text, &abs, how, effect);
    }
}

/// Whether `dir` (absolute; `real`: where its links lead, if anywhere) is in a workspace root,
/// through its links too.
pub fn inside(cx: &Context, dir: &str, real: Option<&Real>) -> bool {
    cx.workspaces.iter().any(|w| is_same_or_ancestor(w, dir))
        && real.is_none_or(|r| cx.real_inside(r))
}

/// A write, delete or move of `text` (at `abs`, outside every workspace root) is denied, as the
/// path validator denies a tool's there: the one rule for where a command may change files, so
/// that `rm -rf ~/Documents` is decided as a delete tool's call on it. Devices are judged as
/// devices ([`write_target`]).
pub fn outside_write(f: &mut Findings, text: &str, abs: &str, how: &str, effect: Effect) {
    if abs.starts_with("/dev/") {
        return;
    }
    f.push_about(
        Level::Deny,
        "outside-write",
        format!("{how} `{text}`, outside the workspace"),
        abs,
        effect,
    );
}

/// Judges a write of the absolute `abs` (`shown` as the reason names it); the level of what it
/// found.
fn write_at(
    f: &mut Findings,
    cx: &Context,
    abs: &str,
    folded: bool,
    shown: &str,
    how: &str,
    effect: Effect,
) -> Option<Level> {
    if network_device(abs) {
        f.push_about(
            Level::Deny,
            "reverse-shell",
            format!("{how} a network connection ({shown}): a remote shell"),
            abs,
            effect,
        );
        return Some(Level::Deny);
    }
    if let Some(device) = abs.strip_prefix("/dev/") {
        let harmless = matches!(
            device,
            "null"
                | "zero"
                | "stdout"
                | "stderr"
                | "stdin"
                | "tty"
                | "full"
                | "random"
                | "urandom"
                | "ptmx"
        ) || ["fd/", "pts/", "shm/", "tty", "console"]
            .iter()
            .any(|p| device.starts_with(p));
        if harmless {
            return None;
        }
        let disk = [
            "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop",
            "mapper/", "sr", "nbd", "zd", "rbd", "mem", "kmem", "port",
        ]
        .iter()
        .any(|p| device.starts_with(p));
        let (level, what) = if disk {
            (Level::Deny, "disk device")
        } else {
            (Level::Ask, "device")
        };
        f.push_about(
            level,
            "device-write",
            format!("{how} the {what} {shown}"),
            abs,
            effect,
        );
        return Some(level);
    }
    if is_env_template(abs) {
        return None;
    }
    let segments = PathSegments::new(abs, folded);
    let matches = |globs: &[PathGlob]| globs.iter().any(|g| g.matches_segments(&segments));
    if matches(cx.write_sensitive()) {
        f.push_about(
            Level::Deny,
            "sensitive-write",
            format!("{how} the sensitive path {shown}"),
            abs,
            effect,
        );
        return Some(Level::Deny);
    }
    if matches(cx.project_code()) {
        // The project's own setup: a person may approve changing it, in a workspace only.
        let (level, rule) = match cx.in_workspace(abs) {
            true => (Level::Ask, "project-code-write"),
            false => (Level::Deny, "sensitive-write"),
        };
        f.push_about(
            level,
            rule,
            format!("{how} the project's file {shown}, which runs code later"),
            abs,
            effect,
        );
        return Some(level);
    }
    None
}

/// `/dev/tcp/HOST/PORT`, `/dev/udp/..`: bash opens a network connection.
fn network_device(abs: &str) -> bool {
    abs.starts_with("/dev/tcp/") || abs.starts_with("/dev/udp/")
}

/// A file `f`'s command reads: a network device is a remote shell; a secret or a file in
/// another user's home is denied, by its name or by where its symlinks lead.
pub fn read_target(f: &mut Findings, cx: &Context, target: &Arg) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    let abs = cx.absolute_anywhere(f.inv, text);
    let (rule, reason, about) = if network_device(&abs) {
        (
            "reverse-shell",
            format!("reads from a network connection (`{abs}`): a remote shell"),
            abs,
        )
    } else if is_secret(cx, f.inv, target) {
        (
            "sensitive-read",
            format!("reads the credential file `{text}`"),
            abs,
        )
    } else if let Some(user) = other_users_home(cx, &abs) {
        (
            "sensitive-read",
            format!("reads `{text}` in another user's home (`{user}`)"),
            abs,
        )
    } else {
        let Some(real) = cx.real(f.inv, text, true).filter(|r| r.linked) else {
            return;
        };
        if network_device(&real.path) {
            (
                "reverse-shell",
                format!(
                    "reads from a network connection (`{}`, through the link `{text}`): a remote shell",
                    real.path
                ),
                real.path,
            )
        } else if secret_path(cx, &real.path) {
            (
                "sensitive-read",
                format!(
                    "reads the credential file `{}` through the link `{text}`",
                    real.path
                ),
                real.path,
            )
        } else if let Some(user) = other_users_home(cx, &real.path) {
            (
                "sensitive-read",
                format!(
                    "reads `{}` in another user's home (`{user}`) through the link `{text}`",
                    real.path
                ),
                real.path.clone(),
            )
        } else {
            return;
        }
    };
    f.push_about(Level::Deny, rule, reason, &about, Effect::Read);
}

/// Whether a tree the checker cannot see (a directory copied or moved, a link's target, an
/// archive's members) would place a file where a sensitive one may be made: at the workspace
/// root or home (or above), or in or below a directory that sensitive files are named under
/// (`.git`, `.vscode`, `.github/workflows`, ...).
pub fn lands_in_guarded_tree(cx: &Context, inv: &Invocation, at: &Arg) -> bool {
    if at.dynamic {
        return true;
    }
    let Some(abs) = cx.absolute(inv, &at.text) else {
        return true;
    };
    let real = cx.real(inv, &at.text, true).filter(|r| r.linked);
    std::iter::once(abs).chain(real.map(|r| r.path)).any(|abs| {
        let above = |root: &str| !root.is_empty() && is_same_or_ancestor(&abs, root);
        let guarded = |name: &str| {
            cx.guarded_dirs()
                .iter()
                .any(|d| d.eq_ignore_ascii_case(name))
        };
        // Every directory on the way below the workspace root (the last name outside it).
        let below = cx
            .workspaces
            .iter()
            .chain(cx.real_workspaces())
            .find_map(|w| abs.strip_prefix(w.as_str())?.strip_prefix('/'))
            .unwrap_or_else(|| abs.rsplit('/').next().unwrap_or(""));
        above(cx.home)
            || cx.workspaces.iter().any(|w| above(w))
            || cx.real_workspaces().iter().any(|w| above(w))
            || below.split('/').any(guarded)
    })
}

/// Whether the static path (or glob) `target` names, or may match, a secret.
pub fn is_secret(cx: &Context, inv: &Invocation, target: &Arg) -> bool {
    let Some(text) = target.known() else {
        return false;
    };
    let abs = cx.absolute_anywhere(inv, text);
    if is_env_template(&abs) {
        return false;
    }
    if secret_path(cx, &abs) {
        return true;
    }
    target.glob
        && cx.secrets_for(&abs).iter().any(|g| {
            let pattern = g.pattern();
            let full = match strip_home(pattern) {
                Some(rest) => format!("{}{rest}", cx.home),
                None if pattern.starts_with('/') => pattern.to_owned(),
                None => format!("/**/{}", pattern.trim_start_matches("./")),
            };
            globs_overlap(&abs, &full) && anchored(&abs, &full, false)
        })
}

/// Whether the absolute path `abs` is a secret's, in any letter case (on a case-insensitive file
/// system `.ENV` is `.env`).
fn secret_path(cx: &Context, abs: &str) -> bool {
    let folded = PathSegments::new(abs, true);
    !is_env_template(abs)
        && cx
            .secrets_for(abs)
            .iter()
            .any(|g| g.matches_segments(&folded))
}

/// Whether a glob's last segment aims at a secret's name by a shared literal start or end
/// (`*.env`, `*.pem`), whatever it can match before it.
pub fn aims_at_secret(cx: &Context, glob: &str) -> bool {
    cx.read_sensitive()
        .iter()
        .any(|g| g.pattern().rsplit('/').next() != Some("**") && anchored(glob, g.pattern(), false))
}

/// Whether a glob's last segment names secrets: its literal start or end holds a secret name's
/// whole literal start or end (`.env*` holds `.env`), not a part of it (`*.json` takes in
/// `secrets.json` among every other JSON file).
pub fn names_secrets(cx: &Context, glob: &str) -> bool {
    cx.read_sensitive()
        .iter()
        .any(|g| g.pattern().rsplit('/').next() != Some("**") && anchored(glob, g.pattern(), true))
}

/// Whether a glob aims at what a sensitive pattern names, rather than merely being able to
/// meet it (`*.rs` can match a file named `id_rsa.rs`, but does not aim at keys): the pattern
/// is a directory tree, or the glob's last segment shares a literal start or end with the
/// pattern's last segment (`~/.ss?/id_*`, `*.pem`, `.env*`); `whole`: the glob's literal ends
/// hold all of the pattern's.
fn anchored(glob: &str, pattern: &str, whole: bool) -> bool {
    let last = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let (g, p) = (last(glob), last(pattern));
    if p == "**" {
        return true;
    }
    let wild = |c: char| matches!(c, '*' | '?' | '[');
    let prefix = |s: &str| s.split(wild).next().unwrap_or("").to_owned();
    let suffix = |s: &str| s.rsplit(wild).next().unwrap_or("").to_owned();
    let (gp, pp, gs, ps) = (prefix(&g), prefix(&p), suffix(&g), suffix(&p));
    if whole {
        // The glob holds the name whole at one end (`.env*` and `.env`), or each literal end
        // of a pattern with wildcards (`*.pem` and `*.pem`; not `*.json` and
        // `client_secret*.json`).
        return if p.contains(wild) {
            (!pp.is_empty() || !ps.is_empty())
                && (pp.is_empty() || gp.starts_with(pp.as_str()))
                && (ps.is_empty() || gs.ends_with(ps.as_str()))
        } else {
            gp.starts_with(p.as_str()) || gs.ends_with(p.as_str())
        };
    }
    let meets = |a: &str, b: &str, start: bool| {
        !a.is_empty()
            && !b.is_empty()
            && if start {
                a.starts_with(b) || b.starts_with(a)
            } else {
                a.ends_with(b) || b.ends_with(a)
            }
    };
    meets(&gp, &pp, true) || meets(&gs, &ps, false)
}

/// `/root/..`, `/home/NAME/..` (or `/Users/NAME`) other than the user's own home.
pub fn other_users_home<'p>(cx: &Context, abs: &'p str) -> Option<&'p str> {
    let own = |p: &str| !cx.home.is_empty() && is_same_or_ancestor(p, cx.home);
    if (abs == "/root" || abs.starts_with("/root/")) && !own("/root") {
        return Some("/root");
    }
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = abs.strip_prefix(base) {
            let user = rest.split('/').next().unwrap_or(rest);
            let home = &abs[..base.len() + user.len()];
            if !user.is_empty() && !own(home) {
                return Some(home);
            }
        }
    }
    None
}

/// Whether two absolute glob paths can match a common path: segment by segment, `**` any
/// number of segments, `*` / `?` / `[..]` within one, and a wildcard never matching a leading
/// dot (the shell's default).
pub fn globs_overlap(a: &str, b: &str) -> bool {
    let a: Vec<&str> = a.split('/').filter(|s| !s.is_empty()).collect();
    let b: Vec<&str> = b.split('/').filter(|s| !s.is_empty()).collect();
    segments_overlap(&a, &b)
}

fn segments_overlap(a: &[&str], b: &[&str]) -> bool {
    match (a.first(), b.first()) {
        (Some(&"**"), _) => {
            segments_overlap(&a[1..], b) || (!b.is_empty() && segments_overlap(a, &b[1..]))
        }
        (_, Some(&"**")) => {
            segments_overlap(a, &b[1..]) || (!a.is_empty() && segments_overlap(&a[1..], b))
        }
        (None, None) => true,
        (None, _) | (_, None) => false,
        (Some(x), Some(y)) => segment_overlap(x, y) && segments_overlap(&a[1..], &b[1..]),
    }
}

/// Whether two one-segment wildcard patterns can match a common name.
fn segment_overlap(a: &str, b: &str) -> bool {
    let class = |s: &str| -> Vec<u8> {
        // `[..]` matches one character: treat it as `?`.
        let mut out = Vec::new();
        let mut in_class = false;
        for c in s.bytes() {
            match c {
                b'[' if !in_class => in_class = true,
                b']' if in_class => {
                    in_class = false;
                    out.push(b'?');
                }
                _ if in_class => {}
                c => out.push(c),
            }
        }
        out
    };
    let (a, b) = (class(a), class(b));
    let wild = |c: u8| c == b'*' || c == b'?';
    if (a.first() == Some(&b'.') && b.first().is_some_and(|&c| wild(c)))
        || (b.first() == Some(&b'.') && a.first().is_some_and(|&c| wild(c)))
    {
        return false;
    }
    // reach[i][j]: a[..i] and b[..j] can match a common string.
    let mut reach = vec![vec![false; b.len() + 1]; a.len() + 1];
    reach[0][0] = true;
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            if !reach[i][j] {
                continue;
            }
            if i < a.len() && a[i] == b'*' {
                reach[i + 1][j] = true;
                if j < b.len() {
                    reach[i][j + 1] = true;
                }
            }
            if j < b.len() && b[j] == b'*' {
                reach[i][j + 1] = true;
                if i < a.len() {
                    reach[i + 1][j] = true;
                }
            }
            if i < a.len() && j < b.len() && (a[i] == b[j] || a[i] == b'?' || b[j] == b'?') {
                reach[i + 1][j + 1] = true;
            }
        }
    }
    reach[a.len()][b.len()]
}

/// Whether reading every file under `abs` reads a secret: it is the home directory, or
/// holds one of the sensitive directories or files.
pub fn holds_secrets(cx: &Context, abs: &str) -> bool {
    let home = cx.home;
    if !home.is_empty() && is_same_or_ancestor(abs, home) {
        return true;
    }
    cx.read_sensitive().iter().any(|g| {
        let pattern = g.pattern();
        let fixed = match acp_gate_plugin::sensitive::strip_home(pattern) {
            Some(rest) => format!("{home}{rest}"),
            None if pattern.starts_with('/') => pattern.to_owned(),
            None => return false,
        };
        let fixed = fixed.split(['*', '?', '[']).next().unwrap_or("");
        let fixed = fixed.trim_end_matches('/');
        !fixed.is_empty() && is_same_or_ancestor(abs, fixed)
    })
}

#[cfg(test)]
mod tests {
    use super::globs_overlap;

    #[test]
    fn globs_that_can_meet() {
        assert!(globs_overlap("/h/.ss?/id_*", "/h/.ssh/**"));
        assert!(globs_overlap("/ws/*.pem", "/**/*.pem"));
        assert!(globs_overlap("/ws/[ab]d_rsa", "/**/id_rsa*"));
        assert!(!globs_overlap("/ws/src/*.rs", "/**/*.pem"));
        assert!(!globs_overlap("/ws/*", "/**/.env"));
        assert!(!globs_overlap("/ws/*.md", "/h/.ssh/**"));
    }

    #[test]
    fn globs_aim_at_secrets_only_through_a_shared_literal() {
        use super::anchored;
        assert!(anchored("/h/.ss?/id_*", "/h/.ssh/**", false));
        assert!(anchored("/ws/*.pem", "/**/*.pem", false));
        assert!(anchored("/ws/id_*", "/**/id_rsa*", false));
        assert!(!anchored("/ws/src/*.rs", "/**/id_rsa*", false));
        // Naming secrets takes the pattern's whole literal: `.env*` does, `*.json` does not.
        assert!(anchored(".env*", ".env", true));
        assert!(!anchored("*.json", "secrets.json", true));
        assert!(!anchored("*.json", "client_secret*.json", true));
        assert!(anchored("*.pem", "*.pem", true));
        assert!(anchored("*.json", "secrets.json", false));
    }
}
