//! What the checker knows about a request beyond its command: the home directory, the working
//! directory, the workspace roots, the config, the path rules built from them, and where
//! a path really leads (the host follows its symlinks: `paths.resolve`), what a directory
//! holds (`paths.entries`) and which files a patch changes (`paths.patch-files`).

use std::cell::{OnceCell, RefCell};

use acp_gate_plugin::path_rules::{PathRules, Place};
use acp_gate_plugin::{PatchedFile, Resolution};
use acp_gate_shell::Command as Invocation;
use acp_gate_shell::paths::join;

use crate::config::Config;
use crate::paths::{absolutize, important_root, is_same_or_ancestor, normalize};

/// What the checker learns of the file system: from the host (its `paths` import), or from a
/// stand-in in tests.
pub trait Disk {
    /// Where a path really leads: its symlinks followed (`paths.resolve`).
    fn resolve(&self, path: &str) -> Resolution;
    /// The names in a directory (`paths.entries`); `None` when it cannot be listed.
    fn entries(&self, dir: &str) -> Option<Vec<String>>;
    /// The files a patch file changes (`paths.patch-files`); `None` when it cannot be read as
    /// a unified or git diff.
    fn patch_files(&self, file: &str) -> Option<Vec<PatchedFile>>;
}

/// A checker without a file system: every path is what it says, and nothing is there.
pub struct AsWritten;

impl Disk for AsWritten {
    fn resolve(&self, path: &str) -> Resolution {
        Resolution {
            canonical: normalize(path),
            exists: false,
            through_symlink: false,
            case_insensitive: false,
        }
    }

    fn entries(&self, _: &str) -> Option<Vec<String>> {
        None
    }

    fn patch_files(&self, _: &str) -> Option<Vec<PatchedFile>> {
        None
    }
}

/// Where a path named by a command really leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Real {
    /// The absolute path with the symlinks on the way followed.
    pub path: String,
    /// A symlink was followed: `path` is not the path as written.
    pub linked: bool,
    /// The file system holding it compares names ignoring case (`.ENV` is `.env`).
    pub folded: bool,
    /// Something is there.
    pub exists: bool,
}

/// What the checker knows about the request: where home and the workspace are, and the config.
pub struct Context<'a> {
    pub home: &'a str,
    pub cwd: &'a str,
    pub workspaces: Vec<String>,
    pub config: &'a Config,
    /// What a path may undergo: the rules the path validator judges a tool's paths by, with
    /// the config's `sensitive_paths` as more secrets.
    pub rules: PathRules<'a>,
    /// Directories that sensitive files are named under, at any depth. Built when first needed.
    guarded_dirs: OnceCell<Vec<&'a str>>,
    disk: &'a dyn Disk,
    /// What the host said of each path asked about, so that no path is resolved twice.
    resolved: RefCell<Vec<(String, Resolution)>>,
    /// The workspace roots with their symlinks followed. Built when first needed.
    real_workspaces: OnceCell<Vec<String>>,
}

impl<'a> Context<'a> {
    pub fn new(
        home: &'a str,
        cwd: &'a str,
        workspace_roots: &[String],
        config: &'a Config,
        disk: &'a dyn Disk,
    ) -> Self {
        let mut workspaces: Vec<String> = workspace_roots
            .iter()
            .filter(|w| w.starts_with('/'))
            .map(|w| normalize(w))
            .collect();
        if workspaces.is_empty() && cwd.starts_with('/') {
            workspaces.push(normalize(cwd));
        }
        Self {
            home,
            cwd,
            workspaces,
            config,
            rules: PathRules::new(home, &config.sensitive_paths, &[]),
            guarded_dirs: OnceCell::new(),
            disk,
            resolved: RefCell::new(Vec::new()),
            real_workspaces: OnceCell::new(),
        }
    }

    /// The first directory of every sensitive pattern that matches at any depth and names a
    /// file inside a directory (`.git` of `.git/hooks/**`, `.vscode` of `.vscode/tasks.json`):
    /// a tree landing there may make such a file.
    pub(crate) fn guarded_dirs(&self) -> &[&'a str] {
        self.guarded_dirs.get_or_init(|| {
            let mut dirs: Vec<&'a str> = self
                .rules
                .all_patterns()
                .filter(|p| !p.starts_with(['/', '~', '$']))
                .filter_map(|p| p.trim_start_matches("./").split_once('/'))
                .map(|(first, _)| first)
                .filter(|first| !first.contains(['*', '?', '[']) && !first.is_empty())
                .collect();
            dirs.sort_unstable();
            dirs.dedup();
            dirs
        })
    }

    /// `text` made absolute where `inv` runs; a relative path in an unknown directory is placed
    /// under a directory that matches only patterns that hold at any depth.
    pub(crate) fn absolute_anywhere(&self, inv: &Invocation, text: &str) -> String {
        self.absolute(inv, text)
            .unwrap_or_else(|| absolutize(text, self.home, "/\u{2026}"))
    }

    /// `text` made absolute where `inv` runs; `None` for a relative path in an unknown directory.
    pub(crate) fn absolute(&self, inv: &Invocation, text: &str) -> Option<String> {
        let relative = !(text.starts_with('/')
            || text.starts_with('~')
            || text.starts_with("$HOME")
            || text.starts_with("${HOME}"));
        match inv.cwd.as_str() {
            "" if relative => None,
            "" => Some(absolutize(text, self.home, self.cwd)),
            cwd => Some(absolutize(text, self.home, cwd)),
        }
    }

    /// The names in the directory `inv` runs in, as the host lists them; `None` when the
    /// directory is not known or cannot be listed.
    pub(crate) fn entries_here(&self, inv: &Invocation) -> Option<Vec<String>> {
        self.entries(inv, ".")
    }

    /// The names in the directory `dir` (named where `inv` runs), as the host lists them;
    /// `None` when it is not known or cannot be listed.
    pub(crate) fn entries(&self, inv: &Invocation, dir: &str) -> Option<Vec<String>> {
        self.disk.entries(&self.absolute(inv, dir)?)
    }

    /// The files the patch `text` (named where `inv` runs) changes; `None` when it is not known.
    pub(crate) fn patch_files(&self, inv: &Invocation, text: &str) -> Option<Vec<PatchedFile>> {
        self.disk.patch_files(&self.absolute(inv, text)?)
    }

    pub(crate) fn root(&self, abs: &str) -> Option<&'static str> {
        important_root(abs, self.home, &self.workspaces)
    }

    /// Where `text` leads when `inv` opens it: the symlinks on the way followed, the last one
    /// too when `last` (a file read or written through a link), not when the command acts on
    /// the link itself (`rm link`, `mv link x`; `rm -r link/` goes through it). `None` for a
    /// relative path in an unknown directory.
    pub(crate) fn real(&self, inv: &Invocation, text: &str, last: bool) -> Option<Real> {
        let cwd = match inv.cwd.as_str() {
            "" => self.cwd,
            cwd => cwd,
        };
        self.absolute(inv, text)?;
        let joined = join(text, self.home, cwd);
        let (dir, name) = joined.rsplit_once('/').unwrap_or(("", &joined));
        let follow = last || matches!(name, "" | "." | "..");
        let found = self.resolution(if follow || dir.is_empty() {
            &joined
        } else {
            dir
        });
        let path = if follow || dir.is_empty() {
            found.canonical
        } else {
            format!("{}/{name}", found.canonical.trim_end_matches('/'))
        };
        Some(Real {
            linked: found.through_symlink,
            folded: found.case_insensitive,
            exists: found.exists,
            path,
        })
    }

    /// The host's resolution of the absolute `path`, asked once per request.
    fn resolution(&self, path: &str) -> Resolution {
        if let Some((_, known)) = self.resolved.borrow().iter().find(|(p, _)| p == path) {
            return known.clone();
        }
        let found = self.disk.resolve(path);
        self.resolved
            .borrow_mut()
            .push((path.to_owned(), found.clone()));
        found
    }

    /// Where `text` is, for the path rules (`real`: where it leads): inside a workspace root
    /// (through its links too), outside, or unknown for a relative path in an unknown
    /// directory.
    pub(crate) fn place(&self, inv: &Invocation, text: &str, real: Option<&Real>) -> Place<'_> {
        let Some(abs) = self.absolute(inv, text) else {
            return Place::Unknown;
        };
        let real = real.filter(|r| r.linked);
        match self
            .workspaces
            .iter()
            .find(|w| is_same_or_ancestor(w, &abs))
        {
            Some(root) if real.is_none_or(|r| self.real_inside(r)) => Place::Inside { root },
            _ => Place::Outside,
        }
    }

    /// Whether the absolute `abs` (as written, or where its links lead) is inside a workspace
    /// root.
    pub(crate) fn in_workspace(&self, abs: &str) -> bool {
        self.workspaces
            .iter()
            .chain(self.real_workspaces())
            .any(|root| is_same_or_ancestor(root, abs))
    }

    /// Whether the absolute `abs` is where the system and the user keep installed programs and
    /// their libraries (which no command may write): a program there is an installed one,
    /// anywhere else (`/tmp/x/cargo`) anyone's code, whatever its name.
    pub(crate) fn installed(&self, abs: &str) -> bool {
        const SYSTEM: &[&str] = &[
            "/usr",
            "/bin",
            "/sbin",
            "/lib",
            "/lib32",
            "/lib64",
            "/opt",
            "/etc",
            "/nix/store",
            "/snap",
            "/home/linuxbrew",
        ];
        const USER: &[&str] = &["/.cargo/bin", "/.local/bin", "/go/bin", "/bin"];
        SYSTEM.iter().any(|dir| is_same_or_ancestor(dir, abs))
            || (!self.home.is_empty()
                && USER
                    .iter()
                    .any(|dir| is_same_or_ancestor(&format!("{}{dir}", self.home), abs)))
    }

    /// Whether the real path `real` is inside a workspace root (itself resolved).
    pub(crate) fn real_inside(&self, real: &Real) -> bool {
        let fold = |s: &str| {
            if real.folded {
                s.to_lowercase()
            } else {
                s.to_owned()
            }
        };
        self.real_workspaces()
            .iter()
            .any(|root| is_same_or_ancestor(&fold(root), &fold(&real.path)))
    }

    /// The workspace roots with their symlinks followed.
    pub(crate) fn real_workspaces(&self) -> &[String] {
        self.real_workspaces.get_or_init(|| {
            self.workspaces
                .iter()
                .map(|w| self.resolution(w).canonical)
                .collect()
        })
    }
}
