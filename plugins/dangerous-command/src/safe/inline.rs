//! Readers of the small programs that text tools take inline (a `sed` script, an `awk`
//! program, a `perl` one-liner): whether one only transforms the text it is given.

/// The commands of a `sed` script that only print, delete or substitute in the text stream
/// (no `w` file, `r` file, `e` command, `W`, `R`).
pub(super) fn sed_script_is_pure(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_address = |i: &mut usize| {
        loop {
            match chars.get(*i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                    *i += 1
                }
                Some('/') => {
                    *i += 1;
                    while let Some(&c) = chars.get(*i) {
                        *i += 1;
                        match c {
                            '\\' => *i += 1,
                            '/' => break,
                            _ => {}
                        }
                    }
                }
                _ => break,
            }
        }
    };
    while i < chars.len() {
        skip_address(&mut i);
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
                if delim == '\\' || delim == '\n' {
                    return false;
                }
                i += 1;
                for _ in 0..2 {
                    while let Some(&c) = chars.get(i) {
                        i += 1;
                        if c == '\\' {
                            i += 1;
                        } else if c == delim {
                            break;
                        }
                    }
                }
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

/// Whether an awk program only reads its input and prints to its output: no `system()`, no
/// pipe (`|`, `|&`), no `print > file`, no `getline` (reads files, runs commands), no
/// `ENVIRON` or `PROCINFO` (the environment, secrets included), no `ARGV` (the files it
/// reads), no `@` directive or call.
pub(super) fn awk_program_is_pure(program: &str) -> bool {
    let chars: Vec<char> = program.chars().collect();
    let mut k = 0;
    // Inside a `print`/`printf` statement: a `>` at its top level redirects it to a file.
    let mut printing = false;
    let mut depth = 0usize;
    // What came last, to tell a regex `/re/` from a division.
    let mut operand_before = false;
    while k < chars.len() {
        let c = chars[k];
        match c {
            '"' => {
                k += 1;
                while k < chars.len() && chars[k] != '"' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                operand_before = true;
            }
            '/' if !operand_before => {
                k += 1;
                while k < chars.len() && chars[k] != '/' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                operand_before = true;
            }
            '|' if chars.get(k + 1) == Some(&'|') => {
                k += 1;
                operand_before = false;
            }
            '|' | '@' | '`' => return false,
            '>' if printing && depth == 0 => return false,
            '(' => {
                depth += 1;
                operand_before = false;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                operand_before = true;
            }
            ';' | '{' | '}' | '\n' => {
                printing = false;
                depth = 0;
                operand_before = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = k;
                while k + 1 < chars.len()
                    && (chars[k + 1].is_ascii_alphanumeric() || chars[k + 1] == '_')
                {
                    k += 1;
                }
                let word: String = chars[start..=k].iter().collect();
                match word.as_str() {
                    // `ARGV` and `ARGC` choose the files it reads.
                    "system" | "getline" | "ENVIRON" | "PROCINFO" | "ARGV" | "ARGC" | "close"
                    | "fflush" => {
                        return false;
                    }
                    "print" | "printf" => printing = true,
                    _ => {}
                }
                operand_before = true;
            }
            c if c.is_ascii_digit() || c == '$' => {
                operand_before = c.is_ascii_digit() || operand_before
            }
            c if c.is_whitespace() => {}
            _ => operand_before = false,
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
/// `${`, no `(?{` / `(??{`; in a replacement, `$` only before a group number or `&`.
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
                    Some(d) if d.is_ascii_digit() || d == '&' => true,
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

#[cfg(test)]
mod tests {
    use super::perl_script_is_pure;

    #[test]
    fn perl_substitutions_that_run_no_code() {
        for pure in [
            "s/foo/bar/g",
            "s/\\t/    /g",
            "s|a/b|c/d|",
            "s/(\\w+)=(\\d+)/$1: $2/g; tr/a-z/A-Z/",
            "s/x$//",
            "y/abc/xyz/",
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
        ] {
            assert!(!perl_script_is_pure(code), "{code}");
        }
    }
}
