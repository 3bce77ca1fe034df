//! Which files a patch changes, read from its headers as `patch` and `git apply` read them: what
//! a command applying it writes (the host's `paths.patch-files`, and plugins' tests).
//!
//! Only unified and git diffs are read (in a mailbox too, as `git am` takes them). Anything else
//! a patch program would act on is refused rather than guessed at: a context or normal diff, an
//! ed script (which GNU `patch` hands to `ed`), a name in C quotes. Hunks are skipped by their
//! line counts, so a removed line that reads `--- x` is not taken for a header. What is refused
//! is said without quoting the file: a plugin learns the names a patch gives, nothing else.

/// The largest patch read.
pub const MAX_BYTES: u64 = 1 << 20;

/// How a patch changes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Modify,
    Create,
    Delete,
    /// Created as, or turned into, a symbolic link (git's mode 120000).
    Symlink,
}

/// A file a patch names, as it names it (before `-p` strips its leading directories).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    pub path: String,
    pub change: Change,
}

/// The files the patch `text` changes, in order; an error says what else it holds.
pub fn files(text: &str) -> Result<Vec<Patched>, String> {
    let mut out: Vec<Patched> = Vec::new();
    let mut lines = text.lines().peekable();
    // The mode a git header gave the file it is about: a link, or a file created or deleted.
    let mut git: Option<Change> = None;
    let push = |path: &str, change: Change, out: &mut Vec<Patched>| -> Result<(), String> {
        let path = header_path(path)?;
        if path != "/dev/null" {
            out.push(Patched {
                path: path.to_owned(),
                change,
            });
        }
        Ok(())
    };
    while let Some(line) = lines.next() {
        if let Some(names) = line.strip_prefix("diff --git ") {
            git = Some(Change::Modify);
            // `a/X b/Y`: the names again in `---`/`+++` when there are hunks; a rename or a
            // mode change alone has only these (and `rename from`/`to`).
            if let Some((old, new)) = names.split_once(" b/") {
                push(old, Change::Modify, &mut out)?;
                push(&format!("b/{new}"), Change::Modify, &mut out)?;
            } else {
                return Err(format!(
                    "a git header whose names cannot be told apart: `{line}`"
                ));
            }
        } else if let Some(mode) = line
            .strip_prefix("new file mode ")
            .or_else(|| line.strip_prefix("new mode "))
        {
            let change = if mode.trim() == "120000" {
                Change::Symlink
            } else {
                Change::Create
            };
            git = Some(change);
            if let Some(last) = out.last_mut() {
                last.change = change;
            }
        } else if line.starts_with("deleted file mode ") {
            git = Some(Change::Delete);
            if let Some(last) = out.last_mut() {
                last.change = Change::Delete;
            }
        } else if let Some(path) = line.strip_prefix("rename from ") {
            push(path, Change::Delete, &mut out)?;
        } else if let Some(path) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("copy to "))
        {
            let change = match git {
                Some(Change::Symlink) => Change::Symlink,
                _ => Change::Create,
            };
            push(path, change, &mut out)?;
        } else if let Some(old) = line.strip_prefix("--- ")
            && let Some(new) = lines.peek().and_then(|l| l.strip_prefix("+++ "))
        {
            let created = header_path(old)? == "/dev/null";
            let deleted = header_path(new)? == "/dev/null";
            let change = match git.take() {
                Some(Change::Symlink) => Change::Symlink,
                _ if created => Change::Create,
                _ if deleted => Change::Delete,
                _ => Change::Modify,
            };
            push(old, change, &mut out)?;
            push(new, change, &mut out)?;
            lines.next();
        } else if let Some(range) = line.strip_prefix("@@ -") {
            skip_hunk(range, &mut lines)?;
        } else if let Some(path) = line.strip_prefix("Index: ") {
            // GNU patch falls back on it when the names of `---` and `+++` do not exist.
            push(path, Change::Modify, &mut out)?;
        } else if line.starts_with("*** ") || line == "***************" {
            return Err("a context diff (only unified and git diffs are read)".into());
        } else if is_normal_or_ed(line) {
            return Err("a normal diff or an ed script, which `patch` hands to `ed`".into());
        }
    }
    if out.is_empty() {
        return Err("no unified or git diff in it".into());
    }
    Ok(out)
}

/// A header's name: up to a tab (a timestamp follows it); a name in C quotes is refused.
fn header_path(text: &str) -> Result<&str, String> {
    let name = text.split('\t').next().unwrap_or(text).trim_end();
    if name.starts_with('"') {
        return Err("a name in C quotes".into());
    }
    Ok(name)
}

/// Skips the lines of a hunk whose header (after `@@ -`) is `range`.
fn skip_hunk<'a>(
    range: &str,
    lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>,
) -> Result<(), String> {
    let count = |part: &str| -> Option<u64> {
        match part.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => part.parse::<u64>().ok().map(|_| 1),
        }
    };
    let mut parts = range.split_whitespace();
    let old = parts.next().and_then(count);
    let new = parts
        .next()
        .and_then(|p| p.strip_prefix('+'))
        .and_then(count);
    let (Some(mut old), Some(mut new)) = (old, new) else {
        return Err("a hunk header that does not parse".into());
    };
    while old > 0 || new > 0 {
        let Some(line) = lines.next() else {
            return Ok(());
        };
        match line.as_bytes().first() {
            Some(b' ') | None => {
                old = old.saturating_sub(1);
                new = new.saturating_sub(1);
            }
            Some(b'-') => old = old.saturating_sub(1),
            Some(b'+') => new = new.saturating_sub(1),
            Some(b'\\') => {}
            _ => return Err("a hunk line that is not one".into()),
        }
    }
    Ok(())
}

/// A normal diff's command (`3c3`, `5,7d4`) or an ed script's (`12a`, `3,4d`, `w`).
fn is_normal_or_ed(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit() || c == ',');
    rest.len() < line.len()
        && rest
            .strip_prefix(['a', 'c', 'd', 'i', 's'])
            .is_some_and(|tail| {
                tail.is_empty() || tail.chars().all(|c| c.is_ascii_digit() || c == ',')
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, Change)> {
        files(text)
            .unwrap()
            .into_iter()
            .map(|p| (p.path, p.change))
            .collect()
    }

    #[test]
    fn a_unified_diff_names_its_files_and_a_removed_line_like_a_header_is_not_one() {
        let text = "--- a/src/main.rs\t2026-01-01\n+++ b/src/main.rs\t2026-01-02\n@@ -1,3 +1,2 @@\n fn main() {\n---- not a header\n+++ neither\n }\n";
        assert_eq!(
            names(text),
            vec![
                ("a/src/main.rs".into(), Change::Modify),
                ("b/src/main.rs".into(), Change::Modify)
            ]
        );
    }

    #[test]
    fn git_headers_say_what_is_created_deleted_renamed_and_linked() {
        let text = "From 1 Mon Sep 17 00:00:00 2001\nSubject: x\n\n---\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\ndiff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/a.rs b/b.rs\nsimilarity index 100%\nrename from a.rs\nrename to b.rs\ndiff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+/etc\n";
        let got = names(text);
        assert!(got.contains(&("b/new.txt".into(), Change::Create)));
        assert!(got.contains(&("a/old.txt".into(), Change::Delete)));
        assert!(got.contains(&("a.rs".into(), Change::Delete)));
        assert!(got.contains(&("b.rs".into(), Change::Create)));
        assert!(got.contains(&("b/link".into(), Change::Symlink)));
    }

    #[test]
    fn anything_else_a_patch_program_acts_on_is_refused() {
        for text in [
            "*** a.c\n--- a.c\n***************\n",
            "3c3\n< a\n---\n> b\n",
            "1,2d\nw\n",
            "--- \"a/we\\tird\"\n+++ \"b/we\\tird\"\n",
            "just some text\n",
        ] {
            assert!(files(text).is_err(), "{text}");
        }
    }
}
