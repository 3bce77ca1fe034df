//! What a chain kept resident was loaded from: every file read while loading it (the layers,
//! plugins, signatures, keys, tags), each with its identity then, so that a change to any of
//! them (edited, replaced, created, removed) is seen before the chain decides again.
//!
//! The readers call [`noted`] on the way; it records only while [`recording`] runs a load,
//! one at a time.
//!
//! A file's times are kept at the kernel's tick, so two writes of the same length a moment
//! apart can look alike: as git does with its index, a file changed within [`RACY`] of the
//! load never counts as unchanged, and the chain is loaded again until it settles.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How recent a change must be for its file's stamp not to be trusted.
const RACY: Duration = Duration::from_secs(2);

/// The paths read by the load being recorded; `None` when none is.
static READ: Mutex<Option<Vec<PathBuf>>> = Mutex::new(None);
/// Held by the load being recorded: reads of two at once would mix.
static RECORDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Says that the load under way reads `path` (a file that does not exist counts: its
/// creation is a change too).
pub fn noted(path: &Path) {
    let mut read = READ.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(read) = read.as_mut() {
        read.push(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
    }
}

/// Runs `load` (after any other being recorded), and returns what it gave with the stamps of
/// every file it read.
pub async fn recording<T>(load: impl Future<Output = T>) -> (T, Stamps) {
    let _alone = RECORDING.lock().await;
    let started = SystemTime::now();
    *READ.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
    let loaded = load.await;
    let mut read = READ
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default();
    read.sort();
    read.dedup();
    let files = read
        .into_iter()
        .map(|path| {
            let identity = Identity::of(&path);
            (path, identity)
        })
        .collect::<Vec<(PathBuf, Option<Identity>)>>();
    let settled = started.checked_sub(RACY).unwrap_or(SystemTime::UNIX_EPOCH);
    let racy = files
        .iter()
        .filter_map(|(_, identity)| *identity)
        .any(|identity| identity.changed() >= settled);
    (loaded, Stamps { files, racy })
}

/// The files a load read, as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamps {
    files: Vec<(PathBuf, Option<Identity>)>,
    /// A file had changed just before the load: its stamp may hide the next change.
    racy: bool,
}

impl Stamps {
    /// Whether what was loaded still stands: every file as it was read (absent ones still
    /// absent), none of them changed just before.
    pub fn fresh(&self) -> bool {
        !self.racy && self.unchanged()
    }

    /// Whether every file is still as it was read.
    fn unchanged(&self) -> bool {
        self.files
            .iter()
            .all(|(path, identity)| Identity::of(path) == *identity)
    }
}

/// A file's identity and contents' stamp: which file (device, inode) and when and how its
/// contents last changed (length, modification and change times, to the nanosecond; the
/// change time cannot be set back by the file's owner).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// When the file last changed (its contents or its inode).
    fn changed(&self) -> SystemTime {
        let (seconds, nanos) = self.ctime.max(self.mtime);
        let since_epoch = Duration::new(seconds.max(0) as u64, nanos.clamp(0, 999_999_999) as u32);
        SystemTime::UNIX_EPOCH + since_epoch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_edited_created_or_removed_file_makes_the_stamps_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (kept, absent) = (dir.path().join("kept"), dir.path().join("absent"));
        std::fs::write(&kept, "a").unwrap();
        let ((), stamps) = recording(async {
            noted(&kept);
            noted(&absent);
            noted(&kept);
        })
        .await;
        assert_eq!(stamps.files.len(), 2);
        assert!(stamps.unchanged());
        // Written a moment ago: not trusted yet, whatever its stamp says.
        assert!(!stamps.fresh());
        std::fs::write(&kept, "bb").unwrap();
        assert!(!stamps.unchanged(), "an edit went unseen");
        let ((), stamps) = recording(async { noted(&absent) }).await;
        assert!(stamps.unchanged());
        std::fs::write(&absent, "").unwrap();
        assert!(!stamps.unchanged(), "a created file went unseen");
        let ((), stamps) = recording(async { noted(&absent) }).await;
        std::fs::remove_file(&absent).unwrap();
        assert!(!stamps.unchanged(), "a removed file went unseen");
        // Outside a recording, reads are not kept.
        let _alone = RECORDING.lock().await;
        noted(&kept);
        assert!(READ.lock().unwrap().is_none());
    }

    #[tokio::test]
    async fn a_file_changed_long_before_the_load_is_trusted() {
        // Installed with the system, long before this test.
        let ((), stamps) = recording(async { noted(Path::new("/bin/sh")) }).await;
        assert!(stamps.fresh());
    }
}
