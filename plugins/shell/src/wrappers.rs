//! Looking through the programs that run another command: privilege wrappers (`sudo`, `doas`,
//! `su -c`), process wrappers (`env`, `timeout`, `nice`, `nohup`, `xargs`, ...), finders that
//! run a command per file (`find -exec`, `fd -x`), shells and `eval` running a script, and
//! interpreters reading code from their input. Each is read here into a [`Plan`]: what the walk
//! records, and what it follows (the command a wrapper runs is recorded after it).

use crate::arg::{Arg, Feed};
use crate::command::{Command, NoteKind, Runs};
use crate::options::operand_start;
use crate::programs::{is_interpreter, is_shell};

/// A wrapper whose options are followed by `skip` operands and then the command it runs.
pub struct Wrapper {
    pub names: &'static [&'static str],
    /// Its options that take a value as the next word (`-u root`, `--user root`).
    pub valued: &'static [&'static str],
    /// Operands between its options and the command (`timeout 5 CMD`: 1).
    pub skip: usize,
}

/// The wrappers looked through the same way, with the options of each that take a value (from
/// their manuals).
pub const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["sudo"],
        valued: &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        ],
        skip: 0,
    },
    Wrapper {
        names: &["doas"],
        valued: &["-u", "-C"],
        skip: 0,
    },
    Wrapper {
        names: &["pkexec", "run0"],
        valued: &[
            "--user",
            "-u",
            "--unit",
            "--property",
            "--slice",
            "--chdir",
            "-D",
            "--setenv",
            "--nice",
            "--description",
        ],
        skip: 0,
    },
    Wrapper {
        names: &["setpriv"],
        valued: &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        ],
        skip: 0,
    },
    Wrapper {
        names: &["timeout"],
        valued: &["-s", "-k", "--signal", "--kill-after"],
        skip: 1,
    },
    Wrapper {
        names: &["nice"],
        valued: &["-n", "--adjustment"],
        skip: 0,
    },
    Wrapper {
        names: &["ionice"],
        valued: &[
            "-c",
            "-n",
            "-p",
            "-P",
            "-u",
            "--class",
            "--classdata",
            "--pid",
            "--pgid",
            "--uid",
        ],
        skip: 0,
    },
    Wrapper {
        names: &["stdbuf"],
        valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
        skip: 0,
    },
    Wrapper {
        names: &["time"],
        valued: &["-f", "-o", "--format", "--output"],
        skip: 0,
    },
    Wrapper {
        names: &[
            "nohup",
            "setsid",
            "unbuffer",
            "builtin",
            "catchsegv",
            "torsocks",
            "dbus-run-session",
            "nocache",
            "eatmydata",
            "fakeroot",
            "tsocks",
            "sg",
        ],
        valued: &[],
        skip: 0,
    },
    Wrapper {
        names: &["exec"],
        valued: &["-a"],
        skip: 0,
    },
    Wrapper {
        names: &["caffeinate"],
        valued: &["-t", "-w"],
        skip: 0,
    },
    Wrapper {
        names: &["proxychains", "proxychains4"],
        valued: &["-f"],
        skip: 0,
    },
    Wrapper {
        names: &["chroot"],
        valued: &["--userspec", "--groups"],
        skip: 1,
    },
    Wrapper {
        names: &["xvfb-run"],
        valued: &[
            "-n",
            "-s",
            "-f",
            "-e",
            "-p",
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
            "--xauth-protocol",
        ],
        skip: 0,
    },
];

/// A toolchain's sub-command that runs a command in the workspace's environment (its
/// virtualenv, its bundle): `bundle exec rspec`, `poetry run pytest`, `uv run pytest`, and
/// `git bisect run make test`, which runs its command at each step of a bisection.
pub struct Runner {
    pub name: &'static str,
    /// The words naming the sub-command (`exec`; `bisect run`).
    pub sub: &'static [&'static str],
    /// The sub-command's options that take a value as the next word (from the manuals).
    pub valued: &'static [&'static str],
}

/// The runners looked through: each one's command is judged as a command of its own.
pub const RUNNERS: &[Runner] = &[
    Runner {
        name: "bundle",
        sub: &["exec"],
        valued: &["--gemfile"],
    },
    Runner {
        name: "poetry",
        sub: &["run"],
        valued: &["-C", "-P", "--directory", "--project"],
    },
    Runner {
        name: "uv",
        sub: &["run"],
        valued: &[
            "--with",
            "--with-editable",
            "--with-requirements",
            "--python",
            "-p",
            "--package",
            "--extra",
            "--group",
            "--only-group",
            "--no-group",
            "--env-file",
            "--directory",
            "--project",
            "--index",
            "--default-index",
            "--index-url",
            "--extra-index-url",
            "-i",
            "--find-links",
            "-f",
            "--config-file",
            "--cache-dir",
        ],
    },
    Runner {
        name: "pdm",
        sub: &["run"],
        valued: &["-p", "--project", "-L", "--lockfile", "--venv"],
    },
    Runner {
        name: "pipenv",
        sub: &["run"],
        valued: &["--python"],
    },
    Runner {
        name: "rye",
        sub: &["run"],
        valued: &["--pyproject"],
    },
    Runner {
        name: "hatch",
        sub: &["run"],
        valued: &["-e", "--env"],
    },
    Runner {
        name: "git",
        sub: &["bisect", "run"],
        valued: &[],
    },
];

/// The runner that the program `name` (normalised) with the arguments `args` is, if any.
pub fn runner(name: &str, args: &[Arg]) -> Option<&'static Runner> {
    RUNNERS.iter().find(|r| {
        r.name == name
            && r.sub.len() <= args.len()
            && r.sub
                .iter()
                .zip(args)
                .all(|(w, a)| !a.dynamic && a.text == *w)
    })
}

/// The options of `xargs` that take a value.
const XARGS_VALUED: &[&str] = &[
    "-a",
    "-d",
    "-E",
    "-I",
    "-L",
    "-n",
    "-P",
    "-s",
    "--arg-file",
    "--delimiter",
    "--eof",
    "--replace",
    "--max-lines",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--process-slot-var",
];

/// Builtins that evaluate array subscripts (and `let`, arithmetic) in their arguments.
pub(crate) const SUBSCRIPT_BUILTINS: &[&str] = &[
    "let",
    "declare",
    "typeset",
    "local",
    "readonly",
    "export",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "test",
    "[",
    "wait",
];

/// What the walk does with one command, in order.
#[derive(Debug)]
pub(crate) enum Step {
    /// Notes something it cannot see through.
    Note(NoteKind, String),
    /// Records the command, with what it runs.
    Record(Runs),
    /// Records the command as a wrapper running `argv[start..]` (after any `NAME=value` words,
    /// its environment), then that command: the last step.
    Wrap { start: usize },
    /// Walks code given as one word (`bash -c CODE`, `su -c CODE`, `alias x=CODE`), in a child
    /// shell; code only known at run time is noted.
    Code(Arg),
    /// Walks code given as words joined by spaces (`eval WORDS`, `watch WORDS`, `env -S`).
    Words(Vec<Arg>),
    /// Walks code the command reads from its standard input (only a shell's is walked).
    Stdin { shell: bool },
    /// Walks a command it runs for each file it finds (`find -exec`, `fd -x`).
    Run(Box<Command>),
    /// Follows `cd DIR` / `pushd DIR`.
    ChangeDirectory,
    /// Back to a directory the walk does not keep (`popd`): unknown from here on.
    LeaveDirectory,
}

/// One command as the walk follows it: the command (for `xargs`, with what it adds to the
/// command it runs) and the steps.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) command: Command,
    pub(crate) steps: Vec<Step>,
}

impl Plan {
    fn new(command: Command, steps: Vec<Step>) -> Self {
        Self { command, steps }
    }

    fn record(command: Command) -> Self {
        Self::new(command, vec![Step::Record(Runs::Nothing)])
    }

    fn wrap(command: Command, start: usize) -> Self {
        Self::new(command, vec![Step::Wrap { start }])
    }
}

/// How a command that runs a script given in its words is recorded: as running it when the
/// script is known, as an ordinary command when it is not.
fn script_runs(code: &[Arg]) -> Runs {
    if !code.is_empty() && code.iter().all(|a| !a.dynamic) {
        Runs::Script
    } else {
        Runs::Nothing
    }
}

/// How the walk follows `inv`, whose `name` is set: what it runs besides itself.
pub(crate) fn plan(inv: Command) -> Plan {
    if let Some(w) = WRAPPERS
        .iter()
        .find(|w| w.names.contains(&inv.name.as_str()))
    {
        let start = operand_start(&inv.argv, 1, w.valued) + w.skip;
        return Plan::wrap(inv, start);
    }
    if let Some(r) = runner(&inv.name, inv.args()) {
        let start = operand_start(&inv.argv, 1 + r.sub.len(), r.valued);
        if start < inv.argv.len() {
            return Plan::wrap(inv, start);
        }
    }
    match inv.name.as_str() {
        "su" | "runuser" | "ksu" => su(inv),
        "env" => env(inv),
        "chrt" | "taskset" => {
            let skip = usize::from(!inv.args().iter().any(|a| a.is("-p") || a.is("--pid")));
            let start = operand_start(&inv.argv, 1, &["-T", "-P", "-D"]) + skip;
            Plan::wrap(inv, start)
        }
        "flock" => flock(inv),
        "command" => {
            let lookup = inv
                .args()
                .iter()
                .take_while(|a| a.text.starts_with('-'))
                .any(|a| a.text.contains(['v', 'V']));
            if lookup {
                Plan::record(inv)
            } else {
                let start = operand_start(&inv.argv, 1, &[]);
                Plan::wrap(inv, start)
            }
        }
        "busybox" | "toybox" => Plan::wrap(inv, 1),
        "cd" | "pushd" => Plan::new(
            inv,
            vec![Step::ChangeDirectory, Step::Record(Runs::Nothing)],
        ),
        "popd" => Plan::new(inv, vec![Step::LeaveDirectory, Step::Record(Runs::Nothing)]),
        "xargs" => xargs(inv),
        "find" => find(inv),
        "fd" | "fdfind" => fd(inv),
        "watch" => watch(inv),
        "eval" => {
            let args = inv.args().to_vec();
            let steps = vec![Step::Record(script_runs(&args)), Step::Words(args)];
            Plan::new(inv, steps)
        }
        "source" | "." => {
            let mut steps = Vec::new();
            match inv.argv.get(1) {
                Some(a) if a.dynamic => steps.push(Step::Code(a.clone())),
                Some(a)
                    if matches!(
                        a.text.as_str(),
                        "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0"
                    ) =>
                {
                    steps.push(Step::Stdin { shell: true })
                }
                _ => {}
            }
            steps.push(Step::Record(Runs::Nothing));
            Plan::new(inv, steps)
        }
        "alias" | "trap" => {
            let operands = inv.args().iter().filter(|a| !a.text.starts_with('-'));
            let code: Vec<&Arg> = if inv.name == "trap" {
                operands.take(1).collect()
            } else {
                operands.collect()
            };
            let mut steps = Vec::new();
            for a in code {
                let value = match a.text.split_once('=') {
                    Some((name, value)) if inv.name == "alias" => {
                        // When a shell expands aliases (POSIX mode, `sh`, interactive), a
                        // later line's `name` runs `value` followed by that line's words.
                        // The reader does not expand aliases where they are used: what
                        // such a line runs is only known when the shell reads it.
                        steps.push(Step::Note(
                            NoteKind::DynamicCode,
                            format!(
                                "defines an alias `{name}`: what a later `{name}` runs is only known when the shell expands it"
                            ),
                        ));
                        value
                    }
                    _ if inv.name == "alias" => continue,
                    _ => a.text.as_str(),
                };
                steps.push(Step::Code(Arg {
                    text: value.to_owned(),
                    ..a.clone()
                }));
            }
            steps.push(Step::Record(Runs::Nothing));
            Plan::new(inv, steps)
        }
        name if is_shell(name) => shell(inv),
        name if is_interpreter(name) => interpreter(inv),
        _ => Plan::record(inv),
    }
}

/// `env NAME=value CMD`; `env -S 'cmd args'` splits its argument into words, as a shell would.
fn env(inv: Command) -> Plan {
    let mut i = 1;
    while let Some(a) = inv.argv.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if matches!(t, "-S" | "--split-string")
            || t.starts_with("-S")
            || t.starts_with("--split-string=")
        {
            let split = match t {
                "-S" | "--split-string" => inv.argv.get(i + 1).cloned().unwrap_or_default(),
                _ => Arg {
                    text: t
                        .trim_start_matches("--split-string=")
                        .trim_start_matches("-S")
                        .to_owned(),
                    ..a.clone()
                },
            };
            let skip = if matches!(t, "-S" | "--split-string") {
                2
            } else {
                1
            };
            let mut words = vec![split];
            words.extend(inv.argv.get(i + skip..).unwrap_or_default().iter().cloned());
            let steps = vec![Step::Record(script_runs(&words)), Step::Words(words)];
            return Plan::new(inv, steps);
        }
        if !t.starts_with('-') || t == "-" {
            if t == "-" {
                i += 1;
            }
            break;
        }
        i += if matches!(t, "-u" | "-C" | "--unset" | "--chdir") {
            2
        } else {
            1
        };
    }
    // Its NAME=value words are the environment of the command it runs.
    Plan::wrap(inv, i)
}

/// A command that runs one word of code (`su -c CODE`, `flock -c CODE`): recorded, then the code.
fn runs_code(inv: Command, payload: Option<Arg>) -> Plan {
    let mut steps = vec![Step::Record(script_runs(payload.as_slice()))];
    steps.extend(payload.map(Step::Code));
    Plan::new(inv, steps)
}

/// `su -c CMD`, `runuser -u USER -- CMD`, `su - user`.
fn su(inv: Command) -> Plan {
    let args = inv.args();
    if let Some(k) = args.iter().position(|a| {
        matches!(a.text.as_str(), "-c" | "--command") || a.text.starts_with("--command=")
    }) {
        let payload = if args[k].text.starts_with("--command=") {
            Some(Arg {
                text: args[k].text["--command=".len()..].to_owned(),
                ..args[k].clone()
            })
        } else {
            args.get(k + 1).cloned()
        };
        return runs_code(inv, payload);
    }
    if let Some(k) = args.iter().position(|a| a.is("--")) {
        return Plan::wrap(inv, k + 2);
    }
    Plan::record(inv)
}

fn flock(inv: Command) -> Plan {
    let args = inv.args();
    if let Some(k) = args.iter().position(|a| a.is("-c") || a.is("--command")) {
        let payload = args.get(k + 1).cloned();
        return runs_code(inv, payload);
    }
    let start = operand_start(
        &inv.argv,
        1,
        &["-w", "-E", "--timeout", "--conflict-exit-code"],
    ) + 1;
    Plan::wrap(inv, start)
}

/// `xargs CMD`: the command gets its words (or those replacing `-I`'s string) from the input.
fn xargs(inv: Command) -> Plan {
    let start = operand_start(&inv.argv, 1, XARGS_VALUED);
    if start >= inv.argv.len() {
        // `xargs` alone runs `echo`.
        return Plan::record(inv);
    }
    let replace = inv.argv[1..start]
        .windows(2)
        .find(|w| w[0].is("-I") || w[0].is("--replace"))
        .map(|w| w[1].text.clone())
        .or_else(|| {
            inv.argv.iter().find_map(|a| {
                a.text
                    .strip_prefix("-I")
                    .filter(|r| !r.is_empty())
                    .map(str::to_owned)
            })
        });
    let mut inner = inv;
    match replace {
        Some(r) => {
            for a in inner.argv.iter_mut().skip(start) {
                if a.text.contains(&r) {
                    a.dynamic = true;
                }
            }
        }
        None => match &inner.stdin {
            // `find … -print0 | xargs -0 CMD`: the words are the files find found.
            Feed::Found(root) if splits_at_nul(&inner.argv[1..start]) => inner.argv.push(Arg {
                found_in: Some(root.clone()),
                ..Arg::unknown("<input>")
            }),
            _ => inner.argv.push(Arg::unknown("<input>")),
        },
    }
    inner.stdin = Feed::Nothing;
    Plan::wrap(inner, start)
}

/// Whether `xargs` with these options of its own hands on its input's NUL-ended names
/// exactly as they are, one word each, from its standard input: `-0` among options that only
/// say how many at a time (not `-a FILE`, `-d`, `-E`, `-I`, `-p`).
fn splits_at_nul(options: &[Arg]) -> bool {
    let mut words = options.iter();
    let mut null = false;
    while let Some(a) = words.next() {
        match a.text.as_str() {
            _ if a.dynamic => return false,
            "-0" | "--null" => null = true,
            "-r" | "--no-run-if-empty" | "-t" | "--verbose" | "-x" | "--exit" => {}
            "-n" | "-P" | "-L" | "-s" => {
                words.next();
            }
            o if [
                "--max-args=",
                "--max-procs=",
                "--max-lines=",
                "--max-chars=",
            ]
            .iter()
            .any(|p| o.starts_with(p)) => {}
            o if o.len() > 2
                && ["-n", "-P", "-L", "-s"].iter().any(|p| o.starts_with(p))
                && o[2..].bytes().all(|b| b.is_ascii_digit()) => {}
            _ => return false,
        }
    }
    null
}

/// The directory whose files `find` prints when all it prints is `-print0` of files under
/// one known directory that are no links ([`find_root`]): nothing else writes to its output
/// (no `-print`, `-printf`, `-ls`, `-exec`, ...).
pub(crate) fn found_paths(argv: &[Arg]) -> Option<String> {
    let root = find_root(argv)?;
    let actions = argv.iter().filter(|a| {
        a.text.starts_with("-print")
            || a.text.starts_with("-fprint")
            || a.text.starts_with("-exec")
            || a.text.starts_with("-ok")
            || matches!(a.text.as_str(), "-ls" | "-fls" | "-delete" | "-quit")
    });
    let only = actions.map(|a| a.text.as_str()).collect::<Vec<_>>();
    (only == ["-print0"]).then_some(root)
}

fn find(inv: Command) -> Plan {
    let mut steps = Vec::new();
    let mut i = 1;
    let root = find_root(&inv.argv);
    while i < inv.argv.len() {
        let a = &inv.argv[i];
        if matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") && !a.dynamic {
            let end = (i + 1..inv.argv.len())
                .find(|&k| inv.argv[k].is(";") || inv.argv[k].is("+"))
                .unwrap_or(inv.argv.len());
            // `-execdir` runs the command in each file's directory, as `./NAME`.
            let found_in = root.as_deref().filter(|_| a.is("-exec") || a.is("-ok"));
            steps.extend(
                placeholder_command(&inv, i + 1, end, &["{}"], found_in)
                    .map(|c| Step::Run(Box::new(c))),
            );
            i = end + 1;
        } else {
            i += 1;
        }
    }
    steps.push(Step::Record(Runs::Nothing));
    Plan::new(inv, steps)
}

fn fd(inv: Command) -> Plan {
    let mut steps = Vec::new();
    if let Some(k) = inv
        .argv
        .iter()
        .position(|a| matches!(a.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
    {
        let end = (k + 1..inv.argv.len())
            .find(|&j| inv.argv[j].is(";"))
            .unwrap_or(inv.argv.len());
        let placeholders = ["{}", "{/}", "{//}", "{.}", "{/.}"];
        steps.extend(
            placeholder_command(&inv, k + 1, end, &placeholders, None)
                .map(|c| Step::Run(Box::new(c))),
        );
    }
    steps.push(Step::Record(Runs::Nothing));
    Plan::new(inv, steps)
}

/// The one directory `find` searches (`.` when it names none), when it is known and followed
/// through no symlink (`-L`, `-follow`), and the files it hands on are no symlinks either
/// ([`excludes_links`]): every file it finds is a file under it, read there.
fn find_root(argv: &[Arg]) -> Option<String> {
    if !excludes_links(argv) {
        return None;
    }
    let mut words = argv.iter().skip(1).peekable();
    while let Some(a) = words.next_if(|a| a.text.starts_with('-') && !a.dynamic) {
        match a.text.as_str() {
            "-H" | "-P" => {}
            "-D" => {
                words.next();
            }
            o if o.starts_with("-O") => {}
            // `-L` follows links; anything else starts the expression.
            _ => return None,
        }
    }
    let starts: Vec<&Arg> = words
        .by_ref()
        .take_while(|a| !(a.text.starts_with(['-', '(', '!', ',']) || a.dynamic))
        .collect();
    if argv
        .iter()
        .any(|a| a.is("-follow") || a.dynamic && a.text.starts_with('-'))
    {
        return None;
    }
    match starts.as_slice() {
        [] => Some(".".to_owned()),
        [one] if !one.glob && !one.dynamic => Some(one.text.clone()),
        _ => None,
    }
}

/// Whether every file `find`'s expression matches is no symbolic link: a `-type` without `l`
/// (`f`, `d`, `f,d`) that every match passes (no `-o`, `,`, `!` or `-not` in the expression).
/// A link it found would be handed to the command, which reads where it leads: a link in the
/// tree to `~/.ssh/id_rsa` named `x.rs` matches `-name '*.rs'`.
fn excludes_links(argv: &[Arg]) -> bool {
    let mut typed = false;
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a.dynamic {
            return false;
        }
        match a.text.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                // The command's own words are not the expression's.
                i = (i + 1..argv.len())
                    .find(|&k| argv[k].is(";") || argv[k].is("+"))
                    .unwrap_or(argv.len());
            }
            "-o" | "-or" | "," | "!" | "-not" => return false,
            "-type" => {
                let kind = argv.get(i + 1);
                typed |= kind.is_some_and(|k| !k.dynamic && !k.text.contains('l'));
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    typed
}

/// The command `find -exec` or `fd -x` runs, with its placeholders standing for unknown paths
/// (for a word that is the placeholder alone, one `found_in` that directory).
fn placeholder_command(
    inv: &Command,
    start: usize,
    end: usize,
    placeholders: &[&str],
    found_in: Option<&str>,
) -> Option<Command> {
    if start >= end {
        return None;
    }
    let mut argv: Vec<Arg> = inv.argv[start..end].to_vec();
    for a in &mut argv {
        if placeholders.iter().any(|p| a.text.contains(p)) {
            a.found_in = found_in.filter(|_| a.text == "{}").map(str::to_owned);
            a.dynamic = true;
        }
    }
    let mut wrappers = inv.wrappers.clone();
    wrappers.push(inv.name.clone());
    Some(Command {
        name: String::new(),
        argv,
        env: inv.env.clone(),
        piped: inv.piped,
        wrappers,
        ..Command::default()
    })
}

/// `watch CMD` runs its words through `sh -c`; `watch -x CMD` runs the command itself.
fn watch(inv: Command) -> Plan {
    let start = operand_start(&inv.argv, 1, &["-n", "--interval", "-q", "--equexit"]);
    let exec = inv.argv[1..start.min(inv.argv.len())]
        .iter()
        .any(|a| a.is("-x") || a.is("--exec"));
    if exec {
        return Plan::wrap(inv, start);
    }
    let words = inv.argv.get(start..).unwrap_or_default().to_vec();
    let steps = vec![Step::Record(script_runs(&words)), Step::Words(words)];
    Plan::new(inv, steps)
}

/// A shell: `-c CODE`, a script file (only its name known), or code from its input.
fn shell(inv: Command) -> Plan {
    let mut steps = Vec::new();
    let mut i = 1;
    let (mut command_mode, mut stdin_mode) = (false, false);
    while let Some(a) = inv.argv.get(i) {
        let t = a.text.as_str();
        if a.dynamic && !t.starts_with('-') {
            break;
        }
        if t == "--" || t == "-" {
            stdin_mode |= t == "-";
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                steps.push(Step::Note(
                    NoteKind::DynamicCode,
                    format!("`{}` loads start-up code from a file", inv.display()),
                ));
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            let cluster = &t[1..];
            command_mode |= cluster.contains('c');
            stdin_mode |= cluster.contains('s');
            i += if cluster.ends_with('o') || cluster.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    if command_mode {
        let payload = inv.argv.get(i).cloned();
        match payload {
            Some(payload) => {
                steps.push(Step::Record(script_runs(std::slice::from_ref(&payload))));
                steps.push(Step::Code(payload));
            }
            None => steps.push(Step::Record(Runs::Nothing)),
        }
        return Plan::new(inv, steps);
    }
    match inv.argv.get(i) {
        Some(script) if !stdin_mode => {
            if script.dynamic {
                steps.push(Step::Code(script.clone()));
            }
        }
        _ => steps.push(Step::Stdin { shell: true }),
    }
    steps.push(Step::Record(Runs::Nothing));
    Plan::new(inv, steps)
}

/// An interpreter: code in an option (not analysed), a script file, or code from its input.
fn interpreter(inv: Command) -> Plan {
    let mut steps = Vec::new();
    let php = inv.name.starts_with("php");
    let mut i = 1;
    let mut from_stdin = true;
    while let Some(a) = inv.argv.get(i) {
        let t = a.text.as_str();
        let code_flag = matches!(
            t,
            "-c" | "-e"
                | "-E"
                | "-m"
                | "--eval"
                | "-p"
                | "--print"
                | "-x"
                | "-Command"
                | "-command"
                | "-EncodedCommand"
                | "-enc"
        ) || (php && t == "-r")
            || (t.starts_with("-e") && t.len() > 2 && !t.starts_with("--"));
        if code_flag {
            from_stdin = false;
            break;
        }
        if t == "-" {
            break;
        }
        if t == "--" {
            from_stdin = inv.argv.get(i + 1).is_none_or(|a| a.is("-"));
            if let Some(script) = inv.argv.get(i + 1).filter(|a| a.dynamic) {
                steps.push(Step::Code(script.clone()));
            }
            break;
        }
        if !t.starts_with('-') || a.dynamic {
            from_stdin = false;
            if a.dynamic {
                steps.push(Step::Code(a.clone()));
            }
            break;
        }
        let valued = matches!(
            t,
            "-W" | "-X"
                | "-I"
                | "--require"
                | "--import"
                | "--loader"
                | "--experimental-loader"
                | "--input-type"
        ) || (!php && t == "-r");
        i += if valued { 2 } else { 1 };
    }
    if from_stdin {
        steps.push(Step::Stdin { shell: false });
    }
    steps.push(Step::Record(Runs::Nothing));
    Plan::new(inv, steps)
}
