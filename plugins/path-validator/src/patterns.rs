//! Sensitive-path patterns, compiled once per request.

use glob::{MatchOptions, Pattern};
use unicode_normalization::UnicodeNormalization;

use crate::config::{Config, DEFAULT_SENSITIVE, ENV_TEMPLATES};

pub struct Sensitive {
    /// Each compiled glob, with the pattern as the user wrote it.
    globs: Vec<(Pattern, String)>,
    templates: Vec<String>,
    case_insensitive: bool,
}

/// `~/x` -> `HOME/x`, `~` -> `HOME`; anything else unchanged.
pub fn expand_home(pattern: &str, home: &str) -> String {
    match pattern.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", home.trim_end_matches('/')),
        None if pattern == "~" => home.to_owned(),
        None => pattern.to_owned(),
    }
}

impl Sensitive {
    /// The built-in patterns minus `allow_sensitive`, plus `sensitive`.
    pub fn new(config: &Config, home: &str, case_insensitive: bool) -> Result<Sensitive, String> {
        for dropped in &config.allow_sensitive {
            if !DEFAULT_SENSITIVE.contains(&dropped.as_str()) {
                return Err(format!("allow_sensitive: `{dropped}` is not a built-in pattern"));
            }
        }
        let globs = DEFAULT_SENSITIVE
            .iter()
            .map(|p| p.to_string())
            .filter(|p| !config.allow_sensitive.contains(p))
            .chain(config.sensitive.iter().cloned())
            .map(|pattern| Ok((compile(&pattern, home)?, pattern)))
            .collect::<Result<Vec<_>, String>>()?;
        let templates = ENV_TEMPLATES.iter().map(|t| fold(t, case_insensitive)).collect();
        Ok(Sensitive { globs, templates, case_insensitive })
    }

    /// The first pattern `path` (absolute, NFC) matches.
    pub fn matching(&self, path: &str) -> Option<&str> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if self.templates.contains(&fold(name, self.case_insensitive)) {
            return None;
        }
        let options = MatchOptions {
            case_sensitive: !self.case_insensitive,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        self.globs.iter().find(|(glob, _)| glob.matches_with(path, options)).map(|(_, shown)| shown.as_str())
    }
}

fn fold(text: &str, case_insensitive: bool) -> String {
    if case_insensitive { text.to_lowercase() } else { text.to_owned() }
}

/// A pattern as a glob over absolute paths: `~/` expanded, relative patterns anchored at any
/// depth (`/**/`), NFC.
fn compile(pattern: &str, home: &str) -> Result<Pattern, String> {
    let expanded = expand_home(pattern, home);
    let anchored = if expanded.starts_with('/') { expanded } else { format!("/**/{expanded}") };
    let normalised: String = anchored.nfc().collect();
    Pattern::new(&normalised).map_err(|e| format!("sensitive pattern `{pattern}`: {e}"))
}
