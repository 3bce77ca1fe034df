//! The normalisation of every source's shapes, by example.

use super::gemini::split_title;
use super::*;
use serde_json::json;

fn ctx() -> SessionContext {
    SessionContext {
        session_id: "s".into(),
        cwd: "/ws".into(),
        workspace_roots: vec!["/ws".into()],
        home: "/home/u".into(),
    }
}

fn normalise(params: Value, earlier: Option<Value>) -> ToolRequest {
    ToolRequest::from_permission_request(&params, earlier.as_ref(), &ctx()).unwrap()
}

#[test]
fn claude_bash_without_kind_is_execute() {
    let r = normalise(
        json!({"sessionId": "s1", "toolCall": {"toolCallId": "t", "title": "Bash", "rawInput": {"command": "ls -la"}},
               "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}),
        None,
    );
    assert_eq!(r.kind, ToolKind::Execute);
    assert_eq!(r.command.unwrap().shell.as_deref(), Some("ls -la"));
    assert_eq!(r.session_id, "s1");
    assert_eq!(r.options[0].kind, OptionKind::AllowOnce);
}

#[test]
fn declared_read_with_a_command_is_still_execute() {
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "read", "rawInput": {"command": "rm -rf /"}}}),
        None,
    );
    assert_eq!(r.kind, ToolKind::Execute);
    assert_eq!(r.declared_kind, Some(ToolKind::Read));
}

#[test]
fn earlier_tool_call_update_supplies_kind_and_input() {
    let earlier = json!({"toolCallId": "t", "kind": "edit", "rawInput": {"file_path": "~/.ssh/authorized_keys", "content": "k"}});
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "title": "Write"}}),
        Some(earlier),
    );
    assert_eq!(r.kind, ToolKind::Edit);
    assert_eq!(
        r.paths[0].absolute,
        Path::new("/home/u/.ssh/authorized_keys")
    );
    assert_eq!(r.paths[0].access, Access::Write);
    assert_eq!(r.diffs[0].new_text, "k");
}

#[test]
fn codex_argv_and_cwd() {
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "rawInput": {"command": ["bash", "-lc", "cargo test"], "cwd": "/elsewhere"}}}),
        None,
    );
    assert_eq!(
        r.command.unwrap().argv.unwrap(),
        ["bash", "-lc", "cargo test"]
    );
    assert_eq!(r.cwd, Path::new("/elsewhere"));
    assert_eq!(r.paths[0].origin, "cwd");
}

#[test]
fn gemini_command_in_title_and_diff_locations() {
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "rm -rf ~ [in /ws] (clean up)"}}),
        None,
    );
    assert_eq!(r.command.unwrap().shell.as_deref(), Some("rm -rf ~"));
    assert_eq!(r.cwd, Path::new("/ws"));
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "edit", "title": "WriteFile",
            "locations": [{"path": "/ws/a.rs"}],
            "content": [{"type": "diff", "path": "/etc/passwd", "oldText": null, "newText": "x"}]}}),
        None,
    );
    let written: Vec<_> = r
        .paths
        .iter()
        .map(|p| p.absolute.display().to_string())
        .collect();
    assert_eq!(written, ["/ws/a.rs", "/etc/passwd"]);
}

#[test]
fn unknown_option_kinds_are_dropped_and_missing_tool_call_is_an_error() {
    let r = normalise(
        json!({"toolCall": {}, "options": [{"optionId": "x", "kind": "maybe"}]}),
        None,
    );
    assert!(r.options.is_empty());
    assert_eq!(r.kind, ToolKind::Other);
    assert!(ToolRequest::from_permission_request(&json!({}), None, &ctx()).is_err());
}
/// The paths of `r` as (absolute, access) pairs.
fn touched(r: &ToolRequest) -> Vec<(String, Access)> {
    r.paths
        .iter()
        .map(|p| (p.absolute.display().to_string(), p.access))
        .collect()
}

/// A permission request as Claude Code's adapter sends it: no kind, the tool's input.
fn claude(title: &str, input: Value) -> ToolRequest {
    normalise(
        json!({"sessionId": "s", "toolCall": {"toolCallId": "toolu_1", "title": title, "rawInput": input}}),
        None,
    )
}

#[test]
fn notebook_edits_are_writes_with_or_without_the_earlier_tool_call() {
    let input = json!({"notebook_path": "/ws/analysis.ipynb", "cell_id": "c1",
        "new_source": "import os\nos.system('id')", "edit_mode": "replace"});
    let r = claude("Edit Notebook /ws/analysis.ipynb", input.clone());
    assert_eq!(r.kind, ToolKind::Edit);
    assert_eq!(
        touched(&r),
        [("/ws/analysis.ipynb".to_owned(), Access::Write)]
    );
    assert_eq!(r.diffs[0].new_text, "import os\nos.system('id')");
    let earlier = json!({"toolCallId": "toolu_1", "kind": "edit", "rawInput": input,
        "locations": [{"path": "/ws/analysis.ipynb"}]});
    let r = normalise(
        json!({"toolCall": {"toolCallId": "toolu_1", "title": "Edit Notebook /ws/analysis.ipynb"}}),
        Some(earlier),
    );
    assert_eq!(r.kind, ToolKind::Edit);
    assert_eq!(r.paths[0].access, Access::Write);
    // Deleting a cell carries no text but still rewrites the notebook.
    let r = claude(
        "Edit Notebook",
        json!({"notebook_path": "~/.ipython/profile_default/startup/x.ipynb", "cell_id": "c1", "edit_mode": "delete"}),
    );
    assert_eq!(r.kind, ToolKind::Edit);
    assert_eq!(
        touched(&r),
        [(
            "/home/u/.ipython/profile_default/startup/x.ipynb".to_owned(),
            Access::Write
        )]
    );
    // Reading a notebook (Claude Code's NotebookRead has a cell_id too) stays a read.
    let r = claude(
        "Read Notebook /ws/a.ipynb",
        json!({"notebook_path": "/ws/a.ipynb", "cell_id": "c1"}),
    );
    assert_eq!(r.kind, ToolKind::Read);
    assert_eq!(r.paths[0].access, Access::Read);
}

#[test]
fn file_content_under_any_key_the_agents_use_is_a_write() {
    for input in [
        json!({"file_path": "/ws/a.rs", "content": "x"}),
        json!({"file_path": "/ws/a.rs", "old_string": "a", "new_string": "b"}),
        json!({"filePath": "/ws/a.rs", "oldString": "a", "newString": "b"}),
        json!({"path": "/ws/a.rs", "old_str": "a", "new_str": "b"}),
        json!({"path": "/ws/a.rs", "file_text": "x"}),
        json!({"path": "/ws/a.rs", "newText": "x"}),
        json!({"file_path": "/ws/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
        json!({"path": "/ws/a.rs", "diff": "@@ -1 +1 @@\n-a\n+b"}),
    ] {
        for declared in [
            None,
            Some("read"),
            Some("think"),
            Some("other"),
            Some("search"),
        ] {
            let mut call = json!({"toolCallId": "t", "title": "x", "rawInput": input});
            if let Some(kind) = declared {
                call["kind"] = json!(kind);
            }
            let r = normalise(json!({ "toolCall": call }), None);
            assert_eq!(r.kind, ToolKind::Edit, "{input} declared {declared:?}");
            assert_eq!(
                touched(&r),
                [("/ws/a.rs".to_owned(), Access::Write)],
                "{input} declared {declared:?}"
            );
        }
    }
}

#[test]
fn multi_edit_keeps_every_edit() {
    let r = claude(
        "Edit /ws/a.rs",
        json!({"file_path": "/ws/a.rs", "edits": [
            {"old_string": "a", "new_string": "b"},
            {"old_string": "c", "new_string": "d", "replace_all": true}]}),
    );
    let texts: Vec<_> = r
        .diffs
        .iter()
        .map(|d| (d.old_text.as_deref(), d.new_text.as_str()))
        .collect();
    assert_eq!(texts, [(Some("a"), "b"), (Some("c"), "d")]);
}

#[test]
fn a_think_or_other_with_a_diff_is_a_write() {
    for declared in ["think", "other", "read"] {
        let r = normalise(
            json!({"toolCall": {"toolCallId": "t", "kind": declared, "title": "Planning",
                "content": [{"type": "diff", "path": "/home/u/.bashrc", "oldText": null, "newText": "curl x | sh"}]}}),
            None,
        );
        assert_eq!(r.kind, ToolKind::Edit, "{declared}");
        assert_eq!(touched(&r), [("/home/u/.bashrc".to_owned(), Access::Write)]);
    }
    // An MCP tool's `path` does not make it a read.
    let r = claude("mcp__deploy__run", json!({"path": "src"}));
    assert_eq!(r.kind, ToolKind::Other);
    let r = claude("Read File", json!({"file_path": "src/a.rs"}));
    assert_eq!(r.kind, ToolKind::Read);
    // Claude Code's Task and TodoWrite are thoughts without a file payload.
    let r = claude(
        "Update TODOs",
        json!({"todos": [{"content": "fix", "status": "pending", "activeForm": "Fixing"}]}),
    );
    assert_eq!(r.kind, ToolKind::Other);
    assert!(r.paths.is_empty());
}

#[test]
fn moves_name_both_ends() {
    let r = claude(
        "Move",
        json!({"source": "src/old.rs", "destination": "/home/u/.local/bin/ls"}),
    );
    assert_eq!(r.kind, ToolKind::Move);
    assert_eq!(
        touched(&r),
        [
            ("/ws/src/old.rs".to_owned(), Access::Delete),
            ("/home/u/.local/bin/ls".to_owned(), Access::Write)
        ]
    );
}

#[test]
fn codex_patch_changes_name_every_file_with_what_happens_to_it() {
    let r = normalise(
        json!({"toolCall": {"toolCallId": "call_1", "kind": "edit", "status": "pending",
            "title": "Edit a.rs, old.rs",
            "locations": [{"path": "/ws/b.rs"}, {"path": "/ws/old.rs"}],
            "rawInput": {"call_id": "call_1", "turn_id": "1", "reason": null, "grant_root": null,
                "changes": {
                    "/ws/a.rs": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": "/ws/b.rs"},
                    "/ws/old.rs": {"type": "delete", "content": "x"},
                    "/ws/.git/hooks/pre-commit": {"add": {"content": "#!/bin/sh\nid"}}}}}}),
        None,
    );
    assert_eq!(r.kind, ToolKind::Edit);
    let mut paths = touched(&r);
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        paths,
        [
            ("/ws/.git/hooks/pre-commit".to_owned(), Access::Write),
            ("/ws/a.rs".to_owned(), Access::Delete),
            ("/ws/b.rs".to_owned(), Access::Write),
            ("/ws/old.rs".to_owned(), Access::Delete),
            ("/ws/old.rs".to_owned(), Access::Write),
        ]
    );
}

#[test]
fn searches_read_their_directory_or_the_working_directory() {
    // Claude Code's Glob and Grep without a path search the working directory.
    let r = claude("Find `**/*.rs`", json!({"pattern": "**/*.rs"}));
    assert_eq!(r.kind, ToolKind::Search);
    assert_eq!(touched(&r), [("/ws".to_owned(), Access::Read)]);
    let r = claude("grep \"TODO\"", json!({"pattern": "TODO"}));
    assert_eq!(touched(&r), [("/ws".to_owned(), Access::Read)]);
    // A glob's pattern says where it looks; a grep's pattern is a regex, not a path.
    let r = claude("Find `~/.ssh/id_*`", json!({"pattern": "~/.ssh/id_*"}));
    assert_eq!(
        touched(&r),
        [
            ("/ws".to_owned(), Access::Read),
            ("/home/u/.ssh".to_owned(), Access::Read)
        ]
    );
    let r = claude(
        "Find `/etc` `*.conf`",
        json!({"pattern": "*.conf", "path": "/etc"}),
    );
    assert_eq!(touched(&r), [("/etc".to_owned(), Access::Read)]);
    let r = claude("Find `src/../../*`", json!({"pattern": "src/../../**/*"}));
    assert!(touched(&r).contains(&("/".to_owned(), Access::Read)));
    let r = claude("Find `**/../x`", json!({"pattern": "**/../secret"}));
    assert!(touched(&r).contains(&("/".to_owned(), Access::Read)));
    let r = claude(
        "grep -n \"/api/users\" src",
        json!({"pattern": "/api/users", "path": "src", "glob": "*.ts", "output_mode": "content", "-n": true}),
    );
    assert_eq!(touched(&r), [("/ws/src".to_owned(), Access::Read)]);
    // A pattern is never a path to write.
    assert!(r.paths.iter().all(|p| p.access == Access::Read));
}

#[test]
fn title_only_commands_drop_only_what_cannot_be_command() {
    let split = |t: &str| split_title(t);
    let plain = |c: &str| (c.to_owned(), None::<String>);
    let with_dir = |c: &str, d: &str| (c.to_owned(), Some(d.to_owned()));
    assert_eq!(split("npm test"), plain("npm test"));
    assert_eq!(split("npm test (Run the tests)"), plain("npm test"));
    assert_eq!(split("ls -la [in src]"), with_dir("ls -la", "src"));
    assert_eq!(
        split("cargo build [in crates/core] (Build the core crate (debug))"),
        with_dir("cargo build", "crates/core")
    );
    assert_eq!(
        split("git status (Check the project's status!)"),
        plain("git status")
    );
    // A part with shell syntax, or a `(` where a subshell can start, stays.
    for title in [
        "echo ok; (rm -rf ~)",
        "echo ok && (rm -rf ~)",
        "true || (curl x | sh)",
        "time (rm -rf /)",
        "time -p (rm -rf /)",
        "coproc worker (rm -rf /)",
        "f () (rm -rf /)",
        "echo $(whoami)",
        "(cd / && rm -rf x)",
        "ls (x; rm -rf ~)",
        "ls (list $HOME)",
        "rm -rf ~ (x)",
        "ls [in $HOME]",
        "ls [in ~]",
        "ls [in /tmp;rm -rf ~]",
        " (only a description)",
    ] {
        assert_eq!(split(title), plain(title.trim()), "{title}");
    }
}

#[test]
fn gemini_call_ids_name_their_tool() {
    let named = |id: &str| {
        normalise(
            json!({"toolCall": {"toolCallId": id, "kind": "edit", "title": "Writing to .env"}}),
            None,
        )
        .tool_name
    };
    assert_eq!(
        named("write_file-1732431234567").as_deref(),
        Some("write_file")
    );
    assert_eq!(
        named("run_shell_command-1").as_deref(),
        Some("run_shell_command")
    );
    // Not Gemini CLI's shape, or not one of its tools: no name.
    assert_eq!(named("toolu_01Edit"), None);
    assert_eq!(named("write_file-x1"), None);
    assert_eq!(named("Bash-12"), None);
    assert_eq!(named("my_tool-12"), None);
}

#[test]
fn gemini_title_only_commands_run_in_their_directory() {
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "make clean [in ../other] (Clean)"}}),
        None,
    );
    assert_eq!(touched(&r), [("/other".to_owned(), Access::Read)]);
    assert_eq!(r.cwd, Path::new("/other"));
    assert_eq!(r.command.unwrap().shell.as_deref(), Some("make clean"));
    // Newer Gemini CLI: the title is the command, the directory is in the explanation.
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "rm -rf build",
            "content": [{"type": "content", "content": {"type": "text", "text": "[in /home/u] (Clean up)"}}]}}),
        None,
    );
    assert_eq!(r.command.unwrap().shell.as_deref(), Some("rm -rf build"));
    assert_eq!(r.cwd, Path::new("/home/u"));
    let r = normalise(
        json!({"toolCall": {"toolCallId": "t", "kind": "execute", "title": "echo ok; (rm -rf ~)"}}),
        None,
    );
    assert_eq!(
        r.command.unwrap().shell.as_deref(),
        Some("echo ok; (rm -rf ~)")
    );
}

#[test]
fn v2_subjects_read_as_the_tool_calls_they_describe() {
    let command = normalise(
        json!({"sessionId": "s", "title": "Run tests", "subject": {"type": "command", "command": "cargo test", "cwd": "/ws/crate", "terminalId": "t9"}}),
        None,
    );
    assert_eq!(command.kind, ToolKind::Execute);
    assert_eq!(
        command.command.as_ref().unwrap().shell.as_deref(),
        Some("cargo test")
    );
    assert_eq!(command.cwd, PathBuf::from("/ws/crate"));
    assert_eq!(command.tool_call_id, "t9");
    assert_eq!(command.title, "Run tests");
    assert_eq!(command.unknown_subject(), None);

    let call = normalise(
        json!({"sessionId": "s", "title": "Edit", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c", "name": "Write", "rawInput": {"file_path": "/ws/a.rs", "content": "x"}}}}),
        None,
    );
    assert_eq!(
        (call.kind, call.tool_name.as_deref()),
        (ToolKind::Edit, Some("Write"))
    );
    assert_eq!(
        call.title, "Edit",
        "the request's title where the tool call has none"
    );

    let bare = normalise(json!({"sessionId": "s", "title": "Tidy up"}), None);
    assert_eq!(
        (bare.kind, bare.title.as_str()),
        (ToolKind::Other, "Tidy up")
    );
    let odd = normalise(
        json!({"sessionId": "s", "title": "cargo test", "subject": {"type": "_x", "command": "rm -rf /"}}),
        None,
    );
    assert_eq!(odd.unknown_subject(), Some("_x"));
    assert!(
        odd.command.is_none(),
        "nothing is read from a subject of an unknown type"
    );

    for unreadable in [
        json!({"sessionId": "s", "subject": {"type": "command", "command": "ls", "cwd": "/ws"}}),
        json!({"sessionId": "s", "title": "ls", "subject": {"type": "command", "command": "ls", "cwd": "ws"}}),
        json!({"sessionId": "s", "title": "ls", "subject": {"type": "tool_call"}}),
        json!({"sessionId": "s", "title": "ls", "subject": "command"}),
        json!({"sessionId": "s", "toolCall": "ls"}),
        json!({"sessionId": "s", "title": "ls", "toolCall": {"toolCallId": "t", "title": "ls"},
               "subject": {"type": "command", "command": "rm -rf ~", "cwd": "/ws"}}),
    ] {
        assert!(
            ToolRequest::from_permission_request(&unreadable, None, &ctx()).is_err(),
            "{unreadable}"
        );
    }
}

/// The origins of `r`'s paths.
fn origins(r: &ToolRequest) -> Vec<&str> {
    r.paths.iter().map(|p| p.origin.as_str()).collect()
}

#[test]
fn listing_tools_read_names_only_whoever_sends_them() {
    // Claude Code's LS and Glob: by the adapter's titles, or by their names.
    let ls = claude(
        "List the `/home/u/.ssh` directory's contents",
        json!({"path": "/home/u/.ssh"}),
    );
    assert_eq!(touched(&ls), [("/home/u/.ssh".to_owned(), Access::Read)]);
    assert_eq!(origins(&ls), ["listing:raw-input.path"]);
    let named = normalise(
        json!({"toolCall": {"toolCallId": "t", "name": "LS", "title": "LS", "rawInput": {"path": "~/.aws"}}}),
        None,
    );
    assert_eq!(
        (named.kind, origins(&named)[0]),
        (ToolKind::Search, "listing:raw-input.path")
    );
    let glob = claude("Find `~/.ssh/id_*`", json!({"pattern": "~/.ssh/id_*"}));
    assert!(
        origins(&glob).iter().all(|o| o.starts_with(LISTING)),
        "{glob:?}"
    );
    // Gemini CLI's list_directory names its directory only in its title; Codex's list_dir.
    let gemini = normalise(
        json!({"toolCall": {"toolCallId": "list_directory-1732431234567", "kind": "search", "title": "../other", "locations": []}}),
        None,
    );
    assert_eq!(touched(&gemini), [("/other".to_owned(), Access::Read)]);
    assert_eq!(origins(&gemini), ["listing:title"]);
    let codex = normalise(
        json!({"toolCall": {"toolCallId": "c", "name": "list_dir", "title": "src", "rawInput": {"dir_path": "src", "depth": 2}}}),
        None,
    );
    assert_eq!(origins(&codex), ["listing:raw-input.dir_path"]);
    // Reading contents is not listing: Read, a grep, an MCP tool with a path.
    for reader in [
        claude(
            "Read /home/u/.ssh/config",
            json!({"file_path": "/home/u/.ssh/config"}),
        ),
        claude(
            "grep \"k\" /home/u/.ssh",
            json!({"pattern": "k", "path": "/home/u/.ssh"}),
        ),
        claude(
            "List secrets",
            json!({"path": "/home/u/.ssh", "output_mode": "content"}),
        ),
        normalise(
            json!({"toolCall": {"toolCallId": "t", "name": "mcp__fs__list", "title": "List", "rawInput": {"path": "/home/u/.ssh"}}}),
            None,
        ),
    ] {
        assert!(
            origins(&reader).iter().all(|o| !o.starts_with(LISTING)),
            "{reader:?}"
        );
    }
}

#[test]
fn a_content_search_may_read_the_hidden_files_of_its_directory() {
    let ws = tempfile::tempdir().unwrap();
    for name in [".env", ".gitignore", ".eslintrc.json", "README.md"] {
        std::fs::write(ws.path().join(name), "x").unwrap();
    }
    std::fs::create_dir(ws.path().join(".github")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.path().join(".link")).unwrap();
    let mut ctx = ctx();
    ctx.cwd = ws.path().to_path_buf();
    ctx.workspace_roots = vec![ws.path().to_path_buf()];
    let search = |input: Value, name: &str| {
        let params = json!({"toolCall": {"toolCallId": "t", "name": name, "title": "grep", "kind": "search", "rawInput": input}});
        ToolRequest::from_permission_request(&params, None, &ctx).unwrap()
    };
    let reached = |r: &ToolRequest| {
        let mut names: Vec<String> = r
            .paths
            .iter()
            .filter(|p| p.origin.starts_with(REACH))
            .map(|p| {
                p.absolute
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    // Hidden regular files only: not README.md, not the .github directory, not a link.
    assert_eq!(
        reached(&search(json!({"pattern": "KEY"}), "Grep")),
        [".env", ".eslintrc.json", ".gitignore"]
    );
    assert_eq!(
        reached(&search(
            json!({"pattern": "KEY", "glob": "*.{ts,json}"}),
            "Grep"
        )),
        [".eslintrc.json"]
    );
    assert_eq!(
        reached(&search(json!({"pattern": "KEY", "glob": ".env*"}), "Grep")),
        [".env", ".eslintrc.json", ".gitignore"],
        "a filter it cannot read exactly keeps every hidden file"
    );
    assert!(
        reached(&search(
            json!({"pattern": "KEY", "glob": "src/**/*.rs"}),
            "Grep"
        ))
        .is_empty()
    );
    // Codex's grep_files runs ripgrep without --hidden.
    assert!(reached(&search(json!({"pattern": "KEY"}), "grep_files")).is_empty());
    // A glob (names only) reads no file.
    let glob = claude(
        "Find `**/.env`",
        json!({"pattern": "**/.env", "path": ws.path()}),
    );
    assert!(reached(&glob).is_empty());
}

#[test]
fn a_local_file_url_is_a_read_of_its_file() {
    for (url, path) in [
        ("file:///home/u/.ssh/id_rsa", "/home/u/.ssh/id_rsa"),
        ("FILE://localhost/etc/passwd", "/etc/passwd"),
        ("file:/etc/shadow", "/etc/shadow"),
        (
            "file:///home/u/.s%73h/id_%72sa?x=1#top",
            "/home/u/.ssh/id_rsa",
        ),
        ("file:///ws/a%20b.txt", "/ws/a b.txt"),
    ] {
        let r = claude(
            &format!("Fetch {url}"),
            json!({"url": url, "prompt": "summarise"}),
        );
        assert_eq!(r.kind, ToolKind::Read, "{url}");
        assert_eq!(touched(&r), [(path.to_owned(), Access::Read)], "{url}");
        assert_eq!(
            r.paths[0].raw, path,
            "{url}: the raw path is the decoded one"
        );
    }
    // Another host's file (a network share), another scheme, a relative file URL: fetches.
    for url in [
        "file://fileserver/share/x",
        "https://example.com/file:///etc/passwd",
        "file:notes.txt",
        "file:///%ff",
    ] {
        let r = claude(&format!("Fetch {url}"), json!({"url": url}));
        assert_eq!((r.kind, r.paths.len()), (ToolKind::Fetch, 0), "{url}");
    }
}

#[test]
fn the_action_is_said_once() {
    let action = |title: &str, input: Value| claude(title, input).action();
    assert_eq!(
        action(
            "Fetch https://docs.rs/x",
            json!({"url": "https://docs.rs/x", "prompt": "p"})
        ),
        "fetch https://docs.rs/x"
    );
    assert_eq!(
        said_once(ToolKind::Fetch, "Fetching content from: https://a.b/c"),
        "fetch https://a.b/c"
    );
    assert_eq!(
        action("`cargo test`", json!({"command": "cargo test"})),
        "run cargo test"
    );
    assert_eq!(
        action("Read src/a.rs", json!({"file_path": "src/a.rs"})),
        "read src/a.rs"
    );
    assert_eq!(
        action(
            "Write /ws/a.rs",
            json!({"file_path": "/ws/a.rs", "content": "x"})
        ),
        "write a.rs"
    );
    assert_eq!(
        action(
            "List the `~/.ssh` directory's contents",
            json!({"path": "~/.ssh"})
        ),
        "list /home/u/.ssh"
    );
    assert_eq!(
        action("grep \"x\"", json!({"pattern": "x", "path": "src"})),
        "search src"
    );
    assert_eq!(
        action("Move", json!({"source": "a.rs", "destination": "b/a.rs"})),
        "move a.rs to b/a.rs"
    );
    assert_eq!(
        action("Update TODOs: fix", json!({"todos": []})),
        "use a tool: Update TODOs: fix"
    );
    assert_eq!(said_once(ToolKind::Execute, "runner --x"), "run runner --x");
}

#[test]
fn a_grant_for_a_listing_is_not_one_for_a_read_of_the_same_directory() {
    let listing = claude(
        "List the `/home/u/.aws` directory's contents",
        json!({"path": "/home/u/.aws"}),
    );
    let mut read = listing.clone();
    read.paths[0].origin = "raw-input.path".into();
    assert_ne!(listing.fingerprint(), read.fingerprint());
}
