//! The `shell` import: a request's command read into its simple commands by the shell crate of
//! the built-in plugins (`plugins/shell`), natively, so that a plugin in any language sees a
//! command as `builtin:dangerous-command` and `builtin:org-policy` do.
//!
//! The text is the agent's, so untrusted: it is read on a thread of its own with a deep stack
//! (the parser recurses once per level of nesting; measured, at worst about 2 KiB of stack
//! per byte of input), at most [`MAX_COMMAND`] bytes of it, a few readings at once; the call
//! is awaited, so the evaluation's wall clock still ends a plugin waiting on a slow reading.

use std::sync::{Arc, LazyLock};

use acp_gate_shell::paths::absolutize;
use acp_gate_shell::{Arg, Runs, read_command};
use tokio::sync::Semaphore;

use super::wit::{shell, types};

/// The longest command line the host reads (the bytes of its shell string, or of its argv).
pub const MAX_COMMAND: usize = 32 << 10;
/// A reading thread's stack: 4 times what the deepest nesting of [`MAX_COMMAND`] bytes needs.
/// Only the pages a reading touches are ever mapped.
const STACK_BYTES: usize = 256 << 20;

/// Readings under way at once, across every plugin: one per core.
static READERS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Arc::new(Semaphore::new(cores))
});

/// Reads `command` in `cwd` and `home`: `shell.parse`.
pub async fn read(
    command: types::CommandLine,
    home: String,
    cwd: String,
) -> Result<shell::Reading, String> {
    let length = match (&command.argv, &command.shell) {
        (Some(argv), _) => argv.iter().map(|w| w.len() + 1).sum(),
        (None, Some(shell)) => shell.len(),
        (None, None) => 0,
    };
    if length > MAX_COMMAND {
        return Err(format!(
            "the command is {length} bytes long; the host reads commands of up to {MAX_COMMAND}"
        ));
    }
    let permit = (READERS.clone().acquire_owned().await).map_err(|e| e.to_string())?;
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("acp-gate-shell".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            // Held until the reading ends, even when the plugin waiting for it has timed out.
            let _permit = permit;
            let _ = sender.send(reading(&command, &home, &cwd));
        })
        .map_err(|e| format!("cannot start reading the command: {e}"))?;
    receiver
        .await
        .map_err(|_| "reading the command failed".to_owned())?
}

/// What the shell crate reads of `command`, in the contract's records.
fn reading(command: &types::CommandLine, home: &str, cwd: &str) -> Result<shell::Reading, String> {
    let (argv, text) = (command.argv.as_deref(), command.shell.as_deref());
    let reading = read_command(argv, text, home, cwd).ok_or("the request has no command")?;
    let top_level_fails =
        argv.is_none() && reading.failed.is_some() && reading.failed.as_deref() == text;
    let unknown: Vec<String> = reading.notes.into_iter().map(|n| n.reason).collect();
    if top_level_fails {
        return Err(unknown.join("; "));
    }
    let commands = reading
        .commands
        .into_iter()
        .map(|c| {
            let words = || c.argv.iter().chain(c.env.iter().map(|(_, v)| v));
            let redirected =
                (c.writes.iter().map(|a| (a, true))).chain(c.reads.iter().map(|a| (a, false)));
            let dynamic = words()
                .chain(c.writes.iter())
                .chain(c.reads.iter())
                .any(unseen);
            let place = |arg: &Arg| match c.cwd.is_empty() || arg.dynamic {
                true => arg.text.clone(),
                false => absolutize(&arg.text, home, &c.cwd),
            };
            shell::SimpleCommand {
                program: c.name.clone(),
                argv: c.argv.iter().map(|a| a.text.clone()).collect(),
                assignments: (c.env.iter())
                    .map(|(n, v)| (n.clone(), v.text.clone()))
                    .collect(),
                redirections: redirected
                    .map(|(arg, write)| shell::Redirection {
                        path: place(arg),
                        write,
                    })
                    .collect(),
                cwd: c.cwd.clone(),
                wrappers: c.wrappers.clone(),
                runs_another: c.runs != Runs::Nothing,
                dynamic,
            }
        })
        .collect();
    Ok(shell::Reading { commands, unknown })
}

/// Whether a word is only known when the command runs.
fn unseen(arg: &Arg) -> bool {
    arg.dynamic || arg.glob || arg.pipe
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(text: String) -> types::CommandLine {
        types::CommandLine {
            argv: None,
            shell: Some(text),
        }
    }

    /// `open` and `close` repeated to fill [`MAX_COMMAND`] bytes around `ls`.
    fn nested(open: &str, close: &str) -> String {
        let levels = (MAX_COMMAND - 2) / (open.len() + close.len());
        format!("{}ls{}", open.repeat(levels), close.repeat(levels))
    }

    #[tokio::test]
    async fn the_deepest_nesting_the_host_reads_does_not_exhaust_its_stack() {
        let shapes = [
            ("{ ", " }"),
            ("(", ")"),
            ("echo $(", ")"),
            ("cat <(", ")"),
            ("if true; then ", "; fi"),
            ("while true; do ", "; done"),
            ("case x in x) ", ";; esac"),
            ("f(){ ", "; }"),
            ("[[ ! ", " ]]"),
        ];
        for (open, close) in shapes {
            let text = nested(open, close);
            assert!(text.len() <= MAX_COMMAND);
            // Read (or refused as too complex), never a crash.
            let _ = read(shell(text), "/home/u".into(), "/work".into()).await;
        }
        let too_long = "x".repeat(MAX_COMMAND + 1);
        let refused = read(shell(too_long), String::new(), String::new()).await;
        assert!(
            refused
                .unwrap_err()
                .contains("the host reads commands of up to")
        );
    }

    #[tokio::test]
    async fn a_command_is_read_through_lists_wrappers_and_shells() {
        let line = "cd sub && env GIT_X=1 /usr/bin/git -C . commit -am 'fix it' > log.txt | bash -c \"git push\"";
        let reading = read(shell(line.into()), "/home/u".into(), "/work".into())
            .await
            .unwrap();
        let programs: Vec<&str> = (reading.commands.iter())
            .map(|c| c.program.as_str())
            .collect();
        assert_eq!(programs, ["cd", "env", "git", "bash", "git"]);
        let git = &reading.commands[2];
        assert_eq!(
            git.argv,
            ["/usr/bin/git", "-C", ".", "commit", "-am", "fix it"]
        );
        assert_eq!(git.assignments, [("GIT_X".to_owned(), "1".to_owned())]);
        assert_eq!(git.wrappers, ["env"]);
        assert_eq!(git.cwd, "/work/sub");
        assert!(!git.dynamic && !git.runs_another);
        assert!(reading.commands[1].runs_another);
        assert!(reading.unknown.is_empty());

        let reading = read(
            shell("eval \"$X\"; git commit -m \"$MSG\"".into()),
            String::new(),
            String::new(),
        )
        .await
        .unwrap();
        assert!(!reading.unknown.is_empty());
        assert!(
            reading
                .commands
                .iter()
                .any(|c| c.program == "git" && c.dynamic)
        );

        let unparsed = read(
            shell("git commit -m 'open".into()),
            String::new(),
            String::new(),
        )
        .await;
        assert!(unparsed.unwrap_err().contains("cannot be parsed"));
    }
}
