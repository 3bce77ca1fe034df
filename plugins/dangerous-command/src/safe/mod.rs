//! The positive model: a command is allowed only when every part of it is understood and
//! harmless. Each program the checker allows has a declarative table (one module per family,
//! found by the program's name) of the options that are harmless, what each option's value is
//! and what the operands are; the words are read as the program reads them
//! ([`acp_gate_shell::options`]), every path is judged with the access it implies (as the path
//! validator judges an edit of it), every environment assignment must be inert, and no
//! expansion may change any of it. Anything else is not known safe: the command is at most
//! asked about.
//!
//! Recursive readers (`grep -r`, `tar c`, `zip -r`, `diff -r`, `git grep --no-index`) read the
//! secrets of the tree too, and the plugin cannot look into it. Such a read is allowed silently
//! only when no secret is expected in what it reads: the reader skips hidden and ignored files
//! (rg, ag, git grep by default: `.env` files are hidden and ignored, keys live in hidden
//! directories); or it is narrowed to a kind of file no secret is (`--include='*.py'`); or the
//! tree is a source tree of the workspace (below its root, no hidden directory on the way, a
//! directory on the way named as code, tests and documents are: `src`, `tests`, `docs`, ...).
//! Every other recursive read is asked about (the workspace root, no directory, a glob, a
//! monorepo package, `config/`, a tree outside); a tree holding credential files by name (home,
//! `~/.ssh`) is denied.

mod about;
mod archives;
mod build;
mod changes;
mod compilers;
mod files;
mod git;
mod git_work;
mod inline;
mod js;
mod patches;
mod python;
mod scripts;
mod search;
mod shell;
mod toolchains;

use acp_gate_plugin::path_rules::{self, Place, Undergoes};
use acp_gate_plugin::sensitive::shell_glob_may_match;
use acp_gate_shell::environment::{is_inert, is_shell_variable};
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};
use acp_gate_shell::paths::is_same_or_ancestor;
use acp_gate_shell::{Arg, Command as Invocation, Runs};

use crate::config::{matches_prefix, pattern_words};
use crate::context::Context;
use crate::judgement::{Effect, Finding, Findings, Level};
use crate::targets::{Named, holds_secrets, inside, judge, read_target, write_target};

/// A program the checker allows, described by what it takes.
pub struct Program {
    pub names: &'static [&'static str],
    /// The harmless options, with what each one's value is (tables shared by several
    /// programs or subcommands are listed together).
    pub options: &'static [&'static [Opt]],
    /// What the first operands are, in order (`grep PATTERN`); then `rest` for the others.
    /// `rest` of [`Value::Flag`] means no other operand is harmless.
    pub lead: &'static [Value],
    pub rest: Value,
    pub style: Style,
}

impl Program {
    /// What the table says of the option spelled `option` (`--output`, `-o`; a value after
    /// `=` is not part of the name), if it names it.
    pub fn option(&self, option: &str) -> Option<Value> {
        let name = option.split('=').next().unwrap_or(option);
        self.options
            .iter()
            .find_map(|t| t.iter().find(|(n, _)| *n == name))
            .map(|(_, v)| *v)
    }
}

/// The table of a program judged by its table alone (not git, cargo, make, go, the package
/// managers or sed, whose words have more structure).
pub fn table(name: &str) -> Option<&'static Program> {
    [
        files::PROGRAMS,
        changes::PROGRAMS,
        search::PROGRAMS,
        python::PROGRAMS,
        js::PROGRAMS,
    ]
    .into_iter()
    .flatten()
    .find(|p| p.names.contains(&name))
}

/// Whether the positive model judges each operand of `name` with the access it has (a table,
/// or git's structure), so that the rules need not take every operand for a read.
pub fn judges_operands(name: &str) -> bool {
    table(name).is_some() || name == "git"
}

/// Judging one command: the findings its paths raise go to `out`.
pub(crate) struct Judge<'a, 'c, 'o> {
    pub(crate) inv: &'a Invocation,
    pub(crate) cx: &'a Context<'c>,
    pub(crate) out: &'o mut Vec<Finding>,
    /// The program reads trees skipping hidden and ignored files (rg, ag by default), or only
    /// files of a kind it was told (`grep -r --include='*.py'`).
    pub(crate) filtered_trees: bool,
    /// The program prints only a digest of each file it reads (the checksums): a glob that
    /// matches any name may be read, since no content is shown (a secret named or aimed at is
    /// still denied).
    pub(crate) digests_only: bool,
}

/// Whether `inv` is known to be safe to run without asking; the paths it names may add
/// findings (a secret read, a write outside the workspace) to `out`.
pub fn is_known_safe(inv: &Invocation, cx: &Context, out: &mut Vec<Finding>) -> bool {
    let mut judge = Judge {
        inv,
        cx,
        out,
        filtered_trees: false,
        digests_only: false,
    };
    judge.command()
}

impl Judge<'_, '_, '_> {
    fn command(&mut self) -> bool {
        let inv = self.inv;
        let mut safe = true;
        // A redirection writes its file as an edit would (`echo x > notes.md`).
        for w in &inv.writes {
            safe &= self.path(w, Value::Write);
        }
        for r in &inv.reads {
            safe &= self.path(r, Value::Read);
        }
        if inv.argv.is_empty() {
            // A bare assignment (`X=1`), or redirections alone.
            return safe && inv.env.iter().all(|(n, v)| is_shell_variable(n, v));
        }
        safe &= inv.env.iter().all(|(n, v)| is_inert(n, v));
        if inv.name.is_empty() {
            return false;
        }
        let words = pattern_words(inv);
        if self.cx.config.safe_commands.iter().any(|s| {
            let pattern: Vec<&str> = s.split_whitespace().collect();
            matches_prefix(&pattern, &words)
        }) {
            return safe;
        }
        // The program is judged even when the command is already not safe: the paths it
        // names may be secrets to deny.
        let name = inv.name.as_str();
        let program = match inv.runs {
            Runs::Command { .. } => shell::wrapper(self, name, inv.own_args()),
            Runs::Script => shell::script(self, name, inv.args()),
            Runs::Nothing => {
                let args = inv.args();
                // Tools that load the code or config of the directory they run in (a build
                // script, hooks, `rust-toolchain.toml`, `conftest.py`): only in the workspace.
                let local = self.runs_in_workspace();
                let here = about::judge(self, name, args)
                    .or_else(|| git::judge(self, name))
                    .or_else(|| build::judge(self, name, args))
                    .or_else(|| python::judge(self, name, args))
                    .or_else(|| js::judge(self, name, args))
                    .or_else(|| toolchains::judge(self, name, args))
                    .or_else(|| compilers::judge(self, name, args));
                match here {
                    Some(ok) => ok && local,
                    None => search::judge(self, name, args)
                        .or_else(|| shell::judge(self, name, args))
                        .or_else(|| changes::judge(self, name, args))
                        .or_else(|| patches::judge(self, name, args))
                        .or_else(|| archives::judge(self, name, args))
                        .or_else(|| files::judge(self, name, args))
                        .or_else(|| scripts::judge(self, name, args).map(|ok| ok && local))
                        .unwrap_or(false),
                }
            }
        };
        safe && program && self.program_placed()
    }

    /// Whether the directory the command runs in is known and in the workspace, where its
    /// symlinks lead too.
    fn runs_in_workspace(&self) -> bool {
        self.cx.absolute(self.inv, ".").is_some_and(|dir| {
            self.cx
                .workspaces
                .iter()
                .any(|w| is_same_or_ancestor(w, &dir))
        }) && self
            .cx
            .real(self.inv, ".", true)
            .is_some_and(|real| self.cx.real_inside(&real))
    }

    /// Whether the program, when named by a path (`./x`, `/usr/bin/git`), is the workspace's or
    /// an installed one ([`Context::installed`]).
    fn program_placed(&self) -> bool {
        let Some(word) = self.inv.argv.first().filter(|a| a.text.contains('/')) else {
            return true;
        };
        let Some(abs) = self
            .cx
            .absolute(self.inv, &word.text)
            .filter(|_| !word.dynamic)
        else {
            return false;
        };
        // A program in the workspace is the workspace's only where its links lead there too.
        self.cx.installed(&abs)
            || (self
                .cx
                .workspaces
                .iter()
                .any(|w| is_same_or_ancestor(w, &abs))
                && self
                    .cx
                    .real(self.inv, &word.text, true)
                    .is_some_and(|real| self.cx.real_inside(&real)))
    }

    /// Judges `args` against a program's table.
    pub(crate) fn program(&mut self, args: &[Arg], program: &Program) -> bool {
        let items = parse(args, program.options, program.style);
        self.items(&items, program)
    }

    /// Judges read words against a program's table.
    pub(crate) fn items(&mut self, items: &[Item], program: &Program) -> bool {
        let option = |v: Value| {
            items
                .iter()
                .any(|i| matches!(i, Item::Option { value, .. } if *value == v))
        };
        let no_pattern =
            option(Value::Pattern) || option(Value::PatternFile) || option(Value::NoPattern);
        let recurse = option(Value::Recurse);
        let in_place = option(Value::InPlace);
        let lead = match program.lead {
            [Value::Pattern, rest @ ..] if no_pattern => rest,
            lead => lead,
        };
        let mut safe = true;
        let mut k = 0;
        for item in items {
            match item {
                Item::Option { value, arg, .. } => {
                    if let Some(a) = arg {
                        safe &= self.value(a, *value);
                    }
                }
                Item::Operand(a) => {
                    let mut kind = lead.get(k).copied().unwrap_or(program.rest);
                    k += 1;
                    if in_place && kind == Value::Read {
                        kind = Value::Write;
                    } else if recurse && kind == Value::Read {
                        kind = Value::Tree;
                    }
                    safe &= kind != Value::Flag && self.value(a, kind);
                }
                Item::Unknown(_) | Item::Missing(_) => safe = false,
            }
        }
        safe
    }

    /// Judges one value or operand of the given kind.
    pub(crate) fn value(&mut self, a: &Arg, kind: Value) -> bool {
        match kind {
            Value::Flag | Value::Optional | Value::Recurse | Value::InPlace | Value::NoPattern => {
                true
            }
            Value::Literal | Value::Pattern | Value::Pair => true,
            Value::Name | Value::Read | Value::Tree | Value::Write | Value::PatternFile => {
                self.path(a, kind)
            }
        }
    }

    /// Where findings about this command go.
    pub(crate) fn findings(&mut self) -> Findings<'_, '_> {
        Findings {
            out: self.out,
            inv: self.inv,
        }
    }

    /// Judges a path with the access the program gives it: a secret read or a sensitive write
    /// adds a finding; a path outside the workspace, in an unknown directory or only known at
    /// run time is not known safe.
    pub(crate) fn path(&mut self, a: &Arg, access: Value) -> bool {
        self.access(a, access, "writes", Effect::Write)
    }

    /// Judges the links in the tree `dir` as reads of where they lead, for a program that
    /// follows them (`zip -r`, `diff -r`): the tree is listed as it is now, every name in it
    /// resolved. Not known, so not safe: a tree of more than [`MAX_MATCHES`] names, a name
    /// only known at run time.
    pub(crate) fn links_in(&mut self, dir: &Arg) -> bool {
        if dir.dynamic || dir.glob {
            return false;
        }
        let (mut dirs, mut seen, mut safe) = (vec![dir.text.clone()], 0, true);
        while let Some(dir) = dirs.pop() {
            for name in self.cx.entries(self.inv, &dir).unwrap_or_default() {
                seen += 1;
                if seen > MAX_MATCHES {
                    return false;
                }
                let path = format!("{}/{name}", dir.trim_end_matches('/'));
                let linked = (self.cx.real(self.inv, &path, true)).is_none_or(|r| r.linked);
                if !linked {
                    dirs.push(path);
                    continue;
                }
                // A link to a directory is followed into it: every file there is read.
                let read = match self.cx.entries(self.inv, &path) {
                    Some(_) => Value::Tree,
                    None => Value::Read,
                };
                safe &= self.access(&Arg::literal(path), read, "reads", Effect::Read);
            }
        }
        safe
    }

    /// Judges a path the program writes, moves or deletes (`how` says how, for the reason).
    pub(crate) fn change(&mut self, a: &Arg, how: &str, effect: Effect) -> bool {
        self.access(a, Value::Write, how, effect)
    }

    fn access(&mut self, a: &Arg, access: Value, how: &str, effect: Effect) -> bool {
        if a.pipe {
            return true;
        }
        // A file `find` found: any file under the directory it searched, hidden ones too, so
        // reading it is reading that tree.
        if let Some(dir) = &a.found_in {
            let tree = Arg::literal(dir.clone());
            return access == Value::Read && self.access(&tree, Value::Tree, how, effect);
        }
        if a.dynamic {
            return false;
        }
        let text = a.text.as_str();
        if text == "-" || is_harmless_sink(a) {
            return true;
        }
        let before = self.out.len();
        let cx = self.cx;
        match access {
            Value::Write => write_target(&mut self.findings(), cx, a, how, effect),
            Value::Name => {}
            _ => read_target(&mut self.findings(), cx, a),
        }
        if self.out.len() > before {
            return false;
        }
        // The walk has expanded `~` and `$HOME`; a `$` left is a literal name (`'$HOME'`, or
        // a word of an argv, which no shell expands).
        let literal;
        let text = if text.starts_with('$') {
            literal = format!("./{text}");
            literal.as_str()
        } else {
            text
        };
        let Some(abs) = self.cx.absolute(self.inv, text) else {
            return false;
        };
        // Where the path leads through its symlinks (for a glob, its directory's): a link out
        // of the workspace or into a tree of secrets is judged where it leads.
        let dir_text = match text.find(['*', '?', '[']) {
            Some(at) if a.glob => text[..at]
                .rfind('/')
                .map_or(".", |slash| &text[..slash.max(1)]),
            _ => text,
        };
        let real = self
            .cx
            .real(
                self.inv,
                dir_text,
                effect != Effect::Delete && effect != Effect::Move,
            )
            .filter(|r| r.linked);
        let places = || std::iter::once(abs.as_str()).chain(real.as_ref().map(|r| r.path.as_str()));
        if access == Value::Tree && places().any(|p| holds_secrets(self.cx, p)) {
            self.findings().push_about(
                Level::Deny,
                "sensitive-read",
                format!("reads every file under `{text}`, which holds credential files"),
                &abs,
                Effect::Read,
            );
            return false;
        }
        let in_source_tree = source_tree(&self.cx.workspaces, &abs)
            && real
                .as_ref()
                .is_none_or(|r| source_tree(self.cx.real_workspaces(), &r.path));
        if access == Value::Tree && !self.filtered_trees && !a.glob && !in_source_tree {
            self.findings().push_about(
                Level::Ask,
                "recursive-read",
                format!(
                    "reads every file under `{text}`, hidden and ignored ones too, which may hold credential files (`.env`, keys)"
                ),
                &abs,
                Effect::Read,
            );
            return false;
        }
        // A glob that reads whatever is there (`cat *`) may read a key file; one that names
        // a kind of file (`*.rs`, `test_*`) is judged by the directory it lists, and by what
        // it expands to there now.
        if a.glob
            && access != Value::Name
            && !self.digests_only
            && (!names_a_kind(text) || !self.matches(text, access, how, effect))
        {
            return false;
        }
        let dir = match abs.find(['*', '?', '[']) {
            Some(at) if a.glob => &abs[..abs[..at].rfind('/').unwrap_or(0)],
            _ => abs.as_str(),
        };
        let inside = inside(self.cx, dir, real.as_ref());
        if !inside {
            // Judged as the path validator judges a tool's look or write outside the
            // workspace.
            let (undergoes, how) = match access {
                Value::Write if matches!(effect, Effect::Delete | Effect::Move) => {
                    (Undergoes::Delete, how)
                }
                Value::Write => (Undergoes::Write, how),
                Value::Name => (Undergoes::List, "lists"),
                _ => (Undergoes::Read, "reads"),
            };
            let named = Named {
                text,
                real: real.as_ref(),
                place: Place::Outside,
            };
            judge(&mut self.findings(), cx, &named, undergoes, how, effect);
        }
        inside
    }

    /// Judges each name the glob `text` may expand to now as if it were named (so a symbolic
    /// link among them, `src/x.rs` leading to `~/.ssh/id_rsa`, is judged where it leads).
    /// Not expanded, so not known: a wildcard in a directory (`src/*/x.rs`), more than
    /// [`MAX_MATCHES`] names. A directory that cannot be listed expands to nothing: the shell
    /// hands the glob on as it is written, and no file is named so.
    fn matches(&mut self, text: &str, access: Value, how: &str, effect: Effect) -> bool {
        let (dir, pattern) = match text.rsplit_once('/') {
            Some(("", pattern)) => ("/", pattern),
            Some((dir, pattern)) => (dir, pattern),
            None => (".", text),
        };
        if dir.contains(['*', '?', '[']) {
            return false;
        }
        let names = self.cx.entries(self.inv, dir).unwrap_or_default();
        let matched: Vec<String> = (names.into_iter())
            .filter(|name| shell_glob_may_match(pattern, name))
            .collect();
        if matched.len() > MAX_MATCHES {
            return false;
        }
        let mut safe = true;
        for name in matched {
            let path = Arg::literal(format!("{}/{name}", dir.trim_end_matches('/')));
            safe &= self.access(&path, access, how, effect);
        }
        safe
    }
}

/// The most names a glob is expanded to for judging: past it, a glob is not known.
const MAX_MATCHES: usize = 256;

/// Directory names under which projects keep code, tests and documents, not credentials.
const SOURCE_TREES: &[&str] = &[
    "src",
    "source",
    "sources",
    "lib",
    "libs",
    "pkg",
    "cmd",
    "internal",
    "include",
    "test",
    "tests",
    "testing",
    "spec",
    "specs",
    "__tests__",
    "benches",
    "bench",
    "benchmarks",
    "examples",
    "example",
    "docs",
    "doc",
    "components",
    "pages",
    "routes",
    "views",
    "controllers",
    "models",
    "styles",
    "templates",
    "dist",
    "build",
    "out",
    "public",
    "site",
    "coverage",
];

/// Whether reading every file under `abs` reads only a project's code: `abs` is below a
/// workspace root, with no hidden directory on the way, and a directory on the way is named as
/// code is (`src`, `tests`, `docs`, ...). The root itself, `config/` (Rails keeps `master.key`
/// there), a monorepo's `apps/web` (which holds `.env.local`) are not.
fn source_tree(workspaces: &[String], abs: &str) -> bool {
    workspaces.iter().any(|w| {
        abs.strip_prefix(w.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rel| {
                let segments = rel.split('/');
                !rel.is_empty()
                    && segments.clone().all(|s| !s.starts_with('.'))
                    && segments.into_iter().any(|s| SOURCE_TREES.contains(&s))
            })
    })
}

/// Whether a glob's last segment has a literal start or end (`*.rs`, `test_*`), rather than
/// matching any name (`*`, `?*`).
pub(crate) fn names_a_kind(glob: &str) -> bool {
    let last = glob.rsplit('/').next().unwrap_or(glob);
    let wild = |c: char| matches!(c, '*' | '?' | '[' | ']');
    !last.starts_with(wild) || !last.ends_with(wild)
}

/// Operands that are no file: `/dev/null`, `/dev/urandom`, the standard streams.
fn is_harmless_sink(target: &Arg) -> bool {
    !target.dynamic && path_rules::inert_device(&target.text)
}
