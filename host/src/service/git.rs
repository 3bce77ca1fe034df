//! The workspace's git state an escalation carries (branch, upstream, the commits a push would
//! send, uncommitted changes), read with git in bounded time and without running the
//! repository's own programs.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::Git;

/// How long the whole reading may take: it comes before the escalation's own deadline.
const WITHIN: Duration = Duration::from_millis(1500);

/// The git state of the repository at `dir`; `None` when it is none, git is missing or slow.
pub async fn state(dir: &Path) -> Option<Git> {
    tokio::time::timeout(WITHIN, read(dir)).await.ok().flatten()
}

async fn read(dir: &Path) -> Option<Git> {
    let branch = match git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]).await {
        Some(branch) => branch,
        None => format!(
            "detached at {}",
            git(dir, &["rev-parse", "--short", "HEAD"]).await?
        ),
    };
    let upstream_ref = [
        "rev-parse",
        "--abbrev-ref",
        "--symbolic-full-name",
        "@{upstream}",
    ];
    let (upstream, uncommitted) = tokio::join!(
        git(dir, &upstream_ref),
        git(
            dir,
            &[
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                "--shortstat",
                "HEAD"
            ]
        ),
    );
    // Ahead of the upstream; without one, what no remote branch holds.
    let range: Vec<&str> = match &upstream {
        Some(_) => vec!["@{upstream}..HEAD"],
        None => vec!["HEAD", "--not", "--remotes"],
    };
    let count = (Git::MAX_COMMITS + 1).to_string();
    let mut log = vec!["log", "--no-decorate", "--format=%h %s", "-n", &count];
    log.extend(range);
    let mut outgoing: Vec<String> = git(dir, &log)
        .await
        .map(|out| out.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let more = outgoing.len() > Git::MAX_COMMITS;
    outgoing.truncate(Git::MAX_COMMITS);
    Some(Git {
        branch,
        upstream,
        outgoing,
        more,
        uncommitted: uncommitted.filter(|s| !s.is_empty()),
    })
}

/// `git ARGS` in `dir`: its output, trimmed, when it succeeds. The repository's configuration
/// cannot make it run a program (no pager, editor, fsmonitor or hooks; no prompts), and it
/// takes no lock.
async fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args([
            "--no-pager",
            "--no-optional-locks",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[tokio::test]
    async fn a_repository_says_its_branch_outgoing_commits_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        assert_eq!(state(repo).await, None, "no repository");
        run(repo, &["init", "-q", "-b", "feature"]);
        std::fs::write(repo.join("a.txt"), "one\n").unwrap();
        run(repo, &["add", "a.txt"]);
        run(repo, &["commit", "-q", "-m", "first"]);
        std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
        let git = state(repo).await.unwrap();
        assert_eq!(git.branch, "feature");
        assert_eq!(git.upstream, None);
        assert_eq!(git.outgoing.len(), 1, "on no remote: {:?}", git.outgoing);
        assert!(git.outgoing[0].ends_with(" first"), "{:?}", git.outgoing);
        assert!(!git.more);
        let changed = git.uncommitted.unwrap();
        assert!(
            changed.contains("1 file changed") && changed.contains("1 insertion"),
            "{changed}"
        );
        // A pager or fsmonitor the repository names is never run.
        let canary = repo.join("ran");
        let program = format!("touch {}", canary.display());
        run(repo, &["config", "core.fsmonitor", &program]);
        run(repo, &["config", "core.pager", &program]);
        assert!(state(repo).await.is_some());
        assert!(!canary.exists(), "the repository's program ran");
    }
}
