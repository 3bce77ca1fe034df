//! Reading a program's options the way getopt does: clustered short flags (`-xo FILE`), glued
//! values (`-oFILE`), `--opt=value`, `--opt value`, `--` ending the options, against a table of
//! the options the program takes. A long option is matched only when spelled out in full: an
//! abbreviation (`--out`) could stand for an option the table does not list, so it is unknown.

use crate::arg::Arg;

/// What an option's value, or an operand, stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// The option takes no value.
    Flag,
    /// A value that is data: a number, a name, a format, a pattern.
    Literal,
    /// An optional value, only ever glued (`-i.bak`, `--color=auto`): data.
    Optional,
    /// A path whose name or metadata is used, never its contents (`ls`, `find` start points).
    Name,
    /// A file the program reads.
    Read,
    /// A directory the program reads recursively (every file under it).
    Tree,
    /// A file the program writes.
    Write,
    /// A flag that makes the program read its path operands recursively (`grep -r`).
    Recurse,
    /// A flag that makes the program rewrite its path operands (`prettier --write`).
    InPlace,
    /// A pattern given as an option (`grep -e PAT`): then no operand is the pattern.
    Pattern,
    /// A file of patterns (`grep -f FILE`): read, and then no operand is the pattern.
    PatternFile,
    /// A flag after which no operand is the pattern (`rg --files`).
    NoPattern,
    /// Two words of data (`jq --arg NAME VALUE`).
    Pair,
}

impl Value {
    /// Whether the option takes a value (as the next word, or glued).
    pub fn takes_value(self) -> bool {
        !matches!(
            self,
            Value::Flag | Value::Optional | Value::Recurse | Value::InPlace | Value::NoPattern
        )
    }
}

/// One option: its spelling (`-o`, `--output`, `-name` for `find`) and its value.
pub type Opt = (&'static str, Value);

/// How a program's words are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// GNU getopt_long: options anywhere until `--`; `-abc` clusters; `--long[=value]`.
    Gnu,
    /// Options stop at the first operand (POSIX, and programs that take a command after).
    Posix,
    /// Every option is a whole word matched exactly (`find -name X`, `(`, `!`).
    Words,
    /// Go's flag package: one or two dashes, a whole name, `-name=value` or `-name value`.
    Single,
}

/// One word (or two) of a command, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A listed option, with its value when it takes one.
    Option {
        name: &'static str,
        value: Value,
        arg: Option<Arg>,
    },
    /// An operand.
    Operand(&'a Arg),
    /// A word that is an option the table does not list (or an abbreviation, or an option
    /// spelled with a value it does not take, or an option only known at run time).
    Unknown(&'a Arg),
    /// A listed option that needs a value, at the end of the words.
    Missing(&'static str),
}

impl<'a> Item<'a> {
    /// The operand it is, if it is one.
    pub fn operand(&self) -> Option<&'a Arg> {
        match self {
            Item::Operand(arg) => Some(arg),
            _ => None,
        }
    }
}

/// The option `name` with its value taken from the next word(s) at `*i`.
fn separate<'a>(name: &'static str, value: Value, args: &'a [Arg], i: &mut usize) -> Item<'a> {
    let words = if value == Value::Pair { 2 } else { 1 };
    match args.get(*i..*i + words) {
        Some(taken) => {
            *i += words;
            Item::Option {
                name,
                value,
                arg: Some(taken[words - 1].clone()),
            }
        }
        None => Item::Missing(name),
    }
}

/// Reads `args` (the words after the program name) against the options of `tables`.
pub fn parse<'a>(args: &'a [Arg], tables: &[&[Opt]], style: Style) -> Vec<Item<'a>> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut operands_only = false;
    let find = |name: &str| {
        tables
            .iter()
            .find_map(|table| table.iter().find(|(n, _)| *n == name))
            .copied()
    };
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if operands_only || a.pipe {
            out.push(Item::Operand(a));
            continue;
        }
        if style == Style::Words {
            match find(t).filter(|_| !a.dynamic) {
                Some((name, value)) if value.takes_value() => {
                    out.push(separate(name, value, args, &mut i))
                }
                Some((name, value)) => out.push(Item::Option {
                    name,
                    value,
                    arg: None,
                }),
                None if t.starts_with('-') || a.dynamic => out.push(Item::Unknown(a)),
                None => out.push(Item::Operand(a)),
            }
            continue;
        }
        if t == "--" && !a.dynamic {
            operands_only = true;
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            // A word only known at run time may turn out to be an option; a path `find` found
            // starts with the directory searched.
            if a.dynamic && !a.glob && a.found_in.is_none() {
                out.push(Item::Unknown(a));
                continue;
            }
            out.push(Item::Operand(a));
            operands_only |= style == Style::Posix;
            continue;
        }
        if a.dynamic {
            out.push(Item::Unknown(a));
            continue;
        }
        if t.starts_with("--") || style == Style::Single {
            let (name, glued) = match t.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (t, None),
            };
            // Go accepts `--name` for `-name`.
            let name = if style == Style::Single && name.starts_with("--") {
                &name[1..]
            } else {
                name
            };
            match (find(name), glued) {
                (None, _) => out.push(Item::Unknown(a)),
                (
                    Some((_, Value::Flag | Value::Recurse | Value::InPlace | Value::NoPattern)),
                    Some(_),
                ) => out.push(Item::Unknown(a)),
                (Some((_, Value::Pair)), Some(_)) => out.push(Item::Unknown(a)),
                (Some((name, value)), Some(v)) => out.push(Item::Option {
                    name,
                    value,
                    arg: Some(Arg {
                        text: v.to_owned(),
                        ..a.clone()
                    }),
                }),
                (Some((name, value)), None) if value.takes_value() => {
                    out.push(separate(name, value, args, &mut i))
                }
                (Some((name, value)), None) => out.push(Item::Option {
                    name,
                    value,
                    arg: None,
                }),
            }
            continue;
        }
        // `-5` for `head -5`: a table entry `-NUM`.
        if t[1..].chars().all(|c| c.is_ascii_digit())
            && let Some((name, value)) = find("-NUM")
        {
            out.push(Item::Option {
                name,
                value,
                arg: None,
            });
            continue;
        }
        let cluster = &t[1..];
        for (k, c) in cluster.char_indices() {
            let mut spelled = [0u8; 8];
            let short = format!("-{}", c.encode_utf8(&mut spelled));
            let Some((name, value)) = find(&short) else {
                out.push(Item::Unknown(a));
                break;
            };
            let rest = &cluster[k + c.len_utf8()..];
            if value == Value::Optional {
                out.push(Item::Option {
                    name,
                    value,
                    arg: (!rest.is_empty()).then(|| Arg {
                        text: rest.to_owned(),
                        ..a.clone()
                    }),
                });
                break;
            }
            if !value.takes_value() {
                out.push(Item::Option {
                    name,
                    value,
                    arg: None,
                });
                continue;
            }
            if value == Value::Pair {
                out.push(Item::Unknown(a));
            } else if !rest.is_empty() {
                out.push(Item::Option {
                    name,
                    value,
                    arg: Some(Arg {
                        text: rest.to_owned(),
                        ..a.clone()
                    }),
                });
            } else {
                out.push(separate(name, value, args, &mut i));
            }
            break;
        }
    }
    out
}

/// The index of the first operand at or after `from`, skipping options; `valued` lists the
/// options that take a separate value (`-u root`, `--user root`). Used to find the command a
/// wrapper runs.
pub fn operand_start(argv: &[Arg], from: usize, valued: &[&str]) -> usize {
    let mut i = from;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" || (a.dynamic && !t.starts_with('-')) {
            return i;
        }
        if t.starts_with("--") {
            i += if !t.contains('=') && valued.contains(&t) {
                2
            } else {
                1
            };
            continue;
        }
        // A short cluster such as `-iu` or `-uroot`: a valued letter takes the rest, or the next word.
        let cluster = &t[1..];
        let mut takes_next = false;
        for (k, c) in cluster.char_indices() {
            if valued
                .iter()
                .any(|v| v.len() == 2 && v.ends_with(c) && !v.starts_with("--"))
            {
                takes_next = k + c.len_utf8() == cluster.len();
                break;
            }
        }
        i += if takes_next { 2 } else { 1 };
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: &[Opt] = &[
        ("-r", Value::Flag),
        ("-n", Value::Flag),
        ("-k", Value::Literal),
        ("-o", Value::Write),
        ("--output", Value::Write),
        ("--reverse", Value::Flag),
        ("--color", Value::Optional),
    ];

    fn read(words: &str, style: Style) -> Vec<String> {
        let args: Vec<Arg> = words.split_whitespace().map(Arg::literal).collect();
        parse(&args, &[SORT], style)
            .into_iter()
            .map(|item| match item {
                Item::Option { name, arg, .. } => match arg {
                    Some(a) => format!("{name}={}", a.text),
                    None => name.to_owned(),
                },
                Item::Operand(a) => format!("op:{}", a.text),
                Item::Unknown(a) => format!("?{}", a.text),
                Item::Missing(n) => format!("missing:{n}"),
            })
            .collect()
    }

    #[test]
    fn spellings_of_one_option() {
        assert_eq!(
            read("-rno out f", Style::Gnu),
            ["-r", "-n", "-o=out", "op:f"]
        );
        assert_eq!(read("-roout", Style::Gnu), ["-r", "-o=out"]);
        assert_eq!(read("--output=x", Style::Gnu), ["--output=x"]);
        assert_eq!(read("--output x", Style::Gnu), ["--output=x"]);
        assert_eq!(
            read("--color --color=always", Style::Gnu),
            ["--color", "--color=always"]
        );
        assert_eq!(read("-o", Style::Gnu), ["missing:-o"]);
    }

    #[test]
    fn abbreviations_and_unlisted_options_are_unknown() {
        assert_eq!(read("--out=x", Style::Gnu), ["?--out=x"]);
        assert_eq!(read("--rev", Style::Gnu), ["?--rev"]);
        assert_eq!(read("-rz", Style::Gnu), ["-r", "?-rz"]);
        assert_eq!(read("--reverse=1", Style::Gnu), ["?--reverse=1"]);
    }

    #[test]
    fn operands_and_the_end_of_options() {
        assert_eq!(read("f -r -- -o", Style::Gnu), ["op:f", "-r", "op:-o"]);
        assert_eq!(read("f -r", Style::Posix), ["op:f", "op:-r"]);
        assert_eq!(read("- x", Style::Gnu), ["op:-", "op:x"]);
    }
}
