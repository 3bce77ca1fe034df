//! Who and where a gate runs, as its escalations, audit records and fleet reports name it: the
//! developer's login, the machine, the workspace and the agent.

use std::path::{Path, PathBuf};

/// Who and where a gate runs, as escalations and audit records name it.
#[derive(Debug, Clone)]
pub struct Origin {
    pub developer: String,
    pub machine: String,
    pub workspace: PathBuf,
    /// The agent's program (its file name).
    pub agent: String,
}

impl Origin {
    /// This process's user and machine, for `agent` (its command) in `workspace`.
    pub fn here(workspace: &Path, agent: &[String]) -> Origin {
        let developer = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| // SAFETY: getuid cannot fail.
            format!("uid {}", unsafe { libc::getuid() }));
        let mut name = [0u8; 256];
        // SAFETY: gethostname writes at most `len` bytes into the buffer it is given.
        let machine = match unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } {
            0 => String::from_utf8_lossy(name.split(|b| *b == 0).next().unwrap_or_default())
                .into_owned(),
            _ => "unknown".to_owned(),
        };
        Origin {
            developer,
            machine,
            workspace: workspace.to_path_buf(),
            agent: agent_name(agent),
        }
    }
}

/// An agent's command as one name: its program's file name (`node x.mjs`: `x.mjs`).
pub fn agent_name(agent: &[String]) -> String {
    let base = |word: &String| {
        Path::new(word)
            .file_name()
            .map_or_else(|| word.clone(), |n| n.to_string_lossy().into_owned())
    };
    let interpreters = ["node", "python", "python3", "bun", "deno", "npx", "uvx"];
    match agent {
        [program, script, ..] if interpreters.contains(&base(program).as_str()) => base(script),
        [program, ..] => base(program),
        [] => "(unknown)".to_owned(),
    }
}
