//! What one plugin instance owns and may reach: its WASI context (empty), its limits, its log,
//! and the host functions it imports (`log`, `paths`, `shell`). Everything a sandbox is given is given
//! in [`SandboxState::new`]; which of it a plugin may import is decided by its grants.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::StoreLimits;
use wasmtime::StoreLimitsBuilder;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::wit::{log, paths, shell, types};
use super::{Limits, clean};

/// Log lines kept per evaluation.
const MAX_LOG_LINES: usize = 32;

pub(super) struct SandboxState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(super) limits: StoreLimits,
    pub(super) logs: Vec<String>,
    /// The directories `paths.resolve` works from: the request's, set when it is called.
    pub(super) cwd: PathBuf,
    pub(super) home: PathBuf,
    /// The request's workspace roots, and where this process first found each (the
    /// runtime's, shared by every instance).
    pub(super) workspace_roots: Vec<PathBuf>,
    roots: Arc<crate::paths::Roots>,
}

impl SandboxState {
    /// A sandbox with nothing in it. Every default, and why:
    ///
    /// - WASI: no environment variables, no arguments, no preopened directory (so
    ///   `wasi:filesystem` opens nothing), an empty stdin, stdout and stderr discarded, no
    ///   sockets (and `wasi:sockets`/`wasi:http` are never granted, so never linked in). The
    ///   clocks and random sources are WASI's defaults, reachable only by a plugin granted
    ///   `wasi-clocks` / `wasi-random`: a plugin is otherwise refused at load for importing them.
    /// - Memory: at most `limits.memory_bytes` in all; growing past it traps (the plugin fails,
    ///   its `on_error` applies). At most 64 instances, tables and memories (language runtimes
    ///   are several core modules), 2^20 table elements.
    /// - CPU and time: set on the store by the caller (an epoch deadline and a wall clock).
    /// - `log`: at most 32 lines of 2000 characters, control characters removed.
    /// - `paths.resolve`: facts about the request's own paths, from its `cwd` and `home`; its
    ///   workspace roots as `roots` first found them. In the workspace only: `paths.entries`,
    ///   the names in a directory, at most `MAX_ENTRIES` of them (never their contents);
    ///   `paths.patch-files`, the names a patch file's headers give (`acp_gate_shell::patch`),
    ///   never the rest of it.
    /// - `shell.parse`: a command read in the request's `cwd` and `home`, on a thread of the
    ///   host's, up to `shell::MAX_COMMAND` bytes (see [`super::shell`]).
    pub(super) fn new(limits: Limits, roots: Arc<crate::paths::Roots>) -> SandboxState {
        SandboxState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .instances(64)
                .tables(64)
                .memories(64)
                .table_elements(1 << 20)
                .trap_on_grow_failure(true)
                .build(),
            logs: Vec::new(),
            cwd: PathBuf::new(),
            home: PathBuf::new(),
            workspace_roots: Vec::new(),
            roots,
        }
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for SandboxState {}

impl log::Host for SandboxState {
    fn write(&mut self, level: log::Level, message: String) {
        if self.logs.len() < MAX_LOG_LINES {
            let level = match level {
                log::Level::Debug => "debug",
                log::Level::Info => "info",
                log::Level::Warn => "warn",
                log::Level::Error => "error",
            };
            self.logs.push(format!("{level}: {}", clean(&message)));
        }
    }
}

impl paths::Host for SandboxState {
    fn resolve(&mut self, path: String) -> paths::Resolution {
        let r = match self
            .workspace_roots
            .iter()
            .find(|root| **root == Path::new(&path))
        {
            Some(root) => self.roots.resolve(root),
            None => crate::paths::resolve(&path, &self.cwd, &self.home),
        };
        paths::Resolution {
            canonical: r.canonical.display().to_string(),
            exists: r.exists,
            through_symlink: r.through_symlink,
            case_insensitive: r.case_insensitive,
        }
    }

    fn entries(&mut self, dir: String) -> Result<Vec<String>, String> {
        self.list(&dir)
    }

    fn patch_files(&mut self, file: String) -> Result<Vec<paths::PatchedFile>, String> {
        use acp_gate_shell::patch::Change;
        use std::io::Read;
        let path = self.in_workspace(&file)?;
        let failed = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut text = String::new();
        let read = std::fs::File::open(&path)
            .map_err(failed)?
            .take(acp_gate_shell::patch::MAX_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(failed)?;
        if read as u64 > acp_gate_shell::patch::MAX_BYTES {
            return Err(format!("{}: larger than 1 MiB", path.display()));
        }
        let files =
            acp_gate_shell::patch::files(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(files
            .into_iter()
            .map(|f| paths::PatchedFile {
                path: f.path,
                change: match f.change {
                    Change::Modify => paths::PatchChange::Modify,
                    Change::Create => paths::PatchChange::Create,
                    Change::Delete => paths::PatchChange::Delete,
                    Change::Symlink => paths::PatchChange::Symlink,
                },
            })
            .collect())
    }
}

/// The most names `paths.entries` lists: more is an error, not a partial list.
const MAX_ENTRIES: usize = 4096;

impl SandboxState {
    /// `path` (as a plugin named it), absolute, when it is inside one of the request's
    /// workspace roots with its symlinks followed: the only places `paths.entries` lists and
    /// `paths.patch-files` reads.
    fn in_workspace(&self, path: &str) -> Result<PathBuf, String> {
        let real = crate::paths::resolve(path, &self.cwd, &self.home).canonical;
        let inside = self
            .workspace_roots
            .iter()
            .any(|root| real.starts_with(self.roots.resolve(root).canonical));
        match inside {
            true => Ok(real),
            false => Err(format!("{}: outside the workspace", real.display())),
        }
    }

    /// `paths.entries`: the names in `dir`, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, String> {
        let path = self.in_workspace(dir)?;
        let failed = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&path).map_err(failed)? {
            if names.len() == MAX_ENTRIES {
                return Err(format!("{}: more than {MAX_ENTRIES} names", path.display()));
            }
            names.push(
                entry
                    .map_err(failed)?
                    .file_name()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        names.sort();
        Ok(names)
    }
}

impl shell::Host for SandboxState {
    async fn parse(&mut self, command: types::CommandLine) -> Result<shell::Reading, String> {
        let (home, cwd) = (self.home.display(), self.cwd.display());
        super::shell::read(command, home.to_string(), cwd.to_string()).await
    }
}
