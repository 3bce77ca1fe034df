//! Paths as a command names them, made absolute lexically (`~`, `~user`, `$HOME`, `..`, `//`)
//! against the home directory and the directory the command runs in.

pub use acp_gate_plugin::path_rules::is_same_or_ancestor;
use acp_gate_plugin::sensitive::strip_home;

/// Makes `text` absolute: a leading `~`, `~user` or `$HOME` is expanded, a relative path is
/// joined to `cwd`, and `.`, `..` and doubled slashes are folded the way the kernel would
/// (lexically: symlinks are not followed).
pub fn absolutize(text: &str, home: &str, cwd: &str) -> String {
    normalize(&join(text, home, cwd))
}

/// `text` made absolute as [`absolutize`] does, but with its `..` left for whoever follows
/// the symlinks on the way (the host's `paths.resolve`): a `..` after a link leads out of it.
pub fn join(text: &str, home: &str, cwd: &str) -> String {
    let expanded = if let Some(rest) = strip_home(text) {
        format!("{home}{rest}")
    } else if let Some(user_path) = text.strip_prefix('~') {
        let (user, rest) = user_path.split_at(user_path.find('/').unwrap_or(user_path.len()));
        if user == "root" {
            format!("/root{rest}")
        } else {
            format!("/home/{user}{rest}")
        }
    } else {
        text.to_owned()
    };
    if expanded.starts_with('/') {
        expanded
    } else {
        format!("{}/{expanded}", cwd.trim_end_matches('/'))
    }
}

/// Folds `.`, `..` and empty segments of an absolute path.
pub fn normalize(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::with_capacity(path.len());
    for s in &segments {
        out.push('/');
        out.push_str(s);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolutize_expands_home_and_folds_dots() {
        assert_eq!(absolutize("~", "/h/u", "/ws"), "/h/u");
        assert_eq!(absolutize("~/", "/h/u", "/ws"), "/h/u");
        assert_eq!(absolutize("$HOME/.ssh/", "/h/u", "/ws"), "/h/u/.ssh");
        assert_eq!(absolutize("~root", "/h/u", "/ws"), "/root");
        assert_eq!(absolutize("..", "/h/u", "/ws/a"), "/ws");
        assert_eq!(absolutize("a//b/./../c", "/h/u", "/ws"), "/ws/a/c");
        assert_eq!(absolutize("/../..", "/h/u", "/ws"), "/");
        assert_eq!(absolutize("~x/y", "/h/u", "/ws"), "/home/x/y");
    }

    #[test]
    fn join_keeps_dotdot_for_the_resolver() {
        assert_eq!(join("link/../x", "/h/u", "/ws/"), "/ws/link/../x");
        assert_eq!(join("~/.ssh", "/h/u", "/ws"), "/h/u/.ssh");
        assert_eq!(join("/etc/../x", "/h/u", "/ws"), "/etc/../x");
    }
}
