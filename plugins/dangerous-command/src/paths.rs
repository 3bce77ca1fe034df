//! The roots that must never be deleted or recursively changed (`/`, home, the workspace,
//! system directories).

pub use acp_gate_shell::paths::{absolutize, is_same_or_ancestor, normalize};

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
