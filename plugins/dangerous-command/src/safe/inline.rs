//! Readers of the small programs that text tools take inline (a `sed` script, an `awk`
//! program, a `perl` one-liner, a `jq`/`yq` query): whether one only transforms the text it
//! is given.

/// The commands of a `sed` script that only print, delete or substitute in the text stream
/// (no `w` file, `r` file, `e` command, `W`, `R`). A script sed would read otherwise than this
/// reader (an unterminated command, a delimiter inside a bracket expression, where seds
/// disagree) is not pure.
pub(super) fn sed_script_is_pure(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // The address: line numbers, steps, ranges, negation, `/regex/` with its `I`/`M`.
        loop {
            match chars.get(i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                    i += 1
                }
                Some('/') => match regex_end(&chars, i + 1, '/') {
                    Some(end) => i = end,
                    None => return false,
                },
                _ => break,
            }
        }
        let Some(&command) = chars.get(i) else {
            return true;
        };
        i += 1;
        match command {
            'p' | 'd' | 'D' | 'P' | 'q' | 'Q' | '=' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x'
            | 'l' | 'z' | '{' | '}' => {}
            ';' | '\n' | ' ' => continue,
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    return false;
                };
                if matches!(delim, '\\' | '\n' | '[' | ']') {
                    return false;
                }
                // `s`'s pattern is a regex (a bracket expression may hold the delimiter in
                // some seds); its replacement and both parts of `y` are plain text.
                let pattern_end = if command == 's' {
                    regex_end(&chars, i + 1, delim)
                } else {
                    text_end(&chars, i + 1, delim)
                };
                let Some(end) = pattern_end.and_then(|at| text_end(&chars, at, delim)) else {
                    return false;
                };
                i = end;
                if command == 's' {
                    while let Some(&flag) = chars.get(i) {
                        match flag {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                            c if c.is_ascii_digit() => i += 1,
                            ';' | '\n' | ' ' | '}' => break,
                            _ => return false,
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Where a plain text part that starts at `at` ends (past its closing unescaped `delim`);
/// `None` when it is not closed.
fn text_end(chars: &[char], mut at: usize, delim: char) -> Option<usize> {
    while let Some(&c) = chars.get(at) {
        at += 1;
        if c == '\\' {
            at += 1;
        } else if c == delim {
            return Some(at);
        }
    }
    None
}

/// Where a regex that starts at `at` ends (past its closing `delim`); `None` when it is not
/// closed, spans a line, or holds the delimiter inside a bracket expression (`[/]`): some
/// programs end the regex there and some do not, so the reading is not sure.
fn regex_end(chars: &[char], mut at: usize, delim: char) -> Option<usize> {
    while let Some(&c) = chars.get(at) {
        at += 1;
        match c {
            '\n' => return None,
            '\\' => at += 1,
            '[' => {
                // A `]` first (after a `^`) is a member; `[:alpha:]` and the like hold one.
                let first = at + usize::from(chars.get(at) == Some(&'^'));
                at = first;
                loop {
                    let &member = chars.get(at)?;
                    if member == delim || member == '\n' {
                        return None;
                    }
                    at += 1;
                    match member {
                        ']' if at - 1 > first => break,
                        '\\' => at += 1,
                        '[' if matches!(chars.get(at), Some(':' | '.' | '=')) => {
                            let kind = chars[at];
                            at += 1;
                            while !(chars.get(at)? == &kind && chars.get(at + 1) == Some(&']')) {
                                if chars[at] == delim || chars[at] == '\n' {
                                    return None;
                                }
                                at += 1;
                            }
                            at += 2;
                        }
                        _ => {}
                    }
                }
            }
            c if c == delim => return Some(at),
            _ => {}
        }
    }
    None
}

/// Whether an awk program only reads its input and prints to its output: no `system()`, no
/// pipe (`|`, `|&`), no `print > file`, no `getline` (reads files, runs commands), no
/// `ENVIRON` or `PROCINFO` (the environment, secrets included), no `ARGV` (the files it
/// reads), no `@` directive or call. A program whose strings or regexes awk could read
/// otherwise (a `/` after `)`, where `if (c) /re/` and `(a) / b` differ; an unclosed string)
/// is not pure.
pub(super) fn awk_program_is_pure(program: &str) -> bool {
    /// What the last token lets a `/` be.
    #[derive(PartialEq)]
    enum Slash {
        /// A regex starts (after an operator, `(`, `,`, a keyword, a statement's start).
        Regex,
        /// A division (after a value).
        Division,
        /// Either (after `)`, `++`, `--`): not read.
        Unsure,
    }
    let chars: Vec<char> = program.chars().collect();
    let mut k = 0;
    // Inside a `print`/`printf` statement: a `>` at its top level redirects it to a file.
    let mut printing = false;
    let mut depth = 0usize;
    let mut slash = Slash::Regex;
    while k < chars.len() {
        let c = chars[k];
        match c {
            '"' => {
                let Some(end) = text_end(&chars, k + 1, '"') else {
                    return false;
                };
                if chars[k..end].contains(&'\n') {
                    return false;
                }
                k = end;
                slash = Slash::Division;
                continue;
            }
            '#' => {
                while k < chars.len() && chars[k] != '\n' {
                    k += 1;
                }
                continue;
            }
            '/' if slash == Slash::Regex => {
                let Some(end) = regex_end(&chars, k + 1, '/') else {
                    return false;
                };
                k = end;
                slash = Slash::Division;
                continue;
            }
            '/' if slash == Slash::Unsure => return false,
            '|' if chars.get(k + 1) == Some(&'|') => {
                k += 1;
                slash = Slash::Regex;
            }
            '+' | '-' if chars.get(k + 1) == Some(&c) => {
                k += 1;
                slash = Slash::Unsure;
            }
            '|' | '@' | '`' => return false,
            '>' if printing && depth == 0 => return false,
            '(' => {
                depth += 1;
                slash = Slash::Regex;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                slash = Slash::Unsure;
            }
            ';' | '{' | '}' | '\n' => {
                printing = false;
                depth = 0;
                slash = Slash::Regex;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = k;
                while k + 1 < chars.len()
                    && (chars[k + 1].is_ascii_alphanumeric() || chars[k + 1] == '_')
                {
                    k += 1;
                }
                let word: String = chars[start..=k].iter().collect();
                slash = Slash::Division;
                match word.as_str() {
                    // `ARGV` and `ARGC` choose the files it reads.
                    "system" | "getline" | "ENVIRON" | "PROCINFO" | "ARGV" | "ARGC" | "close"
                    | "fflush" => {
                        return false;
                    }
                    "print" | "printf" => {
                        printing = true;
                        slash = Slash::Regex;
                    }
                    // After a keyword a `/` starts a regex (`return /x/`, `else /x/`).
                    "return" | "exit" | "else" | "do" | "in" | "case" | "delete" | "if"
                    | "while" | "for" | "next" | "nextfile" | "break" | "continue" | "BEGIN"
                    | "END" | "function" | "func" | "switch" | "default" => slash = Slash::Regex,
                    _ => {}
                }
            }
            c if c.is_ascii_digit() || c == '.' => slash = Slash::Division,
            '$' | ']' => slash = Slash::Division,
            c if c.is_whitespace() => {}
            _ => slash = Slash::Regex,
        }
        k += 1;
    }
    true
}

/// Whether a perl one-liner only substitutes or transliterates (`s/a/b/g; tr/a-z/A-Z/`): no
/// `e` flag (which runs the replacement), no interpolation that runs code (`@{[ .. ]}`,
/// `${\ .. }`, `(?{ .. })`), no other statement.
pub(super) fn perl_script_is_pure(script: &str) -> bool {
    script
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .all(|statement| {
            let (op, body) = if let Some(b) = statement.strip_prefix("s") {
                ("s", b)
            } else if let Some(b) = statement.strip_prefix("tr") {
                ("tr", b)
            } else if let Some(b) = statement.strip_prefix("y") {
                ("y", b)
            } else {
                return false;
            };
            let mut chars = body.chars();
            let Some(delim) = chars.next() else {
                return false;
            };
            if delim.is_alphanumeric() || delim.is_whitespace() || "{([<;".contains(delim) {
                return false;
            }
            let rest: String = chars.collect();
            let parts: Vec<&str> = split_unescaped(&rest, delim);
            let [pattern, replacement, flags] = parts.as_slice() else {
                return false;
            };
            let allowed = if op == "s" { "gimsxn" } else { "cdsr" };
            flags.chars().all(|f| allowed.contains(f))
                && no_code(pattern, false)
                && no_code(replacement, op == "s")
        })
}

/// `text` split at every unescaped `delim`.
fn split_unescaped(text: &str, delim: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (k, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            parts.push(&text[start..k]);
            start = k + c.len_utf8();
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Whether a pattern or replacement interpolates nothing that runs code: no unescaped `@`, no
/// `${`, no `(?{` / `(??{`; in a replacement, `$` only before a group number or `&`, and not
/// subscripted (`$1[EXPR]`, `$1{EXPR}`, `$&->[EXPR]` evaluate `EXPR`).
fn no_code(text: &str, replacement: bool) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 1,
            '@' => return false,
            '$' => {
                let next = chars.get(k + 1).copied();
                let harmless = match next {
                    Some(d) if d.is_ascii_digit() || d == '&' => {
                        k += 1;
                        while chars.get(k + 1).is_some_and(char::is_ascii_digit) && d != '&' {
                            k += 1;
                        }
                        let after = (chars.get(k + 1), chars.get(k + 2));
                        !matches!(after, (Some('[' | '{'), _) | (Some('-'), Some('>')))
                    }
                    None | Some(')' | '|') => !replacement,
                    _ => false,
                };
                if !harmless {
                    return false;
                }
            }
            '(' if matches!(chars.get(k + 1), Some('?' | '*'))
                && chars.iter().skip(k + 2).take(2).any(|c| *c == '{') =>
            {
                return false;
            }
            _ => {}
        }
        k += 1;
    }
    true
}

/// Whether a `jq` or `yq` query reads only its input: no word that reads the environment
/// (`env`, `$ENV`, `strenv`, `envsubst`: secrets included), loads a file (`load_str`,
/// `include`, `import`) or evaluates text as a query (`eval`). A word after a `.` is a key
/// (`.env`), not a function.
pub(super) fn query_is_pure(query: &str) -> bool {
    let chars: Vec<char> = query.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        if !(chars[k].is_ascii_alphabetic() || chars[k] == '_') {
            k += 1;
            continue;
        }
        let start = k;
        while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
            k += 1;
        }
        let word: String = chars[start..k].iter().collect();
        let key = start > 0 && chars[start - 1] == '.';
        let reaches_out = matches!(
            word.as_str(),
            "env" | "ENV" | "strenv" | "envsubst" | "eval" | "include" | "import" | "system"
        ) || word.starts_with("load");
        if reaches_out && !key {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{awk_program_is_pure, perl_script_is_pure, query_is_pure, sed_script_is_pure};

    #[test]
    fn perl_substitutions_that_run_no_code() {
        for pure in [
            "s/foo/bar/g",
            "s/\\t/    /g",
            "s|a/b|c/d|",
            "s/(\\w+)=(\\d+)/$1: $2/g; tr/a-z/A-Z/",
            "s/x$//",
            "y/abc/xyz/",
            "s/(a)(b)/$2$1 [x]/",
            "s/(\\d+)-(\\d+)/$1-$2/",
        ] {
            assert!(perl_script_is_pure(pure), "{pure}");
        }
        for code in [
            "s/x/`id`/e",
            "s/x/system('id')/ee",
            "s/x/@{[ `id` ]}/",
            "s/x/${\\ `id`}/",
            "s/(?{ system 'id' })//",
            "s/x/$ENV{HOME}/",
            "print $_",
            "s/x/y/; system('id')",
            "s{x}{y}",
            "BEGIN { system 'id' } s/x/y/",
            // A subscript of a group's variable is code, run in the replacement.
            "s/(a)/$1[`id`]/",
            "s/(a)/$1{`id`}/",
            "s/(a)/$12->[`id`]/",
            "s/(a)/$&[`id`]/",
            "s/a$1[`id`]/b/",
        ] {
            assert!(!perl_script_is_pure(code), "{code}");
        }
    }

    #[test]
    fn sed_scripts_that_only_edit_the_stream() {
        for pure in [
            "s/foo/bar/g",
            "s|a/b|c|",
            "s|[^/]*$||",
            "s/[[:space:]]*$//",
            "s/[]x]/y/",
            "/^#/d",
            "1,/end/p",
            "y/abc/xyz/",
            "s/a/b/; s/c/d/2",
            "/x/{ s/a/b/; p }",
        ] {
            assert!(sed_script_is_pure(pure), "{pure}");
        }
        for impure in [
            "e id",
            "1e id",
            "s/x/id/e",
            "s/x/y/w /tmp/out",
            "w /tmp/out",
            "r /etc/shadow",
            // GNU sed reads `[/]` as one bracket: pattern `[/]`, replacement `g;s`, flag `e`.
            "s/[/]/g;s/e",
            "s/[x/]/y/",
            "s/[^/]*$//",
            "/[/]/e id",
            "s/x/y",
            "s/x",
            "s[a[b[",
            "y/a/b",
        ] {
            assert!(!sed_script_is_pure(impure), "{impure}");
        }
    }

    #[test]
    fn awk_programs_that_only_print() {
        for pure in [
            "{ print $1 }",
            "-F: { print $1, $NF }",
            "NR > 1 { s += $2 } END { print s / NR }",
            "{ x = $1 > 3 ? \"a\" : \"b\"; print x }",
            "/^#/ { next } { print }",
            "{ print /a/ ? \"x\" : \"y\" }",
            "{ print (a > b) }",
            "{ print \"a|b\" } # a comment with | and \"",
            "$1 ~ /[^a]x/ { n++ } END { print n }",
        ] {
            assert!(awk_program_is_pure(pure), "{pure}");
        }
        for impure in [
            "BEGIN { system(\"id\") }",
            "{ print | \"sh\" }",
            "{ print > \"/tmp/x\" }",
            "{ printf(\"%s\", $1) > \"/tmp/x\" }",
            "BEGIN { \"id\" | getline x }",
            "BEGIN { print ENVIRON[\"HOME\"] }",
            "BEGIN { @s(\"id\") }",
            // After `print` a `/` starts a regex: the `\"` in it opens no string.
            "BEGIN { print /\"/; system(\"id\"); x = \"y\" }",
            "{ print /\"/ > \"/tmp/x\"; x = \"y\" }",
            // After `)` a `/` may be either: not read.
            "BEGIN { if (1) /\"/; system(\"id\"); x = \"y\" }",
            "{ n = (a) / 2 }",
            // A comment's quote opens no string.
            "BEGIN { # \"\nsystem(\"id\") # \"\n}",
            // Awks disagree on where `/[/]\"/` ends.
            "/[/]\"/ { print > \"/tmp/x\"; x = \"y\" }",
            "{ print \"x }",
            "{ print \"a\nb\" }",
        ] {
            assert!(!awk_program_is_pure(impure), "{impure}");
        }
    }

    #[test]
    fn queries_that_read_only_their_input() {
        for pure in [
            ".",
            ".dependencies | keys",
            ".services.web.env",
            "map(select(.name | test(\"^a\"))) | length",
            ".[] | .environment",
        ] {
            assert!(query_is_pure(pure), "{pure}");
        }
        for impure in [
            "env",
            "env.GITHUB_TOKEN",
            "$ENV.AWS_SECRET_ACCESS_KEY",
            "$ENV | keys",
            "strenv(GITHUB_TOKEN)",
            ".a = load_str(\"/home/u/.ssh/id_rsa\")",
            ".a = load(\"x.yaml\")",
            "eval(.q)",
            "include \"x\"; .",
            "import \"x\" as $d; .",
        ] {
            assert!(!query_is_pure(impure), "{impure}");
        }
    }
}
