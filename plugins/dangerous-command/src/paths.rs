//! Paths as a command names them: made absolute lexically (`~`, `$HOME`, `..`, `//`), compared
//! with the roots that must never be deleted, and matched against sensitive-path globs.

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
fn strip_home(text: &str) -> Option<&str> {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = text.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Some(rest);
        }
    }
    None
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

/// A glob over absolute paths: `**` is any number of segments, `*` and `?` stay within one.
/// A pattern that is not absolute (and does not start with `~`) matches at any depth.
#[derive(Clone, Debug)]
pub struct Glob {
    segments: Vec<String>,
}

impl Glob {
    pub fn new(pattern: &str, home: &str) -> Self {
        let absolute = match strip_home(pattern) {
            Some(rest) => format!("{home}{rest}"),
            None if pattern.starts_with('/') => pattern.to_owned(),
            None => format!("/**/{}", pattern.trim_start_matches("./")),
        };
        let segments = absolute
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        Self { segments }
    }

    pub fn matches(&self, path: &str) -> bool {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match_segments(&self.segments, &segments)
    }
}

fn match_segments(pattern: &[String], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_segments(rest, &path[skip..]))
        }
        Some((first, rest)) => path.split_first().is_some_and(|(p, tail)| {
            wildcard(first.as_bytes(), p.as_bytes()) && match_segments(rest, tail)
        }),
    }
}

/// `*` and `?` matching of one path segment.
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
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

    #[test]
    fn globs() {
        let g = |p: &str, path: &str| Glob::new(p, "/h").matches(path);
        assert!(g("~/.ssh/**", "/h/.ssh"));
        assert!(g("~/.ssh/**", "/h/.ssh/id_rsa"));
        assert!(!g("~/.ssh/**", "/h/.sshx"));
        assert!(g(".env*", "/ws/sub/.env.local"));
        assert!(g(".env*", "/.env"));
        assert!(!g(".env*", "/ws/env"));
        assert!(g("**/.git/hooks/**", "/ws/.git/hooks/pre-commit"));
        assert!(g("/etc/**", "/etc/passwd"));
        assert!(g("*.pem", "/a/b/key.pem"));
        assert!(!g("/etc/**", "/home/etc/x"));
    }
}
