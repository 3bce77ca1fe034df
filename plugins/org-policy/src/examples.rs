//! A rule's `match` / `not_match` examples as written: a command string, or a request in
//! short form. The rules keep them; `policy::check_examples` judges them.

use serde::Deserialize;

/// A `match` / `not_match` example: a command string, or a request in short form.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Example {
    Command(String),
    Request(ExampleRequest),
}

/// `{ command = "..", kind = "..", path = ".." }` and friends. `kind` defaults to `execute`
/// with a command or argv, else to `read`; relative paths are relative to the first workspace
/// root and `~/` is the home directory.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ExampleRequest {
    pub command: Option<String>,
    pub argv: Option<Vec<String>>,
    pub kind: Option<String>,
    pub path: Option<String>,
    pub paths: Vec<String>,
    pub tool: Option<String>,
    pub title: Option<String>,
    pub url: Option<String>,
}

impl std::fmt::Display for Example {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Example::Command(command) => write!(f, "{command:?}"),
            Example::Request(r) => {
                let mut parts = Vec::new();
                let mut field = |key: &str, value: String| parts.push(format!("{key} = {value}"));
                if let Some(v) = &r.command {
                    field("command", format!("{v:?}"));
                }
                if let Some(v) = &r.argv {
                    field("argv", format!("{v:?}"));
                }
                if let Some(v) = &r.kind {
                    field("kind", format!("{v:?}"));
                }
                if let Some(v) = &r.path {
                    field("path", format!("{v:?}"));
                }
                if !r.paths.is_empty() {
                    field("paths", format!("{:?}", r.paths));
                }
                if let Some(v) = &r.tool {
                    field("tool", format!("{v:?}"));
                }
                if let Some(v) = &r.title {
                    field("title", format!("{v:?}"));
                }
                if let Some(v) = &r.url {
                    field("url", format!("{v:?}"));
                }
                write!(f, "{{ {} }}", parts.join(", "))
            }
        }
    }
}
