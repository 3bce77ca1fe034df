//! Paths as a command names them: made absolute lexically (`~`, `$HOME`, `..`, `//`), compared
//! with the roots that must never be deleted, and matched against sensitive-path globs.

use acp_gate_plugin::sensitive::strip_home;

/// Makes `text` absolute: a leading `~`, `~user` or `$HOME` is expanded, a relative path is
/// joined to `cwd`, and `.`, `..` and doubled slashes are folded the way the kernel would
/// (lexically: symlinks are not followed).
pub fn absolutize(text: &str, home: &str, cwd: &str) -> String {
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
        normalize(&expanded)
    } else {
        normalize(&format!("{cwd}/{expanded}"))
    }
}

/// `~`, `~/x`, `$HOME`, `$HOME/x`, `${HOME}/x` without the home part.
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

/// Whether `ancestor` is `path` or one of its parents (both normalised and absolute).
pub fn is_same_or_ancestor(ancestor: &str, path: &str) -> bool {
    ancestor == "/"
        || path == ancestor
        || (path.starts_with(ancestor) && path.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

/// Top-level directories whose loss breaks the system or other users' data.
const SYSTEM_ROOTS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/var",
    "/Applications",
    "/Library",
    "/System",
    "/Users",
    "/Volumes",
    "/private",
];

/// Directories where nothing may be deleted or rewritten by an agent, at any depth.
const SYSTEM_TREES: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/sbin", "/sys", "/usr",
    "/System",
];

/// Why deleting (or recursively changing) `path` would be a disaster, if it would be.
/// `path` is absolute and normalised; a trailing `/*` glob stands for the directory itself.
pub fn important_root(path: &str, home: &str, workspaces: &[String]) -> Option<&'static str> {
    let path = path.trim_end_matches("/*").trim_end_matches("/.*");
    let path = if path.is_empty() || path == "*" {
        "/"
    } else {
        path
    };
    if path == "/" {
        return Some("the root of the file system");
    }
    if !home.is_empty() && is_same_or_ancestor(path, home) {
        return Some("the home directory");
    }
    if workspaces.iter().any(|w| is_same_or_ancestor(path, w)) {
        return Some("the workspace root");
    }
    if SYSTEM_ROOTS.contains(&path) {
        return Some("a top-level system directory");
    }
    if SYSTEM_TREES.iter().any(|t| is_same_or_ancestor(t, path)) {
        return Some("a system directory");
    }
    let parent = &path[..path.rfind('/').unwrap_or(0)];
    if matches!(parent, "/home" | "/Users") {
        return Some("a user's home directory");
    }
    None
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
    fn important_roots() {
        let ws = vec!["/work/p".to_owned()];
        let root = |p: &str| important_root(p, "/home/u", &ws);
        assert!(root("/").is_some());
        assert!(root("/*").is_some());
        assert!(root("/home/u").is_some());
        assert!(root("/home/u/*").is_some());
        assert!(root("/home").is_some());
        assert!(root("/home/other").is_some());
        assert!(root("/work/p").is_some());
        assert!(root("/work").is_some());
        assert!(root("/usr/lib/x").is_some());
        assert!(root("/var").is_some());
        assert!(root("/work/p/build").is_none());
        assert!(root("/home/u/project/target").is_none());
        assert!(root("/var/tmp/x").is_none());
        assert!(root("/tmp/x").is_none());
    }
}
