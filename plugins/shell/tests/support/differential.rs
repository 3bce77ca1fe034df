//! The command reader checked against bash itself (issue 39, item 6).
//!
//! Commands are generated from a grammar of the shell features the reader handles (quoting,
//! expansions, redirections, functions, `eval`, `bash -c`/`sh -c`, code fed to a shell's input,
//! subshells, groups, control flow, wrappers, here-documents, assignments, substitutions). Each
//! one runs under `bash --noprofile --norc -c` with every program it names replaced by a
//! recorder: `bin/p1`..`bin/p5` are links to the running binary, which, started under one of
//! those names, appends what it was given (argv, working directory, the variables `A`, `B`,
//! `C`, the files open on its descriptors) to a log and exits, with no other effect. What bash
//! ran is then compared with what [`acp_gate_shell::read_shell`] reported.
//!
//! The reader's promise: when it notes nothing it could not see through (a function definition
//! aside, whose body it walks), every program that runs is among the commands it reported,
//! with the same literal words (a word only known at run time is marked dynamic, and stands
//! for any number of words here), the same literal environment, in the directory it reported,
//! and every file written or read through a redirection is among those it reported.
//!
//! Shared by `tests/differential.rs` (a bounded run with a fixed seed, run by `cargo test`) and
//! `examples/differential.rs` (the long run).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use acp_gate_shell::{Arg, NoteKind, Reading, read_shell};

/// The recorders' names: the only programs the generated commands name (with the wrappers in
/// [`WRAPPERS`], which run them, and shell builtins).
pub const STUBS: &[&str] = &["p1", "p2", "p3", "p4", "p5"];
/// The variables the recorders report.
const TRACKED: &[&str] = &["A", "B", "C"];
/// The environment variable naming the log the recorders append to.
const LOG: &str = "DIFFERENTIAL_LOG";
/// How long one command may run.
const TIMEOUT: Duration = Duration::from_secs(2);

/// Failure classes: bash did something the reader, claiming it saw everything, did not report.
pub const FAILURES: &[&str] = &[
    "unreported-program",
    "argv-mismatch",
    "env-mismatch",
    "cwd-mismatch",
    "unreported-write",
    "unreported-read",
];

// ----- the recorder -----

/// When this binary was started as one of the recorders, records and exits; otherwise returns.
pub fn stub_main_if_stub() {
    let mut args = std::env::args_os();
    let Some(argv0) = args.next() else { return };
    let name = Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !STUBS.contains(&name.as_str()) {
        return;
    }
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let mut fields = vec![name];
    fields.push(
        std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    );
    for var in TRACKED {
        fields.push(match std::env::var(var) {
            Ok(v) => format!("={v}"),
            Err(_) => "-".into(),
        });
    }
    let mut fds = Vec::new();
    for fd in 0..10 {
        if let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            let flags = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
                .ok()
                .and_then(|info| {
                    info.lines()
                        .find_map(|l| l.strip_prefix("flags:"))
                        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                })
                .unwrap_or(0);
            let mode = if flags & 3 == 0 { 'r' } else { 'w' };
            fds.push(format!("{fd}:{mode}:{}", target.display()));
        }
    }
    fields.push(fds.join("\u{1f}"));
    fields.extend(args.iter().cloned());
    let line: Vec<String> = fields.iter().map(|f| escape(f)).collect();
    if let Some(log) = std::env::var_os(LOG)
        && let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(log)
    {
        let _ = file.write_all(format!("{}\n", line.join("\t")).as_bytes());
    }
    let code = i32::from(args.iter().any(|a| a == "fail"));
    std::process::exit(code);
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One program bash ran, as its recorder saw it.
#[derive(Debug, Clone)]
struct Record {
    name: String,
    cwd: String,
    env: Vec<(String, Option<String>)>,
    /// Descriptor, `r` or `w`, target.
    fds: Vec<(u32, char, String)>,
    args: Vec<String>,
}

fn parse_log(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<String> = line.split('\t').map(unescape).collect();
            if fields.len() < 2 + TRACKED.len() + 1 {
                return None;
            }
            let env = TRACKED
                .iter()
                .zip(&fields[2..2 + TRACKED.len()])
                .map(|(n, v)| (n.to_string(), v.strip_prefix('=').map(str::to_owned)))
                .collect();
            let fds = fields[2 + TRACKED.len()]
                .split('\u{1f}')
                .filter_map(|f| {
                    let mut parts = f.splitn(3, ':');
                    let fd = parts.next()?.parse().ok()?;
                    let mode = parts.next()?.chars().next()?;
                    Some((fd, mode, parts.next()?.to_owned()))
                })
                .collect();
            Some(Record {
                name: fields[0].clone(),
                cwd: fields[1].clone(),
                env,
                fds,
                args: fields[3 + TRACKED.len()..].to_vec(),
            })
        })
        .collect()
}

// ----- the generator -----

/// splitmix64: small, seedable, good enough to pick grammar productions.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Wrappers that run the command after them (real programs or builtins, which only run stubs).
const WRAPPERS: &[&str] = &[
    "env",
    "env A=w",
    "env B=w C=v",
    "env -u B",
    "env --",
    "timeout 5",
    "timeout -s KILL 5",
    "nice",
    "nice -n 3",
    "nohup",
    "command",
    "command --",
    "setsid",
    "stdbuf -o0",
    "xargs",
    "xargs -n 1",
    "time",
    "exec",
];

/// Redirections of a simple command, in a working directory holding `r1` and `d1/`.
const REDIRECTS: &[&str] = &[
    "> f1",
    ">> f2",
    "2> f3",
    "2>&1",
    "< r1",
    "&> f4",
    "3> f5",
    ">| f6",
    "2>/dev/null",
    "> 'f 7'",
    "> \"f\"8",
    ">&2",
    "4< r1",
    "<> f9",
];

struct Gen<'r> {
    rng: &'r mut Rng,
    /// Inside `sh -c`: only POSIX shell syntax (dash runs it).
    posix: bool,
    /// Functions defined so far.
    functions: Vec<String>,
    /// Loop variables in scope.
    loop_vars: Vec<String>,
    /// Here-document delimiters used (each nested one gets its own).
    docs: usize,
    /// Recorders a function body may not call (so no function calls itself).
    banned: Vec<String>,
    /// Functions named after a recorder.
    shadows: Vec<String>,
}

/// A single-quoted shell word holding `s`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `list` as the last part of a compound body: terminated by `;` unless it ends a line.
fn term(list: &str) -> String {
    if list.ends_with('\n') {
        list.to_owned()
    } else {
        format!("{list};")
    }
}

/// Generates command `index` of the run seeded with `seed`.
pub fn generate(seed: u64, index: u64) -> String {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
    rng.next_u64();
    let mut g = Gen {
        rng: &mut rng,
        posix: false,
        functions: Vec::new(),
        loop_vars: Vec::new(),
        docs: 0,
        banned: Vec::new(),
        shadows: Vec::new(),
    };
    let script = g.list(0);
    script.trim_end_matches('\n').to_owned()
}

impl Gen<'_> {
    fn list(&mut self, depth: u32) -> String {
        let n = 1 + self.rng.below(if depth == 0 { 3 } else { 2 });
        let mut out = String::new();
        for k in 0..n {
            let stmt = self.stmt(depth);
            if k > 0 && !out.ends_with('\n') {
                let sep = *self.rng.pick(&["; ", " && ", " || ", "\n", "; "]);
                out.push_str(sep);
            }
            out.push_str(&stmt);
        }
        out
    }

    fn stmt(&mut self, depth: u32) -> String {
        if depth >= 3 {
            return if self.rng.percent(80) {
                self.simple(depth, true)
            } else {
                self.pipeline(depth)
            };
        }
        let d = depth + 1;
        match self.rng.below(100) {
            0..=24 => self.simple(depth, true),
            25..=31 => self.pipeline(depth),
            32..=35 => format!("( {} )", self.list(d)),
            36..=39 => format!("{{ {} }}{}", term(&self.list(d)), self.group_redirect()),
            40..=44 => {
                let cond = self.condition(depth);
                let then = self.list(d);
                let otherwise = if self.rng.percent(50) {
                    format!(" else {}", term(&self.list(d)))
                } else {
                    String::new()
                };
                format!("if {} then {}{otherwise} fi", term(&cond), term(&then))
            }
            45..=47 => {
                let body = self.list(d);
                if self.rng.percent(50) {
                    let cond = self.stub_call(depth, &["fail"]);
                    format!("while {} do {} done", term(&cond), term(&body))
                } else {
                    let cond = self.stub_call(depth, &["ok"]);
                    format!("until {} do {} done", term(&cond), term(&body))
                }
            }
            48..=51 => {
                let var = *self.rng.pick(&["x", "y"]);
                let mut words = Vec::new();
                for _ in 0..self.rng.below(3) {
                    words.push(self.word(depth));
                }
                self.loop_vars.push(var.to_owned());
                let body = self.list(d);
                self.loop_vars.pop();
                format!("for {var} in {}; do {} done", words.join(" "), term(&body))
            }
            52..=54 => {
                let value = self.word(depth);
                let mut arms = String::new();
                for pattern in ["a", "b|-x", "*"] {
                    if self.rng.percent(70) {
                        let body = self.list(d);
                        let body = if body.ends_with('\n') {
                            body
                        } else {
                            format!("{body} ")
                        };
                        let _ = write!(arms, "{pattern}) {body};; ");
                    }
                }
                format!("case {value} in {arms}esac")
            }
            55..=59 => self.function(d),
            60..=63 => {
                let inner = self.list(d);
                if self.rng.percent(80) {
                    format!("eval {}", quote(&inner))
                } else {
                    let words: Vec<String> = (0..1 + self.rng.below(3))
                        .map(|_| self.plain_word())
                        .collect();
                    format!("eval {} {}", self.stub(), words.join(" "))
                }
            }
            64..=68 => self.nested_shell(d),
            69..=70 => self.stdin_shell(d),
            71..=73 => self.heredoc(depth),
            74..=75 => format!("{} & wait", self.simple(depth, false)),
            76..=77 => {
                if self.rng.percent(50) {
                    format!("cd d1 && {}", self.simple(depth, true))
                } else {
                    format!("( cd d1; {} )", self.list(d))
                }
            }
            78..=82 => self.assignment(depth),
            83..=84 => {
                let prefix = *self.rng.pick(&["! ", "time ", "! time "]);
                format!("{prefix}{}", self.simple(depth, false))
            }
            85 => format!("exec {}", self.stub_call(depth, &[])),
            86 => format!("exec 3> f5; {}", self.simple(depth, false)),
            87..=88 => {
                let target = self.stub();
                let inner = self.stub_call(depth, &[]);
                format!(
                    "alias {target}={}; {}",
                    quote(&inner),
                    self.stub_call(depth, &[])
                )
            }
            89..=90 => {
                if self.posix {
                    format!("[ -n x ] && {}", self.simple(depth, false))
                } else {
                    format!("(( 1 + 2 )) && {}", self.simple(depth, false))
                }
            }
            91..=92 if !self.posix => {
                format!("[[ -n x && a == a ]] && {}", self.simple(depth, false))
            }
            93..=95 if !self.functions.is_empty() => {
                let f = self.rng.pick(&self.functions).clone();
                let words: Vec<String> = (0..self.rng.below(3)).map(|_| self.word(depth)).collect();
                format!("{f} {}", words.join(" "))
            }
            96..=97 => {
                let inner = self.simple(d, false);
                let mut sub = self.word(d);
                if self.rng.percent(50) {
                    sub = format!("<({inner})");
                }
                if self.posix {
                    self.simple(depth, true)
                } else {
                    format!("{} {sub}", self.stub_call(depth, &[]))
                }
            }
            _ => self.simple(depth, true),
        }
    }

    fn group_redirect(&mut self) -> String {
        if self.rng.percent(25) {
            format!(" {}", self.rng.pick(REDIRECTS))
        } else {
            String::new()
        }
    }

    /// An `if` condition: a stub (which fails when given `fail`), or its negation.
    fn condition(&mut self, depth: u32) -> String {
        let call = self.simple(depth, false);
        if self.rng.percent(20) {
            format!("! {call}")
        } else {
            call
        }
    }

    fn function(&mut self, depth: u32) -> String {
        // A function shadowing a recorder (its body may reach the program with `command`).
        // No body calls a function by name, nor the recorder it shadows or any shadowed
        // before: calls only go to functions defined later, so none recurses.
        let shadow = self.shadows.len() < 3 && self.rng.percent(20);
        let name = if shadow {
            self.stub()
        } else {
            format!("f{}", 1 + self.rng.below(3))
        };
        let saved = (self.banned.clone(), std::mem::take(&mut self.functions));
        if shadow {
            self.banned.push(name.clone());
            self.banned.extend(self.shadows.iter().cloned());
        }
        let body = self.list(depth);
        let body = if self.rng.percent(30) {
            let program = if shadow { name.clone() } else { self.stub() };
            format!("command {program} \"$1\"; {body}")
        } else {
            body
        };
        self.banned = saved.0;
        self.functions = saved.1;
        if shadow && !self.shadows.contains(&name) {
            self.shadows.push(name.clone());
        }
        let def = if !self.posix && self.rng.percent(30) {
            format!("function {name} {{ {} }}", term(&body))
        } else {
            format!("{name}() {{ {} }}", term(&body))
        };
        if !self.functions.contains(&name) {
            self.functions.push(name.clone());
        }
        let words: Vec<String> = (0..self.rng.below(3)).map(|_| self.word(depth)).collect();
        let sep = *self.rng.pick(&["\n", "; "]);
        format!("{def}{sep}{name} {}", words.join(" "))
    }

    /// `bash -c CODE`, `sh -c CODE`, with arguments after it.
    fn nested_shell(&mut self, depth: u32) -> String {
        let posix = self.posix || self.rng.percent(30);
        let saved = (
            self.posix,
            std::mem::take(&mut self.functions),
            std::mem::take(&mut self.shadows),
        );
        self.posix = posix;
        let inner = self.list(depth);
        self.posix = saved.0;
        self.functions = saved.1;
        self.shadows = saved.2;
        let shell = if posix { "sh" } else { "bash" };
        let args = match self.rng.below(3) {
            0 => String::new(),
            1 => " zero".into(),
            _ => format!(" zero {}", self.plain_word()),
        };
        format!("{shell} -c {}{args}", quote(&inner))
    }

    /// Code fed to a shell's standard input: a here-document, a here-string, `echo | bash`.
    fn stdin_shell(&mut self, depth: u32) -> String {
        let saved = std::mem::take(&mut self.functions);
        let inner = self.simple(depth, false);
        self.functions = saved;
        let shell = if self.posix { "sh" } else { "bash" };
        match self.rng.below(3) {
            0 => {
                self.docs += 1;
                let tag = format!("CODE{}", self.docs);
                format!("{shell} <<'{tag}'\n{inner}\n{tag}\n")
            }
            1 if !self.posix => format!("{shell} <<< {}", quote(&inner)),
            _ => format!("echo {} | {shell}", quote(&inner)),
        }
    }

    fn heredoc(&mut self, depth: u32) -> String {
        self.docs += 1;
        let tag = format!("EOF{}", self.docs);
        let call = self.simple(depth, false);
        let (open, body) = match self.rng.below(3) {
            0 => (format!("<<'{tag}'"), "text $A `p1` $(p2)".to_owned()),
            1 => (format!("<<{tag}"), "text $A ${B:-b} $(p2 h)".to_owned()),
            _ => (format!("<<-{tag}"), "\tindented $C".to_owned()),
        };
        format!("{call} {open}\n{body}\n{tag}\n")
    }

    fn assignment(&mut self, depth: u32) -> String {
        let var = *self.rng.pick(TRACKED);
        let value = match self.rng.below(4) {
            0 => self.plain_word(),
            1 => format!("\"$({})\"", self.simple(depth + 1, false)),
            2 => self.word(depth),
            _ => quote("v w"),
        };
        match self.rng.below(3) {
            0 => format!("export {var}={value}"),
            _ => format!("{var}={value}"),
        }
    }

    fn pipeline(&mut self, depth: u32) -> String {
        let n = 2 + self.rng.below(2);
        let stages: Vec<String> = (0..n).map(|_| self.simple(depth, false)).collect();
        stages.join(" | ")
    }

    fn stub(&mut self) -> String {
        let allowed: Vec<&str> = STUBS
            .iter()
            .copied()
            .filter(|s| !self.banned.iter().any(|b| b == s))
            .collect();
        (*self.rng.pick(&allowed)).to_owned()
    }

    /// A recorder called with `extra` among its words.
    fn stub_call(&mut self, depth: u32, extra: &[&str]) -> String {
        let mut words = vec![self.stub()];
        for _ in 0..self.rng.below(3) {
            words.push(self.word(depth));
        }
        words.extend(extra.iter().map(|s| (*s).to_owned()));
        words.join(" ")
    }

    /// A simple command: assignments, a wrapper, a recorder (or a function), words,
    /// redirections.
    fn simple(&mut self, depth: u32, redirects: bool) -> String {
        let mut words = Vec::new();
        if self.rng.percent(20) {
            for _ in 0..1 + self.rng.below(2) {
                let var = *self.rng.pick(TRACKED);
                words.push(format!("{var}={}", self.value(depth)));
            }
        }
        if self.rng.percent(15) {
            let wrapper = *self.rng.pick(WRAPPERS);
            if !(self.posix && wrapper == "time") {
                words.push(wrapper.to_owned());
            }
        }
        if !self.functions.is_empty() && self.rng.percent(10) {
            words.push(self.rng.pick(&self.functions).clone());
        } else {
            words.push(self.stub());
        }
        for _ in 0..self.rng.below(4) {
            words.push(self.word(depth));
        }
        if redirects && self.rng.percent(25) {
            for _ in 0..1 + self.rng.below(2) {
                words.push((*self.rng.pick(REDIRECTS)).to_owned());
            }
        }
        words.join(" ")
    }

    /// An assignment's value.
    fn value(&mut self, depth: u32) -> String {
        match self.rng.below(4) {
            0 => quote("v w"),
            1 => "\"$A\"".into(),
            _ => self.word(depth),
        }
    }

    fn plain_word(&mut self) -> String {
        (*self
            .rng
            .pick(&["a", "b", "-x", "--opt", "--k=v", "x.txt", "1", "fail", "ok"]))
        .to_owned()
    }

    /// One word: quoting, escapes, expansions, substitutions.
    fn word(&mut self, depth: u32) -> String {
        let n = if self.rng.percent(15) { 2 } else { 1 };
        (0..n).map(|_| self.word_part(depth)).collect()
    }

    fn word_part(&mut self, depth: u32) -> String {
        loop {
            let part = match self.rng.below(30) {
                0..=7 => self.plain_word(),
                8 => quote("s q"),
                9 => quote("it's"),
                10 => "\"d q\"".into(),
                11 => "\"a\\$b \\\"c\\\" \\\\\"".into(),
                12 if !self.posix => "$'a\\tb'".into(),
                13 if !self.posix => "$'\\x41\\'z'".into(),
                14 => "a\\ b".into(),
                15 => "\\$x\\;".into(),
                16 => "\"$A\"".into(),
                17 => "$B".into(),
                18 => "\"${C:-def}\"".into(),
                19 if depth < 3 => {
                    let inner = self.simple(depth + 1, false);
                    format!("\"$({inner})\"")
                }
                20 if depth < 3 => {
                    let inner = self.list(depth + 1);
                    if inner.contains('\n') {
                        continue;
                    }
                    format!("$( {inner} )")
                }
                21 => format!("`{} {}`", self.stub(), self.plain_word()),
                22 if !self.posix => "{x,y}".into(),
                23 if !self.posix => "a{1..3}".into(),
                24 => "''".into(),
                25 => "\"\"".into(),
                26 => "$((1 + 2))".into(),
                27 => "'*'".into(),
                28 => {
                    let Some(var) = self.loop_vars.last() else {
                        continue;
                    };
                    format!("\"${var}\"")
                }
                29 => "\"$1\"".into(),
                _ => continue,
            };
            return part;
        }
    }
}

// ----- running and comparing -----

/// Counts of what was compared, by class.
#[derive(Default, Debug)]
pub struct Summary {
    pub commands: u64,
    /// Count by class.
    pub classes: BTreeMap<String, u64>,
    /// The shortest command seen in each class, with what disagreed.
    pub examples: BTreeMap<String, (String, String)>,
}

impl Summary {
    fn add(&mut self, class: &str, command: &str, detail: impl FnOnce() -> String) {
        *self.classes.entry(class.to_owned()).or_default() += 1;
        let shorter = self
            .examples
            .get(class)
            .is_none_or(|(c, _)| command.len() < c.len());
        if shorter {
            self.examples
                .insert(class.to_owned(), (command.to_owned(), detail()));
        }
    }

    fn merge(&mut self, other: Summary) {
        self.commands += other.commands;
        for (class, n) in other.classes {
            *self.classes.entry(class).or_default() += n;
        }
        for (class, (command, detail)) in other.examples {
            let shorter = self
                .examples
                .get(&class)
                .is_none_or(|(c, _)| command.len() < c.len());
            if shorter {
                self.examples.insert(class, (command, detail));
            }
        }
    }

    /// How many disagreements fall in the failure classes.
    pub fn failures(&self) -> u64 {
        FAILURES
            .iter()
            .map(|c| self.classes.get(*c).copied().unwrap_or(0))
            .sum()
    }

    pub fn report(&self) -> String {
        let mut out = format!("{} commands compared\n", self.commands);
        for (class, n) in &self.classes {
            let failure = if FAILURES.contains(&class.as_str()) {
                "  FAILURE"
            } else {
                ""
            };
            let _ = writeln!(out, "  {class:<34} {n:>9}{failure}");
        }
        for (class, (command, detail)) in &self.examples {
            if FAILURES.contains(&class.as_str())
                || class.starts_with("parse")
                || class.starts_with("timeout")
            {
                let _ = writeln!(out, "example of {class}: {command:?}\n    {detail}");
            }
        }
        out
    }
}

/// Compares `count` generated commands (`seed`, indices from 0), on `threads` threads.
pub fn run(seed: u64, count: u64, threads: usize) -> Summary {
    let base = std::env::temp_dir().join(format!(
        "acp-gate-shell-differential-{}-{seed:x}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(base.join("bin")).expect("create the stub directory");
    let base = base.canonicalize().expect("canonical temp dir");
    let exe = std::env::current_exe().expect("the running binary");
    for stub in STUBS {
        symlink(&exe, base.join("bin").join(stub)).expect("link a stub");
    }
    let next = AtomicUsize::new(0);
    let total = Mutex::new(Summary::default());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut summary = Summary::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed) as u64;
                    if index >= count {
                        break;
                    }
                    let command = generate(seed, index);
                    compare_one(&base, index, &command, &mut summary);
                }
                total.lock().expect("no thread panicked").merge(summary);
            });
        }
    });
    let _ = std::fs::remove_dir_all(&base);
    total.into_inner().expect("no thread panicked")
}

/// What bash ran for `command`, from a fresh working directory; `None` on a timeout.
struct Ran {
    records: Vec<Record>,
    stderr: String,
    timed_out: bool,
}

/// Kills every process left in the group `bash` ran as (`kill -KILL -- -PGID`).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

fn run_bash(base: &Path, index: u64, command: &str) -> (PathBuf, Ran) {
    let dir = base.join(format!("r{index}"));
    let work = dir.join("w");
    // `cd d1` always succeeds (the reader takes a `cd` to succeed; see the README).
    std::fs::create_dir_all(work.join("d1/d1/d1/d1/d1")).expect("create the working directory");
    std::fs::write(work.join("r1"), "input\n").expect("create r1");
    let log = dir.join("log");
    std::fs::write(&log, "").expect("create the log");
    let out = std::fs::File::create(dir.join("out")).expect("create out");
    let err = std::fs::File::create(dir.join("err")).expect("create err");
    let mut child = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", command])
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", base.join("bin").display()),
        )
        .env(LOG, &log)
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own process group: what it leaves running (a background job, a function that
        // calls itself in a command substitution without end) is killed with it, below.
        .process_group(0)
        .spawn()
        .expect("run bash");
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    let mut timed_out = false;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                timed_out = true;
                break;
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
            Err(_) => break,
        }
    }
    kill_group(child.id());
    let records = parse_log(&std::fs::read_to_string(&log).unwrap_or_default());
    let stderr = std::fs::read_to_string(dir.join("err")).unwrap_or_default();
    (
        dir,
        Ran {
            records,
            stderr,
            timed_out,
        },
    )
}

/// Whether the reader's words `pattern` (the command word excluded) stand for `args`: a
/// literal word is itself, a word only known at run time any number of words.
fn words_match(pattern: &[Arg], args: &[String]) -> bool {
    // matches[i][j]: pattern[i..] matches args[j..].
    let (p, a) = (pattern.len(), args.len());
    let mut m = vec![vec![false; a + 1]; p + 1];
    m[p][a] = true;
    for i in (0..p).rev() {
        for j in (0..=a).rev() {
            let word = &pattern[i];
            m[i][j] = if word.dynamic || word.glob || word.pipe {
                m[i + 1][j] || (j < a && m[i][j + 1])
            } else {
                j < a && word.text == args[j] && m[i + 1][j + 1]
            };
        }
    }
    m[0][0]
}

/// Whether the environment the reader reported for a command agrees with what it got: each
/// tracked variable it names with a literal value (the last one wins) has that value.
fn env_matches(reported: &[(String, Arg)], got: &[(String, Option<String>)]) -> bool {
    TRACKED.iter().all(|var| {
        match reported.iter().rev().find(|(n, _)| n == var) {
            Some((_, value)) if !value.dynamic && !value.glob => got
                .iter()
                .find(|(n, _)| n == var)
                // `env -u B` unsets what an outer prefix set: reported, but not there.
                .is_none_or(|(_, v)| v.is_none() || v.as_deref() == Some(value.text.as_str())),
            _ => true,
        }
    })
}

/// The notes that excuse a program the reader did not report: everything it says it could not
/// see through (a function definition is noted, but its body is walked, so it excuses nothing).
fn blind(reading: &Reading) -> bool {
    reading.notes.iter().any(|n| n.kind != NoteKind::Defines)
}

fn compare_one(base: &Path, index: u64, command: &str, summary: &mut Summary) {
    summary.commands += 1;
    let (dir, ran) = run_bash(base, index, command);
    let work = dir.join("w");
    let work_text = work.display().to_string();
    let reading = read_shell(command, "/nonexistent-home", &work_text);
    let blind = blind(&reading);
    let unparseable = reading
        .notes
        .iter()
        .any(|n| n.kind == NoteKind::Unparseable);
    let syntax_error = ran.stderr.contains("syntax error");
    if ran.timed_out {
        summary.add("timeout (bash killed)", command, String::new);
    }
    match (syntax_error, unparseable) {
        (true, false) => summary.add("parse: bash syntax error, reader parsed", command, || {
            ran.stderr.trim().to_owned()
        }),
        (false, true) => summary.add("parse: reader unparseable, bash ran", command, || {
            format!("{:?}", reading.notes)
        }),
        (true, true) => summary.add("parse: both refuse", command, String::new),
        (false, false) => {}
    }
    if blind {
        summary.add(
            "commands the reader noted it could not see",
            command,
            || format!("{:?}", reading.notes),
        );
    }
    let mut matched = vec![false; reading.commands.len()];
    for record in &ran.records {
        summary.add("programs run", command, String::new);
        let candidates: Vec<usize> = (0..reading.commands.len())
            .filter(|&k| reading.commands[k].name == record.name)
            .collect();
        let by_words: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&k| words_match(reading.commands[k].args(), &record.args))
            .collect();
        let by_env: Vec<usize> = by_words
            .iter()
            .copied()
            .filter(|&k| env_matches(&reading.commands[k].env, &record.env))
            .collect();
        let by_cwd: Vec<usize> = by_env
            .iter()
            .copied()
            .filter(|&k| {
                let cwd = &reading.commands[k].cwd;
                cwd.is_empty() || *cwd == record.cwd
            })
            .collect();
        for &k in &by_cwd {
            matched[k] = true;
        }
        let class = if candidates.is_empty() {
            "unreported-program"
        } else if by_words.is_empty() {
            "argv-mismatch"
        } else if by_env.is_empty() {
            "env-mismatch"
        } else if by_cwd.is_empty() {
            "cwd-mismatch"
        } else {
            continue;
        };
        let detail = || {
            let reported: Vec<String> = candidates
                .iter()
                .map(|&k| {
                    let c = &reading.commands[k];
                    format!("{:?} env {:?} cwd {:?}", c.argv, c.env, c.cwd)
                })
                .collect();
            format!(
                "ran {} {:?} env {:?} cwd {:?}; reported {reported:?}",
                record.name, record.args, record.env, record.cwd
            )
        };
        if blind {
            summary.add(&format!("{class}, excused by a note"), command, detail);
        } else {
            summary.add(class, command, detail);
        }
    }
    // Files opened through redirections: every one must be among those reported.
    let prefix = format!("{work_text}/");
    let resolve = |a: &Arg, cwd: &str| -> Option<String> {
        if a.dynamic || a.glob {
            return None;
        }
        // In a directory only known when it runs: `/name` ends the path.
        Some(if a.text.starts_with('/') {
            a.text.clone()
        } else if cwd.is_empty() {
            format!("/{}", a.text)
        } else {
            format!("{cwd}/{}", a.text)
        })
    };
    let any_dynamic_write = reading
        .commands
        .iter()
        .any(|c| c.writes.iter().any(|a| a.dynamic || a.glob));
    let any_dynamic_read = reading
        .commands
        .iter()
        .any(|c| c.reads.iter().any(|a| a.dynamic || a.glob));
    let writes: Vec<String> = reading
        .commands
        .iter()
        .flat_map(|c| c.writes.iter().filter_map(|a| resolve(a, &c.cwd)))
        .collect();
    let reads: Vec<String> = reading
        .commands
        .iter()
        .flat_map(|c| c.reads.iter().filter_map(|a| resolve(a, &c.cwd)))
        .collect();
    for record in &ran.records {
        for (fd, mode, target) in &record.fds {
            if !target.starts_with(&prefix) {
                continue;
            }
            let (reported, any_dynamic, class) = match mode {
                'w' => (&writes, any_dynamic_write, "unreported-write"),
                _ => (&reads, any_dynamic_read, "unreported-read"),
            };
            let seen = reported
                .iter()
                .any(|r| r == target || (!r.starts_with(&prefix) && target.ends_with(r.as_str())));
            if seen || any_dynamic {
                continue;
            }
            let detail = || {
                format!(
                    "{} fd {fd} {mode} {target}; reported {reported:?}",
                    record.name
                )
            };
            if blind {
                summary.add(&format!("{class}, excused by a note"), command, detail);
            } else {
                summary.add(class, command, detail);
            }
        }
    }
    let stubs_reported = reading
        .commands
        .iter()
        .enumerate()
        .filter(|(_, c)| STUBS.contains(&c.name.as_str()));
    for (k, _) in stubs_reported {
        if !matched[k] {
            summary.add("reported, not run (informational)", command, String::new);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
