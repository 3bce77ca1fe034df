//! Compilers run on the workspace's sources, and the JVM running the classes they made: the C
//! family (gcc, g++, cc, clang, clang++) and its analysers (clang-tidy, cppcheck), javac, and
//! `java` (options from GCC's, Clang's and cppcheck's manuals and the JDK's tool references). Their outputs are writes and their include paths,
//! class paths and sources reads, each judged as the path validator judges it; a program run
//! is the workspace's when what it loads is in the workspace, as `cargo run` is. Not listed,
//! so asked: options that run or load another program (`-B`, `-wrapper`, `-specs`, `-fplugin`,
//! `-Xclang`, `-mllvm`, `-Wl,`/`-Xlinker` and the other pass-through forms, a linker by path,
//! `-J`, `-javaagent`, `-agentlib`, `-XX:OnError`), response files (`@file`), JVM settings
//! (`-Djava.*`), and reading a source from stdin.

use acp_gate_shell::Arg;

use super::{Judge, Program};
use acp_gate_shell::options::Style;
use acp_gate_shell::options::Value::{self, Flag, Literal, Read, Write};

/// The C family's options: `(spelling, value)`, where a value may follow as the next word or
/// be glued (`-o out`, `-oout`, `-Iinclude`).
const C_VALUED: &[(&str, Value)] = &[
    ("-o", Write),
    ("-MF", Write),
    ("-I", Read),
    ("-L", Read),
    ("-isystem", Read),
    ("-iquote", Read),
    ("-idirafter", Read),
    ("-include", Read),
    ("-D", Literal),
    ("-U", Literal),
    ("-l", Literal),
    ("-x", Literal),
    ("-MT", Literal),
    ("-MQ", Literal),
];

/// Options that are whole words and take nothing.
const C_FLAGS: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-g",
    "-O",
    "-w",
    "-v",
    "-s",
    "-P",
    "-C",
    "-H",
    "-M",
    "-MM",
    "-MD",
    "-MMD",
    "-MP",
    "-dM",
    "-dD",
    "-pipe",
    "-pthread",
    "-shared",
    "-static",
    "-rdynamic",
    "-ansi",
    "-pedantic",
    "-pedantic-errors",
    "-nostdlib",
    "-nostdinc",
    "-fPIC",
    "-fpic",
    "-fPIE",
    "-fpie",
    "-no-pie",
    "-pie",
    "-save-temps",
];

/// Prefixes of flags that only choose a standard, a level, a warning or a code generation
/// setting (`-std=c11`, `-O2`, `-g3`, `-Wall`, `-march=native`, `-fsanitize=address`).
const C_PREFIXES: &[&str] = &["-std=", "-O", "-g", "-W", "-m", "-f", "--std="];

/// Of those, the ones that run, load or pass words to another program, or read and write
/// profiles elsewhere.
const C_NOT: &[&str] = &[
    "-Wl,",
    "-Wa,",
    "-Wp,",
    "-mllvm",
    "-fplugin",
    "-fprofile",
    "-fauto-profile",
    "-fcreate-profile",
    "-fdump",
    "-fuse-ld=/",
];

/// `cc ... SOURCES`: every word read as the C family's driver reads it.
fn c_compiler(judge: &mut Judge, args: &[Arg]) -> bool {
    let mut safe = true;
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a.dynamic {
            return false;
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            // A source or object file; `@file` is a file of more options.
            safe &= !t.starts_with('@') && judge.path(a, Read);
            continue;
        }
        if let Some((name, value)) = C_VALUED
            .iter()
            .filter(|(n, _)| t.starts_with(n))
            .max_by_key(|(n, _)| n.len())
        {
            let word = if t.len() > name.len() {
                Some(Arg {
                    text: t[name.len()..].to_owned(),
                    ..a.clone()
                })
            } else {
                words.next().cloned()
            };
            let Some(word) = word.filter(|w| !w.dynamic) else {
                return false;
            };
            safe &= match value {
                Literal => true,
                access => judge.path(&word, *access),
            };
            continue;
        }
        safe &= C_FLAGS.contains(&t)
            || (C_PREFIXES
                .iter()
                .any(|p| t.starts_with(p) && t.len() > p.len())
                && !C_NOT.iter().any(|n| t.starts_with(n)));
    }
    safe
}

/// javac's and java's class paths: every entry read (`lib/*` names the jars of a directory).
fn class_path(judge: &mut Judge, value: &Arg) -> bool {
    value
        .text
        .split(':')
        .filter(|e| !e.is_empty())
        .all(|entry| {
            judge.path(
                &Arg {
                    text: entry.trim_end_matches('*').to_owned(),
                    ..value.clone()
                },
                Read,
            )
        })
}

/// What one of javac's or java's options takes.
#[derive(Clone, Copy)]
enum Jvm {
    Flag,
    Literal,
    Dir,
    ClassPath,
}

const JAVAC: &[(&str, Jvm)] = &[
    ("-d", Jvm::Dir),
    ("-s", Jvm::Dir),
    ("-h", Jvm::Dir),
    ("-cp", Jvm::ClassPath),
    ("-classpath", Jvm::ClassPath),
    ("--class-path", Jvm::ClassPath),
    ("-sourcepath", Jvm::ClassPath),
    ("--source-path", Jvm::ClassPath),
    ("-p", Jvm::ClassPath),
    ("--module-path", Jvm::ClassPath),
    ("-processorpath", Jvm::ClassPath),
    ("--processor-path", Jvm::ClassPath),
    ("-source", Jvm::Literal),
    ("--source", Jvm::Literal),
    ("-target", Jvm::Literal),
    ("--target", Jvm::Literal),
    ("--release", Jvm::Literal),
    ("-encoding", Jvm::Literal),
    ("-Xmaxerrs", Jvm::Literal),
    ("-Xmaxwarns", Jvm::Literal),
    ("-g", Jvm::Flag),
    ("-nowarn", Jvm::Flag),
    ("-verbose", Jvm::Flag),
    ("-deprecation", Jvm::Flag),
    ("-parameters", Jvm::Flag),
    ("-Werror", Jvm::Flag),
    ("-proc:none", Jvm::Flag),
    ("-proc:full", Jvm::Flag),
    ("--enable-preview", Jvm::Flag),
];

const JAVA: &[(&str, Jvm)] = &[
    ("-cp", Jvm::ClassPath),
    ("-classpath", Jvm::ClassPath),
    ("--class-path", Jvm::ClassPath),
    ("-p", Jvm::ClassPath),
    ("--module-path", Jvm::ClassPath),
    ("-ea", Jvm::Flag),
    ("-da", Jvm::Flag),
    ("-esa", Jvm::Flag),
    ("-dsa", Jvm::Flag),
    ("-enableassertions", Jvm::Flag),
    ("-disableassertions", Jvm::Flag),
    ("-server", Jvm::Flag),
    ("-client", Jvm::Flag),
    ("-showversion", Jvm::Flag),
    ("--enable-preview", Jvm::Flag),
    ("-verbose:class", Jvm::Flag),
    ("-verbose:gc", Jvm::Flag),
];

/// Prefixes of JVM and javac settings that are data: memory and stack sizes, lint and doclint
/// sets, `-g:` debug information, an application's own properties (judged apart).
const JVM_PREFIXES: &[&str] = &["-Xmx", "-Xms", "-Xss", "-Xlint", "-Xdoclint", "-g:"];

/// Reads `args` against `table` up to the first operand that is not an option's value;
/// `Some(index of that operand)` when every option is harmless.
fn jvm_options(
    judge: &mut Judge,
    args: &[Arg],
    table: &[(&str, Jvm)],
    stop: bool,
) -> Option<usize> {
    let mut at = 0;
    let mut safe = true;
    while let Some(a) = args.get(at) {
        if a.dynamic {
            return None;
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            if stop {
                break;
            }
            safe &= !t.starts_with('@') && judge.path(a, Read);
            at += 1;
            continue;
        }
        at += 1;
        match table.iter().find(|(n, _)| *n == t).map(|(_, v)| *v) {
            Some(Jvm::Flag) => {}
            Some(value) => {
                let word = args.get(at).filter(|w| !w.dynamic)?;
                at += 1;
                safe &= match value {
                    Jvm::Dir => judge.path(word, Write),
                    Jvm::ClassPath => class_path(judge, word),
                    _ => true,
                };
            }
            None => safe &= JVM_PREFIXES.iter().any(|p| t.starts_with(p)) || property(t),
        }
    }
    safe.then_some(at)
}

/// `-Dname=value`: an application's own property is data; the JVM's own (`java.*`, `jdk.*`,
/// `sun.*`: a class loader, a security manager, a native library path) are not listed.
fn property(option: &str) -> bool {
    option.strip_prefix("-D").is_some_and(|setting| {
        let key = setting.split('=').next().unwrap_or(setting);
        !key.is_empty() && !["java.", "jdk.", "sun."].iter().any(|p| key.starts_with(p))
    })
}

/// `java [options] MAIN [ARGS]`, `java -jar FILE [ARGS]`, `java File.java [ARGS]`: the
/// workspace's program, its arguments judged as a script's.
fn java(judge: &mut Judge, args: &[Arg]) -> bool {
    let jar = args.iter().position(|a| a.is("-jar"));
    let Some(at) = jvm_options(judge, &args[..jar.unwrap_or(args.len())], JAVA, true) else {
        return false;
    };
    let (main, rest) = match jar {
        Some(j) if at == j => match args.get(j + 1) {
            Some(file) => (judge.path(file, Read), &args[j + 2..]),
            None => return false,
        },
        Some(_) => return false,
        None => match args.get(at) {
            Some(m) if m.text.ends_with(".java") => (judge.path(m, Read), &args[at + 1..]),
            Some(m) => (!m.glob && !m.text.contains('/'), &args[at + 1..]),
            None => return false,
        },
    };
    main && super::scripts::script_args(judge, rest)
}

/// The C family's static analysers: they read the sources (and a compilation database) and
/// print. Not listed: `clang-tidy --load` (a plugin), `--fix` (rewrites; asked until judged),
/// cppcheck's `--addon` (runs a script) and `--rule-file`.
const ANALYSERS: &[Program] = &[
    Program {
        names: &["clang-tidy"],
        // LLVM's options: one or two dashes, the names listed with one.
        options: &[&[
            ("-p", Read),
            ("-checks", Literal),
            ("-warnings-as-errors", Literal),
            ("-header-filter", Literal),
            ("-quiet", Flag),
            ("-use-color", Flag),
            ("-list-checks", Flag),
            ("-extra-arg", Literal),
            ("-config-file", Read),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Single,
    },
    Program {
        names: &["cppcheck"],
        options: &[&[
            ("--enable", Literal),
            ("--std", Literal),
            ("--language", Literal),
            ("--error-exitcode", Literal),
            ("--inline-suppr", Flag),
            ("--quiet", Flag),
            ("-q", Flag),
            ("-j", Literal),
            ("-I", Read),
            ("-D", Literal),
            ("-U", Literal),
            ("--suppress", Literal),
            ("--template", Literal),
            ("--platform", Literal),
            ("--check-level", Literal),
            ("--xml", Flag),
            ("--force", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
];

/// Compilers, their analysers and the JVM; `None` for another program.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    if let Some(program) = ANALYSERS.iter().find(|p| p.names.contains(&name)) {
        return Some(judge.program(args, program));
    }
    Some(match name {
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" => c_compiler(judge, args),
        "javac" => jvm_options(judge, args, JAVAC, false).is_some(),
        "java" => java(judge, args),
        _ => return None,
    })
}
