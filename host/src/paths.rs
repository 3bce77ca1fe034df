//! Path facts the host establishes for plugins: `~` expansion, normalisation, symlink resolution.
//!
//! Plugins have no filesystem; what they need to know about a path on disk comes from here,
//! through the `paths.resolve` import (see `wit/plugin.wit`).

use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it gives up (the kernel's limit).
const MAX_SYMLINKS: usize = 40;

/// What the host found when it resolved a path: the WIT `paths.resolution`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub canonical: PathBuf,
    pub exists: bool,
    pub through_symlink: bool,
    pub case_insensitive: bool,
}

/// Expands a leading `~`, `$HOME` or `${HOME}`, then makes the path absolute against `cwd`.
pub fn expand(raw: &str, cwd: &Path, home: &Path) -> PathBuf {
    let expanded = ["~", "$HOME", "${HOME}"].iter().find_map(|prefix| {
        let rest = raw.strip_prefix(prefix)?;
        match rest.strip_prefix('/') {
            Some(rest) => Some(home.join(rest)),
            None if rest.is_empty() => Some(home.to_path_buf()),
            None => None,
        }
    });
    let path = expanded.unwrap_or_else(|| PathBuf::from(raw));
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

/// The path the kernel would open for `raw`: expanded and absolute, `.` and doubled slashes
/// folded, and each `..` applied after following the symlinks before it. Symlinks that no `..`
/// follows are kept as they are (see [`resolve`] for those).
pub fn normalise(raw: &str, cwd: &Path, home: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in expand(raw, cwd, home).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out = resolve_absolute(&out).canonical;
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Resolves `raw` (expanded against `cwd` and `home`) through every symlink on the way,
/// dangling ones included as far as their targets can be read.
pub fn resolve(raw: &str, cwd: &Path, home: &Path) -> Resolution {
    resolve_absolute(&expand(raw, cwd, home))
}

/// The workspace roots resolved so far, each once per process: see [`Roots::resolve`].
#[derive(Default)]
pub struct Roots {
    resolved: std::sync::Mutex<std::collections::HashMap<PathBuf, Resolution>>,
}

/// Roots remembered at most; past this (a proxy with that many workspaces) the others are
/// resolved on every request, as any path is.
const MAX_ROOTS: usize = 256;

impl Roots {
    /// `root`'s resolution as it was the first time this process resolved it. A plugin
    /// resolves the workspace roots on every request; doing it once also fixes the boundary
    /// where it was when the session began: re-pointing a root symlink afterwards (an agent's
    /// `ln -sfn / ws`) does not move the boundary with it. Paths under the root are still
    /// resolved afresh, so one that now leads elsewhere through the re-pointed link is outside.
    pub fn resolve(&self, root: &Path) -> Resolution {
        let mut resolved = self.resolved.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(resolution) = resolved.get(root) {
            return resolution.clone();
        }
        let resolution = resolve_absolute(root);
        if resolved.len() < MAX_ROOTS {
            resolved.insert(root.to_path_buf(), resolution.clone());
        }
        resolution
    }
}

fn resolve_absolute(path: &Path) -> Resolution {
    resolve_without_symlinks(path).unwrap_or_else(|| walk(path))
}

/// Most paths an agent names have no symlink on the way: one `openat2` with
/// `RESOLVE_NO_SYMLINKS` lets the kernel confirm that for the whole path at once, and the path
/// is then its own canonical form (what [`walk`] would find with a `lstat` per component).
/// `None` leaves the path to [`walk`]: a `..` in it, a symlink on the way (`ELOOP`), or any
/// other refusal (a kernel before 5.6, a directory that cannot be searched).
fn resolve_without_symlinks(path: &Path) -> Option<Resolution> {
    use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    let mut parts = path.components();
    if parts.next() != Some(Component::RootDir)
        || !parts.clone().all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    // `components` folds `.` and doubled slashes, as the walk does.
    let canonical: PathBuf = path.components().collect();
    let opened = rustix::fs::openat2(
        CWD,
        &canonical,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    );
    let identity = match opened {
        Ok(fd) => {
            let stat = rustix::fs::fstat(&fd).ok()?;
            Some((stat.st_dev as u64, stat.st_ino as u64))
        }
        // A missing component (or a file used as a directory) with no symlink before it:
        // the walk would append the rest as written.
        Err(Errno::NOENT | Errno::NOTDIR) => None,
        Err(_) => return None,
    };
    let case_insensitive = is_case_insensitive(&canonical, identity);
    Some(Resolution {
        canonical,
        exists: identity.is_some(),
        through_symlink: false,
        case_insensitive,
    })
}

/// Resolves `path` a component at a time, following each symlink (dangling ones as far as
/// their targets can be read) and applying `..` after the symlinks before it.
fn walk(path: &Path) -> Resolution {
    let mut through_symlink = false;
    let mut hops = 0;
    let mut done = PathBuf::from("/");
    // Components still to walk, in reverse so that a symlink's target can be pushed in front.
    let mut pending: Vec<std::ffi::OsString> = components_of(path).into_iter().rev().collect();
    while let Some(part) = pending.pop() {
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && hops < MAX_SYMLINKS => {
                hops += 1;
                through_symlink = true;
                let Ok(target) = std::fs::read_link(&next) else {
                    done = next;
                    continue;
                };
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                pending.extend(components_of(&target).into_iter().rev());
            }
            _ => done = next,
        }
    }
    use std::os::unix::fs::MetadataExt;
    let identity = std::fs::metadata(&done).ok().map(|m| (m.dev(), m.ino()));
    let exists = identity.is_some();
    let case_insensitive = is_case_insensitive(&done, identity);
    Resolution {
        canonical: done,
        exists,
        through_symlink,
        case_insensitive,
    }
}

/// The path's normal and `..` components; `.`, roots and doubled slashes dropped.
fn components_of(path: &Path) -> Vec<std::ffi::OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// Whether the file system holding `path`'s nearest existing ancestor folds case: the same
/// entry is found under a case-swapped name. `identity` is `path`'s (device, inode); `None`
/// when `path` was found not to exist.
fn is_case_insensitive(path: &Path, identity: Option<(u64, u64)>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let found = match identity {
        Some(identity) if path.parent().is_some() => Some((path, identity)),
        Some(_) => None,
        None => path
            .ancestors()
            .skip(1)
            .filter(|p| p.parent().is_some())
            .find_map(|p| std::fs::metadata(p).ok().map(|m| (p, (m.dev(), m.ino())))),
    };
    let Some((existing, identity)) = found else {
        return false;
    };
    let Some(name) = existing.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let swapped: String = name
        .chars()
        .map(|c| {
            if c.is_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if swapped == name {
        return false;
    }
    std::fs::metadata(existing.with_file_name(swapped))
        .is_ok_and(|other| (other.dev(), other.ino()) == identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("acp-gate-paths-{}", std::process::id()));
        let unique = dir.join(format!("{:?}", std::thread::current().id()).replace(['(', ')'], ""));
        std::fs::create_dir_all(&unique).unwrap();
        unique.canonicalize().unwrap()
    }

    #[test]
    fn a_case_sensitive_file_system_is_seen_as_one_for_existing_and_missing_paths() {
        let dir = tmp().join("case");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("readme"), "a").unwrap();
        std::fs::write(dir.join("README"), "b").unwrap();
        let home = Path::new("/nonexistent-home");
        for path in ["readme", "README", "missing/deeper", "Other"] {
            let resolved = resolve(&dir.join(path).display().to_string(), &dir, home);
            assert!(!resolved.case_insensitive, "{path}: {resolved:?}");
        }
        assert!(resolve(&dir.join("readme").display().to_string(), &dir, home).exists);
    }

    #[test]
    fn expands_home_forms_and_relative_paths() {
        let (cwd, home) = (Path::new("/w"), Path::new("/h"));
        assert_eq!(expand("~/.ssh/x", cwd, home), Path::new("/h/.ssh/x"));
        assert_eq!(expand("$HOME/.aws", cwd, home), Path::new("/h/.aws"));
        assert_eq!(expand("${HOME}", cwd, home), Path::new("/h"));
        assert_eq!(expand("~user/x", cwd, home), Path::new("/w/~user/x"));
        assert_eq!(expand("src/a.rs", cwd, home), Path::new("/w/src/a.rs"));
    }

    #[test]
    fn normalise_folds_dots_and_slashes() {
        let (cwd, home) = (Path::new("/nonexistent-w"), Path::new("/h"));
        assert_eq!(
            normalise("a//b/./c/../d", cwd, home),
            Path::new("/nonexistent-w/a/b/d")
        );
        assert_eq!(
            normalise("../../../../etc/passwd", cwd, home),
            Path::new("/etc/passwd")
        );
    }

    #[test]
    fn dotdot_after_a_symlink_goes_where_the_kernel_goes() {
        let dir = tmp();
        let outside = dir.join("outside/deep");
        std::fs::create_dir_all(&outside).unwrap();
        let ws = dir.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        let home = Path::new("/h");
        assert_eq!(
            normalise("link/../secret", &ws, home),
            dir.join("outside/secret")
        );
    }

    #[test]
    fn resolve_follows_dangling_and_parent_symlinks() {
        let dir = tmp();
        let ws = dir.join("ws2");
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join("etc-link")).unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere/file"), ws.join("dangling")).unwrap();
        let home = Path::new("/h");
        let r = resolve("etc-link/passwd", &ws, home);
        assert_eq!(r.canonical, Path::new("/etc/passwd"));
        assert!(r.through_symlink);
        let r = resolve("dangling", &ws, home);
        assert_eq!(r.canonical, dir.join("nowhere/file"));
        assert!(!r.exists);
        let r = resolve("plain/new.txt", &ws, home);
        assert_eq!(r.canonical, ws.join("plain/new.txt"));
        assert!(!r.through_symlink);
    }

    proptest::proptest! {
        /// Whatever the agent sends, normalisation terminates with an absolute path free of
        /// `.` and `..`, and never panics.
        #[test]
        fn normalise_always_gives_a_clean_absolute_path(raw in "(~|\\$HOME|\\$\\{HOME\\}|/|\\.\\.|\\.|//|[a-zA-Z0-9 _\\-\\\\:é\u{0301}\u{200b}]|/)*") {
            let out = normalise(&raw, Path::new("/w/s"), Path::new("/h"));
            proptest::prop_assert!(out.is_absolute(), "{out:?}");
            proptest::prop_assert!(!out.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)), "{out:?}");
        }
    }

    #[test]
    fn the_one_call_resolution_agrees_with_the_walk_and_leaves_symlinks_to_it() {
        let dir = tmp().join("fast");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("file"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("sub"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
        let d = dir.display();
        let plain = [
            format!("{d}/file"),
            format!("{d}/sub"),
            format!("{d}//sub/./"),
            format!("{d}/missing/deeper/new.txt"),
            format!("{d}/file/under-a-file"),
            "/".to_owned(),
        ];
        for path in &plain {
            let fast = resolve_without_symlinks(Path::new(path));
            assert_eq!(fast, Some(walk(Path::new(path))), "{path}");
        }
        let left_to_the_walk = [
            format!("{d}/link/x"),
            format!("{d}/link"),
            format!("{d}/dangling"),
            format!("{d}/sub/../file"),
        ];
        for path in &left_to_the_walk {
            assert_eq!(resolve_without_symlinks(Path::new(path)), None, "{path}");
        }
        let through = resolve(&format!("{d}/link/x"), &dir, Path::new("/h"));
        assert!(through.through_symlink);
        assert_eq!(through.canonical, dir.join("sub/x"));
    }

    #[test]
    fn a_root_keeps_the_place_it_first_resolved_to_when_its_link_is_re_pointed() {
        let dir = tmp().join("roots");
        for d in ["first", "second"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let link = dir.join("ws");
        std::os::unix::fs::symlink(dir.join("first"), &link).unwrap();
        let roots = Roots::default();
        assert_eq!(roots.resolve(&link).canonical, dir.join("first"));
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(dir.join("second"), &link).unwrap();
        assert_eq!(roots.resolve(&link).canonical, dir.join("first"));
        let under = resolve(&link.join("f").display().to_string(), &dir, Path::new("/h"));
        assert_eq!(
            under.canonical,
            dir.join("second/f"),
            "paths under it: afresh"
        );
        assert_eq!(
            Roots::default().resolve(&link).canonical,
            dir.join("second")
        );
    }

    #[test]
    fn symlink_loops_terminate() {
        let dir = tmp();
        std::os::unix::fs::symlink(dir.join("b"), dir.join("a")).unwrap();
        std::os::unix::fs::symlink(dir.join("a"), dir.join("b")).unwrap();
        let r = resolve("a/x", &dir, Path::new("/h"));
        assert!(!r.exists);
    }
}
