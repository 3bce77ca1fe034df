//! One word of a command as it receives it (`Arg`), and what flows through a pipe (`Feed`).

use brush_parser::word::{BraceExpressionMember, BraceExpressionOrText};

/// What a command writes to its standard output, as far as the checker can tell: what a shell
/// or interpreter downstream of it in a pipeline would run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Feed {
    /// Nothing: no pipe, no input redirect.
    #[default]
    Nothing,
    /// Known text (`echo 'ls -la'`, a literal here-document).
    Text(String),
    /// Something the checker cannot see (a file, another command's output).
    Unknown,
    /// Decoded or unpacked bytes (`base64 -d`, `xxd -r`, `printf '\x..'`).
    Decoded,
    /// Bytes fetched from the network (`curl`, `wget`, `nc`).
    Network,
    /// The paths `find -print0` printed: files (no symbolic link) under this directory, each
    /// ended by a NUL (what `xargs -0` splits exactly).
    Found(String),
}

impl Feed {
    fn rank(&self) -> u8 {
        match self {
            Feed::Nothing => 0,
            Feed::Text(_) => 1,
            Feed::Unknown | Feed::Found(_) => 2,
            Feed::Decoded => 3,
            Feed::Network => 4,
        }
    }

    /// The more dangerous of two feeds; two texts (or found paths) together are no longer
    /// known, and found paths with anything else are not only found paths.
    pub fn join(self, other: Feed) -> Feed {
        match (self, other) {
            (Feed::Text(_), Feed::Text(_)) => Feed::Unknown,
            (Feed::Nothing, b) => b,
            (a, Feed::Nothing) => a,
            (Feed::Found(_), b) | (b, Feed::Found(_)) => Feed::Unknown.join(b),
            (a, b) if b.rank() > a.rank() => b,
            (a, _) => a,
        }
    }

    /// Only the feeds that make any consumer dangerous.
    pub fn strong(&self) -> Feed {
        match self {
            Feed::Decoded | Feed::Network => self.clone(),
            _ => Feed::Nothing,
        }
    }
}

/// One word of a command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arg {
    /// The word as the command will receive it. Parts only known at run time (variables,
    /// substitutions) are kept in their source form, with `dynamic` set.
    pub text: String,
    /// Some part of the word is only known when the command runs.
    pub dynamic: bool,
    /// The word has an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// A process substitution (`<(cmd)`, `>(cmd)`): a pipe the shell names `/dev/fd/N`,
    /// whose command is walked on its own.
    pub pipe: bool,
    /// What the command or process substitutions inside the word produce.
    pub feed: Feed,
    /// The word is a file `find` found under this directory (its `-exec CMD {} +`): only known
    /// at run time (`dynamic` stays set), but known to be some file there and no symbolic link,
    /// hidden ones included, named by a path that starts with the directory (never an option).
    pub found_in: Option<String>,
}

impl Arg {
    pub fn literal(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn unknown(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            dynamic: true,
            ..Self::default()
        }
    }

    /// The text, when the whole word is known now.
    pub fn known(&self) -> Option<&str> {
        (!self.dynamic).then_some(self.text.as_str())
    }

    /// Whether the word is exactly `s`, statically.
    pub fn is(&self, s: &str) -> bool {
        !self.dynamic && self.text == s
    }

    /// `NAME=value` words as a shell assigns them (`export NAME=value`): a valid name and the
    /// value.
    pub fn assignment(&self) -> Option<(String, Arg)> {
        self.env_assignment().filter(|(name, _)| {
            !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    }

    /// `NAME=value` words as `env` and `sudo` read them, which put any name in the environment
    /// (bash exports a function as `BASH_FUNC_name%%=() { ..; }`, which no shell assignment
    /// spells): a name known now and the value.
    pub fn env_assignment(&self) -> Option<(String, Arg)> {
        let (name, value) = self.text.split_once('=')?;
        let expanded = self.dynamic && name.contains(['$', '`']);
        let unknown = name.is_empty() || name.starts_with('-') || expanded;
        (!unknown).then(|| {
            (
                name.to_owned(),
                Arg {
                    text: value.to_owned(),
                    ..self.clone()
                },
            )
        })
    }
}

/// Expands brace expressions into the raw words they stand for; `None` past `limit` words.
pub fn expand_braces(parts: &[BraceExpressionOrText], limit: usize) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for part in parts {
        let alternatives = match part {
            BraceExpressionOrText::Text(t) => vec![t.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives = Vec::new();
                for member in members {
                    expand_member(member, limit, &mut alternatives)?;
                }
                alternatives
            }
        };
        if words.len().saturating_mul(alternatives.len()) > limit {
            return None;
        }
        words = words
            .iter()
            .flat_map(|w| alternatives.iter().map(move |a| format!("{w}{a}")))
            .collect();
    }
    Some(words)
}

fn expand_member(
    member: &BraceExpressionMember,
    limit: usize,
    out: &mut Vec<String>,
) -> Option<()> {
    match member {
        BraceExpressionMember::Child(children) => out.extend(expand_braces(children, limit)?),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => {
            let step = increment.unsigned_abs().max(1);
            let count = start.abs_diff(*end) / step + 1;
            if count > limit as u64 {
                return None;
            }
            let mut n = *start;
            for _ in 0..count {
                out.push(n.to_string());
                n = if start <= end {
                    n.saturating_add(step as i64)
                } else {
                    n.saturating_sub(step as i64)
                };
            }
        }
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => {
            let step = increment.unsigned_abs().max(1) as usize;
            let (a, b) = (u32::from(*start), u32::from(*end));
            let range: Vec<char> = if a <= b {
                (a..=b).step_by(step).filter_map(char::from_u32).collect()
            } else {
                (b..=a)
                    .rev()
                    .step_by(step)
                    .filter_map(char::from_u32)
                    .collect()
            };
            out.extend(range.into_iter().map(String::from));
        }
    }
    (out.len() <= limit).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_join_to_the_more_dangerous() {
        assert_eq!(
            Feed::Text("a".into()).join(Feed::Nothing),
            Feed::Text("a".into())
        );
        assert_eq!(
            Feed::Text("a".into()).join(Feed::Text("b".into())),
            Feed::Unknown
        );
        assert_eq!(Feed::Unknown.join(Feed::Network), Feed::Network);
    }

    #[test]
    fn assignments_need_a_valid_name() {
        assert_eq!(
            Arg::literal("A_1=x").assignment().map(|(n, v)| (n, v.text)),
            Some(("A_1".into(), "x".into()))
        );
        assert!(Arg::literal("--x=1").assignment().is_none());
        assert!(Arg::literal("1A=1").assignment().is_none());
        assert!(
            Arg::literal("BASH_FUNC_ls%%=() { id; }")
                .assignment()
                .is_none()
        );
        assert_eq!(
            Arg::literal("BASH_FUNC_ls%%=() { id; }")
                .env_assignment()
                .map(|(n, v)| (n, v.text)),
            Some(("BASH_FUNC_ls%%".into(), "() { id; }".into()))
        );
        assert!(Arg::unknown("$X=1").env_assignment().is_none());
        assert!(Arg::literal("--x=1").env_assignment().is_none());
    }
}
