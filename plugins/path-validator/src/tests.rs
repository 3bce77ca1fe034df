use std::collections::HashMap;

use acp_gate_plugin::{Access, PathRef, Request, RequestSource, Resolution, ToolKind, Verdict};

use super::{Config, OutsideRead, evaluate, forms};
use acp_gate_plugin::path_rules::{PathRules, Protection};

const HOME: &str = "/home/u";
const WS: &str = "/home/u/proj";

fn request(paths: &[(&str, Access)]) -> Request {
    request_of(ToolKind::Edit, paths)
}

fn request_of(kind: ToolKind, paths: &[(&str, Access)]) -> Request {
    Request {
        session_id: "s".into(),
        tool_call_id: "t".into(),
        title: "t".into(),
        kind,
        declared_kind: None,
        tool_name: None,
        source: RequestSource::PermissionRequest,
        command: None,
        paths: paths
            .iter()
            .map(|(p, access)| PathRef {
                raw: (*p).into(),
                absolute: if p.starts_with('/') {
                    (*p).into()
                } else {
                    format!("{WS}/{p}")
                },
                access: *access,
                origin: "test".into(),
            })
            .collect(),
        diffs: Vec::new(),
        cwd: WS.into(),
        workspace_roots: vec![WS.into()],
        home_dir: HOME.into(),
        options: Vec::new(),
        received_at_ms: 0,
        raw_json: "{}".into(),
    }
}

/// A host whose symlinks are `links` (path -> canonical); everything else resolves to itself.
fn host(links: &[(&str, &str)], case_insensitive: bool) -> impl Fn(&str) -> Resolution {
    let links: HashMap<String, String> = links
        .iter()
        .map(|(a, b)| ((*a).into(), (*b).into()))
        .collect();
    move |path: &str| Resolution {
        canonical: links.get(path).cloned().unwrap_or_else(|| path.to_owned()),
        exists: true,
        through_symlink: links.contains_key(path),
        case_insensitive,
    }
}

fn judge(paths: &[(&str, Access)]) -> Verdict {
    judge_with(paths, &Config::default(), &[], false)
}

fn judge_with(
    paths: &[(&str, Access)],
    config: &Config,
    links: &[(&str, &str)],
    ci: bool,
) -> Verdict {
    evaluate(&request(paths), config, &host(links, ci)).unwrap()
}

fn kind(v: &Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask(_) => "ask",
        Verdict::Deny(_) => "deny",
        Verdict::Abstain => "abstain",
    }
}

#[test]
fn inside_the_workspace_is_allowed_outside_writes_denied_reads_asked() {
    assert_eq!(kind(&judge(&[("src/main.rs", Access::Write)])), "allow");
    assert_eq!(kind(&judge(&[("src/main.rs", Access::Read)])), "allow");
    assert_eq!(kind(&judge(&[("/etc/hosts", Access::Read)])), "ask");
    let Verdict::Deny(reason) = judge(&[("/home/u/other/x.rs", Access::Write)]) else {
        panic!()
    };
    assert!(
        reason.contains("writes `/home/u/other/x.rs`, outside the workspace"),
        "{reason}"
    );
    assert_eq!(kind(&judge(&[("/tmp/x", Access::Delete)])), "deny");
    assert_eq!(kind(&judge(&[])), "abstain");
}

#[test]
fn a_sibling_directory_with_the_workspace_as_prefix_is_outside() {
    assert_eq!(
        kind(&judge(&[("/home/u/proj-evil/x", Access::Write)])),
        "deny"
    );
}

#[test]
fn secrets_are_denied_wherever_they_are() {
    for (path, pattern) in [
        ("/home/u/.ssh/known_hosts", "~/.ssh/**"),
        (".env", ".env"),
        ("config/.env.production", ".env.*"),
        ("deploy/server.pem", "*.pem"),
        ("/home/u/.aws/credentials", "~/.aws/**"),
    ] {
        for access in [Access::Read, Access::Write] {
            let Verdict::Deny(reason) = judge(&[(path, access)]) else {
                panic!("{path} {access:?}")
            };
            assert!(
                reason.contains(&format!("sensitive file `{path}` (matches `{pattern}`)")),
                "{path}: {reason}"
            );
        }
    }
    assert_eq!(
        kind(&judge(&[(".env.example", Access::Write)])),
        "allow",
        "templates hold no secrets"
    );
}

#[test]
fn files_that_run_code_are_readable_but_never_written() {
    for (path, pattern, read) in [
        (".git/hooks/pre-commit", ".git/hooks/**", "allow"),
        (".acp-gate/handlers.toml", ".acp-gate/**", "allow"),
        ("/home/u/.bashrc", "~/.bashrc", "ask"),
        (
            "/home/u/.cache/acp-gate/abc.cwasm",
            "~/.cache/acp-gate/**",
            "ask",
        ),
        ("/home/u/.ssh/authorized_keys", "~/.ssh/**", "deny"),
    ] {
        assert_eq!(kind(&judge(&[(path, Access::Read)])), read, "{path}");
        for access in [Access::Write, Access::Delete] {
            let Verdict::Deny(reason) = judge(&[(path, access)]) else {
                panic!("{path} {access:?}")
            };
            assert!(
                reason.contains(&format!("(matches `{pattern}`)")),
                "{path}: {reason}"
            );
        }
    }
}

#[test]
fn config_adds_and_drops_patterns_and_sets_outside_reads() {
    let config = Config {
        sensitive: vec!["secrets/**".into()],
        protected: vec!["Makefile".into()],
        allow_sensitive: vec!["*.key".into()],
        outside_read: OutsideRead::Deny,
        extra_roots: vec!["~/shared".into()],
    };
    assert_eq!(
        kind(&judge_with(
            &[("secrets/a.txt", Access::Read)],
            &config,
            &[],
            false
        )),
        "deny"
    );
    assert_eq!(
        kind(&judge_with(
            &[("fixtures/test.key", Access::Read)],
            &config,
            &[],
            false
        )),
        "allow"
    );
    assert_eq!(
        kind(&judge_with(
            &[("/etc/hosts", Access::Read)],
            &config,
            &[],
            false
        )),
        "deny"
    );
    assert_eq!(
        kind(&judge_with(
            &[("/home/u/shared/x", Access::Write)],
            &config,
            &[],
            false
        )),
        "allow"
    );
    let bad = Config {
        allow_sensitive: vec!["nope".into()],
        ..Config::default()
    };
    assert!(evaluate(&request(&[("a", Access::Read)]), &bad, &host(&[], false)).is_err());
}

#[test]
fn symlinks_are_judged_by_where_they_lead() {
    let escape = [("/home/u/proj/link/x", "/etc/x")];
    assert_eq!(
        kind(&judge_with(
            &[("link/x", Access::Write)],
            &Config::default(),
            &escape,
            false
        )),
        "deny"
    );
    let to_key = [("/home/u/proj/notes.txt", "/home/u/.ssh/id_ed25519")];
    let Verdict::Deny(reason) = judge_with(
        &[("notes.txt", Access::Read)],
        &Config::default(),
        &to_key,
        false,
    ) else {
        panic!()
    };
    assert!(
        reason.contains("`/home/u/.ssh/id_ed25519` (through the link"),
        "{reason}"
    );
    let inside = [("/home/u/proj/current", "/home/u/proj/releases/v2")];
    assert_eq!(
        kind(&judge_with(
            &[("current", Access::Write)],
            &Config::default(),
            &inside,
            false
        )),
        "allow"
    );
    // A workspace root that is itself a symlink: compared canonically on both sides.
    let root = [
        ("/home/u/proj", "/data/proj"),
        ("/home/u/proj/src/a.rs", "/data/proj/src/a.rs"),
    ];
    assert_eq!(
        kind(&judge_with(
            &[("src/a.rs", Access::Write)],
            &Config::default(),
            &root,
            false
        )),
        "allow"
    );
}

#[test]
fn case_insensitive_file_systems_fold_case() {
    let ci = true;
    assert_eq!(
        kind(&judge_with(
            &[("/home/u/.SSH/Authorized_Keys", Access::Write)],
            &Config::default(),
            &[],
            ci
        )),
        "deny"
    );
    assert_eq!(
        kind(&judge_with(
            &[("/HOME/U/PROJ/src/a.rs", Access::Write)],
            &Config::default(),
            &[],
            ci
        )),
        "allow"
    );
    assert_eq!(
        kind(&judge_with(
            &[("/home/u/.SSH/x", Access::Write)],
            &Config::default(),
            &[],
            false
        )),
        "deny",
        "outside anyway"
    );
}

#[test]
fn unicode_forms_match_the_same_patterns() {
    // "é" precomposed (NFC) in the pattern, decomposed (NFD) in the path.
    let config = Config {
        sensitive: vec!["caf\u{e9}/**".into()],
        ..Config::default()
    };
    assert_eq!(
        kind(&judge_with(
            &[("cafe\u{301}/menu", Access::Read)],
            &config,
            &[],
            false
        )),
        "deny"
    );
}

#[test]
fn windows_forms_and_control_characters_never_allow() {
    for raw in [
        r"C:\Users\u\.ssh\id_rsa",
        r"\\?\C:\x",
        r"\\server\share\x",
        "src\\main.rs",
        "notes.txt:hidden",
        "secret.txt.",
        "PROGRA~1/x",
    ] {
        assert!(forms::foreign_form(raw).is_some(), "{raw}");
        assert_eq!(kind(&judge(&[(raw, Access::Read)])), "ask", "{raw}");
        assert_eq!(kind(&judge(&[(raw, Access::Write)])), "deny", "{raw}");
    }
    for raw in ["a\0b", "a\nb", "a\u{202e}b"] {
        assert_eq!(kind(&judge(&[(raw, Access::Read)])), "deny", "{raw:?}");
    }
    assert!(forms::foreign_form("src/my~file.rs").is_none());
    assert_eq!(
        kind(&judge(&[("/home/u/proj/../other/x", Access::Write)])),
        "deny",
        "never trusted as inside"
    );
    assert!(forms::foreign_form("~/x").is_none());
}

#[test]
fn deleting_the_workspace_root_is_denied_as_rm_rf_of_it_is_and_the_strictest_path_wins() {
    assert_eq!(kind(&judge(&[(WS, Access::Delete)])), "deny");
    assert_eq!(
        kind(&judge(&[
            ("src/a.rs", Access::Write),
            ("/etc/passwd", Access::Write)
        ])),
        "deny"
    );
    assert_eq!(
        kind(&judge(&[
            ("src/a.rs", Access::Read),
            ("/etc/hosts", Access::Read)
        ])),
        "ask"
    );
}

#[test]
fn source_files_named_after_keys_and_secrets_are_ordinary_files() {
    for path in [
        "src/id_rsa_reader.go",
        "tests/test_id_ed25519.py",
        "src/keys.ts",
        "src/secret_manager.rs",
        "pkg/auth/token.go",
        "tests/credentials_test.py",
        "src/env.ts",
        "src/hooks/useAuth.ts",
        "lib/git/config.rb",
        ".env.example",
        "AGENTS.md",
        ".gitmodules",
    ] {
        for access in [Access::Read, Access::Write] {
            assert_eq!(
                kind(&judge(&[(path, access)])),
                "allow",
                "{path} {access:?}"
            );
        }
    }
}

#[test]
fn keys_env_files_and_histories_are_secret_in_any_case_and_naming_style() {
    for path in [
        "deploy/ID_RSA",
        "certs/Server.PEM",
        "id_ed25519_work",
        "config/prod.env",
        ".env.development.local",
        ".envrc",
        "release.keystore",
        "infra/terraform.tfstate",
        ".npmrc",
        "/home/u/.bash_history",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.codex/auth.json",
    ] {
        for access in [Access::Read, Access::Write] {
            let Verdict::Deny(reason) = judge(&[(path, access)]) else {
                panic!("{path} {access:?}")
            };
            assert!(reason.contains("the sensitive file"), "{path}: {reason}");
        }
    }
}

#[test]
fn agents_settings_and_git_internals_are_read_but_never_written() {
    for path in [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".mcp.json",
        ".vscode/mcp.json",
        ".zed/settings.json",
        ".git/modules/vendor/hooks/post-checkout",
        ".git/modules/vendor/config",
        ".git/config.worktree",
        ".venv/lib/python3.12/site-packages/distutils-precedence.pth",
    ] {
        assert_eq!(kind(&judge(&[(path, Access::Read)])), "allow", "{path}");
        for access in [Access::Write, Access::Delete] {
            let Verdict::Deny(reason) = judge(&[(path, access)]) else {
                panic!("{path} {access:?}")
            };
            assert!(
                reason.contains("which runs code or configures the gate"),
                "{path}: {reason}"
            );
        }
    }
}

#[test]
fn a_projects_own_files_that_run_code_later_are_edited_with_a_persons_approval() {
    for path in [
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".devcontainer/devcontainer.json",
        ".idea/workspace.xml",
        ".husky/pre-commit",
        ".cargo/config.toml",
        "crates/x/.cargo/config",
        "rust-toolchain.toml",
        ".yarnrc.yml",
        ".yarn/releases/yarn-4.1.0.cjs",
        ".pre-commit-config.yaml",
    ] {
        assert_eq!(kind(&judge(&[(path, Access::Read)])), "allow", "{path}");
        for access in [Access::Write, Access::Delete] {
            let Verdict::Ask(reason) = judge(&[(path, access)]) else {
                panic!("{path} {access:?}")
            };
            assert!(reason.contains("the project's file"), "{path}: {reason}");
        }
        // Outside the workspace, a write is denied as every write there is.
        let outside = format!("/home/u/other/{path}");
        assert_eq!(
            kind(&judge(&[(&outside, Access::Write)])),
            "deny",
            "{outside}"
        );
    }
}

/// `judge` for paths the host marked with `origin`.
fn judge_origin(origin: &str, paths: &[(&str, Access)]) -> Verdict {
    let mut request = request_of(ToolKind::Search, paths);
    for path in &mut request.paths {
        path.origin = origin.into();
    }
    evaluate(&request, &Config::default(), &host(&[], false)).unwrap()
}

#[test]
fn listing_names_is_judged_by_where_the_directory_is_not_by_what_it_holds() {
    let listing = "listing:raw-input.path";
    let Verdict::Ask(reason) = judge_origin(listing, &[("/home/u/.ssh", Access::Read)]) else {
        panic!()
    };
    assert!(
        reason.starts_with("lists `/home/u/.ssh`, outside the workspace"),
        "{reason}"
    );
    for inside in [".ssh", ".git/hooks", "config", WS] {
        assert_eq!(
            kind(&judge_origin(listing, &[(inside, Access::Read)])),
            "allow",
            "{inside}"
        );
    }
    // Reading the same directories' contents is what the patterns forbid.
    assert_eq!(
        kind(&judge_origin(
            "raw-input.path",
            &[("/home/u/.ssh", Access::Read)]
        )),
        "deny"
    );
    assert_eq!(
        kind(&judge_origin("raw-input.path", &[(".ssh", Access::Read)])),
        "deny"
    );
}

#[test]
fn a_secret_a_recursive_search_may_read_is_asked_about() {
    let reach = "reach:search of /home/u/proj";
    let Verdict::Ask(reason) = judge_origin(reach, &[(".env", Access::Read)]) else {
        panic!()
    };
    assert!(
        reason.starts_with("may read the sensitive file `.env` (matches `.env`)"),
        "{reason}"
    );
    for harmless in [".gitignore", ".prettierrc", ".env.example", ".bashrc"] {
        assert_eq!(
            kind(&judge_origin(reach, &[(harmless, Access::Read)])),
            "allow",
            "{harmless}"
        );
    }
}

#[test]
fn public_halves_of_keys_are_files_like_any_other() {
    assert_eq!(
        kind(&judge(&[("/home/u/.ssh/id_ed25519.pub", Access::Read)])),
        "ask",
        "a read outside the workspace"
    );
    for public in [
        "deploy/id_rsa.pub",
        "certs/server.crt",
        "certs/fullchain.pem",
    ] {
        for access in [Access::Read, Access::Write] {
            assert_eq!(kind(&judge(&[(public, access)])), "allow", "{public}");
        }
    }
    assert_eq!(kind(&judge(&[("certs/privkey.pem", Access::Read)])), "deny");
    // The user's own secret patterns still cover them.
    let config = Config {
        sensitive: vec!["*.pub".into()],
        ..Config::default()
    };
    assert_eq!(
        kind(&judge_with(
            &[("deploy/id_rsa.pub", Access::Read)],
            &config,
            &[],
            false
        )),
        "deny"
    );
}

#[test]
fn only_tools_whose_effect_is_known_are_allowed() {
    let judge_kind = |kind: ToolKind, paths: &[(&str, Access)]| {
        evaluate(
            &request_of(kind, paths),
            &Config::default(),
            &host(&[], false),
        )
        .unwrap()
    };
    for known in [
        ToolKind::Read,
        ToolKind::Search,
        ToolKind::Edit,
        ToolKind::Delete,
    ] {
        assert_eq!(
            kind(&judge_kind(known, &[("src/a.rs", Access::Write)])),
            "allow"
        );
    }
    for unknown in [
        ToolKind::Other,
        ToolKind::Think,
        ToolKind::Fetch,
        ToolKind::SwitchMode,
    ] {
        let Verdict::Ask(reason) = judge_kind(unknown, &[("src/a.rs", Access::Write)]) else {
            panic!("{unknown:?}")
        };
        assert!(reason.contains("is not known"), "{reason}");
        assert_eq!(
            kind(&judge_kind(unknown, &[(".env", Access::Read)])),
            "deny",
            "a secret stays denied"
        );
    }
    let both = [("src/a.rs", Access::Delete), ("src/b.rs", Access::Write)];
    assert_eq!(kind(&judge_kind(ToolKind::Move, &both)), "allow");
    assert_eq!(
        kind(&judge_kind(ToolKind::Move, &[("src/a.rs", Access::Write)])),
        "ask",
        "a move with one end named"
    );
}

/// Segments of paths that come near the sensitive patterns: each pattern's own segments with
/// its wildcards filled in, and ordinary ones.
fn near_segments() -> Vec<String> {
    use acp_gate_plugin::sensitive::{PROJECT_CODE, RUNS_CODE, SECRETS};
    let mut segments: Vec<String> = SECRETS
        .iter()
        .chain(RUNS_CODE)
        .chain(PROJECT_CODE)
        .flat_map(|p| p.split('/'))
        .filter(|s| !s.is_empty() && *s != "**" && *s != "~")
        .map(|s| s.replace('*', "x").replace('?', "y"))
        .collect();
    segments.extend(
        [
            "home",
            "u",
            "proj",
            "src",
            "main.rs",
            "id_rsa_reader.go",
            "id_rsa_format.md",
            ".env.example",
            "id_rsa.pub",
            "server.crt",
            "fullchain.pem",
        ]
        .map(String::from),
    );
    segments.sort();
    segments.dedup();
    segments
}

proptest::proptest! {
    /// The filter that spares most globs a build ([`acp_gate_plugin::sensitive::Needs`]) never
    /// changes which pattern a path matches: the same first pattern as trying every one, with
    /// the config's own patterns, in either case and with case folding on or off (secrets are
    /// matched in any case).
    #[test]
    fn the_needs_filter_finds_the_pattern_trying_every_one_finds(
        picks in proptest::collection::vec((0usize..10_000, proptest::bool::ANY), 1..6),
        in_home in proptest::bool::ANY,
        fold in proptest::bool::ANY,
    ) {
        let segments = near_segments();
        let mut path = if in_home { HOME.to_owned() } else { String::new() };
        for (pick, upper) in &picks {
            let segment = &segments[pick % segments.len()];
            path.push('/');
            path.push_str(&if *upper { segment.to_uppercase() } else { segment.clone() });
        }
        let path = if fold { path.to_lowercase() } else { path };
        let config: Config = serde_json::from_value(serde_json::json!({
            "sensitive": ["build/*.secret", "~/notes/**"],
            "protected": ["deploy.sh"],
            "allow_sensitive": [".npmrc"],
        })).unwrap();
        let rules = PathRules::new(HOME, &config.sensitive, &config.protected).without(&config.allow_sensitive).unwrap();
        let filtered = rules.protection(&path, fold);
        let public = acp_gate_plugin::sensitive::holds_no_secret(&path);
        let every = every_pattern(&config).into_iter().find(|(pattern, protection)| {
            let builtin_secret = *protection == Protection::Secret
                && acp_gate_plugin::sensitive::SECRETS.contains(&pattern.as_str());
            !(public && builtin_secret)
                && acp_gate_plugin::sensitive::PathGlob::new(pattern.as_str(), HOME)
                    .matches_segments(&acp_gate_plugin::sensitive::PathSegments::new(&path, fold || *protection == Protection::Secret))
        });
        let every = every.filter(|_| !acp_gate_plugin::sensitive::is_env_template(&path));
        proptest::prop_assert_eq!(filtered, every, "{}", path);
    }

    /// Whatever the path, the validator answers (no panic), and a path outside the workspace
    /// is never allowed for writing.
    #[test]
    fn arbitrary_paths_never_panic_and_outside_writes_never_allow(raw in "\\PC{0,40}") {
        let verdict = evaluate(&request(&[(&raw, Access::Write)]), &Config::default(), &host(&[], false)).unwrap();
        let absolute = if raw.starts_with('/') { raw.clone() } else { format!("{WS}/{raw}") };
        let inside = (absolute.starts_with(&format!("{WS}/")) || absolute == WS) && forms::is_normalised(&absolute);
        if !inside {
            proptest::prop_assert!(!matches!(verdict, Verdict::Allow), "{raw:?}");
        }
    }

    /// A key file's name with a key's suffix, in any letter case and directory, is denied.
    #[test]
    fn key_files_are_denied_whatever_their_case_and_suffix(
        dir in "([a-z]{1,8}/){0,3}",
        stem in proptest::sample::select(vec!["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]),
        suffix in "(\\.bak|\\.old|\\.txt|_[a-z]{1,6}|-[a-z]{1,6})?",
        upper in proptest::bool::ANY,
    ) {
        let name = format!("{stem}{suffix}");
        let name = if upper { name.to_uppercase() } else { name };
        let path = format!("{dir}{name}");
        proptest::prop_assert_eq!(kind(&judge(&[(&path, Access::Read)])), "deny", "{}", path);
    }

    /// A source file named after a key is an ordinary file to edit.
    #[test]
    fn source_files_named_after_keys_are_edited(
        stem in proptest::sample::select(vec!["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]),
        rest in "[a-z_]{1,10}",
        ext in proptest::sample::select(vec!["go", "py", "rs", "ts", "js", "java", "rb"]),
    ) {
        let path = format!("src/{stem}{rest}.{ext}");
        proptest::prop_assert_eq!(kind(&judge(&[(&path, Access::Write)])), "allow", "{}", path);
    }
}

/// Every pattern `config` leaves, in the order the validator tries them.
fn every_pattern(config: &Config) -> Vec<(String, Protection)> {
    use acp_gate_plugin::sensitive::{PROJECT_CODE, RUNS_CODE, SECRETS};
    let builtin = |list: &[&str], protection| {
        list.iter()
            .filter(|p| !config.allow_sensitive.iter().any(|a| a == *p))
            .map(move |p| (p.to_string(), protection))
            .collect::<Vec<_>>()
    };
    let configured = |list: &[String], protection| {
        list.iter()
            .map(move |p| (p.clone(), protection))
            .collect::<Vec<_>>()
    };
    [
        builtin(SECRETS, Protection::Secret),
        configured(&config.sensitive, Protection::Secret),
        builtin(RUNS_CODE, Protection::NoWrite),
        configured(&config.protected, Protection::NoWrite),
        builtin(PROJECT_CODE, Protection::ApproveWrite),
    ]
    .concat()
}
