//! A compiled rule and its conditions, and how each condition matches.
//!
//! Deny and ask rules match generously, allow rules strictly:
//!
//! | | deny / ask | allow |
//! |---|---|---|
//! | `paths` | any path matches (case-insensitively) | every path matches (case-sensitively), and there is one |
//! | `prefix`, `regex` | some simple command matches (what a wrapper such as `sudo`, `env`, `timeout`, `xargs` runs is a simple command of its own), also after git's global options (`git -C dir push`) are skipped; a word only known at run time (`$X`) matches any token but the first | the command as written, word for word; a dynamic word matches nothing; a command redirecting its output into a file never matches |

use regex_automata::nfa::thompson::{self, pikevm::PikeVM};
use regex_automata::util::syntax;
use serde::Deserialize;

use acp_gate_plugin::sensitive::{PathGlob as SdkGlob, PathSegments};

use crate::commands::{SimpleCommand, Word, program_name};
use crate::examples::Example;
use acp_gate_plugin::ToolKind;
use acp_gate_plugin::tools::{find as find_tool, names_tool};

/// What a rule decides when it matches.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// One token of a `prefix`: a word, or a list of alternatives (`["push", "fetch"]`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Token {
    One(String),
    Any(Vec<String>),
}

impl Token {
    pub fn alternatives(&self) -> &[String] {
        match self {
            Token::One(word) => std::slice::from_ref(word),
            Token::Any(words) => words,
        }
    }
}

/// A regex, searched for anywhere in the text (anchor it with `^` / `$`). Rust `regex` syntax
/// with ASCII classes: `\\w`, `\\s`, `\\d`, `\\b` and `(?i)` know ASCII only, which keeps Unicode
/// tables out of the component; other characters still match literally.
#[derive(Clone, Debug)]
pub struct Pattern(PikeVM);

impl Pattern {
    pub fn new(pattern: &str) -> Result<Pattern, String> {
        PikeVM::builder()
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .thompson(thompson::Config::new().utf8(false))
            .build(pattern)
            .map(Pattern)
            .map_err(|e| e.to_string())
    }

    pub fn is_match(&self, text: &str) -> bool {
        let mut cache = self.0.create_cache();
        self.0.is_match(&mut cache, text)
    }
}

/// A condition of a rule; all of a rule's conditions must hold.
#[derive(Clone, Debug)]
pub enum Condition {
    /// The request's (host-derived) tool kind is one of these.
    Kinds(Vec<ToolKind>),
    /// The agent's tool name is one of these, or another agent's name for the same tool
    /// (`acp_gate_plugin::tools`), or matches one with `*` (ASCII case-insensitive).
    Tools(Vec<String>),
    /// The request's title matches.
    Title(Pattern),
    /// Globs over the request's absolute paths.
    Paths(Vec<String>),
    /// The hosts of the URLs the request fetches: `example.com`, or `*.example.com` for its
    /// subdomains (ASCII case-insensitive).
    Domains(Vec<String>),
    /// A simple command starts with these tokens.
    Prefix(Vec<Token>),
    /// A simple command's text matches.
    Regex(Pattern),
}

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    pub decision: Decision,
    pub priority: i64,
    pub reason: String,
    pub conditions: Vec<Condition>,
    pub matches: Vec<Example>,
    pub not_match: Vec<Example>,
}

impl Rule {
    /// Deny and ask rules match generously, allow rules strictly (see the module docs).
    pub fn generous(&self) -> bool {
        self.decision != Decision::Allow
    }

    /// Whether the rule has conditions on the command (`prefix`, `regex`).
    pub fn judges_commands(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| matches!(c, Condition::Prefix(_) | Condition::Regex(_)))
    }

    /// Whether the rule looks at the URLs a request fetches.
    pub fn judges_urls(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| matches!(c, Condition::Domains(_)))
    }

    /// Whether the conditions that are not about the command hold.
    pub fn request_conditions_hold(&self, facts: &RequestFacts<'_>) -> bool {
        let RequestFacts {
            kind,
            tool,
            title,
            paths,
            urls,
            places,
        } = *facts;
        self.conditions.iter().all(|c| match c {
            Condition::Kinds(kinds) => kinds.contains(&kind),
            Condition::Tools(tools) => match tool {
                Some(tool) => tools.iter().any(|w| names_tool(w, tool)),
                // A request without a tool name is one of a known tool's when it has the
                // tool's usual kind: deny and ask rules take it, allow rules do not.
                None => {
                    self.generous()
                        && tools
                            .iter()
                            .any(|w| find_tool(w).is_some_and(|t| kind.acp_name() == t.kinds[0]))
                }
            },
            Condition::Domains(domains) => {
                let hit = |url: &String| {
                    host_of(url)
                        .is_some_and(|host| domains.iter().any(|d| domain_matches(d, &host)))
                };
                if self.generous() {
                    urls.iter().any(hit)
                } else {
                    !urls.is_empty() && urls.iter().all(hit)
                }
            }
            Condition::Title(regex) => regex.is_match(title),
            Condition::Paths(globs) => {
                let globs: Vec<SdkGlob> = globs
                    .iter()
                    .filter_map(|g| PathGlob::matcher(g, places))
                    .collect();
                let fold = self.generous();
                let hit = |p: &String| {
                    let path = PathSegments::new(p, fold);
                    globs.iter().any(|g| g.matches_segments(&path))
                };
                if self.generous() {
                    paths.iter().any(hit)
                } else {
                    !paths.is_empty() && paths.iter().all(hit)
                }
            }
            Condition::Prefix(_) | Condition::Regex(_) => true,
        })
    }

    /// Whether the command conditions hold for one simple command. An allow rule never
    /// matches a command that redirects its output into a file.
    pub fn matches_command(&self, command: &SimpleCommand) -> bool {
        (self.generous() || command.writes.is_empty()) && self.matches_view(command)
    }

    fn matches_view(&self, command: &SimpleCommand) -> bool {
        self.conditions.iter().all(|c| match c {
            Condition::Prefix(prefix) => prefix_matches(prefix, &command.words, self.generous()),
            Condition::Regex(regex) => regex.is_match(&command.text()),
            _ => true,
        })
    }

    /// For a command that does not parse: whether the command conditions hold for `raw`
    /// (a regex-only rule) or for one of its rough pieces.
    pub fn matches_raw(&self, raw: &str, pieces: &[SimpleCommand]) -> bool {
        let regex_only = !self
            .conditions
            .iter()
            .any(|c| matches!(c, Condition::Prefix(_)));
        let raw_hit = regex_only
            && self.conditions.iter().all(|c| match c {
                Condition::Regex(regex) => regex.is_match(raw),
                _ => true,
            });
        raw_hit || pieces.iter().any(|p| self.matches_command(p))
    }
}

/// What the conditions other than the command's look at.
#[derive(Clone, Copy)]
pub struct RequestFacts<'a> {
    pub kind: ToolKind,
    pub tool: Option<&'a str>,
    pub title: &'a str,
    pub paths: &'a [String],
    pub urls: &'a [String],
    pub places: &'a Places,
}

/// The host of an absolute URL (`scheme://[user@]host[:port]/..`), lower-cased.
pub fn host_of(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// `example.com` matches that host only; `*.example.com` its subdomains (not itself).
fn domain_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(parent) => host
            .strip_suffix(parent)
            .is_some_and(|sub| sub.ends_with('.') && sub.len() > 1),
        None => host == pattern,
    }
}

/// Where relative globs and `~/` point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places {
    pub home: String,
    /// The first workspace root, if the session has one.
    pub workspace: Option<String>,
}

/// Path globs over absolute paths, with the SDK's matcher: `~/` is the home directory, a
/// relative glob is relative to the first workspace root, `*` and `?` stay within one path
/// segment, `**` is any number of segments.
pub struct PathGlob;

impl PathGlob {
    /// Rejects what the matcher would take literally: `[..]` classes and `{a,b}` alternatives.
    pub fn check(pattern: &str) -> Result<(), String> {
        if pattern.trim().is_empty() {
            return Err("an empty glob".into());
        }
        if pattern.contains(['[', ']', '{', '}', '\\']) {
            return Err(format!(
                "glob `{pattern}`: only `*`, `?` and `**` are supported (no `[..]`, `{{a,b}}` or `\\`); write one glob per alternative"
            ));
        }
        Ok(())
    }

    /// The matcher for `pattern` in `places`; `None` when it is relative and there is no
    /// workspace root.
    pub fn matcher<'a>(pattern: &'a str, places: &'a Places) -> Option<SdkGlob<'a>> {
        let absolute: std::borrow::Cow<'a, str> =
            if pattern == "~" || pattern.starts_with("~/") || pattern.starts_with('/') {
                pattern.into()
            } else {
                let root = places.workspace.as_deref()?;
                let rest = pattern.trim_start_matches("./");
                format!("{}/{rest}", root.trim_end_matches('/')).into()
            };
        Some(SdkGlob::new(absolute, &places.home))
    }
}

/// Whether `words` start with `prefix`. The first token is compared with the program's
/// normalised name. `generous`: git's global options are skipped, and a dynamic word other
/// than the first matches any token.
pub fn prefix_matches(prefix: &[Token], words: &[Word], generous: bool) -> bool {
    let (Some(first), Some(head)) = (prefix.first(), words.first()) else {
        return false;
    };
    if head.dynamic {
        return false;
    }
    let name = program_name(&head.text);
    if !first.alternatives().iter().any(|a| program_name(a) == name) {
        return false;
    }
    let mut rest = &words[1..];
    if generous && name == "git" {
        rest = skip_options(rest, GIT_VALUED);
    }
    prefix[1..].len() <= rest.len()
        && prefix[1..].iter().zip(rest).all(|(token, word)| {
            if word.dynamic {
                generous
            } else {
                token.alternatives().contains(&word.text)
            }
        })
}

const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--exec-path",
];

/// The words after the leading options; `valued` lists the options that take the next word.
fn skip_options<'w>(mut words: &'w [Word], valued: &[&str]) -> &'w [Word] {
    while let Some(w) = words.first() {
        let t = w.text.as_str();
        if t == "--" {
            return &words[1..];
        }
        if !t.starts_with('-') || t == "-" || w.dynamic {
            break;
        }
        let step = if valued.contains(&t) { 2 } else { 1 };
        words = words.get(step..).unwrap_or_default();
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace()
            .map(|w| match w.strip_prefix('$') {
                Some(_) => Word {
                    text: w.into(),
                    dynamic: true,
                },
                None => Word::literal(w),
            })
            .collect()
    }

    fn prefix(json: &str) -> Vec<Token> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn prefix_alternatives_and_program_names() {
        let p = prefix(r#"["git", ["push", "fetch"]]"#);
        assert!(prefix_matches(&p, &words("git push origin"), false));
        assert!(prefix_matches(&p, &words("git fetch"), false));
        assert!(prefix_matches(&p, &words("/usr/bin/git push"), false));
        assert!(prefix_matches(&p, &words("/usr/bin/GIT fetch"), false));
        assert!(!prefix_matches(&p, &words("git pull"), false));
        assert!(!prefix_matches(&p, &words("git"), false));
        assert!(!prefix_matches(&p, &words("gitx push"), false));
        let q = prefix(r#"[["npm", "pnpm"], "test"]"#);
        assert!(prefix_matches(&q, &words("pnpm test --watch"), false));
    }

    #[test]
    fn generous_prefixes_skip_git_options_and_accept_dynamic_words() {
        let p = prefix(r#"["git", "push", "origin", "main"]"#);
        assert!(!prefix_matches(
            &p,
            &words("git -C . push origin main"),
            false
        ));
        assert!(prefix_matches(
            &p,
            &words("git -C . push origin main"),
            true
        ));
        assert!(prefix_matches(
            &p,
            &words("git --no-pager -c a=b push origin main"),
            true
        ));
        assert!(prefix_matches(&p, &words("git push $REMOTE main"), true));
        assert!(!prefix_matches(&p, &words("git push $REMOTE main"), false));
        assert!(!prefix_matches(&p, &words("$GIT push origin main"), true));
    }

    #[test]
    fn globs_expand_home_and_workspace() {
        let places = Places {
            home: "/home/u".into(),
            workspace: Some("/ws".into()),
        };
        let m = |g: &str, path: &str, fold: bool| {
            let glob = PathGlob::matcher(g, &places).unwrap();
            glob.matches_segments(&PathSegments::new(path, fold))
        };
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa", false));
        assert!(!m("~/.ssh/**", "/home/u/.sshx/id_rsa", false));
        assert!(!m("~/.ssh/**", "/home/u/.SSH/id_rsa", false));
        assert!(m("~/.ssh/**", "/home/u/.SSH/id_rsa", true));
        assert!(m("src/**", "/ws/src/a/b.rs", false));
        assert!(m("./src/*.rs", "/ws/src/b.rs", false));
        assert!(!m("src/*.rs", "/ws/src/a/b.rs", false));
        assert!(!m("src/**", "/other/src/a.rs", false));
        assert!(m("/etc/**", "/etc/passwd", false));
        assert!(m("**/*.pem", "/ws/a/k.pem", false));
        assert!(!m("**/*.pem", "/elsewhere/k.pem", false));
        assert!(PathGlob::check("src/{a,b}/**").is_err());
        assert!(PathGlob::check("src/[ab].rs").is_err());
        let nowhere = Places {
            home: "/h".into(),
            workspace: None,
        };
        assert!(PathGlob::matcher("src/**", &nowhere).is_none());
    }
}
