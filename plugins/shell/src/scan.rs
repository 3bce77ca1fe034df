//! Shell words split into their pieces (literal text, quotes and escapes, `$'..'`, `~`, `$X`,
//! `${..}`, `$(..)`, backticks, `$((..))`), so that a plugin knows what the shell will run and
//! what it cannot know until run time.
//!
//! `brush_parser::word::parse` does the same, but memoises through a mutex that reads the
//! clock, which would make every component that uses it import `wasi:clocks`; this scanner
//! keeps the plugins free of that grant. A differential property test keeps it never more
//! trusting than `brush_parser::word::parse`.

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Literal text; `quoted` when it came from quotes or an escape (so it is never a glob).
    Literal { text: String, quoted: bool },
    /// `~` (empty user), `~user`, `~+`, `~-` at the start of the word.
    Tilde(String),
    /// `$NAME`, `${NAME}` (with the name) or any other parameter expansion (without).
    Parameter {
        name: Option<String>,
        source: String,
    },
    /// `$(..)` or a backquoted command: the script inside.
    Substitution { script: String, source: String },
    /// `$((..))`: the expression.
    Arithmetic { expr: String, source: String },
}

/// Splits `word` into pieces; an unterminated quote or substitution is an error.
pub fn scan(word: &str) -> Result<Vec<Piece>, String> {
    let chars: Vec<char> = word.chars().collect();
    let mut scanner = Scanner {
        chars: &chars,
        i: 0,
        out: Vec::new(),
    };
    scanner.word()?;
    Ok(merge(scanner.out))
}

struct Scanner<'c> {
    chars: &'c [char],
    i: usize,
    out: Vec<Piece>,
}

impl Scanner<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn literal(&mut self, text: impl Into<String>, quoted: bool) {
        self.out.push(Piece::Literal {
            text: text.into(),
            quoted,
        });
    }

    fn source(&self, from: usize) -> String {
        self.chars[from..self.i].iter().collect()
    }

    fn word(&mut self) -> Result<(), String> {
        if self.peek(0) == Some('~') {
            self.tilde();
        }
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    self.i += 1;
                    match self.peek(0) {
                        Some('\n') => self.i += 1,
                        Some(e) => {
                            self.i += 1;
                            self.literal(e, true);
                        }
                        None => self.literal('\\', false),
                    }
                }
                '\'' => {
                    self.i += 1;
                    let start = self.i;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.i += 1;
                    }
                    if self.peek(0).is_none() {
                        return Err("unterminated single quote".into());
                    }
                    let text = self.source(start);
                    self.i += 1;
                    self.literal(text, true);
                }
                '"' => {
                    self.i += 1;
                    self.double_quoted()?;
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.i += 2;
                    let start = self.i;
                    while let Some(c) = self.peek(0) {
                        match c {
                            '\\' => self.i += 2,
                            '\'' => break,
                            _ => self.i += 1,
                        }
                    }
                    if self.i >= self.chars.len() {
                        return Err("unterminated $'..'".into());
                    }
                    let body = self.source(start);
                    self.i += 1;
                    self.literal(decode_ansi_c(&body), true);
                }
                '$' if self.peek(1) == Some('"') => {
                    self.i += 2;
                    self.double_quoted()?;
                }
                '$' => self.dollar(false)?,
                '`' => self.backquoted()?,
                c => {
                    self.i += 1;
                    self.literal(c, false);
                }
            }
        }
        Ok(())
    }

    /// `~`, `~user`, `~+`, `~-` up to the first `/`.
    fn tilde(&mut self) {
        let end = self
            .chars
            .iter()
            .position(|&c| c == '/')
            .unwrap_or(self.chars.len());
        let user: String = self.chars[1..end].iter().collect();
        let plain = user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if plain || user == "+" || user == "-" {
            self.i = end;
            self.out.push(Piece::Tilde(user));
        }
    }

    /// After an opening `"`, up to and including the closing one.
    fn double_quoted(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.i += 1;
                    return Ok(());
                }
                '\\' => {
                    self.i += 1;
                    match self.peek(0) {
                        Some('\n') => self.i += 1,
                        Some(e @ ('$' | '`' | '"' | '\\')) => {
                            self.i += 1;
                            self.literal(e, true);
                        }
                        _ => self.literal('\\', true),
                    }
                }
                '$' => self.dollar(true)?,
                '`' => self.backquoted()?,
                c => {
                    self.i += 1;
                    self.literal(c, true);
                }
            }
        }
        Err("unterminated double quote".into())
    }

    fn dollar(&mut self, quoted: bool) -> Result<(), String> {
        let start = self.i;
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                if let Some(end) = arithmetic_end(self.chars, self.i + 3) {
                    let expr: String = self.chars[self.i + 3..end].iter().collect();
                    self.i = end + 2;
                    let source = self.source(start);
                    self.out.push(Piece::Arithmetic { expr, source });
                    return Ok(());
                }
                self.substitution(start)
            }
            Some('(') => self.substitution(start),
            Some('{') if self.peek(2) == Some('}') => {
                // `${}` is a bad substitution; brush-parser keeps it as text.
                self.i += 3;
                self.literal("${}", quoted);
                Ok(())
            }
            Some('{') => {
                let end =
                    skip_script(self.chars, self.i + 2, '{', '}').ok_or("unterminated ${..}")?;
                let inner: String = self.chars[self.i + 2..end].iter().collect();
                self.i = end + 1;
                let source = self.source(start);
                let name = is_name(&inner).then(|| inner.clone());
                self.out.push(Piece::Parameter { name, source });
                // `${x:-$(cmd)}` runs `cmd`: keep the substitutions inside the braces.
                if (inner.contains("$(") || inner.contains('`'))
                    && let Ok(pieces) = scan(&inner)
                {
                    self.out.extend(pieces.into_iter().filter(|p| {
                        matches!(p, Piece::Substitution { .. } | Piece::Arithmetic { .. })
                    }));
                }
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.i += 1;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
                let name: String = self.chars[start + 1..self.i].iter().collect();
                let source = self.source(start);
                self.out.push(Piece::Parameter {
                    name: Some(name),
                    source,
                });
                Ok(())
            }
            Some(c)
                if c.is_ascii_digit() || matches!(c, '@' | '*' | '#' | '?' | '-' | '$' | '!') =>
            {
                self.i += 2;
                let source = self.source(start);
                self.out.push(Piece::Parameter { name: None, source });
                Ok(())
            }
            _ => {
                self.i += 1;
                self.literal('$', quoted);
                Ok(())
            }
        }
    }

    fn substitution(&mut self, start: usize) -> Result<(), String> {
        let end = skip_script(self.chars, self.i + 2, '(', ')').ok_or("unterminated $(..)")?;
        let script: String = self.chars[self.i + 2..end].iter().collect();
        self.i = end + 1;
        let source = self.source(start);
        self.out.push(Piece::Substitution { script, source });
        Ok(())
    }

    fn backquoted(&mut self) -> Result<(), String> {
        let start = self.i;
        self.i += 1;
        let mut script = String::new();
        loop {
            match self.peek(0) {
                None => return Err("unterminated backquote".into()),
                Some('`') => break,
                Some('\\') if matches!(self.peek(1), Some('$' | '`' | '\\')) => {
                    script.push(self.chars[self.i + 1]);
                    self.i += 2;
                }
                Some(c) => {
                    script.push(c);
                    self.i += 1;
                }
            }
        }
        self.i += 1;
        let source = self.source(start);
        self.out.push(Piece::Substitution { script, source });
        Ok(())
    }
}

/// Where the `close` matching an already-opened `open` is, from `i`, skipping quotes, escapes,
/// backquotes and nested substitutions.
fn skip_script(chars: &[char], mut i: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '\'' if open == '(' || open == '{' => {
                i += 1;
                while chars.get(i).is_some_and(|&c| c != '\'') {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                while let Some(&d) = chars.get(i) {
                    match d {
                        '\\' => i += 1,
                        '"' => break,
                        '$' if chars.get(i + 1) == Some(&'(') => {
                            i = skip_script(chars, i + 2, '(', ')')?
                        }
                        '`' => i = skip_backquote(chars, i + 1)?,
                        _ => {}
                    }
                    i += 1;
                }
            }
            '`' => i = skip_backquote(chars, i + 1)?,
            // `$'..'` in a script: a backslash escapes the quote (`$'it\'s'`).
            '$' if open == '(' && chars.get(i + 1) == Some(&'\'') => {
                i += 2;
                while let Some(&d) = chars.get(i) {
                    match d {
                        '\\' => i += 1,
                        '\'' => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            '$' if chars.get(i + 1) == Some(&'(') || chars.get(i + 1) == Some(&'{') => {
                let (o, c) = if chars[i + 1] == '(' {
                    ('(', ')')
                } else {
                    ('{', '}')
                };
                i = skip_script(chars, i + 2, o, c)?;
            }
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_backquote(chars: &[char], mut i: usize) -> Option<usize> {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '`' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `))` closing `$((`, counting parentheses from `i`.
fn arithmetic_end(chars: &[char], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return (chars.get(i + 1) == Some(&')')).then_some(i),
            ')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Joins neighbouring literals of the same quoting.
fn merge(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if let (
            Some(Piece::Literal { text, quoted }),
            Piece::Literal {
                text: more,
                quoted: q,
            },
        ) = (out.last_mut(), &piece)
            && quoted == q
        {
            text.push_str(more);
            continue;
        }
        out.push(piece);
    }
    out
}

/// Decodes the body of an ANSI-C quoted string (`$'...'`).
pub fn decode_ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| {
            let mut value = first.and_then(|d| d.to_digit(radix)).unwrap_or(0);
            let mut taken = usize::from(first.is_some());
            while taken < max {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        value = value * radix + d;
                        chars.next();
                        taken += 1;
                    }
                    None => break,
                }
            }
            (value, taken)
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let (value, _) = number(8, 3, Some(e));
                out.push(char::from_u32(value & 0xff).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, taken) = number(16, max, None);
                if taken == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
            }
            'c' => {
                if let Some(x) = chars.next() {
                    out.push(char::from_u32(u32::from(x) & 0x1f).unwrap_or('\u{fffd}'));
                }
            }
            '\\' | '\'' | '"' | '?' => out.push(e),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use brush_parser::word::{
        self, Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource,
    };
    use proptest::prelude::*;

    fn lit(text: &str, quoted: bool) -> Piece {
        Piece::Literal {
            text: text.into(),
            quoted,
        }
    }

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(decode_ansi_c(r"\x72m"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\'b\n"), "a'b\n");
        assert_eq!(decode_ansi_c(r"\q"), r"\q");
    }
    #[test]
    fn substitutions_hold_ansi_c_quotes() {
        // Found by the differential test against bash: `\'` inside `$'..'` does not close it.
        let pieces = scan(r#""$(p2 $'\x41\'z' a)"b"#).unwrap();
        assert!(
            matches!(&pieces[0], Piece::Substitution { script, .. } if script == r"p2 $'\x41\'z' a")
        );
        assert_eq!(pieces[1], lit("b", false));
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(scan(r"\rm").unwrap(), [lit("r", true), lit("m", false)]);
        assert_eq!(
            scan(r#"r''m"#).unwrap(),
            [lit("r", false), lit("", true), lit("m", false)]
        );
        assert_eq!(scan(r#""a\$b\\c\q""#).unwrap(), [lit(r"a$b\c\q", true)]);
        assert_eq!(scan(r"$'\x72m'").unwrap(), [lit("rm", true)]);
        assert_eq!(scan("a\\\nb").unwrap(), [lit("ab", false)]);
        assert!(scan("'open").is_err());
        assert!(scan("\"open").is_err());
        assert!(scan("$(open").is_err());
    }

    #[test]
    fn expansions() {
        assert_eq!(
            scan("~/x").unwrap(),
            [Piece::Tilde(String::new()), lit("/x", false)]
        );
        assert_eq!(
            scan("${HOME}").unwrap(),
            [Piece::Parameter {
                name: Some("HOME".into()),
                source: "${HOME}".into()
            }]
        );
        assert_eq!(
            scan("a$(echo ')')b").unwrap(),
            [
                lit("a", false),
                Piece::Substitution {
                    script: "echo ')'".into(),
                    source: "$(echo ')')".into()
                },
                lit("b", false)
            ]
        );
        assert_eq!(
            scan("`echo \\`x\\``").unwrap(),
            [Piece::Substitution {
                script: "echo `x`".into(),
                source: "`echo \\`x\\``".into()
            }]
        );
        assert_eq!(
            scan("$((1+(2)))").unwrap(),
            [Piece::Arithmetic {
                expr: "1+(2)".into(),
                source: "$((1+(2)))".into()
            }]
        );
        let default = scan("${x:-$(rm -rf /)}").unwrap();
        assert!(
            default
                .iter()
                .any(|p| matches!(p, Piece::Substitution { script, .. } if script == "rm -rf /"))
        );
    }

    /// brush-parser's own pieces, in this module's terms.
    fn from_brush(pieces: &[WordPieceWithSource], quoted: bool, out: &mut Vec<Piece>) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => out.push(lit(
                    &if quoted {
                        s.replace("\\\n", "")
                    } else {
                        s.clone()
                    },
                    quoted,
                )),
                WordPiece::SingleQuotedText(s) => out.push(lit(s, true)),
                WordPiece::AnsiCQuotedText(s) => out.push(lit(&decode_ansi_c(s), true)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    out.push(lit("", true));
                    from_brush(inner, true, out);
                }
                WordPiece::TildeExpansion(TildeExpr::Home) => out.push(Piece::Tilde(String::new())),
                WordPiece::TildeExpansion(TildeExpr::UserHome(u)) => {
                    out.push(Piece::Tilde(u.clone()))
                }
                WordPiece::TildeExpansion(TildeExpr::WorkingDir) => {
                    out.push(Piece::Tilde("+".into()))
                }
                WordPiece::TildeExpansion(_) => out.push(Piece::Tilde("-".into())),
                WordPiece::ParameterExpansion(e) => out.push(Piece::Parameter {
                    name: match e {
                        ParameterExpr::Parameter {
                            parameter: Parameter::Named(n),
                            indirect: false,
                        } => Some(n.clone()),
                        _ => None,
                    },
                    source: String::new(),
                }),
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    out.push(Piece::Substitution {
                        script: s.clone(),
                        source: String::new(),
                    })
                }
                WordPiece::EscapeSequence(s) => {
                    let e = s.strip_prefix('\\').unwrap_or(s);
                    out.push(lit(if e == "\n" { "" } else { e }, true));
                }
                WordPiece::ArithmeticExpression(e) => out.push(Piece::Arithmetic {
                    expr: e.value.clone(),
                    source: String::new(),
                }),
            }
        }
    }

    /// What matters downstream: the text when the word is static, and the scripts it runs.
    fn summary(pieces: &[Piece]) -> (Option<String>, Vec<String>) {
        let mut text = Some(String::new());
        let mut scripts = Vec::new();
        for p in pieces {
            match p {
                Piece::Literal { text: t, .. } => text.iter_mut().for_each(|s| s.push_str(t)),
                Piece::Tilde(u) => text.iter_mut().for_each(|s| {
                    s.push('~');
                    s.push_str(u)
                }),
                Piece::Substitution { script, .. } => {
                    scripts.push(script.clone());
                    text = None;
                }
                Piece::Parameter { .. } | Piece::Arithmetic { .. } => text = None,
            }
        }
        (text, scripts)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// On words brush-parser accepts, this scanner is never more trusting than it.
        #[test]
        fn agrees_with_brush_parser(word in r#"[a-z~/.\-* ]{0,3}(['"$\\`(){}]|[a-z]|\$[a-zA-Z{(]|\\[\\$"'`n]){0,12}"#) {
            // brush-parser expands `~}` and the like as a home directory; bash (and this scanner) do not.
            prop_assume!(!word.starts_with('~') || word.len() == 1 || word[1..].starts_with('/'));
            // Inside backquotes bash turns `\\` and `\$` into one character; brush-parser keeps both.
            prop_assume!(!(word.contains('`') && word.contains('\\')));
            let options = brush_parser::ParserOptions::default();
            if let Ok(brush) = word::parse(&word, &options) {
                let mut theirs = Vec::new();
                from_brush(&brush, false, &mut theirs);
                if let Ok(ours) = scan(&word) {
                    // Never more trusting than brush-parser: a word this scanner calls static has
                    // the same text there, and every script brush-parser sees runs is seen here.
                    // (Where brush-parser keeps a bad substitution such as `${\\'}` as text,
                    // this scanner calling it dynamic is the safe side.)
                    let ((our_text, our_scripts), (their_text, their_scripts)) = (summary(&ours), summary(&theirs));
                    if our_text.is_some() {
                        prop_assert_eq!(&our_text, &their_text, "word {:?}", word);
                    }
                    for script in &their_scripts {
                        prop_assert!(our_scripts.contains(script), "word {:?}: missed {:?}", word, script);
                    }
                }
            }
        }
    }
}
