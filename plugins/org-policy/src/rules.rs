//! A compiled rule and its conditions, and how each condition matches.
//!
//! Deny and ask rules match generously, allow rules strictly:
//!
//! | | deny / ask | allow |
//! |---|---|---|
//! | `paths` | any path matches (case-insensitively) | every path matches (case-sensitively), and there is one |
//! | `prefix`, `regex` | some simple command matches (what a wrapper such as `sudo`, `env`, `timeout`, `xargs` runs is a simple command of its own); a prefix reads past every option among its words, the program's global options by their tables (`kubectl -n prod delete`), others taking a value or not; a word only known at run time (`$X`) matches any token but the first | the command word for word, past only the global options that change nothing but the output or the configured target (`kubectl -n prod delete`, not `--kubeconfig x`); a dynamic word matches nothing; a command redirecting its output into a file never matches |

use regex_automata::nfa::thompson::{self, pikevm::PikeVM};
use regex_automata::util::syntax;
use serde::Deserialize;

use acp_gate_plugin::sensitive::{PathGlob as SdkGlob, PathSegments};

use acp_gate_shell::subcommand::{self, Cli, Placement, Reading};

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
    /// The pattern compiled; a mistake is the `regex` crate's own message (the pattern, a
    /// caret under the mistake, and what is wrong).
    pub fn new(pattern: &str) -> Result<Pattern, String> {
        let syntax = syntax::Config::new().unicode(false).utf8(false);
        let hir = syntax::parse_with(pattern, &syntax).map_err(|e| e.to_string())?;
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().utf8(false))
            .build_from_hir(&hir)
            .map_err(|e| e.to_string())?;
        PikeVM::new_from_nfa(nfa)
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
    /// matches a command that redirects its output into a file or sets a variable that is not
    /// inert.
    pub fn matches_command(&self, command: &SimpleCommand) -> bool {
        let plain = command.writes.is_empty() && !command.changes_environment;
        (self.generous() || plain) && self.matches_view(command)
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
/// normalised name; the others with the words after it, read past the program's global options
/// ([`acp_gate_shell::subcommand`]): `["kubectl", "delete"]` matches `kubectl -n prod delete`.
///
/// Strict (an allow rule): only the options a table lists as inert are read past, where the
/// program takes them; any other word must be the next token. `generous` (deny and ask rules):
/// every option is read past, anywhere among the prefix's words, one that no table lists as
/// taking a value or not (so both readings are tried), and a word only known at run time is
/// either any token but the first or an option.
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
    let (tokens, words) = (&prefix[1..], &words[1..]);
    // Most commands have nothing to read past: their words, as written, decide.
    let as_written = tokens.len() <= words.len()
        && tokens
            .iter()
            .zip(words)
            .all(|(token, word)| match word.dynamic {
                true => generous,
                false => token.alternatives().contains(&word.text),
            });
    let optional = |w: &Word| w.dynamic || w.text.starts_with(['-', '+']) || w.text.contains('=');
    let cli = subcommand::cli(&name);
    if as_written || !words.iter().any(optional) {
        return as_written && (generous || plain_tail(cli, &words[tokens.len()..]));
    }
    Reader {
        tokens,
        words,
        cli,
        generous,
    }
    .matches()
}

/// Whether the words after an allow rule's prefix leave the command what the rule saw: where
/// the program's global options may stand anywhere, none of them points it at other
/// configuration or code or its credentials at another server (`kubectl get pods
/// --server=https://x`), and no word only known at run time may be one. After `--`, the
/// words are operands.
fn plain_tail(cli: Option<&Cli>, tail: &[Word]) -> bool {
    let Some(cli) = cli.filter(|cli| cli.placement == Placement::Anywhere) else {
        return true;
    };
    for word in tail {
        if word.dynamic {
            // `pod-$N` is no option; `$FLAGS`, `"$X"` may be one.
            if !word
                .text
                .starts_with(|c: char| c.is_alphanumeric() || "/._".contains(c))
            {
                return false;
            }
            continue;
        }
        match cli.read(&word.text, false) {
            Reading::EndOfOptions => break,
            Reading::Global { loads: true, .. } => return false,
            _ => {}
        }
    }
    true
}

/// The search for `tokens` in `words` (see [`prefix_matches`]).
struct Reader<'a> {
    tokens: &'a [Token],
    words: &'a [Word],
    cli: Option<&'static Cli>,
    generous: bool,
}

/// Where the search stands: tokens matched, words read, and whether a `--` was read.
type At = (usize, usize, bool);

impl Reader<'_> {
    /// Whether some reading of the words matches every token: a walk over the positions the
    /// readings reach, each visited once.
    fn matches(&self) -> bool {
        let (tokens, words) = (self.tokens.len() + 1, self.words.len() + 1);
        let mut seen = vec![false; tokens * words * 2];
        let mut todo: Vec<At> = vec![(0, 0, false)];
        while let Some(at @ (token, word, ended)) = todo.pop() {
            let visit = &mut seen[(token * words + word) * 2 + usize::from(ended)];
            if std::mem::replace(visit, true) {
                continue;
            }
            if token == self.tokens.len() {
                if self.generous || ended || plain_tail(self.cli, &self.words[word..]) {
                    return true;
                }
                continue;
            }
            self.next(at, &mut todo);
        }
        false
    }

    /// Whether the value of the option at `word` (`words` words with it) is known before the
    /// command runs: an unquoted `$X` may stand for several words, options among them.
    fn static_value(&self, word: usize, words: usize) -> bool {
        self.words[word + 1..]
            .iter()
            .take(words - 1)
            .all(|w| !w.dynamic)
    }

    /// The positions one step from `at`.
    fn next(&self, (token, word, ended): At, todo: &mut Vec<At>) {
        let Some(w) = self.words.get(word) else {
            return;
        };
        let alternatives = self.tokens[token].alternatives();
        if w.dynamic {
            if self.generous {
                todo.push((token + 1, word + 1, ended));
            }
        } else if alternatives.contains(&w.text) {
            todo.push((token + 1, word + 1, ended));
        } else if let Some((option, value)) =
            w.text.split_once('=').filter(|_| w.text.starts_with('-'))
        {
            // `--context=prod` is the tokens `--context`, `prod`.
            let value_token = self.tokens.get(token + 1).map(Token::alternatives);
            if alternatives.iter().any(|a| a == option)
                && value_token.is_some_and(|v| v.iter().any(|a| a == value))
            {
                todo.push((token + 2, word + 1, ended));
            }
        } else if let Some(value) = self.words.get(word + 1).filter(|v| !v.dynamic) {
            // The token `--context=prod` is the words `--context`, `prod`.
            if alternatives
                .iter()
                .any(|a| a.split_once('=') == Some((w.text.as_str(), value.text.as_str())))
            {
                todo.push((token + 1, word + 2, ended));
            }
        }
        if ended {
            return;
        }
        // The word read as an option (or the end of the options), where the program takes one.
        let global = self
            .cli
            .filter(|cli| token == 0 || cli.placement == Placement::Anywhere);
        let reading = match global {
            Some(cli) => cli.read(&w.text, w.dynamic),
            None if w.dynamic => Reading::Unknown,
            None if w.text == "--" => Reading::EndOfOptions,
            None if w.text.starts_with('-') && w.text != "-" => Reading::Unknown,
            None => Reading::Operand,
        };
        match reading {
            Reading::Global {
                words,
                loads,
                may_take_next,
            } if self.generous || !loads && self.static_value(word, words) => {
                todo.push((token, word + words, false));
                if may_take_next && self.generous {
                    todo.push((token, word + 2, false));
                }
            }
            Reading::Unknown if self.generous => {
                todo.push((token, word + 1, false));
                todo.push((token, word + 2, false));
            }
            Reading::EndOfOptions if self.generous => todo.push((token, word + 1, true)),
            _ => {}
        }
    }
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
