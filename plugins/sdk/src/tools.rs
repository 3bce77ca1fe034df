//! The tool-name map: which of each agent's tool names are the same tool, and the ACP kinds its
//! requests carry. A rule written with one agent's name (`Bash`, `run_shell_command`, `shell`)
//! applies to the same tool of every agent. The one table: the host (`acp-gate policy`) and
//! `builtin:org-policy` both read this file; docs/policy-formats.md shows it.
//!
//! Names come from the agents' sources: Claude Code's tools as its ACP adapter
//! (`@zed-industries/claude-agent-acp`) reports them in `_meta.claudeCode.toolName`, Gemini
//! CLI's `packages/core/src/tools/definitions/base-declarations.ts` (and its legacy aliases),
//! Codex's tool specs (`codex-rs/core/src/tools`).

/// One tool, under every agent's name for it.
#[derive(Debug, PartialEq, Eq)]
pub struct Tool {
    /// acp-gate's name for the tool.
    pub id: &'static str,
    /// The ACP kinds its requests carry, the first the usual one.
    pub kinds: &'static [&'static str],
    /// Claude Code's names (the first is current).
    pub claude: &'static [&'static str],
    /// Gemini CLI's names.
    pub gemini: &'static [&'static str],
    /// Codex's names.
    pub codex: &'static [&'static str],
}

/// Every tool acp-gate knows under more than one name.
pub const TOOLS: &[Tool] = &[
    Tool {
        id: "shell",
        kinds: &["execute"],
        claude: &["Bash"],
        gemini: &["run_shell_command"],
        codex: &[
            "shell",
            "local_shell",
            "container.exec",
            "exec_command",
            "shell_command",
        ],
    },
    Tool {
        id: "read",
        kinds: &["read"],
        claude: &["Read", "NotebookRead"],
        gemini: &["read_file", "read_many_files"],
        codex: &["read_file", "view_image"],
    },
    Tool {
        id: "write",
        kinds: &["edit"],
        claude: &["Write"],
        gemini: &["write_file"],
        codex: &[],
    },
    Tool {
        id: "edit",
        kinds: &["edit", "delete", "move"],
        claude: &["Edit", "MultiEdit"],
        gemini: &["replace"],
        codex: &["apply_patch"],
    },
    Tool {
        id: "notebook-edit",
        kinds: &["edit"],
        claude: &["NotebookEdit"],
        gemini: &[],
        codex: &[],
    },
    Tool {
        id: "glob",
        kinds: &["search"],
        claude: &["Glob"],
        gemini: &["glob"],
        codex: &[],
    },
    Tool {
        id: "grep",
        kinds: &["search"],
        claude: &["Grep"],
        gemini: &["grep_search", "search_file_content"],
        codex: &["grep_files"],
    },
    Tool {
        id: "list",
        kinds: &["search", "read"],
        claude: &["LS"],
        gemini: &["list_directory"],
        codex: &["list_dir"],
    },
    Tool {
        id: "web-fetch",
        kinds: &["fetch"],
        claude: &["WebFetch"],
        gemini: &["web_fetch"],
        codex: &[],
    },
    Tool {
        id: "web-search",
        kinds: &["fetch"],
        claude: &["WebSearch"],
        gemini: &["google_web_search"],
        codex: &["web_search"],
    },
    Tool {
        id: "todo",
        kinds: &["think", "other"],
        claude: &["TodoWrite"],
        gemini: &["write_todos"],
        codex: &["update_plan"],
    },
    Tool {
        id: "memory",
        kinds: &["edit", "other"],
        claude: &[],
        gemini: &["save_memory"],
        codex: &[],
    },
    Tool {
        id: "subagent",
        kinds: &["think", "other"],
        claude: &["Task", "Agent"],
        gemini: &["invoke_agent", "codebase_investigator"],
        codex: &[],
    },
    Tool {
        id: "exit-plan-mode",
        kinds: &["switch_mode"],
        claude: &["ExitPlanMode"],
        gemini: &["exit_plan_mode"],
        codex: &[],
    },
];

impl Tool {
    /// Every name of the tool, acp-gate's first.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.id)
            .chain(self.claude.iter().copied())
            .chain(self.gemini.iter().copied())
            .chain(self.codex.iter().copied())
    }
}

/// The tool `name` is a name of (ASCII case-insensitive), if it is in the map.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS
        .iter()
        .find(|tool| tool.names().any(|n| n.eq_ignore_ascii_case(name)))
}

/// Whether `pattern` names the tool `name`: the same name, another agent's name for the same
/// tool, or a match of a `*` wildcard (`mcp__github__*`), all ASCII case-insensitive.
pub fn names_tool(pattern: &str, name: &str) -> bool {
    if pattern.contains('*') {
        return wildcard(pattern.as_bytes(), name.as_bytes());
    }
    pattern.eq_ignore_ascii_case(name)
        || find(pattern).is_some_and(|tool| tool.names().any(|n| n.eq_ignore_ascii_case(name)))
}

/// `*` matches any run of bytes; everything else itself, ASCII case-insensitively.
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|at| wildcard(rest, &text[at..])),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, tail)| t.eq_ignore_ascii_case(c) && wildcard(rest, tail)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_name_finds_its_tool_once() {
        let mut seen = std::collections::BTreeMap::new();
        for tool in TOOLS {
            for name in tool.names() {
                if let Some(other) = seen.insert(name.to_ascii_lowercase(), tool.id) {
                    // Codex and Gemini CLI both call their file reader `read_file`.
                    assert_eq!(other, tool.id, "`{name}` names two tools");
                }
            }
        }
        assert_eq!(find("bash").unwrap().id, "shell");
        assert_eq!(find("run_shell_command").unwrap().id, "shell");
        assert!(find("mcp__github__create_issue").is_none());
    }

    #[test]
    fn names_match_across_agents_and_wildcards() {
        assert!(names_tool("Bash", "run_shell_command"));
        assert!(names_tool("shell", "Bash"));
        assert!(names_tool("WebSearch", "google_web_search"));
        assert!(!names_tool("WebSearch", "WebFetch"));
        assert!(!names_tool("Write", "Edit"));
        assert!(names_tool("mcp__github__*", "mcp__github__create_issue"));
        assert!(names_tool("mcp__github*", "MCP__GITHUB"));
        assert!(!names_tool("mcp__github__*", "mcp__gitlab__create_issue"));
        assert!(names_tool("my_tool", "MY_TOOL"));
        assert!(!names_tool("my_tool", "my_tool2"));
    }
}
