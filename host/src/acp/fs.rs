//! The `fs/*` client capability: reading and writing the files the chain allowed, at the path
//! it judged. The path is resolved (every symlink followed) when the request arrives and again
//! just before the disk is touched; if the two differ, a symlink was swapped in after the
//! decision and the call is refused. The final open does not follow a symlink either.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::paths;
use crate::request::SessionContext;

/// Where `raw` leads on disk now, every symlink followed.
pub fn resolve(raw: &str, ctx: &SessionContext) -> PathBuf {
    paths::resolve(raw, &ctx.cwd, &ctx.home).canonical
}

/// Fails when `raw` no longer leads where it led at decision time.
pub fn recheck(raw: &str, ctx: &SessionContext, decided: &Path) -> Result<PathBuf> {
    let now = resolve(raw, ctx);
    if now != decided {
        bail!(
            "{raw} now leads to {} instead of {} (changed after the decision): refused",
            now.display(),
            decided.display()
        );
    }
    Ok(now)
}

/// `fs/read_text_file`: the text from 1-based `line`, at most `limit` lines.
pub fn read(path: &Path, line: Option<u32>, limit: Option<u32>) -> Result<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let text = std::io::read_to_string(file)
        .with_context(|| format!("cannot read {} as text", path.display()))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |l| l as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// `fs/write_text_file`: creates the file (and its directories) or replaces its text.
pub fn write(path: &Path, content: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(content.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_swapped_in_after_the_decision_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = SessionContext::for_workspace("s", &root);
        let decided = resolve("notes.txt", &ctx);
        assert_eq!(decided, root.join("notes.txt"));
        std::fs::write(root.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("secret"), root.join("notes.txt")).unwrap();
        assert!(recheck("notes.txt", &ctx, &decided).is_err());
        // Even a write that skipped the re-check would not follow the link.
        assert!(write(&root.join("notes.txt"), "y").is_err());
        assert_eq!(std::fs::read_to_string(root.join("secret")).unwrap(), "x");
    }

    #[test]
    fn reads_honour_line_and_limit_and_writes_create_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        write(&path, "1\n2\n3\n4\n").unwrap();
        assert_eq!(read(&path, Some(2), Some(2)).unwrap(), "2\n3\n");
        assert_eq!(read(&path, None, None).unwrap(), "1\n2\n3\n4\n");
    }
}
