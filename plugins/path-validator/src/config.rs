//! The `[handler.config]` table and the built-in sensitive patterns.

use serde::Deserialize;

/// What a read outside every workspace root gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutsideRead {
    Allow,
    #[default]
    Ask,
    Deny,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// More sensitive patterns, added to the built-in ones.
    pub sensitive: Vec<String>,
    /// Built-in patterns to drop, written exactly as in [`DEFAULT_SENSITIVE`].
    pub allow_sensitive: Vec<String>,
    /// Reads outside the workspace: `allow`, `ask` (default) or `deny`.
    pub outside_read: OutsideRead,
    /// More directories that count as inside the workspace (`~/` allowed), e.g. a shared
    /// build cache.
    pub extra_roots: Vec<String>,
}

/// Sensitive wherever they are. Patterns without a `/` match a file name at any depth;
/// relative patterns with a `/` match at any depth; `~/` is the user's home.
pub const DEFAULT_SENSITIVE: &[&str] = &[
    // Secrets in projects.
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".git-credentials",
    ".netrc",
    // Credentials in the home directory.
    "~/.ssh/**",
    "~/.aws/**",
    "~/.gnupg/**",
    "~/.azure/**",
    "~/.kube/**",
    "~/.config/gh/**",
    "~/.config/gcloud/**",
    "~/.docker/config.json",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials*",
    "~/.password-store/**",
    // Code that runs at the next shell or login.
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.config/fish/**",
    "~/.config/autostart/**",
    // Code that runs at the next git command.
    ".git/hooks/**",
    ".git/config",
    // acp-gate's own policy, plugins, compile cache and audit log: an agent must not be able
    // to rewrite its own gate.
    ".acp-gate/**",
    "~/.config/acp-gate/**",
    "~/.cache/acp-gate/**",
    "~/.local/state/acp-gate/**",
    "/etc/acp-gate/**",
];

/// File names that match `.env.*` but are templates without secrets, by convention.
pub const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];
