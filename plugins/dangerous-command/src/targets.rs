//! The files a command reads or writes, judged by the one set of path rules a tool call's paths
//! are judged by (`acp_gate_plugin::path_rules`), and what a glob or a tree may reach: the one
//! reading of targets that the rules and the positive model share.

use acp_gate_plugin::path_rules::{self, Place, Protection, Target, Undergoes};
use acp_gate_plugin::sensitive::{is_env_template, strip_home};
use acp_gate_shell::paths::is_same_or_ancestor;
use acp_gate_shell::{Arg, Command as Invocation};

use crate::context::{Context, Real};
use crate::judgement::{Effect, Findings, Level};

/// A file `f`'s command writes, moves or deletes (`how` says how), judged by the path rules
/// where it is named and where its symlinks lead (the last one too unless the link itself is
/// deleted or moved), and by where it is when the directory the command runs in is known.
pub fn write_target(f: &mut Findings, cx: &Context, target: &Arg, how: &str, effect: Effect) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    let real = cx.real(
        f.inv,
        text,
        !matches!(effect, Effect::Delete | Effect::Move),
    );
    let place = cx.place(f.inv, text, real.as_ref());
    let undergoes = match effect {
        Effect::Read => Undergoes::Read,
        Effect::Write => Undergoes::Write,
        Effect::Move | Effect::Delete => Undergoes::Delete,
    };
    let named = Named {
        text,
        real: real.as_ref(),
        place,
    };
    judge(f, cx, &named, undergoes, how, effect);
}

/// A file `f`'s command reads, judged by the path rules by its name and where its symlinks
/// lead: a secret, a network device or a file in another user's home (where it is, inside or
/// out, is the positive model's to judge: a program the checker does not know may not read
/// its operands at all). A glob that may match a secret is a read of one.
pub fn read_target(f: &mut Findings, cx: &Context, target: &Arg) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    if target.glob && is_secret(cx, f.inv, target) {
        let abs = cx.absolute_anywhere(f.inv, text);
        f.push_about(
            Level::Deny,
            "sensitive-read",
            format!("reads `{text}`, which may match credential files"),
            &abs,
            Effect::Read,
        );
        return;
    }
    let real = cx.real(f.inv, text, true);
    let named = Named {
        text,
        real: real.as_ref(),
        place: Place::Unknown,
    };
    judge(f, cx, &named, Undergoes::Read, "reads", Effect::Read);
}

/// A path as a command names it: its text, where its links lead, and where it is.
pub struct Named<'a> {
    pub text: &'a str,
    pub real: Option<&'a Real>,
    pub place: Place<'a>,
}

/// Adds what the path rules say of `undergoes` done to `path` as a finding about it.
pub fn judge(
    f: &mut Findings,
    cx: &Context,
    path: &Named,
    undergoes: Undergoes,
    how: &str,
    effect: Effect,
) {
    let (text, real) = (path.text, path.real);
    let named = cx.absolute_anywhere(f.inv, text);
    let shown = format!("`{text}`");
    let target = Target {
        named: &named,
        real: real.filter(|r| r.linked).map(|r| r.path.as_str()),
        fold_case: real.is_some_and(|r| r.folded),
        place: path.place,
        shown: &shown,
    };
    if let Some(found) = cx.rules.judge(&target, undergoes, how) {
        let level = match found.level {
            path_rules::Level::Ask => Level::Ask,
            path_rules::Level::Deny => Level::Deny,
        };
        f.push_about(level, found.rule, found.reason, &found.path, effect);
    }
}

/// Whether `dir` (absolute; `real`: where its links lead, if anywhere) is in a workspace root,
/// through its links too.
pub fn inside(cx: &Context, dir: &str, real: Option<&Real>) -> bool {
    cx.workspaces.iter().any(|w| is_same_or_ancestor(w, dir))
        && real.is_none_or(|r| cx.real_inside(r))
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
        && cx.rules.secret_patterns(&abs).any(|pattern| {
            let full = match strip_home(pattern) {
                Some(rest) => format!("{}{rest}", cx.home),
                None if pattern.starts_with('/') => pattern.to_owned(),
                None => format!("/**/{}", pattern.trim_start_matches("./")),
            };
            globs_overlap(&abs, &full) && anchored(&abs, &full, false)
        })
}

/// Whether the absolute path `abs` is a secret's (in any letter case).
fn secret_path(cx: &Context, abs: &str) -> bool {
    matches!(
        cx.rules.protection(abs, true),
        Some((_, Protection::Secret))
    )
}

/// Whether a glob's last segment aims at a secret's name by a shared literal start or end
/// (`*.env`, `*.pem`), whatever it can match before it.
pub fn aims_at_secret(cx: &Context, glob: &str) -> bool {
    cx.rules
        .secret_patterns("")
        .any(|p| p.rsplit('/').next() != Some("**") && anchored(glob, p, false))
}

/// Whether a glob's last segment names secrets: its literal start or end holds a secret name's
/// whole literal start or end (`.env*` holds `.env`), not a part of it (`*.json` takes in
/// `secrets.json` among every other JSON file).
pub fn names_secrets(cx: &Context, glob: &str) -> bool {
    cx.rules
        .secret_patterns("")
        .any(|p| p.rsplit('/').next() != Some("**") && anchored(glob, p, true))
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
    cx.rules.secret_patterns("").any(|pattern| {
        let fixed = match strip_home(pattern) {
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
