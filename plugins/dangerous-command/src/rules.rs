//! The built-in rules, each judging one simple command (after wrappers were looked through).

use crate::config::{Config, matches_prefix};
use crate::extract::{Invocation, escalated};
use crate::judgement::{Finding, Level};
use acp_gate_plugin::sensitive::{PathGlob, RUNS_CODE, SECRETS, is_env_template};

use crate::paths::{absolutize, important_root, normalize};
use crate::programs::command_name;
use crate::words::Arg;

/// Every rule id, with what it catches. `disable_rules` takes these ids.
pub const RULES: &[(&str, &str)] = &[
    (
        "unparseable",
        "ask: the command (or a word in it) cannot be parsed",
    ),
    ("too-complex", "ask: nested too deeply or too long to check"),
    (
        "dynamic-command",
        "ask: the command word is only known at run time ($CMD, $(...))",
    ),
    (
        "dynamic-code",
        "ask: code run by eval / bash -c / source is only known at run time",
    ),
    (
        "unicode-confusable",
        "ask: invisible characters or look-alike letters in the command",
    ),
    (
        "rm-root",
        "deny: recursive delete of /, ~, the workspace root, system or top-level directories",
    ),
    (
        "rm-dynamic",
        "ask: recursive delete of a path only known at run time",
    ),
    (
        "find-delete",
        "ask: find -delete (deny when it starts at / or the home directory)",
    ),
    (
        "sensitive-write",
        "deny: writes, moves or deletes a sensitive path (~/.ssh, shell start-up files, /etc, .git/hooks, .env*)",
    ),
    (
        "sensitive-read",
        "ask: reads a credential file (~/.ssh, ~/.aws, .env*, ...)",
    ),
    (
        "device-write",
        "deny: writes to a disk device (dd of=/dev/sda, > /dev/nvme0n1); ask for other devices",
    ),
    (
        "disk-format",
        "deny: creates file systems or repartitions disks (mkfs, wipefs, fdisk)",
    ),
    (
        "chmod-recursive",
        "deny: recursive chmod/chown of roots or to world-writable; ask for other recursive ones",
    ),
    (
        "fork-bomb",
        "deny: a function that calls itself in a pipeline or in the background",
    ),
    (
        "remote-code",
        "deny: code from the network run by a shell or interpreter (curl | sh, bash <(curl ..))",
    ),
    (
        "decoded-payload",
        "deny: decoded or unpacked bytes run by a shell (base64 -d | sh)",
    ),
    (
        "stdin-script",
        "ask: a shell or interpreter runs code from an input that cannot be checked",
    ),
    (
        "git-force-push",
        "deny: git push --force / -f / --force-with-lease / +refspec / --mirror",
    ),
    ("git-remote-delete", "ask: git push --delete / :branch"),
    (
        "git-history-rewrite",
        "deny: git filter-branch / filter-repo; ask: reflog expire",
    ),
    ("git-discard", "ask: git reset --hard, git clean -f"),
    (
        "git-exec-option",
        "deny: git options that run programs (-c core.sshCommand=, -c alias.x=!.., --upload-pack, --exec-path=)",
    ),
    ("privilege-escalation", "ask: sudo, su, doas, pkexec, run0"),
    (
        "env-code-injection",
        "deny: variables that load code (LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, NODE_OPTIONS=--require ..); ask for LD_LIBRARY_PATH and the like",
    ),
    ("rg-pre", "ask: rg --pre runs a program on every file"),
    ("system-power", "deny: shutdown, reboot, halt, kill -1"),
    (
        "config-deny",
        "deny: an `extra_deny` pattern from the config matched",
    ),
    (
        "config-ask",
        "ask: an `extra_ask` pattern from the config matched",
    ),
];

/// What the rules know about the request: where home and the workspace are, and the config.
pub struct Context<'a> {
    pub home: &'a str,
    pub cwd: &'a str,
    pub workspaces: Vec<String>,
    pub config: &'a Config,
    /// Secrets and files that run code: no command may write, move or delete them.
    write_sensitive: Vec<PathGlob<'a>>,
    /// Secrets: reading them is asked about.
    read_sensitive: Vec<PathGlob<'a>>,
}

impl<'a> Context<'a> {
    pub fn new(
        home: &'a str,
        cwd: &'a str,
        workspace_roots: &[String],
        config: &'a Config,
    ) -> Self {
        let extra = || config.sensitive_paths.iter().map(String::as_str);
        let globs = |list: &[&'static str]| {
            list.iter()
                .copied()
                .chain(extra())
                .map(|p| PathGlob::new(p, home))
                .collect()
        };
        let mut workspaces: Vec<String> = workspace_roots
            .iter()
            .filter(|w| w.starts_with('/'))
            .map(|w| normalize(w))
            .collect();
        if workspaces.is_empty() && cwd.starts_with('/') {
            workspaces.push(normalize(cwd));
        }
        Self {
            home,
            cwd,
            workspaces,
            config,
            write_sensitive: globs(&[SECRETS, RUNS_CODE].concat()),
            read_sensitive: globs(SECRETS),
        }
    }

    /// `text` made absolute where `inv` runs; a relative path in an unknown directory is placed
    /// under a directory that matches only patterns that hold at any depth.
    fn absolute_anywhere(&self, inv: &Invocation, text: &str) -> String {
        self.absolute(inv, text)
            .unwrap_or_else(|| absolutize(text, self.home, "/\u{2026}"))
    }

    /// `text` made absolute where `inv` runs; `None` for a relative path in an unknown directory.
    fn absolute(&self, inv: &Invocation, text: &str) -> Option<String> {
        let relative = !(text.starts_with('/')
            || text.starts_with('~')
            || text.starts_with("$HOME")
            || text.starts_with("${HOME}"));
        match inv.cwd.as_str() {
            "" if relative => None,
            "" => Some(absolutize(text, self.home, self.cwd)),
            cwd => Some(absolutize(text, self.home, cwd)),
        }
    }

    fn root(&self, abs: &str) -> Option<&'static str> {
        important_root(abs, self.home, &self.workspaces)
    }
}

/// Judges one invocation, appending what fires to `out`.
pub fn check(inv: &Invocation, cx: &Context, out: &mut Vec<Finding>) {
    let start = out.len();
    let mut f = Findings { out, inv };
    unicode(&mut f);
    env_vars(&mut f);
    if let Some(escalator) = escalated(inv) {
        f.ask(
            "privilege-escalation",
            format!("runs with raised privileges (`{escalator}`)"),
        );
    }
    for w in &inv.writes {
        write_target(&mut f, cx, w, "redirects output into");
    }
    for r in &inv.reads {
        read_target(&mut f, cx, r);
    }
    let args = inv.args();
    match inv.name.as_str() {
        "rm" | "srm" => rm(&mut f, cx),
        "rmdir" | "unlink" | "truncate" | "shred" => {
            for t in operands(args) {
                write_target(&mut f, cx, t, "deletes or overwrites");
            }
        }
        "tee" => {
            for t in operands(args) {
                write_target(&mut f, cx, t, "writes");
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => copy(&mut f, cx),
        "dd" => {
            for a in args {
                if let Some(target) = a.text.strip_prefix("of=") {
                    write_target(
                        &mut f,
                        cx,
                        &Arg {
                            text: target.into(),
                            ..a.clone()
                        },
                        "writes",
                    );
                }
            }
        }
        "curl" | "wget" | "sort" => {
            let long = if inv.name == "wget" {
                "--output-document"
            } else {
                "--output"
            };
            let short = if inv.name == "wget" { "-O" } else { "-o" };
            for t in option_values(args, short, long) {
                if !t.is("-") {
                    write_target(&mut f, cx, &t, "writes");
                }
            }
        }
        "sed" => sed(&mut f, cx),
        "chmod" | "chown" | "chgrp" => chmod(&mut f, cx),
        "find" => find(&mut f, cx),
        "git" => git(&mut f, cx),
        "rg" if args
            .iter()
            .any(|a| a.is("--pre") || a.text.starts_with("--pre=")) =>
        {
            f.ask(
                "rg-pre",
                "`rg --pre` runs a program on every file it searches",
            );
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            f.deny("system-power", "shuts down or reboots the machine")
        }
        "systemctl" | "loginctl"
            if args.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot"
                )
            }) =>
        {
            f.deny("system-power", "shuts down or reboots the machine");
        }
        "init" | "telinit" if args.iter().any(|a| a.is("0") || a.is("6")) => {
            f.deny("system-power", "shuts down or reboots the machine");
        }
        "kill" | "pkill" | "killall"
            if args.last().is_some_and(|a| a.is("-1")) && inv.name == "kill" =>
        {
            f.deny(
                "system-power",
                "`kill -1` signals every process the user owns",
            );
        }
        name if (name.starts_with("mkfs")
            || matches!(
                name,
                "mke2fs"
                    | "mkswap"
                    | "wipefs"
                    | "blkdiscard"
                    | "mkdosfs"
                    | "mkntfs"
                    | "newfs"
                    | "zpool"
            ))
            && (name != "zpool"
                || args.first().is_some_and(|a| {
                    matches!(a.text.as_str(), "create" | "destroy" | "labelclear")
                })) =>
        {
            f.deny(
                "disk-format",
                format!("`{name}` creates or erases a file system"),
            );
        }
        "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk" | "parted" => {
            let listing = args.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-l" | "--list" | "print" | "-p" | "--print"
                )
            });
            if !listing {
                f.deny("disk-format", format!("`{}` repartitions a disk", inv.name));
            }
        }
        "diskutil"
            if args.first().is_some_and(|a| {
                [
                    "erase",
                    "partition",
                    "zero",
                    "randomzero",
                    "secureerase",
                    "reformat",
                ]
                .iter()
                .any(|p| a.text.to_lowercase().starts_with(p))
            }) =>
        {
            f.deny("disk-format", "`diskutil` erases or repartitions a disk");
        }
        _ => {}
    }
    sensitive_operands(&mut f, cx);
    extra_rules(&mut f, cx);
    // Disabled rules drop out here, so every rule above can be switched off by id.
    let kept: Vec<Finding> = f
        .out
        .drain(start..)
        .filter(|x| cx.config.enabled(x.rule))
        .collect();
    f.out.extend(kept);
}

struct Findings<'o, 'i> {
    out: &'o mut Vec<Finding>,
    inv: &'i Invocation,
}

impl Findings<'_, '_> {
    fn push(&mut self, level: Level, rule: &'static str, reason: impl AsRef<str>) {
        let reason = format!("{}: `{}`", reason.as_ref(), self.inv.display());
        self.out.push(Finding {
            level,
            rule,
            reason,
        });
    }

    fn deny(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Deny, rule, reason);
    }

    fn ask(&mut self, rule: &'static str, reason: impl AsRef<str>) {
        self.push(Level::Ask, rule, reason);
    }
}

// ----- argument helpers -----

/// The arguments that are not options (everything after `--`).
fn operands(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    let mut after_dashes = false;
    args.iter().filter(move |a| {
        if after_dashes {
            return true;
        }
        if a.is("--") {
            after_dashes = true;
            return false;
        }
        a.dynamic || !a.text.starts_with('-') || a.text == "-"
    })
}

/// Whether an option is given: a short letter anywhere in a cluster (`-rf`, `-fr`, `-r -f`) or
/// a long name (`--recursive`, `--force=..`).
fn has_flag(args: &[Arg], short: &[char], long: &[&str]) -> bool {
    for a in args {
        if a.is("--") {
            break;
        }
        if a.dynamic {
            continue;
        }
        if let Some(name) = a.text.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if long.contains(&name) {
                return true;
            }
        } else if let Some(cluster) = a.text.strip_prefix('-')
            && cluster.chars().any(|c| short.contains(&c))
        {
            return true;
        }
    }
    false
}

/// The values given to an option: `-o X`, `-oX`, `--output X`, `--output=X`.
fn option_values(args: &[Arg], short: &str, long: &str) -> Vec<Arg> {
    let mut values = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let value = if a.is(short) || a.is(long) {
            args.get(i + 1).cloned()
        } else if let Some(v) = a.text.strip_prefix(long).and_then(|v| v.strip_prefix('=')) {
            Some(Arg {
                text: v.into(),
                ..a.clone()
            })
        } else {
            a.text
                .strip_prefix(short)
                .filter(|v| !v.is_empty() && !short.starts_with("--") && !a.text.starts_with("--"))
                .map(|v| Arg {
                    text: v.into(),
                    ..a.clone()
                })
        };
        values.extend(value);
    }
    values
}

// ----- the rules -----

fn write_target(f: &mut Findings, cx: &Context, target: &Arg, how: &str) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    let abs = cx.absolute_anywhere(f.inv, text);
    if let Some(device) = abs.strip_prefix("/dev/") {
        let harmless = matches!(
            device,
            "null"
                | "zero"
                | "stdout"
                | "stderr"
                | "stdin"
                | "tty"
                | "full"
                | "random"
                | "urandom"
                | "ptmx"
        ) || ["fd/", "pts/", "shm/", "tty", "console"]
            .iter()
            .any(|p| device.starts_with(p));
        if harmless {
            return;
        }
        let disk = [
            "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop",
            "mapper/", "sr", "nbd", "zd", "rbd", "mem", "kmem", "port",
        ]
        .iter()
        .any(|p| device.starts_with(p));
        if disk {
            f.deny("device-write", format!("{how} the disk device `{abs}`"));
        } else {
            f.ask("device-write", format!("{how} the device `{abs}`"));
        }
        return;
    }
    if !is_env_template(&abs) && cx.write_sensitive.iter().any(|g| g.matches(&abs)) {
        f.deny(
            "sensitive-write",
            format!("{how} the sensitive path `{text}`"),
        );
    }
}

fn read_target(f: &mut Findings, cx: &Context, target: &Arg) {
    let Some(text) = target.known() else { return };
    if text.is_empty() || text.contains("://") {
        return;
    }
    let abs = cx.absolute_anywhere(f.inv, text);
    if !is_env_template(&abs) && cx.read_sensitive.iter().any(|g| g.matches(&abs)) {
        f.ask(
            "sensitive-read",
            format!("reads the credential file `{text}`"),
        );
    }
}

/// Operands that name credential files are reads of secrets (`cat ~/.ssh/id_rsa`, `cp .env x`).
fn sensitive_operands(f: &mut Findings, cx: &Context) {
    if matches!(
        f.inv.name.as_str(),
        "echo"
            | "printf"
            | "ls"
            | "cd"
            | "test"
            | "["
            | "which"
            | "basename"
            | "dirname"
            | "mkdir"
            | "touch"
    ) {
        return;
    }
    let inv = f.inv;
    for a in operands(inv.args()) {
        let text = a.text.split_once('=').map_or(a.text.as_str(), |(_, v)| v);
        if text.contains('/')
            || text.starts_with('.')
            || text.starts_with('~')
            || text.contains('.')
        {
            read_target(
                f,
                cx,
                &Arg {
                    text: text.into(),
                    ..a.clone()
                },
            );
        }
    }
}

fn rm(f: &mut Findings, cx: &Context) {
    let args = f.inv.args();
    let recursive = has_flag(args, &['r', 'R'], &["recursive"]);
    if has_flag(args, &[], &["no-preserve-root"]) {
        f.deny(
            "rm-root",
            "`--no-preserve-root` lets rm delete the whole file system",
        );
    }
    for t in operands(args) {
        let Some(text) = t.known() else {
            if recursive {
                f.ask(
                    "rm-dynamic",
                    format!(
                        "recursively deletes `{}`, which is only known when it runs",
                        t.text
                    ),
                );
            }
            continue;
        };
        if recursive {
            match cx.absolute(f.inv, text) {
                None => {
                    f.ask(
                        "rm-dynamic",
                        format!(
                            "recursively deletes `{text}` in a directory only known when it runs"
                        ),
                    );
                    continue;
                }
                Some(abs) => {
                    if let Some(what) = cx.root(&abs) {
                        f.deny("rm-root", format!("recursive delete of {what}"));
                        continue;
                    }
                }
            }
        }
        write_target(f, cx, t, "deletes");
    }
}

fn copy(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let mut targets = option_values(args, "-t", "--target-directory");
    let ops: Vec<&Arg> = operands(args).collect();
    if targets.is_empty() && ops.len() >= 2 {
        targets.push(ops[ops.len() - 1].clone());
    }
    for t in &targets {
        if !(matches!(inv.name.as_str(), "rsync" | "scp") && t.text.contains(':')) {
            write_target(f, cx, t, "writes into");
        }
    }
    if inv.name == "mv" {
        for s in ops.iter().take(ops.len().saturating_sub(1)) {
            write_target(f, cx, s, "moves away");
        }
    }
}

fn sed(f: &mut Findings, cx: &Context) {
    let args = f.inv.args();
    let in_place = args.iter().any(|a| {
        !a.dynamic
            && (a.text.starts_with("-i")
                || a.text.starts_with("--in-place")
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('i')))
    });
    if !in_place {
        return;
    }
    let script_given = args.iter().any(|a| {
        a.is("-e")
            || a.is("-f")
            || a.text.starts_with("--expression")
            || a.text.starts_with("--file")
    });
    for (i, t) in operands(args).enumerate() {
        if i > 0 || script_given {
            write_target(f, cx, t, "edits in place");
        }
    }
}

fn chmod(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let recursive = has_flag(args, &['R'], &["recursive"]);
    let reference = args.iter().any(|a| a.text.starts_with("--reference"));
    let ops: Vec<&Arg> = operands(args).collect();
    // `chmod -w file`: a mode that looks like an option.
    let dash_mode = args.iter().filter(|_| inv.name == "chmod").find(|a| {
        a.text.starts_with('-')
            && a.text.len() > 1
            && a.text[1..].chars().all(|c| "rwxXst".contains(c))
    });
    let (mode, targets): (Option<&Arg>, &[&Arg]) = match (reference, dash_mode) {
        (true, _) => (None, &ops),
        (false, Some(m)) => (Some(m), &ops),
        (false, None) => (ops.first().copied(), ops.get(1..).unwrap_or_default()),
    };
    let what = if inv.name == "chmod" {
        "permissions"
    } else {
        "ownership"
    };
    let world_writable = inv.name == "chmod" && mode.is_some_and(|m| world_writable(&m.text));
    let mut fired = false;
    for t in targets {
        let Some(text) = t.known() else { continue };
        if let Some(root) = cx.absolute(inv, text).and_then(|abs| cx.root(&abs))
            && (recursive || world_writable)
        {
            f.deny("chmod-recursive", format!("changes the {what} of {root}"));
            fired = true;
        }
    }
    if fired || !recursive {
        return;
    }
    if world_writable {
        f.deny(
            "chmod-recursive",
            "recursively makes files writable by everyone",
        );
    } else {
        f.ask("chmod-recursive", format!("recursively changes {what}"));
    }
}

/// `777`, `0666`, `o+w`, `a=rwx`, `+w`: modes that let every user write.
fn world_writable(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|d| d & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let who_end = clause.find(['+', '=']).unwrap_or(clause.len());
        let (who, rest) = clause.split_at(who_end);
        (who.is_empty() || who.contains('o') || who.contains('a'))
            && rest.len() > 1
            && rest[1..].contains('w')
    })
}

fn find(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let args = inv.args();
    let starts: Vec<&Arg> = args
        .iter()
        .take_while(|a| !(a.text.starts_with('-') || a.text == "(" || a.text == "!"))
        .collect();
    for (i, a) in args.iter().enumerate() {
        if matches!(
            a.text.as_str(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls"
        ) && let Some(target) = args.get(i + 1)
        {
            write_target(f, cx, target, "writes");
        }
    }
    if !args.iter().any(|a| a.is("-delete")) {
        return;
    }
    let dangerous = starts.iter().any(|s| {
        s.known()
            .and_then(|t| cx.absolute(inv, t))
            .and_then(|abs| cx.root(&abs))
            .is_some_and(|what| what != "the workspace root")
    });
    if dangerous {
        f.deny("find-delete", "`find -delete` from a root directory");
    } else {
        f.ask(
            "find-delete",
            "`find -delete` deletes every file it matches",
        );
    }
}

fn unicode(f: &mut Findings) {
    let inv = f.inv;
    for (i, a) in inv.argv.iter().enumerate() {
        if a.text.is_ascii() {
            continue;
        }
        let suspicious = a.text.chars().any(is_deceptive_char)
            || (i == 0 || a.text.starts_with('-'))
            || mixes_scripts(&a.text);
        if suspicious {
            f.ask(
                "unicode-confusable",
                format!(
                    "the word `{}` has invisible or look-alike characters",
                    a.text.escape_unicode_deceptive()
                ),
            );
            return;
        }
    }
}

/// Zero-width, bidirectional-control, non-ASCII space and dash-like characters.
pub fn is_deceptive_char(c: char) -> bool {
    matches!(c,
        '\u{00A0}' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{1680}' | '\u{17B4}' | '\u{17B5}' | '\u{180E}'
        | '\u{2000}'..='\u{200F}' | '\u{2010}'..='\u{2015}' | '\u{2028}'..='\u{202F}' | '\u{205F}'..='\u{206F}' | '\u{2212}'
        | '\u{3000}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FF00}'..='\u{FFEF}' | '\u{E0000}'..='\u{E007F}')
}

/// Latin letters mixed with Cyrillic, Greek or Armenian ones in one word (`rm` with a Cyrillic `м`).
fn mixes_scripts(word: &str) -> bool {
    let latin = word.chars().any(|c| c.is_ascii_alphabetic());
    let lookalike = word.chars().any(|c| matches!(c, '\u{0370}'..='\u{03FF}' | '\u{0400}'..='\u{052F}' | '\u{0530}'..='\u{058F}' | '\u{1D00}'..='\u{1DBF}'));
    latin && lookalike
}

trait EscapeDeceptive {
    fn escape_unicode_deceptive(&self) -> String;
}

impl EscapeDeceptive for String {
    fn escape_unicode_deceptive(&self) -> String {
        self.chars()
            .map(|c| {
                if is_deceptive_char(c) {
                    format!("\\u{{{:04X}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect()
    }
}

fn env_vars(f: &mut Findings) {
    let inv = f.inv;
    let mut vars: Vec<(String, Arg)> = inv.env.clone();
    if matches!(
        inv.name.as_str(),
        "export" | "declare" | "typeset" | "local" | "readonly" | "setenv"
    ) {
        vars.extend(inv.args().iter().filter_map(Arg::assignment));
    }
    for (name, value) in &vars {
        if let Some((level, why)) = code_loading_variable(name, value) {
            f.push(level, "env-code-injection", format!("`{name}` {why}"));
        }
    }
}

/// Whether setting `name` to `value` makes the programs that run load or run other code.
fn code_loading_variable(name: &str, value: &Arg) -> Option<(Level, &'static str)> {
    let deny = Some((Level::Deny, "makes programs load or run other code"));
    let ask = Some((Level::Ask, "changes which code programs load"));
    let v = value.text.as_str();
    match name {
        "LD_PRELOAD"
        | "LD_AUDIT"
        | "DYLD_INSERT_LIBRARIES"
        | "BASH_ENV"
        | "PROMPT_COMMAND"
        | "PERL5OPT"
        | "PERL5DB"
        | "PYTHONSTARTUP"
        | "RUBYOPT"
        | "GIT_SSH"
        | "GIT_SSH_COMMAND"
        | "GIT_EXTERNAL_DIFF"
        | "GIT_PROXY_COMMAND"
        | "GIT_ASKPASS"
        | "SSH_ASKPASS"
        | "SUDO_ASKPASS"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR"
        | "GIT_CONFIG_PARAMETERS"
        | "GIT_CONFIG_COUNT"
        | "LESSOPEN"
        | "LESSCLOSE"
        | "ZDOTDIR"
        | "LUA_INIT"
        | "PYTHONWARNINGS_IMPORT"
        | "NODE_REPL_EXTERNAL_MODULE"
        | "CARGO_TARGET_RUNNER"
        | "RUSTC_WRAPPER"
        | "RUSTC_WORKSPACE_WRAPPER" => deny,
        n if n.starts_with("GIT_CONFIG_KEY_") || n.starts_with("GIT_CONFIG_VALUE_") => deny,
        n if n.starts_with("CARGO_TARGET_") && n.ends_with("_RUNNER") => deny,
        "LD_LIBRARY_PATH" | "GIT_CONFIG" | "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM"
        | "PERL5LIB" | "PERLLIB" | "RUBYLIB" | "SHELLOPTS" | "BASHOPTS" => ask,
        n if n.starts_with("DYLD_") => ask,
        "NODE_OPTIONS" => {
            let loads = [
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "-e",
                "--eval",
                "-p",
                "--print",
                "--inspect",
            ]
            .iter()
            .any(|o| {
                v.split([' ', '='])
                    .any(|w| w == *o || w.starts_with(&format!("{o}=")))
            });
            if loads {
                deny
            } else if value.dynamic {
                ask
            } else {
                None
            }
        }
        "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" => {
            let loads = [
                "-javaagent",
                "-agentlib",
                "-agentpath",
                "-XX:OnError",
                "-XX:OnOutOfMemoryError",
            ]
            .iter()
            .any(|o| v.contains(o));
            if loads {
                deny
            } else if value.dynamic {
                ask
            } else {
                None
            }
        }
        "ENV" => (v.contains('/')
            || v.contains('$')
            || v.contains('`')
            || v.ends_with(".sh")
            || value.dynamic)
            .then_some((Level::Deny, "makes sh run a start-up file")),
        "PAGER"
        | "GIT_PAGER"
        | "MANPAGER"
        | "SYSTEMD_PAGER"
        | "EDITOR"
        | "VISUAL"
        | "GIT_EDITOR"
        | "GIT_SEQUENCE_EDITOR"
        | "BROWSER" => {
            (!benign_program(value)).then_some((Level::Ask, "names a program other tools will run"))
        }
        _ => None,
    }
}

/// Pagers and editors that only show text: `cat`, `less -R`, `true`, empty.
fn benign_program(value: &Arg) -> bool {
    if value.dynamic {
        return false;
    }
    let mut words = value.text.split_whitespace();
    match words.next() {
        None => true,
        Some(program) => {
            matches!(
                command_name(program).as_str(),
                "cat"
                    | "less"
                    | "more"
                    | "most"
                    | "true"
                    | ":"
                    | "head"
                    | "tail"
                    | "bat"
                    | "delta"
                    | "vi"
                    | "vim"
                    | "nvim"
                    | "nano"
                    | "emacs"
                    | "code"
                    | "subl"
            ) && words.all(|w| {
                w.starts_with('-')
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '=')
            })
        }
    }
}

// ----- git -----

/// A git command line with its global options taken apart.
pub struct GitCall<'a> {
    pub config: Vec<(String, Arg)>,
    pub exec_path: bool,
    pub subcommand: Option<&'a Arg>,
    pub args: &'a [Arg],
}

pub fn parse_git(argv: &[Arg]) -> GitCall<'_> {
    let mut call = GitCall {
        config: Vec::new(),
        exec_path: false,
        subcommand: None,
        args: &[],
    };
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        match t {
            "-c" | "--config-env" => {
                if let Some(v) = argv.get(i + 1) {
                    call.config.push(split_config(v, t == "--config-env"));
                }
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
            | "--list-cmds" | "--attr-source" => i += 2,
            _ if t.starts_with("--config-env=") => {
                call.config.push(split_config(
                    &Arg {
                        text: t["--config-env=".len()..].into(),
                        ..a.clone()
                    },
                    true,
                ));
                i += 1;
            }
            _ if t.starts_with("--exec-path=") => {
                call.exec_path = true;
                i += 1;
            }
            _ if t.starts_with('-') && !a.dynamic => i += 1,
            _ => {
                call.subcommand = Some(a);
                call.args = &argv[i + 1..];
                break;
            }
        }
    }
    call
}

/// `key=value` of `git -c`; with `--config-env` the value comes from a variable, so is unknown.
fn split_config(arg: &Arg, from_env: bool) -> (String, Arg) {
    match arg.text.split_once('=') {
        Some((k, v)) => (
            k.to_lowercase(),
            Arg {
                text: v.into(),
                dynamic: arg.dynamic || from_env,
                ..arg.clone()
            },
        ),
        None => (
            arg.text.to_lowercase(),
            Arg {
                text: "true".into(),
                ..arg.clone()
            },
        ),
    }
}

/// Whether a git config key makes git run a program; and how sure that is.
fn git_config_runs_code(key: &str, value: &Arg) -> Option<Level> {
    let parts: Vec<&str> = key.split('.').collect();
    let (section, last) = (parts[0], parts[parts.len() - 1]);
    let pager_like = matches!(
        key,
        "core.pager" | "core.editor" | "sequence.editor" | "interactive.difffilter"
    ) || section == "pager";
    if pager_like {
        return (!benign_program(value)).then_some(Level::Deny);
    }
    if section == "alias" {
        return Some(
            if value.text.trim_start().starts_with('!') || value.dynamic {
                Level::Deny
            } else {
                Level::Ask
            },
        );
    }
    let exact = matches!(
        key,
        "core.sshcommand"
            | "core.gitproxy"
            | "core.askpass"
            | "core.fsmonitor"
            | "core.hookspath"
            | "core.alternaterefscommand"
            | "core.worktree"
            | "credential.helper"
            | "diff.external"
            | "gpg.program"
            | "uploadpack.packobjectshook"
            | "include.path"
            | "web.browser"
            | "init.templatedir"
            | "sendemail.smtpserver"
            | "merge.tool"
            | "diff.tool"
            | "protocol.ext.allow"
            | "core.sshcommand.program"
            | "receive.procreceiverefs"
            | "ssh.variant"
    );
    let patterned = parts.len() >= 3
        && matches!(
            (section, last),
            ("diff", "textconv" | "command")
                | ("filter", "clean" | "smudge" | "process")
                | ("merge", "driver")
                | ("difftool" | "mergetool" | "browser" | "man", "cmd" | "path")
                | ("credential", "helper")
                | ("gpg", "program")
                | ("remote", "uploadpack" | "receivepack" | "proxy" | "vcs")
                | ("includeif", "path")
        );
    let submodule_command =
        section == "submodule" && last == "update" && value.text.starts_with('!');
    (exact || patterned || submodule_command).then_some(Level::Deny)
}

fn git(f: &mut Findings, cx: &Context) {
    let call = parse_git(&f.inv.argv);
    for (key, value) in &call.config {
        if let Some(level) = git_config_runs_code(key, value) {
            f.push(
                level,
                "git-exec-option",
                format!("`git -c {key}=…` makes git run a program"),
            );
        }
    }
    if call.exec_path {
        f.deny(
            "git-exec-option",
            "`git --exec-path=…` runs git commands from another directory",
        );
    }
    let Some(sub) = call.subcommand.and_then(Arg::known) else {
        return;
    };
    let args = call.args;
    let any = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a.is(n) || a.text.starts_with(&format!("{n}=")))
        })
    };
    for out in option_values(args, "--output", "--output") {
        write_target(f, cx, &out, "writes");
    }
    match sub {
        "push" => {
            let force = any(&[
                "--force",
                "--force-with-lease",
                "--force-if-includes",
                "--mirror",
            ]) || has_short(args, 'f')
                || operands(args).any(|a| a.text.starts_with('+'));
            if force {
                f.deny(
                    "git-force-push",
                    "force-pushes, which can overwrite history on the remote",
                );
            }
            if any(&["--delete"])
                || has_short(args, 'd')
                || operands(args).any(|a| a.text.starts_with(':') && a.text.len() > 1)
            {
                f.ask("git-remote-delete", "deletes a branch or tag on the remote");
            }
            if any(&["--receive-pack", "--exec"]) {
                f.deny(
                    "git-exec-option",
                    "`--receive-pack` / `--exec` run a program",
                );
            }
        }
        "filter-branch" | "filter-repo" => {
            f.deny("git-history-rewrite", "rewrites the repository's history")
        }
        "reflog"
            if args
                .first()
                .is_some_and(|a| a.is("expire") || a.is("delete")) =>
        {
            f.ask(
                "git-history-rewrite",
                "expires reflog entries, which makes lost commits unrecoverable",
            )
        }
        "reset" if any(&["--hard"]) => f.ask(
            "git-discard",
            "`git reset --hard` discards uncommitted changes",
        ),
        "clean" if any(&["--force"]) || has_short(args, 'f') => {
            f.ask("git-discard", "`git clean -f` deletes untracked files")
        }
        "fetch" | "pull" | "clone" | "ls-remote" | "archive" | "submodule" => {
            if any(&["--upload-pack", "--exec", "--receive-pack"])
                || (sub == "clone" && has_short_exact(args, "-u"))
            {
                f.deny(
                    "git-exec-option",
                    "`--upload-pack` / `--exec` run a program",
                );
            }
            for v in option_values(args, "-c", "--config") {
                let (key, value) = split_config(&v, false);
                if let Some(level) = git_config_runs_code(&key, &value) {
                    f.push(
                        level,
                        "git-exec-option",
                        format!("`--config {key}=…` makes git run a program"),
                    );
                }
            }
            if sub == "clone" && any(&["--template"]) {
                f.ask(
                    "git-exec-option",
                    "`git clone --template` can install hooks",
                );
            }
        }
        "config" => {
            let reading = any(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--unset",
                "--unset-all",
                "--remove-section",
                "--show-origin",
                "--name-only",
            ]);
            let ops: Vec<&Arg> = operands(args).collect();
            let ops = match ops.first() {
                Some(first) if matches!(first.text.as_str(), "set") => &ops[1..],
                Some(first)
                    if matches!(
                        first.text.as_str(),
                        "get" | "list" | "unset" | "edit" | "rename-section" | "remove-section"
                    ) =>
                {
                    &ops[..0]
                }
                _ => &ops[..],
            };
            if !reading && ops.len() >= 2 {
                let key = ops[0].text.to_lowercase();
                if let Some(level) = git_config_runs_code(&key, ops[1]) {
                    f.push(
                        level,
                        "git-exec-option",
                        format!("sets `{key}`, which makes git run a program"),
                    );
                }
            }
        }
        "rebase" if any(&["--exec"]) || has_short_exact(args, "-x") => {
            f.ask("git-exec-option", "`git rebase --exec` runs a command")
        }
        "difftool" | "mergetool"
            if any(&["--extcmd", "--tool"])
                || has_short_exact(args, "-x")
                || has_short_exact(args, "-t") =>
        {
            f.ask("git-exec-option", "runs an external diff or merge tool")
        }
        "grep"
            if any(&["--open-files-in-pager"]) || args.iter().any(|a| a.text.starts_with("-O")) =>
        {
            f.ask("git-exec-option", "`git grep -O` runs a pager program")
        }
        _ => {}
    }
}

/// A short option letter given alone or in a cluster (`-f`, `-fu`), not a long option.
fn has_short(args: &[Arg], letter: char) -> bool {
    args.iter().take_while(|a| !a.is("--")).any(|a| {
        !a.dynamic
            && a.text.starts_with('-')
            && !a.text.starts_with("--")
            && a.text[1..].chars().all(|c| c.is_ascii_alphabetic())
            && a.text.contains(letter)
    })
}

fn has_short_exact(args: &[Arg], option: &str) -> bool {
    args.iter().take_while(|a| !a.is("--")).any(|a| {
        a.is(option) || (!a.dynamic && a.text.starts_with(option) && !a.text.starts_with("--"))
    })
}

/// The words config patterns are matched against: the program name, then its arguments; for
/// git, without the global options.
pub fn pattern_words(inv: &Invocation) -> Vec<&str> {
    let mut words = vec![inv.name.as_str()];
    if inv.name == "git" {
        let call = parse_git(&inv.argv);
        words.extend(call.subcommand.map(|a| a.text.as_str()));
        words.extend(call.args.iter().map(|a| a.text.as_str()));
    } else {
        words.extend(inv.args().iter().map(|a| a.text.as_str()));
    }
    words
}

fn extra_rules(f: &mut Findings, cx: &Context) {
    if f.inv.name.is_empty() {
        return;
    }
    let words = pattern_words(f.inv);
    for rule in &cx.config.extra_deny {
        if matches_prefix(&rule.pattern, &words) {
            f.deny("config-deny", &rule.reason);
        }
    }
    for rule in &cx.config.extra_ask {
        if matches_prefix(&rule.pattern, &words) {
            f.ask("config-ask", &rule.reason);
        }
    }
}
