//! Looking through the programs that run another command: privilege wrappers (`sudo`, `doas`,
//! `su -c`), process wrappers (`env`, `timeout`, `nice`, `nohup`, `xargs`, ...), finders that
//! run a command per file (`find -exec`, `fd -x`), shells and `eval` running a script, and
//! interpreters reading code from their input. The wrapper is recorded, then what it runs.

use crate::arg::{Arg, Feed};
use crate::options::operand_start;
use crate::programs::{is_interpreter, is_shell, program_name};
use crate::walk::{Command, Ctx, NoteKind, Runs, Walker};

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
const SUBSCRIPT_BUILTINS: &[&str] = &[
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

impl Walker<'_> {
    /// Records one simple command, looking through the wrappers that run another command.
    pub(crate) fn run(&mut self, mut inv: Command, ctx: &Ctx) {
        for (name, value) in &inv.env {
            let feed = value.feed.strong();
            if feed != Feed::Nothing {
                self.tainted.push((name.clone(), feed));
            }
        }
        let Some(head) = inv.argv.first() else {
            self.record(inv);
            return;
        };
        if head.dynamic || head.glob {
            let (kind, why) = match head.feed {
                Feed::Network => (
                    NoteKind::RemoteCode,
                    "runs a command name downloaded from the network",
                ),
                Feed::Decoded => (
                    NoteKind::DecodedPayload,
                    "runs a command name decoded at run time",
                ),
                _ => (
                    NoteKind::DynamicCommand,
                    "the command word is only known when it runs",
                ),
            };
            self.note(kind, format!("{why}: `{}`", inv.display()));
            inv.name.clear();
            self.record(inv);
            return;
        }
        let name = program_name(&head.text);
        if self.defining.contains(&name) && ctx.forks {
            self.note(
                NoteKind::ForkBomb,
                format!("`{name}` calls itself in a pipeline or in the background: a fork bomb"),
            );
        }
        inv.name = name;
        if SUBSCRIPT_BUILTINS.contains(&inv.name.as_str()) {
            let all = inv.name == "let";
            for a in inv.args().to_vec() {
                if all || a.text.contains('[') {
                    self.arithmetic(&a.text, ctx);
                }
                if let Some((name, value)) = a.assignment() {
                    self.assigned(&name, &value);
                }
            }
        }
        if let Some(w) = WRAPPERS
            .iter()
            .find(|w| w.names.contains(&inv.name.as_str()))
        {
            let start = operand_start(&inv.argv, 1, w.valued) + w.skip;
            self.run_inner(inv, start, ctx);
            return;
        }
        match inv.name.as_str() {
            "su" | "runuser" | "ksu" => self.su(inv, ctx),
            "env" => self.env(inv, ctx),
            "chrt" | "taskset" => {
                let skip = usize::from(!inv.args().iter().any(|a| a.is("-p") || a.is("--pid")));
                let start = operand_start(&inv.argv, 1, &["-T", "-P", "-D"]) + skip;
                self.run_inner(inv, start, ctx);
            }
            "flock" => self.flock(inv, ctx),
            "command" => {
                let lookup = inv
                    .args()
                    .iter()
                    .take_while(|a| a.text.starts_with('-'))
                    .any(|a| a.text.contains(['v', 'V']));
                if lookup {
                    self.record(inv)
                } else {
                    let start = operand_start(&inv.argv, 1, &[]);
                    self.run_inner(inv, start, ctx)
                }
            }
            "busybox" | "toybox" => self.run_inner(inv, 1, ctx),
            "cd" | "pushd" => {
                self.change_directory(&inv);
                self.record(inv);
            }
            // Back to a directory the walk does not keep: unknown from here on.
            "popd" => {
                self.cwd.clear();
                self.record(inv);
            }
            "xargs" => self.xargs(inv, ctx),
            "find" => self.find(inv, ctx),
            "fd" | "fdfind" => self.fd(inv, ctx),
            "watch" => self.watch(inv, ctx),
            "eval" => {
                let args = inv.args().to_vec();
                self.record_script(&inv, &args);
                self.code_words(&args, &inv, ctx);
            }
            "source" | "." => {
                match inv.argv.get(1) {
                    Some(a) if a.dynamic => self.code_arg(a, &inv, ctx),
                    Some(a)
                        if matches!(
                            a.text.as_str(),
                            "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0"
                        ) =>
                    {
                        self.stdin_code(&inv, true, ctx)
                    }
                    _ => {}
                }
                self.record(inv);
            }
            "alias" | "trap" => {
                let operands = inv.args().iter().filter(|a| !a.text.starts_with('-'));
                let code: Vec<Arg> = if inv.name == "trap" {
                    operands.take(1).cloned().collect()
                } else {
                    operands.cloned().collect()
                };
                for a in code {
                    let value = match a.text.split_once('=') {
                        Some((_, value)) if inv.name == "alias" => value,
                        _ if inv.name == "alias" => continue,
                        _ => a.text.as_str(),
                    };
                    let value = Arg {
                        text: value.to_owned(),
                        ..a.clone()
                    };
                    self.code_arg(&value, &inv, ctx);
                }
                self.record(inv);
            }
            name if is_shell(name) => self.shell(inv, ctx),
            name if is_interpreter(name) => self.interpreter(inv, ctx),
            _ => self.record(inv),
        }
    }

    /// Records the wrapper, then runs what it runs: `inv.argv[start..]`, after any
    /// `NAME=value` words, which are its environment.
    fn run_inner(&mut self, inv: Command, start: usize, ctx: &Ctx) {
        let mut i = start.min(inv.argv.len());
        let mut env = inv.env.clone();
        while let Some(assignment) = inv.argv.get(i).and_then(Arg::assignment) {
            env.push(assignment);
            i += 1;
        }
        if i >= inv.argv.len() {
            // The wrapper runs nothing (`sudo -i`, `env`, `nohup`): judge it alone.
            self.record(Command { env, ..inv });
            return;
        }
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        let inner = Command {
            name: String::new(),
            argv: inv.argv[i..].to_vec(),
            env,
            writes: inv.writes,
            reads: inv.reads,
            stdin: inv.stdin.clone(),
            cwd: String::new(),
            wrappers,
            runs: Runs::Nothing,
        };
        self.record(Command {
            name: inv.name,
            argv: inv.argv,
            env: inv.env,
            stdin: inv.stdin,
            wrappers: inv.wrappers,
            runs: Runs::Command { at: start },
            ..Command::default()
        });
        self.run(inner, ctx);
    }

    /// Records a shell or `eval` that runs the script `code`: as running a script whose
    /// commands follow when the script is known, as an ordinary command when it is not.
    fn record_script(&mut self, inv: &Command, code: &[Arg]) {
        let known = !code.is_empty() && code.iter().all(|a| !a.dynamic);
        self.record(Command {
            runs: if known { Runs::Script } else { Runs::Nothing },
            ..inv.clone()
        });
    }

    fn env(&mut self, inv: Command, ctx: &Ctx) {
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
                // `env -S 'cmd args'` splits its argument into words, as a shell would.
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
                self.record_script(&inv, &words);
                self.code_words(&words, &inv, ctx);
                return;
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
        self.run_inner(inv, i, ctx);
    }

    fn su(&mut self, inv: Command, ctx: &Ctx) {
        // `su -c CMD`, `runuser -u USER -- CMD`, `su - user`.
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
            self.record_script(&inv, payload.as_slice());
            if let Some(payload) = payload {
                self.code_arg(&payload, &inv, ctx);
            }
            return;
        }
        if let Some(k) = args.iter().position(|a| a.is("--")) {
            self.run_inner(inv, k + 2, ctx);
            return;
        }
        self.record(inv);
    }

    fn flock(&mut self, inv: Command, ctx: &Ctx) {
        let args = inv.args();
        if let Some(k) = args.iter().position(|a| a.is("-c") || a.is("--command")) {
            let payload = args.get(k + 1).cloned();
            self.record_script(&inv, payload.as_slice());
            if let Some(payload) = payload {
                self.code_arg(&payload, &inv, ctx);
            }
            return;
        }
        let start = operand_start(
            &inv.argv,
            1,
            &["-w", "-E", "--timeout", "--conflict-exit-code"],
        ) + 1;
        self.run_inner(inv, start, ctx);
    }

    fn xargs(&mut self, inv: Command, ctx: &Ctx) {
        let start = operand_start(&inv.argv, 1, XARGS_VALUED);
        let replace = inv.argv[1..start.min(inv.argv.len())]
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
        let mut inner = inv.clone();
        if start >= inner.argv.len() {
            // `xargs` alone runs `echo`.
            self.record(inv);
            return;
        }
        match replace {
            Some(r) => {
                for a in inner.argv.iter_mut().skip(start) {
                    if a.text.contains(&r) {
                        a.dynamic = true;
                    }
                }
            }
            None => inner.argv.push(Arg::unknown("<input>")),
        }
        inner.stdin = Feed::Nothing;
        self.run_inner(inner, start, ctx);
    }

    fn find(&mut self, inv: Command, ctx: &Ctx) {
        let mut i = 1;
        while i < inv.argv.len() {
            let a = &inv.argv[i];
            if matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") && !a.dynamic {
                let end = (i + 1..inv.argv.len())
                    .find(|&k| inv.argv[k].is(";") || inv.argv[k].is("+"))
                    .unwrap_or(inv.argv.len());
                self.placeholder_command(&inv, i + 1, end, &["{}"], ctx);
                i = end + 1;
            } else {
                i += 1;
            }
        }
        self.record(inv);
    }

    fn fd(&mut self, inv: Command, ctx: &Ctx) {
        if let Some(k) = inv
            .argv
            .iter()
            .position(|a| matches!(a.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
        {
            let end = (k + 1..inv.argv.len())
                .find(|&j| inv.argv[j].is(";"))
                .unwrap_or(inv.argv.len());
            self.placeholder_command(&inv, k + 1, end, &["{}", "{/}", "{//}", "{.}", "{/.}"], ctx);
        }
        self.record(inv);
    }

    /// The command `find -exec` or `fd -x` runs, with its placeholders standing for unknown paths.
    fn placeholder_command(
        &mut self,
        inv: &Command,
        start: usize,
        end: usize,
        placeholders: &[&str],
        ctx: &Ctx,
    ) {
        if start >= end {
            return;
        }
        let mut argv: Vec<Arg> = inv.argv[start..end].to_vec();
        for a in &mut argv {
            if placeholders.iter().any(|p| a.text.contains(p)) {
                a.dynamic = true;
            }
        }
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        let inner = Command {
            name: String::new(),
            argv,
            env: inv.env.clone(),
            wrappers,
            ..Command::default()
        };
        self.run(inner, ctx);
    }

    fn watch(&mut self, inv: Command, ctx: &Ctx) {
        let start = operand_start(&inv.argv, 1, &["-n", "--interval", "-q", "--equexit"]);
        let exec = inv.argv[1..start.min(inv.argv.len())]
            .iter()
            .any(|a| a.is("-x") || a.is("--exec"));
        if exec {
            self.run_inner(inv, start, ctx);
        } else {
            let words = inv.argv.get(start..).unwrap_or_default().to_vec();
            self.record_script(&inv, &words);
            self.code_words(&words, &inv, ctx);
        }
    }

    fn shell(&mut self, inv: Command, ctx: &Ctx) {
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
                    self.note(
                        NoteKind::DynamicCode,
                        format!("`{}` loads start-up code from a file", inv.display()),
                    );
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
            match inv.argv.get(i).cloned() {
                Some(payload) => {
                    self.record_script(&inv, std::slice::from_ref(&payload));
                    self.code_arg(&payload, &inv, ctx);
                }
                None => self.record(inv),
            }
            return;
        }
        match inv.argv.get(i) {
            Some(script) if !stdin_mode => {
                if script.dynamic {
                    let script = script.clone();
                    self.code_arg(&script, &inv, ctx);
                }
            }
            _ => self.stdin_code(&inv, true, ctx),
        }
        self.record(inv);
    }

    fn interpreter(&mut self, inv: Command, ctx: &Ctx) {
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
                if let Some(script) = inv.argv.get(i + 1).filter(|a| a.dynamic).cloned() {
                    self.code_arg(&script, &inv, ctx);
                }
                break;
            }
            if !t.starts_with('-') || a.dynamic {
                from_stdin = false;
                if a.dynamic {
                    let script = a.clone();
                    self.code_arg(&script, &inv, ctx);
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
            self.stdin_code(&inv, false, ctx);
        }
        self.record(inv);
    }

    /// Code passed as one argument (`bash -c CODE`, `su -c CODE`, `alias x=CODE`).
    fn code_arg(&mut self, code: &Arg, inv: &Command, ctx: &Ctx) {
        if code.dynamic {
            self.dynamic_code(&code.feed, &code.text, inv);
            return;
        }
        let inner = self.inner_ctx(inv, ctx);
        self.in_child(|x| x.script(&code.text, &inner));
    }

    /// Code passed as words joined by spaces (`eval`, `watch`).
    fn code_words(&mut self, words: &[Arg], inv: &Command, ctx: &Ctx) {
        if let Some(dynamic) = words.iter().find(|a| a.dynamic) {
            let feed = words
                .iter()
                .fold(Feed::Nothing, |f, a| f.join(a.feed.strong()));
            self.dynamic_code(&feed, &dynamic.text, inv);
            return;
        }
        let code = words
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let inner = self.inner_ctx(inv, ctx);
        if inv.name == "eval" {
            self.script(&code, &inner);
        } else {
            self.in_child(|x| x.script(&code, &inner));
        }
    }

    fn dynamic_code(&mut self, feed: &Feed, shown: &str, inv: &Command) {
        match feed {
            Feed::Network => self.note(
                NoteKind::RemoteCode,
                format!("runs code downloaded from the network: `{}`", inv.display()),
            ),
            Feed::Decoded => self.note(
                NoteKind::DecodedPayload,
                format!("runs code decoded at run time: `{}`", inv.display()),
            ),
            _ => self.note(
                NoteKind::DynamicCode,
                format!(
                    "the code `{}` runs (`{shown}`) is only known when it runs",
                    inv.display()
                ),
            ),
        }
    }

    /// A shell or interpreter reading the code it runs from its standard input.
    fn stdin_code(&mut self, inv: &Command, shell: bool, ctx: &Ctx) {
        match &inv.stdin {
            Feed::Network => self.note(
                NoteKind::RemoteCode,
                format!("pipes code downloaded from the network into `{}`", inv.name),
            ),
            Feed::Decoded => self.note(
                NoteKind::DecodedPayload,
                format!("pipes decoded or unpacked code into `{}`", inv.name),
            ),
            Feed::Unknown => self.note(
                NoteKind::StdinScript,
                format!(
                    "`{}` runs code from its input, which cannot be checked",
                    inv.name
                ),
            ),
            Feed::Text(code) if shell => {
                let inner = Ctx {
                    stdin: Feed::Nothing,
                    ..self.inner_ctx(inv, ctx)
                };
                if matches!(inv.name.as_str(), "source" | ".") {
                    self.script(code, &inner);
                } else {
                    self.in_child(|x| x.script(code, &inner));
                }
            }
            Feed::Text(_) | Feed::Nothing => {}
        }
    }

    fn inner_ctx(&self, inv: &Command, ctx: &Ctx) -> Ctx {
        let mut wrappers = inv.wrappers.clone();
        wrappers.push(inv.name.clone());
        Ctx {
            stdin: inv.stdin.clone(),
            wrappers,
            env: inv.env.clone(),
            depth: ctx.depth + 1,
            forks: ctx.forks,
        }
    }
}
