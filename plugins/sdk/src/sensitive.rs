//! Paths that hold secrets or run code, and the glob matcher the built-in plugins judge them
//! with: one list for the path validator (what a tool touches) and the command checker (what a
//! command reads or writes).
//!
//! Three stances, one per list:
//!
//! - [`SECRETS`]: reading is as bad as writing, so any access is refused. Private keys and
//!   certificates' keys (any letter case), `.env` files in the names projects give them,
//!   credential files of cloud CLIs, package registries, databases, secret managers, file-sync
//!   and remote-access tools, container and cluster tools, agents' own login tokens, browser
//!   profiles, and shell and REPL histories (they hold the passwords and tokens typed at them).
//! - [`RUNS_CODE`]: files that run code later (at the next shell, login, editor or agent start,
//!   git command or boot) that no project keeps in its tree, or that decide what an agent may
//!   do: readable (an agent may look at how a machine is set up), never written. Shell start-up
//!   files, git's own config and hooks wherever git keeps them (submodules, worktrees, bare
//!   repositories, a `commondir`, a bare repository's `HEAD`), the state a rebase or cherry-pick
//!   resumes from (its todo's `exec` lines), a virtual environment's start-up files, agents'
//!   settings, commands, hooks and MCP server lists (Claude Code, Gemini CLI, Codex, ...),
//!   programs on the user's `PATH`, and acp-gate's own config, plugins, compile cache and audit
//!   log.
//! - [`PROJECT_CODE`]: files a project keeps in its tree that run code later (its hook
//!   managers' config and hook scripts, its toolchain and package manager settings, its editor
//!   tasks): readable; written in a workspace only with a person's approval (ask: the person
//!   sees the edit, and editing a project's own setup is work they may want), never elsewhere.
//!
//! Deliberately not listed: env templates (`.env.example`, see [`is_env_template`]: projects
//! commit them so that they hold no secrets) and the public halves of keys and certificates
//! (`id_rsa.pub`, `server.crt`, see [`PUBLIC_PARTS`]), which no secret pattern covers, even in
//! a secret directory such as `~/.ssh` (use [`holds_no_secret`]); instructions such as
//! `AGENTS.md` or `CLAUDE.md` (they grant nothing); `.gitmodules` (git ignores
//! `update = !command` from it); `.gitattributes` (a filter or diff driver it names runs only
//! when git's config, which is listed, defines it); CI workflows (`.github/workflows/*`: they
//! run on a CI service after a push, which is a request of its own); build files that run code
//! only when the user runs a build (`Makefile`, `package.json`, `build.rs`, `conftest.py`):
//! editing them is everyday work and what they run is judged when it runs. Files that change
//! what an *ordinary* later command runs (`cargo check`, `yarn --version`, `git commit`) are
//! listed, with the reason beside each.
//!
//! Patterns: `~/` is the user's home; a pattern not starting with `/` or `~` matches at any
//! depth (`.env` is `/**/.env`); `**` is any number of segments, `*` and `?` stay within one.
//! A pattern without `/` names a file, whatever its directory: it is matched ignoring ASCII case
//! (`*.pem` is also `SERVER.PEM`), and a `*` glued to the end of a name (`id_rsa*`) matches that
//! name's variants (`id_rsa.old`, `id_rsa_work`) but not a source file or a document named after
//! it (`id_rsa_reader.go`, `id_rsa_format.md`); a `*` after a dot (`.env.*`) is any extension.

use std::borrow::Cow;

/// Files whose contents are secrets: reading them is as bad as writing them.
pub const SECRETS: &[&str] = &[
    // Env files, in every naming style: `.env`, `.env` and a suffix after any separator
    // (`.env.local`, `.env-production`, `.env_local`), a name ending in `.env` (`prod.env`), and
    // direnv's `.envrc` (templates excepted, see `is_env_template`).
    ".env",
    ".env.*",
    ".env-*",
    ".env_*",
    "*.env",
    ".envrc",
    ".secrets",
    ".secrets.*",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    // Keys, certificates' private halves, keystores, encrypted stores.
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.p8",
    "*.pkcs12",
    "*.jks",
    "*.keystore",
    "*.bks",
    "*.asc",
    "*.gpg",
    "*.ppk",
    "*.kdbx",
    "*.ovpn",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    // Credentials under names that tools and tutorials use in any directory.
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".s3cfg",
    ".boto",
    ".dockercfg",
    ".htpasswd",
    ".vault-token",
    ".terraformrc",
    "terraform.rc",
    "*.tfstate",
    "*.tfstate.backup",
    "rclone.conf",
    "credentials.json",
    "client_secret*.json",
    "service-account*.json",
    "token.json",
    // Shell and REPL histories: what was typed, passwords and tokens included.
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    "fish_history",
    ".python_history",
    ".node_repl_history",
    ".ts_node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".dbshell",
    ".irb_history",
    ".pry_history",
    ".php_history",
    ".scala_history",
    ".Rhistory",
    ".lesshst",
    ".viminfo",
    "~/.local/share/atuin/**",
    // Remote access, cloud CLIs, registries, clusters (their whole directory where they keep
    // tokens next to config).
    "~/.ssh/**",
    "~/.aws/**",
    "~/.azure/**",
    "~/.config/gcloud/**",
    "~/.oci/**",
    "~/.bluemix/**",
    "~/.config/doctl/**",
    "~/Library/Application Support/doctl/**",
    "~/.config/hcloud/**",
    "~/.config/scw/**",
    "~/.config/linode-cli",
    "~/.fly/**",
    "~/.config/netlify/**",
    "~/.wrangler/**",
    "~/.config/.wrangler/**",
    "~/.config/configstore/**",
    "~/.supabase/**",
    "~/.aliyun/**",
    "~/.local/share/com.vercel.cli/**",
    "~/.pulumi/**",
    "~/.kube/**",
    "~/.config/helm/**",
    "~/.terraform.d/**",
    "~/.minikube/**",
    "~/.docker/config.json",
    "~/.docker/machine/**",
    "~/.config/containers/auth.json",
    "~/.config/gh/**",
    "~/.config/glab-cli/**",
    "~/.config/hub",
    "~/.config/git/credentials",
    "~/.cargo/credentials*",
    "~/.gem/credentials",
    "~/.m2/settings.xml",
    "~/.m2/settings-security.xml",
    "~/.gradle/gradle.properties",
    "~/.nuget/NuGet/NuGet.Config",
    "~/.config/NuGet/NuGet.Config",
    "~/.composer/auth.json",
    "~/.config/composer/auth.json",
    "~/.bundle/config",
    "~/.config/pip/pip.conf",
    "~/.pip/pip.conf",
    "~/.config/pypoetry/auth.toml",
    "~/.pub-cache/credentials.json",
    "~/.config/dart/pub-credentials.json",
    "~/.jfrog/**",
    "~/.pg_service.conf",
    "~/.config/rclone/**",
    "~/.config/filezilla/**",
    "~/.filezilla/**",
    // Secret managers, keyrings, browser profiles (saved passwords and cookies).
    "~/.gnupg/**",
    "~/.password-store/**",
    "~/.config/op/**",
    "~/.op/**",
    "~/.config/Bitwarden CLI/**",
    "~/.config/sops/**",
    "~/.local/share/keyrings/**",
    "~/Library/Keychains/**",
    "~/.pki/**",
    "~/.mozilla/**",
    "~/.config/google-chrome/**",
    "~/.config/chromium/**",
    "~/Library/Application Support/Google/Chrome/**",
    "~/Library/Application Support/Firefox/**",
    // Agents' own login tokens.
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.gemini/oauth_creds.json",
    // The same directories inside a project (a dotfiles repository, a copied home).
    ".ssh/**",
    ".gnupg/**",
    ".aws/**",
    // The system's and other users'.
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d/**",
    "/etc/ssh/ssh_host_*key",
    "/root/**",
    "/proc/*/environ",
    "/proc/*/mem",
];

/// Files that run code later (at the next shell, login, git command, agent or editor start or
/// boot), grant an agent permissions, or configure acp-gate itself: reading them is fine,
/// writing them is not.
pub const RUNS_CODE: &[&str] = &[
    // Shell, login and session start-up.
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.bash_aliases",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.inputrc",
    "~/.login",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.kshrc",
    "~/.xinitrc",
    "~/.xprofile",
    "~/.xsession",
    "~/.xsessionrc",
    "~/.pam_environment",
    "~/.config/environment.d/**",
    "~/.config/fish/**",
    "~/.config/nushell/**",
    "~/.config/powershell/**",
    "~/.config/autostart/**",
    "~/.config/systemd/**",
    "~/Library/LaunchAgents/**",
    "/Library/LaunchDaemons/**",
    "/var/spool/cron/**",
    // Tools' start-up files that run commands or change what later commands do.
    "~/.vimrc",
    "~/.vim/**",
    "~/.config/nvim/**",
    "~/.emacs",
    "~/.emacs.d/**",
    "~/.config/emacs/**",
    "~/.tmux.conf",
    "~/.config/tmux/**",
    "~/.screenrc",
    "~/.curlrc",
    "~/.wgetrc",
    "~/.gdbinit",
    "~/.config/gdb/**",
    "~/.lldbinit",
    "~/.psqlrc",
    "~/.sqliterc",
    "~/.mongoshrc.js",
    ".mongorc.js",
    "~/.ipython/**",
    "~/.config/direnv/**",
    "~/.yarnrc",
    "~/.yarnrc.yml",
    // Programs on the user's PATH and Python's per-user site (usercustomize runs at start).
    "~/.local/bin/**",
    "~/bin/**",
    "~/.cargo/bin/**",
    "~/go/bin/**",
    "~/.local/lib/**",
    // A `.pth` file in a virtual environment's site-packages runs its `import` lines at every
    // start of that Python (`pytest`, `pip list`), as does `sitecustomize`.
    "site-packages/*.pth",
    "site-packages/sitecustomize.py",
    "site-packages/usercustomize.py",
    "~/.cargo/config*",
    "~/.docker/**",
    // Git's config and hooks, wherever git keeps them.
    "~/.config/git/**",
    "~/.gitconfig",
    ".git",
    ".git/hooks/**",
    ".git/config",
    ".git/config.worktree",
    ".git/modules/**/hooks/**",
    ".git/modules/**/config",
    ".git/modules/**/config.worktree",
    ".git/worktrees/*/config.worktree",
    ".git/worktrees/*/commondir",
    // A rebase or cherry-pick in progress: `--continue` runs the todo's `exec` lines, merges
    // with the saved strategy (a `git-merge-NAME` program) and applies the saved patches.
    ".git/**/rebase-merge/**",
    ".git/**/rebase-apply/**",
    ".git/**/sequencer/**",
    // Where git takes its config from: a `commondir` sends it to another directory's, and a
    // directory with a `HEAD` (and `objects/`, `refs/`) is a bare repository whose `config`
    // git obeys when run inside it.
    ".git/commondir",
    ".git/modules/**/commondir",
    "*/HEAD",
    "*.git/hooks/**",
    "*.git/config",
    "authorized_keys",
    // Agents' settings, commands, hooks and MCP servers: they grant permissions or run code.
    "~/.claude/**",
    "~/.claude.json",
    "~/.codex/**",
    "~/.gemini/**",
    "~/.cursor/**",
    "~/.config/opencode/**",
    "~/.config/goose/**",
    "~/.config/zed/**",
    "~/.aider.conf.yml",
    "/Library/Application Support/ClaudeCode/**",
    ".claude/**",
    ".gemini/**",
    ".codex/**",
    ".opencode/**",
    "opencode.json",
    "opencode.jsonc",
    ".mcp.json",
    ".cursor/mcp.json",
    // Cursor's project hooks run commands around the agent's own steps.
    ".cursor/hooks.json",
    // Other agents' project MCP server lists and hooks (Roo Code, Kiro, Amazon Q).
    ".roo/mcp.json",
    ".kiro/settings/mcp.json",
    ".kiro/hooks/**",
    ".amazonq/mcp.json",
    ".amazonq/default.json",
    // Continue's project config and MCP server lists.
    ".continue/config.*",
    ".continue/mcpServers/**",
    ".aider.conf.yml",
    // VS Code's MCP server list starts programs for its agent; Zed's project settings choose
    // the agent servers it starts (acp-gate among them) and what its agent may do unasked.
    ".vscode/mcp.json",
    ".zed/**",
    // Editors' settings and extensions for every folder.
    "~/.vscode/**",
    "~/.vscode-server/**",
    "~/.config/Code/User/**",
    "~/Library/Application Support/Code/User/**",
    // The system.
    "/etc/**",
    "/boot/**",
    "/usr/**",
    "/bin/**",
    "/sbin/**",
    "/lib/**",
    "/lib64/**",
    // acp-gate's policy, plugins, compile cache (native code it runs) and audit log: an agent
    // must not be able to rewrite its own gate.
    ".acp-gate/**",
    "~/.config/acp-gate/**",
    "~/.cache/acp-gate/**",
    "~/.local/state/acp-gate/**",
    "~/.local/share/acp-gate/**",
    "/etc/acp-gate/**",
];

/// Files a project keeps in its tree that run code later (at the next `git commit`, `cargo
/// check`, `yarn` command, lint, or when an editor opens the folder): readable, written in a
/// workspace only with a person's approval, never elsewhere.
pub const PROJECT_CODE: &[&str] = &[
    // Yarn runs the file `yarnPath` names, and the plugins this file lists, at every `yarn`
    // command (`yarn --version` included); the releases and plugins it points at live here.
    ".yarnrc",
    ".yarnrc.yml",
    ".yarn/releases/**",
    ".yarn/plugins/**",
    // Cargo reads these in the working directory and every parent: `build.rustc-wrapper`,
    // `target.*.runner` and `target.*.linker` run a program at the next `cargo check`.
    ".cargo/config",
    ".cargo/config.toml",
    // rustup's toolchain file: its `path` makes every `cargo` and `rustc` (`--version`
    // included) run the programs of a directory it names.
    "rust-toolchain",
    "rust-toolchain.toml",
    // Hook scripts a project keeps for `core.hooksPath` (husky's, or its own).
    ".husky/**",
    ".githooks/**",
    // Hook managers read these at each hook once installed: `git commit` runs what they say.
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    // lint-staged runs the commands these name at each `git commit` its hook guards.
    ".lintstagedrc",
    ".lintstagedrc.*",
    "lint-staged.config.*",
    // mise runs a project's `[hooks]` and `_.source` env scripts when a shell enters the
    // directory, and its tasks at `mise run`.
    ".mise.toml",
    "mise.toml",
    ".mise.*.toml",
    "mise.*.toml",
    ".mise/**",
    ".config/mise.toml",
    ".config/mise/**",
    // pylint's `init-hook` and `load-plugins` run Python at every lint; pnpm runs `.pnpmfile.cjs`
    // at every install.
    ".pylintrc",
    "pylintrc",
    ".pnpmfile.cjs",
    // Editors' files that run tasks or programs when a folder is opened.
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    "*.code-workspace",
    // IDEs' run configurations and dev containers: they run what they name.
    ".idea/workspace.xml",
    ".idea/runConfigurations/**",
    ".run/**",
    ".devcontainer/**",
    ".devcontainer.json",
    // Editors' per-directory start-up files.
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".dir-locals.el",
];

/// The words that make an env file a template without secrets, by convention: projects commit
/// `.env.example` (or `.env-sample`, `example.env`, ...) for others to copy.
pub const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist"];

/// Whether `path` names an env template: `.env` and one of [`ENV_TEMPLATES`] after a separator
/// (`.env.example`, `.env-sample`, `.env_template`), or one of them before `.env`
/// (`example.env`), in any letter case. No pattern makes it sensitive; a template of one
/// environment (`.env.production.example`) is not one.
pub fn is_env_template(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let word = name
        .strip_prefix(".env")
        .and_then(|rest| rest.strip_prefix(['.', '-', '_']))
        .or_else(|| name.strip_suffix(".env"));
    word.is_some_and(|w| ENV_TEMPLATES.contains(&w))
}

/// Names of the public halves of keys and certificates (matched ignoring ASCII case): what they
/// hold is meant to be shared, so no [`SECRETS`] pattern covers them (`~/.ssh/id_rsa.pub` is a
/// read outside the workspace, not a secret). By name only, since a plugin cannot look inside:
/// a `.pem` or `.key` may hold a private key, so only the bundle names that by convention hold
/// nothing but certificates are listed among `.pem` files.
pub const PUBLIC_PARTS: &[&str] = &[
    "*.pub",
    "*.crt",
    "*.cer",
    "*.csr",
    "ca.pem",
    "cacert.pem",
    "ca-bundle.pem",
    "chain.pem",
    "fullchain.pem",
];

/// Whether `path` names a file that no [`SECRETS`] pattern makes secret: an env template or
/// the public half of a key or certificate. [`RUNS_CODE`] still applies to it.
pub fn holds_no_secret(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    is_env_template(name)
        || PUBLIC_PARTS
            .iter()
            .any(|p| wildcard(p.as_bytes(), name.as_bytes(), true))
}

/// Extensions of source files and of documents: a name pattern's glued `*` (`id_rsa*`) does
/// not reach them, so `id_rsa_reader.go` is code to edit and `id_rsa_format.md` prose, not
/// keys. Shell scripts and plain `.txt` files are left out: `export`ing secrets from a script,
/// or pasting a key into a text file, is common.
const SOURCE_EXTENSIONS: &[&str] = &[
    "go", "py", "pyi", "rs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "java", "kt",
    "kts", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "fs", "rb", "php", "swift",
    "m", "mm", "dart", "lua", "pl", "pm", "r", "ex", "exs", "erl", "hs", "ml", "clj", "cljs",
    "groovy", "vue", "svelte", "zig", "nim", "jl", // documents
    "md", "markdown", "mdx", "rst", "adoc", "asciidoc", "html", "htm", "tex", "ipynb",
];

/// Whether the file name `name` ends in a source file's or a document's extension.
fn is_source_file(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && SOURCE_EXTENSIONS
                .iter()
                .any(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// A glob over absolute paths. Making one allocates nothing for a borrowed pattern: the
/// built-in lists are matched where they are, segment by segment (a fresh plugin instance
/// builds its globs for every request).
#[derive(Clone, Debug)]
pub struct PathGlob<'a> {
    pattern: Cow<'a, str>,
    /// What the pattern's segments follow: the home directory for `~/...`, `**` for a pattern
    /// that matches at any depth, nothing for an absolute one.
    lead: &'a str,
    /// Where the segments after `lead` start in `pattern`.
    rest: usize,
    /// A pattern without `/` that matches at any depth: it names a file, see the module doc.
    name: bool,
    /// What a path must hold to match: tested before the segments are.
    needs: Needs,
}

/// The rest of `text` after a leading `~`, `$HOME` or `${HOME}`, if it has one.
pub fn strip_home(text: &str) -> Option<&str> {
    if !text.starts_with(['~', '$']) {
        return None;
    }
    ["~", "$HOME", "${HOME}"].into_iter().find_map(|prefix| {
        let rest = text.strip_prefix(prefix)?;
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    })
}

impl<'a> PathGlob<'a> {
    /// The glob `pattern`, with `~` standing for `home`.
    pub fn new(pattern: impl Into<Cow<'a, str>>, home: &'a str) -> PathGlob<'a> {
        let pattern = pattern.into();
        let needs = Needs::of(&pattern);
        PathGlob::with_needs(pattern, home, needs)
    }

    /// [`PathGlob::new`] with the pattern's [`Needs`] already known: a built-in pattern's from
    /// [`SECRETS_NEEDS`] or [`RUNS_CODE_NEEDS`], computed at compile time. `needs` must be
    /// `Needs::of(pattern)`.
    pub fn with_needs(
        pattern: impl Into<Cow<'a, str>>,
        home: &'a str,
        needs: Needs,
    ) -> PathGlob<'a> {
        let pattern = pattern.into();
        debug_assert_eq!(needs, Needs::of(&pattern), "{pattern}");
        let (lead, rest) = match strip_home(&pattern) {
            Some(rest) => (home, pattern.len() - rest.len()),
            None if pattern.starts_with('/') => ("", 0),
            None => {
                let mut rest = 0;
                while pattern[rest..].starts_with("./") {
                    rest += 2;
                }
                ("**", rest)
            }
        };
        let name = lead == "**" && !pattern[rest..].contains('/');
        PathGlob {
            pattern,
            lead,
            rest,
            name,
            needs,
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the absolute `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        self.matches_segments(&PathSegments::new(path, false))
    }

    /// Whether `path` matches; split a path once with [`PathSegments::new`] to match it against
    /// many globs. A case-folded path is matched against the case-folded pattern.
    pub fn matches_segments(&self, path: &PathSegments) -> bool {
        if !self.needs.admits(path) {
            return false;
        }
        if self.name {
            return path
                .segments
                .last()
                .is_some_and(|file| self.matches_name(file, path.folded));
        }
        if !self.may_match(path) {
            return false;
        }
        let segments = self
            .lead
            .split('/')
            .chain(self.pattern[self.rest..].split('/'))
            .filter(|s| !s.is_empty());
        match_segments(segments, &path.segments, path.folded)
    }

    /// A quick test that rejects most paths a path pattern cannot match: the path must lie
    /// under the pattern's home or root and its first literal directory, or (for a pattern
    /// that matches at any depth) hold its first literal segment.
    fn may_match(&self, path: &PathSegments) -> bool {
        let folded = path.folded;
        let mut pattern = self.pattern[self.rest..]
            .split('/')
            .filter(|s| !s.is_empty());
        let first = pattern.find(|s| *s != "**" || self.lead != "**");
        let literal = first.filter(|s| !s.contains(['*', '?', '[']));
        if self.lead == "**" {
            return literal
                .is_none_or(|first| path.segments.iter().any(|s| same_text(first, s, folded)));
        }
        let Some(under_lead) = under(&path.joined, self.lead.trim_end_matches('/'), folded) else {
            return false;
        };
        literal.is_none_or(|first| {
            under_lead
                .strip_prefix('/')
                .is_some_and(|rest| under(rest, first, folded).is_some())
        })
    }

    /// Whether the file name `file` matches this name pattern: ignoring ASCII case, and with a
    /// `*` glued to the end of a name not reaching a source file's extension.
    fn matches_name(&self, file: &str, folded: bool) -> bool {
        let pattern = &self.pattern[self.rest..];
        let matched = match folded {
            true if !pattern.is_ascii() => {
                wildcard(pattern.to_lowercase().as_bytes(), file.as_bytes(), true)
            }
            _ => wildcard(pattern.as_bytes(), file.as_bytes(), true),
        };
        let glued_star = pattern.len() > 1 && pattern.ends_with('*') && !pattern.ends_with(".*");
        matched && !(glued_star && is_source_file(file))
    }
}

/// An absolute path split into segments, optionally case-folded.
pub struct PathSegments {
    segments: Vec<String>,
    /// The segments joined again, each after a `/`.
    joined: String,
    folded: bool,
    /// [`Needs`] bits of every segment, and of the file name alone.
    in_segments: u128,
    in_name: u128,
}

/// What a path must hold for a glob to match it, as a filter that is cheap to test before
/// the glob is built: the bit of a literal segment the glob requires (ASCII case ignored),
/// among any of the path's segments or as its file name. Testing it never rejects a path the
/// glob matches; it lets a few of the ~300 sensitive patterns be tried instead of all of them.
/// [`SECRETS_NEEDS`] and [`RUNS_CODE_NEEDS`] are computed at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// A segment's bit among [`PathSegments`]' `in_segments`; 0 for no requirement.
    segment: u128,
    /// The file name's bit; 0 for no requirement.
    name: u128,
}

impl Needs {
    /// What `pattern` (as [`PathGlob::new`] reads it) requires: for a name pattern without
    /// wildcards, that name; for a path pattern, its first literal segment after the home or
    /// root. Nothing for anything with wildcards only or non-ASCII text.
    pub const fn of(pattern: &str) -> Needs {
        let bytes = pattern.as_bytes();
        let mut start = match home_prefix_len(bytes) {
            Some(len) => len,
            None => 0,
        };
        let anywhere = start == 0 && (bytes.is_empty() || bytes[0] != b'/');
        if anywhere {
            while start + 1 < bytes.len() && bytes[start] == b'.' && bytes[start + 1] == b'/' {
                start += 2;
            }
        }
        let mut has_slash = false;
        let mut i = start;
        while i < bytes.len() {
            if bytes[i] == b'/' {
                has_slash = true;
            }
            i += 1;
        }
        let mut at = start;
        while at <= bytes.len() {
            let mut end = at;
            while end < bytes.len() && bytes[end] != b'/' {
                end += 1;
            }
            if end > at && !(end - at == 2 && bytes[at] == b'*' && bytes[at + 1] == b'*') {
                let bit = literal_bit(bytes, at, end);
                if anywhere && !has_slash {
                    return Needs {
                        segment: 0,
                        name: bit,
                    };
                }
                if bit != 0 {
                    return Needs {
                        segment: bit,
                        name: 0,
                    };
                }
            }
            at = end + 1;
        }
        Needs::NOTHING
    }

    /// No requirement: the glob is tried on every path.
    pub const NOTHING: Needs = Needs {
        segment: 0,
        name: 0,
    };

    /// Whether a glob with these needs may match `path` (false: it certainly does not).
    pub fn admits(&self, path: &PathSegments) -> bool {
        (self.segment == 0 || path.in_segments & self.segment != 0)
            && (self.name == 0 || path.in_name & self.name != 0)
    }
}

/// The length of a leading `~`, `$HOME` or `${HOME}` followed by `/` or the end (as
/// [`strip_home`] reads it).
const fn home_prefix_len(bytes: &[u8]) -> Option<usize> {
    let prefixes: [&[u8]; 3] = [b"~", b"$HOME", b"${HOME}"];
    let mut p = 0;
    while p < prefixes.len() {
        let prefix = prefixes[p];
        if bytes.len() >= prefix.len() {
            let mut same = true;
            let mut i = 0;
            while i < prefix.len() {
                if bytes[i] != prefix[i] {
                    same = false;
                }
                i += 1;
            }
            if same && (bytes.len() == prefix.len() || bytes[prefix.len()] == b'/') {
                return Some(prefix.len());
            }
        }
        p += 1;
    }
    None
}

/// The filter bit of `bytes[start..end]`, or 0 when it has a wildcard or a non-ASCII byte
/// (such a segment is not compared literally, or not ASCII-case-blind).
const fn literal_bit(bytes: &[u8], start: usize, end: usize) -> u128 {
    let mut i = start;
    while i < end {
        if bytes[i] == b'*' || bytes[i] == b'?' || !bytes[i].is_ascii() {
            return 0;
        }
        i += 1;
    }
    hash_bit(bytes, start, end)
}

/// The filter bit of a path's segment: what [`literal_bit`] gives a literal that matches it.
fn segment_bit(segment: &str) -> u128 {
    hash_bit(segment.as_bytes(), 0, segment.len())
}

/// One of 128 bits, by FNV-1a of `bytes[start..end]` ASCII-lower-cased.
const fn hash_bit(bytes: &[u8], start: usize, end: usize) -> u128 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = start;
    while i < end {
        hash ^= bytes[i].to_ascii_lowercase() as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    1u128 << (hash % 128)
}

/// [`Needs::of`] for every pattern of `list`, at compile time.
const fn needs_of<const N: usize>(list: &[&str]) -> [Needs; N] {
    let mut needs = [Needs::NOTHING; N];
    let mut i = 0;
    while i < N {
        needs[i] = Needs::of(list[i]);
        i += 1;
    }
    needs
}

/// [`Needs`] of each pattern of [`SECRETS`], in order.
pub const SECRETS_NEEDS: [Needs; SECRETS.len()] = needs_of(SECRETS);

/// [`Needs`] of each pattern of [`RUNS_CODE`], in order.
pub const RUNS_CODE_NEEDS: [Needs; RUNS_CODE.len()] = needs_of(RUNS_CODE);

/// [`Needs`] of each pattern of [`PROJECT_CODE`], in order.
pub const PROJECT_CODE_NEEDS: [Needs; PROJECT_CODE.len()] = needs_of(PROJECT_CODE);

/// The rest of `path` after the directory `dir` (`""` for the root), if `path` is `dir` or
/// under it.
fn under<'p>(path: &'p str, dir: &str, folded: bool) -> Option<&'p str> {
    let head = path.get(..dir.len())?;
    let rest = &path[dir.len()..];
    (same_text(dir, head, folded) && (rest.is_empty() || rest.starts_with('/') || dir.is_empty()))
        .then_some(rest)
}

/// Whether a pattern's literal text equals a path's (already folded when `folded`).
fn same_text(pattern: &str, text: &str, folded: bool) -> bool {
    match folded {
        true if pattern.is_ascii() => pattern.eq_ignore_ascii_case(text),
        true => pattern.to_lowercase() == text,
        false => pattern == text,
    }
}

impl PathSegments {
    pub fn new(path: &str, fold_case: bool) -> PathSegments {
        let fold = |s: &str| {
            if fold_case {
                s.to_lowercase()
            } else {
                s.to_owned()
            }
        };
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(fold)
            .collect();
        let mut joined = String::with_capacity(path.len());
        let mut in_segments = 0;
        for segment in &segments {
            joined.push('/');
            joined.push_str(segment);
            in_segments |= segment_bit(segment);
        }
        let in_name = segments.last().map_or(0, |name| segment_bit(name));
        PathSegments {
            segments,
            joined,
            folded: fold_case,
            in_segments,
            in_name,
        }
    }
}

/// Whether the pattern's segments match the path's; a folded path is compared with the
/// pattern lower-cased.
fn match_segments<'p>(
    mut pattern: impl Iterator<Item = &'p str> + Clone,
    path: &[String],
    folded: bool,
) -> bool {
    match pattern.next() {
        None => path.is_empty(),
        Some("**") => {
            (0..=path.len()).any(|skip| match_segments(pattern.clone(), &path[skip..], folded))
        }
        Some(first) => path.split_first().is_some_and(|(p, tail)| {
            let matched = if folded {
                wildcard(first.to_lowercase().as_bytes(), p.as_bytes(), false)
            } else {
                wildcard(first.as_bytes(), p.as_bytes(), false)
            };
            matched && match_segments(pattern, tail, folded)
        }),
    }
}

/// `*` and `?` matching of one path segment, optionally ignoring ASCII case.
fn wildcard(pattern: &[u8], text: &[u8], ascii_case: bool) -> bool {
    let same = |a: u8, b: u8| a == b || ascii_case && a.eq_ignore_ascii_case(&b);
    wildcard_by(pattern, text, b'*', b'?', same)
}

/// Whether the shell may expand `pattern`, one segment of an unquoted glob, to the file name
/// `name`: `*` and `?` as the shell has them (characters, not bytes), a bracket expression as
/// any one character (so never fewer names than the shell expands it to), and a name starting
/// with `.` only for a pattern that does (bash without `dotglob`).
pub fn shell_glob_may_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let mut simple = Vec::with_capacity(pattern.len());
    let mut rest = pattern.chars();
    while let Some(c) = rest.next() {
        if c != '[' {
            simple.push(c);
            continue;
        }
        // `[!]x]`, `[]x]`: a `]` first is one of the set; a `[` never closed is itself, and
        // taken as any character all the same.
        let set = rest.as_str();
        let skip = usize::from(set.starts_with(['!', '^']));
        let skip = skip + usize::from(set[skip..].starts_with(']'));
        if let Some(end) = set[skip..].find(']') {
            rest = set[skip + end + 1..].chars();
        }
        simple.push('?');
    }
    let name: Vec<char> = name.chars().collect();
    wildcard_by(&simple, &name, '*', '?', |a, b| a == b)
}

/// `star` matches any run, `one` any one item, everything else what `same` says.
fn wildcard_by<T: Copy + PartialEq>(
    pattern: &[T],
    text: &[T],
    star_item: T,
    one: T,
    same: impl Fn(T, T) -> bool,
) -> bool {
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == one || same(pattern[p], text[t])) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == star_item {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == star_item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_glob_is_taken_to_match_at_least_what_bash_expands() {
        let m = shell_glob_may_match;
        assert!(m("*.rs", "main.rs"));
        assert!(!m("*.rs", "main.py"));
        assert!(!m("*", ".env"), "no hidden file for `*`");
        assert!(m(".*", ".env"));
        assert!(m("?.rs", "é.rs"), "a character, not a byte");
        assert!(m("[ab].rs", "c.rs"), "a set is taken as any character");
        assert!(m("[]x].rs", "y.rs"));
        assert!(m("x[", "x["));
        assert!(m("[!a]*", "abc"));
    }

    #[test]
    fn globs() {
        let g = |p: &str, path: &str| PathGlob::new(p, "/h").matches(path);
        assert!(g("~/.ssh/**", "/h/.ssh"));
        assert!(g("~/.ssh/**", "/h/.ssh/id_rsa"));
        assert!(!g("~/.ssh/**", "/h/.sshx"));
        assert!(g(".env*", "/ws/sub/.env.local"));
        assert!(g(".env*", "/.env"));
        assert!(!g(".env*", "/ws/env"));
        assert!(g("**/.git/hooks/**", "/ws/.git/hooks/pre-commit"));
        assert!(g(".git/hooks/**", "/ws/.git/hooks/pre-commit"));
        assert!(g("/etc/**", "/etc/passwd"));
        assert!(g("*.pem", "/a/b/key.pem"));
        assert!(!g("/etc/**", "/home/etc/x"));
        assert!(g("$HOME/.aws/**", "/h/.aws/credentials"));
        let ssh = PathGlob::new("~/.ssh/**", "/h");
        assert!(ssh.matches_segments(&PathSegments::new("/H/.SSH/Id_Rsa", true)));
        assert!(!ssh.matches_segments(&PathSegments::new("/H/.SSH/Id_Rsa", false)));
    }

    #[test]
    fn the_quick_tests_never_reject_a_path_a_pattern_matches() {
        // Every built-in pattern, written out as a path it matches (`**` as two directories,
        // `*` and `?` as letters), at the root, under a workspace and, case-folded, in capitals.
        let needs = SECRETS_NEEDS
            .iter()
            .chain(&RUNS_CODE_NEEDS)
            .chain(&PROJECT_CODE_NEEDS);
        for (pattern, needs) in SECRETS
            .iter()
            .chain(RUNS_CODE)
            .chain(PROJECT_CODE)
            .zip(needs)
        {
            assert_eq!(
                *needs,
                Needs::of(pattern),
                "{pattern}: computed at compile time"
            );
            let glob = PathGlob::new(*pattern, "/home/u");
            let written = pattern
                .replace("${HOME}", "/home/u")
                .replace("$HOME", "/home/u")
                .replacen('~', "/home/u", 1)
                .replace("**", "d1/d2")
                .replace('*', "x")
                .replace('?', "y");
            let paths = match written.starts_with('/') {
                true => vec![written],
                false => vec![format!("/{written}"), format!("/ws/sub/{written}")],
            };
            for path in paths {
                assert!(glob.matches(&path), "{pattern}: {path}");
                assert!(
                    needs.admits(&PathSegments::new(&path, false)),
                    "{pattern}: {path}"
                );
                let folded = PathSegments::new(&path.to_uppercase(), true);
                assert!(glob.matches_segments(&folded), "{pattern}: {path} folded");
                assert!(needs.admits(&folded), "{pattern}: {path} folded");
            }
        }
    }

    /// The first built-in pattern of `list` that `path` matches, with `/h` as home.
    fn first_match(list: &'static [&'static str], path: &str) -> Option<&'static str> {
        (!is_env_template(path))
            .then(|| {
                list.iter()
                    .copied()
                    .find(|p| PathGlob::new(*p, "/h").matches(path))
            })
            .flatten()
    }

    #[test]
    fn key_names_match_key_files_in_any_case_not_source_files_or_documents_named_after_them() {
        for key in [
            "/ws/id_rsa",
            "/ws/id_ed25519_work",
            "/ws/id_ecdsa-old",
            "/ws/ID_RSA",
            "/ws/certs/Server.PEM",
            "/ws/tls.KEY",
            "/ws/store.P12",
            "/ws/release.keystore",
            "/ws/putty.ppk",
            "/ws/vault.kdbx",
            "/ws/AuthKey_ABC123.p8",
            "/ws/id_rsa.sh",
            "/ws/id_rsa.txt",
            "/ws/keys/id_ed25519.old",
            "/ws/certs/privkey.pem",
            "/ws/certs/cert.pem",
        ] {
            assert!(first_match(SECRETS, key).is_some(), "{key}");
            assert!(!holds_no_secret(key), "{key}");
        }
        for source in [
            "/ws/id_rsa_reader.go",
            "/ws/test_id_ed25519.py",
            "/ws/src/keys.ts",
            "/ws/secret_manager.rs",
            "/ws/token.go",
            "/ws/credentials_test.py",
            "/ws/id_ed25519_parser.rs",
            "/ws/src/Id_Rsa_Loader.JAVA",
            "/ws/src/key.rs",
            "/ws/src/env.ts",
            "/ws/src/environment.py",
            "/ws/docs/pem-format.md",
            "/ws/docs/id_rsa_format.md",
            "/ws/docs/ID_ED25519.MD",
            "/ws/docs/ssh_key_rotation.md",
            "/ws/docs/credentials.md",
            "/ws/docs/id_ecdsa-howto.rst",
            "/ws/notebooks/id_rsa_demo.ipynb",
        ] {
            assert_eq!(first_match(SECRETS, source), None, "{source}");
            assert_eq!(first_match(RUNS_CODE, source), None, "{source}");
        }
    }

    #[test]
    fn public_halves_of_keys_and_certificates_hold_no_secret_even_in_secret_directories() {
        for public in [
            "/ws/deploy/id_rsa.pub",
            "/h/.ssh/id_ed25519.pub",
            "/h/.ssh/id_rsa-cert.pub",
            "/ws/ID_RSA.PUB",
            "/ws/certs/server.crt",
            "/ws/certs/Server.CER",
            "/ws/certs/request.csr",
            "/ws/certs/fullchain.pem",
            "/ws/certs/ca.pem",
            "/etc/ssl/certs/ca-bundle.pem",
        ] {
            assert!(holds_no_secret(public), "{public}");
        }
        assert!(holds_no_secret("/ws/.env.example"));
        // Still files that run code where they are: the exemption is from secrets only.
        assert_eq!(
            first_match(RUNS_CODE, "/h/.local/bin/tool.pub"),
            Some("~/.local/bin/**")
        );
    }

    #[test]
    fn env_files_in_every_naming_style_are_secret_templates_are_not() {
        for env in [
            "/ws/.env",
            "/ws/.env.local",
            "/ws/.env.production",
            "/ws/.env.development.local",
            "/ws/config/prod.env",
            "/ws/.ENV",
            "/ws/.envrc",
            "/ws/.secrets",
            "/ws/.secrets.toml",
            "/ws/config/secrets.yaml",
            "/ws/.env.js",
            "/ws/.env-production",
            "/ws/.env_local",
            "/ws/.ENV-STAGING",
            "/ws/.env.local.bak",
            "/ws/.env.production.example",
            "/ws/config/secrets.env",
            "/ws/deploy/.env-prod.json",
        ] {
            assert!(first_match(SECRETS, env).is_some(), "{env}");
        }
        for template in [
            "/ws/.env.example",
            "/ws/.env.sample",
            "/ws/.env.template",
            "/ws/.ENV.EXAMPLE",
            "/ws/example.env",
            "/ws/.env.dist",
            "/ws/.env-example",
            "/ws/.env_sample",
        ] {
            assert_eq!(first_match(SECRETS, template), None, "{template}");
        }
        assert_eq!(first_match(SECRETS, "/ws/.venv/bin/python"), None);
        assert_eq!(
            first_match(SECRETS, "/ws/.env/lib/site.py"),
            None,
            "a venv named .env"
        );
        assert_eq!(first_match(SECRETS, "/ws/environment.yml"), None);
        assert_eq!(first_match(SECRETS, "/ws/.envoy.yaml"), None);
        assert_eq!(
            first_match(SECRETS, "/ws/src/.env-loader.ts"),
            None,
            "code named after env files"
        );
    }

    #[test]
    fn credential_files_of_common_tools_are_secret() {
        for (path, pattern) in [
            ("/h/.aws/credentials", "~/.aws/**"),
            (
                "/h/.config/gcloud/application_default_credentials.json",
                "~/.config/gcloud/**",
            ),
            ("/h/.azure/msal_token_cache.json", "~/.azure/**"),
            ("/h/.config/doctl/config.yaml", "~/.config/doctl/**"),
            ("/h/.oci/config", "~/.oci/**"),
            ("/h/.bluemix/config.json", "~/.bluemix/**"),
            ("/ws/.npmrc", ".npmrc"),
            ("/h/.pypirc", ".pypirc"),
            ("/h/.gem/credentials", "~/.gem/credentials"),
            ("/h/.cargo/credentials.toml", "~/.cargo/credentials*"),
            ("/h/.m2/settings.xml", "~/.m2/settings.xml"),
            (
                "/h/.gradle/gradle.properties",
                "~/.gradle/gradle.properties",
            ),
            (
                "/h/.nuget/NuGet/NuGet.Config",
                "~/.nuget/NuGet/NuGet.Config",
            ),
            (
                "/h/.config/composer/auth.json",
                "~/.config/composer/auth.json",
            ),
            ("/h/.docker/config.json", "~/.docker/config.json"),
            ("/h/.config/gh/hosts.yml", "~/.config/gh/**"),
            ("/h/.config/glab-cli/config.yml", "~/.config/glab-cli/**"),
            ("/h/.pgpass", ".pgpass"),
            ("/h/.my.cnf", ".my.cnf"),
            ("/h/.vault-token", ".vault-token"),
            ("/h/.config/op/config", "~/.config/op/**"),
            ("/h/.password-store/email.gpg", "*.gpg"),
            ("/h/.gnupg/private-keys-v1.d/x", "~/.gnupg/**"),
            (
                "/h/.local/share/keyrings/login.keyring",
                "~/.local/share/keyrings/**",
            ),
            ("/h/.netrc", ".netrc"),
            ("/h/.config/rclone/rclone.conf", "rclone.conf"),
            ("/h/.s3cfg", ".s3cfg"),
            ("/h/.ssh/config", "~/.ssh/**"),
            (
                "/h/.config/filezilla/sitemanager.xml",
                "~/.config/filezilla/**",
            ),
            ("/ws/.git-credentials", ".git-credentials"),
            ("/h/.config/git/credentials", "~/.config/git/credentials"),
            ("/h/.kube/config", "~/.kube/**"),
            ("/h/.config/helm/repositories.yaml", "~/.config/helm/**"),
            ("/h/.terraform.d/credentials.tfrc.json", "~/.terraform.d/**"),
            ("/h/.terraformrc", ".terraformrc"),
            ("/ws/infra/terraform.tfstate", "*.tfstate"),
            ("/h/.minikube/profiles/minikube/client.key", "*.key"),
            ("/h/.bash_history", ".bash_history"),
            ("/h/.zsh_history", ".zsh_history"),
            ("/h/.python_history", ".python_history"),
            ("/h/.node_repl_history", ".node_repl_history"),
            ("/h/.psql_history", ".psql_history"),
            ("/h/.mysql_history", ".mysql_history"),
            ("/h/.sqlite_history", ".sqlite_history"),
            ("/h/.lesshst", ".lesshst"),
            ("/h/.local/share/fish/fish_history", "fish_history"),
            ("/h/.irb_history", ".irb_history"),
            (
                "/h/.claude/.credentials.json",
                "~/.claude/.credentials.json",
            ),
            ("/h/.codex/auth.json", "~/.codex/auth.json"),
            ("/h/.gemini/oauth_creds.json", "~/.gemini/oauth_creds.json"),
            ("/home/other/.ssh/id_ed25519", "id_ed25519*"),
            ("/proc/self/environ", "/proc/*/environ"),
        ] {
            assert_eq!(first_match(SECRETS, path), Some(pattern), "{path}");
        }
    }

    #[test]
    fn files_a_project_keeps_that_run_code_later_are_its_own_to_approve() {
        for (path, pattern) in [
            ("/ws/.vscode/tasks.json", ".vscode/tasks.json"),
            ("/ws/.vscode/settings.json", ".vscode/settings.json"),
            ("/ws/.idea/workspace.xml", ".idea/workspace.xml"),
            ("/ws/.devcontainer/devcontainer.json", ".devcontainer/**"),
            ("/ws/app.code-workspace", "*.code-workspace"),
            ("/ws/.husky/pre-commit", ".husky/**"),
            ("/ws/.cargo/config.toml", ".cargo/config.toml"),
            ("/ws/crates/core/.cargo/config", ".cargo/config"),
            ("/ws/rust-toolchain.toml", "rust-toolchain.toml"),
            ("/ws/rust-toolchain", "rust-toolchain"),
            ("/ws/.yarnrc.yml", ".yarnrc.yml"),
            ("/ws/.yarn/releases/yarn-4.1.0.cjs", ".yarn/releases/**"),
            ("/ws/.yarn/plugins/@yarnpkg/x.cjs", ".yarn/plugins/**"),
            ("/ws/.pre-commit-config.yaml", ".pre-commit-config.yaml"),
            ("/ws/lefthook.yml", "lefthook.yml"),
            ("/ws/.lintstagedrc.json", ".lintstagedrc.*"),
            ("/ws/lint-staged.config.mjs", "lint-staged.config.*"),
            ("/ws/.mise.toml", ".mise.toml"),
            ("/ws/mise.local.toml", "mise.*.toml"),
            ("/ws/.mise/tasks/build", ".mise/**"),
            ("/ws/.pylintrc", ".pylintrc"),
            ("/ws/.pnpmfile.cjs", ".pnpmfile.cjs"),
            ("/ws/.devcontainer/post-create.sh", ".devcontainer/**"),
            ("/ws/.vscode/launch.json", ".vscode/launch.json"),
        ] {
            assert_eq!(first_match(SECRETS, path), None, "{path}");
            assert_eq!(first_match(RUNS_CODE, path), None, "{path}");
            assert_eq!(first_match(PROJECT_CODE, path), Some(pattern), "{path}");
        }
    }

    #[test]
    fn files_that_run_code_or_decide_what_an_agent_may_do_are_never_written() {
        for (path, pattern) in [
            ("/ws/.claude/settings.json", ".claude/**"),
            ("/ws/.claude/settings.local.json", ".claude/**"),
            ("/h/.claude.json", "~/.claude.json"),
            ("/ws/.gemini/settings.json", ".gemini/**"),
            ("/h/.gemini/policies/p.toml", "~/.gemini/**"),
            ("/h/.codex/config.toml", "~/.codex/**"),
            ("/ws/.codex/rules/default.rules", ".codex/**"),
            ("/ws/.mcp.json", ".mcp.json"),
            ("/ws/.git/hooks/pre-commit", ".git/hooks/**"),
            ("/ws/.git/config", ".git/config"),
            (
                "/ws/.git/modules/vendor/lib/hooks/post-checkout",
                ".git/modules/**/hooks/**",
            ),
            ("/ws/.git/modules/lib/config", ".git/modules/**/config"),
            (
                "/ws/.git/worktrees/feature/commondir",
                ".git/worktrees/*/commondir",
            ),
            ("/ws/wt/.git", ".git"),
            (
                "/ws/.git/rebase-merge/git-rebase-todo",
                ".git/**/rebase-merge/**",
            ),
            (
                "/ws/.git/worktrees/x/rebase-merge/strategy",
                ".git/**/rebase-merge/**",
            ),
            ("/ws/.git/rebase-apply/0001", ".git/**/rebase-apply/**"),
            ("/ws/.git/sequencer/todo", ".git/**/sequencer/**"),
            ("/ws/.git/commondir", ".git/commondir"),
            (
                "/ws/.git/modules/lib/commondir",
                ".git/modules/**/commondir",
            ),
            ("/ws/planted/HEAD", "*/HEAD"),
            ("/ws/fixtures/bare.git/hooks/post-update", "*.git/hooks/**"),
            ("/ws/.continue/config.yaml", ".continue/config.*"),
            (
                "/ws/.continue/mcpServers/db.yaml",
                ".continue/mcpServers/**",
            ),
            ("/ws/.cursor/hooks.json", ".cursor/hooks.json"),
            ("/ws/.roo/mcp.json", ".roo/mcp.json"),
            ("/ws/.kiro/settings/mcp.json", ".kiro/settings/mcp.json"),
            ("/ws/.amazonq/mcp.json", ".amazonq/mcp.json"),
            (
                "/ws/.venv/lib/python3.12/site-packages/evil.pth",
                "site-packages/*.pth",
            ),
            ("/h/.config/acp-gate/handlers.toml", "~/.config/acp-gate/**"),
            ("/h/.local/share/acp-gate/x", "~/.local/share/acp-gate/**"),
            ("/ws/.acp-gate/handlers.toml", ".acp-gate/**"),
            ("/h/.bashrc", "~/.bashrc"),
            ("/ws/.zed/settings.json", ".zed/**"),
            ("/ws/.vscode/mcp.json", ".vscode/mcp.json"),
        ] {
            assert_eq!(first_match(SECRETS, path), None, "{path}");
            assert_eq!(first_match(PROJECT_CODE, path), None, "{path}");
            assert_eq!(first_match(RUNS_CODE, path), Some(pattern), "{path}");
        }
        for ordinary in [
            "/ws/AGENTS.md",
            "/ws/CLAUDE.md",
            "/ws/.gitmodules",
            "/ws/.gitignore",
            "/ws/.vscode/extensions.json",
            "/ws/Makefile",
            "/ws/.github/workflows/ci.yml",
            "/ws/.gitattributes",
            "/ws/.pre-commit-hooks.yaml",
            "/ws/Cargo.toml",
            "/ws/package.json",
            "/ws/build.rs",
            "/ws/tests/conftest.py",
            "/ws/models/resnet.pth",
            "/ws/src/cargo/config.rs",
            "/ws/src/git/config.rs",
            "/ws/src/hooks/useAuth.ts",
            "/ws/bin/head",
            "/ws/docs/HEAD.md",
        ] {
            assert_eq!(first_match(RUNS_CODE, ordinary), None, "{ordinary}");
            assert_eq!(first_match(PROJECT_CODE, ordinary), None, "{ordinary}");
            assert_eq!(first_match(SECRETS, ordinary), None, "{ordinary}");
        }
    }
}
