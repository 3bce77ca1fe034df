//! What a path may undergo: the one judgement of a read, listing, write or delete of one path,
//! for the paths of a tool call (the path validator) and those of a command (the command
//! checker), so that an action gets the same answer in every shape.
//!
//! In order, for the path as named and then where its symlinks lead:
//!
//! - a network device (`/dev/tcp/HOST/PORT`) is a remote shell: denied;
//! - a harmless device (`/dev/null`, `/dev/stdout`, a terminal) may be read and written; a
//!   disk device written is denied, any other device written is asked about;
//! - a secret ([`SECRETS`] and the config's own, matched in any letter case) is denied for any
//!   access but listing its name; a file that runs code later ([`RUNS_CODE`] and the config's
//!   protected ones) is denied for writes and deletes; a project's own such file
//!   ([`PROJECT_CODE`]) is asked about for writes and deletes in a workspace, denied elsewhere;
//! - a read of a file in another user's home is denied;
//! - outside every workspace root, writes and deletes are denied and reads and listings asked
//!   about; deleting a workspace root itself (everything in it) is denied;
//! - anything else is ordinary work in the workspace: nothing to say.

use std::borrow::Cow;

use crate::sensitive::{
    Needs, PROJECT_CODE, PROJECT_CODE_NEEDS, PathGlob, PathSegments, RUNS_CODE, RUNS_CODE_NEEDS,
    SECRETS, SECRETS_NEEDS, holds_no_secret, is_env_template,
};

/// What is done to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undergoes {
    /// Its contents are read.
    Read,
    /// Only its name, or the names in it, are read.
    List,
    /// It is written or created.
    Write,
    /// It is deleted, or moved away.
    Delete,
}

impl Undergoes {
    fn changes(self) -> bool {
        matches!(self, Undergoes::Write | Undergoes::Delete)
    }
}

/// What a matching pattern forbids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// A secret: no access at all.
    Secret,
    /// Runs code or decides what the agent may do: no writes or deletes.
    NoWrite,
    /// A project's own file that runs code later: writes and deletes are a person's to approve.
    ApproveWrite,
}

/// Where a path is, as far as the caller knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place<'p> {
    /// In the workspace root `root` (through its symlinks too).
    Inside { root: &'p str },
    /// Outside every workspace root, or led out of them by a symlink.
    Outside,
    /// Not known (a relative path in a directory the caller cannot place): only what the
    /// path's name says is judged.
    Unknown,
}

/// One path to judge.
#[derive(Clone, Copy, Debug)]
pub struct Target<'p> {
    /// The absolute path as named.
    pub named: &'p str,
    /// Where its symlinks lead, when a link was followed.
    pub real: Option<&'p str>,
    /// The file system holding it compares names ignoring letter case.
    pub fold_case: bool,
    pub place: Place<'p>,
    /// How a reason names it (`` `~/.bashrc` ``).
    pub shown: &'p str,
}

/// How strongly a finding objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ask,
    Deny,
}

/// What the rules say of a path, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    /// The rule's id: `reverse-shell`, `device-write`, `sensitive-read`, `sensitive-write`,
    /// `project-code-write`, `outside-read`, `outside-write` or `workspace-root-delete`.
    pub rule: &'static str,
    pub reason: String,
    /// The path the finding is about (where the link leads, when that is what was judged).
    pub path: String,
}

/// The path rules of one request: the built-in lists, adjusted by a plugin's config, with the
/// request's home directory.
#[derive(Clone, Copy, Debug)]
pub struct PathRules<'a> {
    home: &'a str,
    /// More secrets (the config's).
    secrets: &'a [String],
    /// More files that must not be written (the config's).
    protected: &'a [String],
    /// Built-in patterns switched off, written exactly as in the lists.
    dropped: &'a [String],
}

impl<'a> PathRules<'a> {
    /// The built-in rules for a user whose home is `home`, with more `secrets` and more
    /// `protected` files (patterns as the lists write them).
    pub fn new(home: &'a str, secrets: &'a [String], protected: &'a [String]) -> PathRules<'a> {
        PathRules {
            home,
            secrets,
            protected,
            dropped: &[],
        }
    }

    /// These rules with the built-in patterns in `dropped` switched off; one that is no
    /// built-in pattern is an error naming it.
    pub fn without(self, dropped: &'a [String]) -> Result<PathRules<'a>, String> {
        for pattern in dropped {
            let builtin = [SECRETS, RUNS_CODE, PROJECT_CODE];
            if !builtin.iter().any(|list| list.contains(&pattern.as_str())) {
                return Err(format!("`{pattern}` is not a built-in pattern"));
            }
        }
        Ok(PathRules { dropped, ..self })
    }

    /// The user's home directory.
    pub fn home(&self) -> &'a str {
        self.home
    }

    /// The secret patterns reading the absolute `abs` may meet (for judging a glob or a tree,
    /// whose files are not named one by one): the public half of a key or certificate is no
    /// built-in secret, only one of the config's own.
    pub fn secret_patterns(&self, abs: &str) -> impl Iterator<Item = &'a str> + 'a {
        let builtin = (!holds_no_secret(abs)).then(|| self.builtin(SECRETS, &SECRETS_NEEDS));
        builtin
            .into_iter()
            .flatten()
            .map(|(p, _)| p)
            .chain(self.secrets.iter().map(String::as_str))
    }

    /// Every pattern whose file may hold a secret or run code, as written.
    pub fn all_patterns(&self) -> impl Iterator<Item = &'a str> + 'a {
        let builtin = [SECRETS, RUNS_CODE, PROJECT_CODE];
        builtin.into_iter().flatten().copied().chain(
            self.secrets
                .iter()
                .chain(self.protected)
                .map(String::as_str),
        )
    }

    fn builtin(
        &self,
        list: &'static [&'static str],
        needs: &'static [Needs],
    ) -> impl Iterator<Item = (&'a str, Needs)> + 'a {
        let dropped = self.dropped;
        list.iter()
            .map(|p| -> &'a str { p })
            .zip(needs.iter().copied())
            .filter(move |(p, _)| !dropped.iter().any(|d| d == p))
    }

    /// The first pattern the absolute `abs` matches, and what it forbids. An env template
    /// matches none; a public key or certificate only the config's own secrets and the files
    /// that run code. Secrets are matched in any letter case (`~/.SSH/id_rsa` on a file system
    /// that folds case is the key, and on one that does not it is named to look like it);
    /// the rest as the file system compares names (`fold_case`).
    pub fn protection(&self, abs: &str, fold_case: bool) -> Option<(String, Protection)> {
        if is_env_template(abs) {
            return None;
        }
        let configured = |list: &'a [String]| list.iter().map(|p| (p.as_str(), Needs::of(p)));
        let builtin_secrets =
            (!holds_no_secret(abs)).then(|| self.builtin(SECRETS, &SECRETS_NEEDS));
        let secrets = builtin_secrets
            .into_iter()
            .flatten()
            .chain(configured(self.secrets));
        let no_write = self
            .builtin(RUNS_CODE, &RUNS_CODE_NEEDS)
            .chain(configured(self.protected));
        let approve_write = self.builtin(PROJECT_CODE, &PROJECT_CODE_NEEDS);
        let first = |patterns: &mut dyn Iterator<Item = (&'a str, Needs)>, fold: bool| {
            let segments = PathSegments::new(abs, fold);
            patterns
                .filter(|(_, needs)| needs.admits(&segments))
                .find_map(|(pattern, needs)| {
                    let glob = PathGlob::with_needs(Cow::Borrowed(pattern), self.home, needs);
                    glob.matches_segments(&segments).then(|| pattern.to_owned())
                })
        };
        if let Some(pattern) = first(&mut { secrets }, true) {
            return Some((pattern, Protection::Secret));
        }
        if let Some(pattern) = first(&mut { no_write }, fold_case) {
            return Some((pattern, Protection::NoWrite));
        }
        first(&mut { approve_write }, fold_case).map(|p| (p, Protection::ApproveWrite))
    }

    /// What the rules say of `undergoes` done to `target` (`how` is the verb a reason uses:
    /// "reads", "redirects output into"); `None` when they have nothing against it.
    pub fn judge(&self, target: &Target, undergoes: Undergoes, how: &str) -> Option<Finding> {
        let through_link;
        let mut places = vec![(target.named, target.shown)];
        if let Some(real) = target.real.filter(|r| *r != target.named) {
            through_link = format!("`{real}` (through the link {})", target.shown);
            places.push((real, through_link.as_str()));
        }
        let mut found: Option<Finding> = None;
        for (path, shown) in places {
            let finding = self.by_name(path, shown, target, undergoes, how);
            if finding.as_ref().is_some_and(|f| f.level == Level::Deny) {
                return finding;
            }
            found = found.or(finding);
        }
        if found.is_some() {
            return found;
        }
        if [Some(target.named), target.real]
            .iter()
            .flatten()
            .any(|p| harmless_device(p))
        {
            return None;
        }
        let finding = |level, rule, reason: String| Finding {
            level,
            rule,
            reason,
            path: target.real.unwrap_or(target.named).to_owned(),
        };
        let shown = target.shown;
        match (target.place, undergoes) {
            (Place::Unknown, _) => None,
            (Place::Outside, Undergoes::Write | Undergoes::Delete) => Some(finding(
                Level::Deny,
                "outside-write",
                format!("{how} {shown}, outside the workspace"),
            )),
            (Place::Outside, Undergoes::Read | Undergoes::List) => Some(finding(
                Level::Ask,
                "outside-read",
                format!("{how} {shown}, outside the workspace"),
            )),
            (Place::Inside { root }, Undergoes::Delete)
                if same_path(target.real.unwrap_or(target.named), root, target.fold_case) =>
            {
                Some(finding(
                    Level::Deny,
                    "workspace-root-delete",
                    format!("{how} the workspace root {shown}, and everything in it"),
                ))
            }
            (Place::Inside { .. }, _) => None,
        }
    }

    /// What `path` (named in reasons as `shown`) is, whatever its place: a device, a file the
    /// lists protect, a file in another user's home.
    fn by_name(
        &self,
        path: &str,
        shown: &str,
        target: &Target,
        undergoes: Undergoes,
        how: &str,
    ) -> Option<Finding> {
        let finding = |level, rule, reason: String| {
            Some(Finding {
                level,
                rule,
                reason,
                path: path.to_owned(),
            })
        };
        if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
            return finding(
                Level::Deny,
                "reverse-shell",
                format!("{how} a network connection ({shown}): a remote shell"),
            );
        }
        if let Some(device) = path.strip_prefix("/dev/") {
            if terminal_device(device) {
                let why = match undergoes.changes() {
                    true => "escape sequences there can set the clipboard or type for the user",
                    false => "what a person types there",
                };
                return finding(
                    Level::Ask,
                    "terminal",
                    format!("{how} the terminal {shown}: {why}"),
                );
            }
            if harmless_device(path) || !undergoes.changes() {
                return None;
            }
            return match disk_device(device) {
                true => finding(
                    Level::Deny,
                    "device-write",
                    format!("{how} the disk device {shown}"),
                ),
                false => finding(
                    Level::Ask,
                    "device-write",
                    format!("{how} the device {shown}"),
                ),
            };
        }
        if undergoes == Undergoes::List {
            return None;
        }
        match self.protection(path, target.fold_case) {
            Some((pattern, Protection::Secret)) => {
                let (rule, what) = match undergoes {
                    Undergoes::Read => ("sensitive-read", "the sensitive file"),
                    _ => ("sensitive-write", "the sensitive file"),
                };
                return finding(
                    Level::Deny,
                    rule,
                    format!("{how} {what} {shown} (matches `{pattern}`)"),
                );
            }
            Some((pattern, Protection::NoWrite)) if undergoes.changes() => {
                return finding(
                    Level::Deny,
                    "sensitive-write",
                    format!(
                        "{how} {shown}, which runs code or configures the gate (matches `{pattern}`)"
                    ),
                );
            }
            Some((pattern, Protection::ApproveWrite)) if undergoes.changes() => {
                let reason = format!(
                    "{how} the project's file {shown}, which runs code later (matches `{pattern}`)"
                );
                return match target.place {
                    Place::Inside { .. } => finding(Level::Ask, "project-code-write", reason),
                    Place::Outside | Place::Unknown => finding(
                        Level::Deny,
                        "sensitive-write",
                        format!("{reason}, outside the workspace"),
                    ),
                };
            }
            _ => {}
        }
        if undergoes == Undergoes::Read
            && let Some(user) = other_users_home(path, self.home)
        {
            return finding(
                Level::Deny,
                "sensitive-read",
                format!("{how} {shown} in another user's home (`{user}`)"),
            );
        }
        None
    }
}

/// Devices that read nothing of anyone's and write nowhere lasting: the [`inert_device`]s, and
/// the process's own descriptors, a new pseudo-terminal and shared memory.
fn harmless_device(path: &str) -> bool {
    inert_device(path)
        || path.strip_prefix("/dev/").is_some_and(|device| {
            device == "ptmx" || ["fd/", "shm/"].iter().any(|p| device.starts_with(p))
        })
}

/// Devices that are the same for everyone and keep nothing: the null, zero and random
/// devices, and the process's own standard streams (an agent captures them). Reading or
/// writing one, as a command's operand or redirection, does nothing beyond the command.
pub fn inert_device(path: &str) -> bool {
    path.strip_prefix("/dev/").is_some_and(|device| {
        matches!(
            device,
            "null" | "zero" | "full" | "random" | "urandom" | "stdin" | "stdout" | "stderr"
        )
    })
}

/// A person's terminal, past the agent's capture of the output: the controlling one
/// (`/dev/tty`), the pseudo-terminals of other sessions, the consoles and their screens
/// (`/dev/vcs*`). What is read there is what someone types; what is written there reaches
/// their terminal's escape sequences.
fn terminal_device(device: &str) -> bool {
    ["tty", "pts/", "console", "vcs"]
        .iter()
        .any(|p| device.starts_with(p))
}

/// Block devices and memory: writing one bypasses every file's permissions.
fn disk_device(device: &str) -> bool {
    [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "mapper/",
        "sr", "nbd", "zd", "rbd", "mem", "kmem", "port",
    ]
    .iter()
    .any(|p| device.starts_with(p))
}

/// The home directory `abs` lies in when that is another user's: `/root`, `/home/NAME` or
/// `/Users/NAME` other than `home`.
pub fn other_users_home<'p>(abs: &'p str, home: &str) -> Option<&'p str> {
    let own = |p: &str| !home.is_empty() && is_same_or_ancestor(p, home);
    if (abs == "/root" || abs.starts_with("/root/")) && !own("/root") {
        return Some("/root");
    }
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = abs.strip_prefix(base) {
            let user = rest.split('/').next().unwrap_or(rest);
            let home = &abs[..base.len() + user.len()];
            if !user.is_empty() && !own(home) {
                return Some(home);
            }
        }
    }
    None
}

/// Whether `ancestor` is `path` or one of its parents (both normalised and absolute).
pub fn is_same_or_ancestor(ancestor: &str, path: &str) -> bool {
    ancestor == "/"
        || path == ancestor
        || (path.starts_with(ancestor) && path.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

/// Whether two absolute paths are the same, ignoring letter case when `fold_case`.
fn same_path(a: &str, b: &str, fold_case: bool) -> bool {
    let (a, b) = (a.trim_end_matches('/'), b.trim_end_matches('/'));
    match fold_case {
        true => a.to_lowercase() == b.to_lowercase(),
        false => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/u";

    fn judged(path: &str, place: Place, undergoes: Undergoes) -> Option<(Level, &'static str)> {
        let rules = PathRules::new(HOME, &[], &[]);
        let target = Target {
            named: path,
            real: None,
            fold_case: false,
            place,
            shown: path,
        };
        rules
            .judge(&target, undergoes, "touches")
            .map(|f| (f.level, f.rule))
    }

    const WS: Place = Place::Inside { root: "/ws" };

    #[test]
    fn each_class_of_path_has_one_answer() {
        use Undergoes::*;
        assert_eq!(judged("/ws/src/main.rs", WS, Write), None);
        assert_eq!(judged("/ws/src/main.rs", WS, Delete), None);
        assert_eq!(
            judged("/ws", WS, Delete),
            Some((Level::Deny, "workspace-root-delete"))
        );
        assert_eq!(
            judged("/ws/.env", WS, Read),
            Some((Level::Deny, "sensitive-read"))
        );
        assert_eq!(judged("/ws/.env", WS, List), None);
        assert_eq!(judged("/ws/.env.example", WS, Read), None);
        assert_eq!(
            judged("/ws/.pre-commit-config.yaml", WS, Write),
            Some((Level::Ask, "project-code-write"))
        );
        assert_eq!(judged("/ws/.pre-commit-config.yaml", WS, Read), None);
        assert_eq!(
            judged("/elsewhere/.pre-commit-config.yaml", Place::Outside, Write),
            Some((Level::Deny, "sensitive-write"))
        );
        assert_eq!(
            judged("/home/u/.bashrc", Place::Outside, Write),
            Some((Level::Deny, "sensitive-write"))
        );
        assert_eq!(
            judged("/home/u/.bashrc", Place::Outside, Read),
            Some((Level::Ask, "outside-read"))
        );
        assert_eq!(
            judged("/home/u/notes.txt", Place::Outside, Write),
            Some((Level::Deny, "outside-write"))
        );
        assert_eq!(
            judged("/home/u/.ssh/id_ed25519.pub", Place::Outside, Read),
            Some((Level::Ask, "outside-read"))
        );
        assert_eq!(
            judged("/home/u/.SSH/ID_ED25519", Place::Outside, Read),
            Some((Level::Deny, "sensitive-read"))
        );
        assert_eq!(
            judged("/home/bob/notes.txt", Place::Outside, Read),
            Some((Level::Deny, "sensitive-read"))
        );
        assert_eq!(
            judged("/home/bob", Place::Outside, List),
            Some((Level::Ask, "outside-read"))
        );
        assert_eq!(judged("/dev/null", Place::Outside, Write), None);
        for terminal in ["/dev/tty", "/dev/pts/3", "/dev/console", "/dev/vcs1"] {
            for undergoes in [Read, Write] {
                assert_eq!(
                    judged(terminal, Place::Outside, undergoes),
                    Some((Level::Ask, "terminal")),
                    "{terminal}"
                );
            }
        }
        assert_eq!(
            judged("/dev/sda", Place::Outside, Write),
            Some((Level::Deny, "device-write"))
        );
        assert_eq!(
            judged("/dev/tcp/1.2.3.4/80", Place::Outside, Read),
            Some((Level::Deny, "reverse-shell"))
        );
        assert_eq!(
            judged("rel/.env", Place::Unknown, Write).map(|f| f.0),
            Some(Level::Deny)
        );
        assert_eq!(judged("/x/notes.txt", Place::Unknown, Write), None);
    }

    #[test]
    fn a_link_is_judged_where_it_leads_too() {
        let rules = PathRules::new(HOME, &[], &[]);
        let target = Target {
            named: "/ws/notes",
            real: Some("/home/u/.ssh/id_rsa"),
            fold_case: false,
            place: Place::Outside,
            shown: "`notes`",
        };
        let found = rules.judge(&target, Undergoes::Read, "reads").unwrap();
        assert_eq!((found.level, found.rule), (Level::Deny, "sensitive-read"));
        assert!(
            found.reason.contains("through the link `notes`"),
            "{}",
            found.reason
        );
    }

    #[test]
    fn config_drops_and_adds_patterns() {
        let dropped = vec![".npmrc".to_owned()];
        let nope = ["nope".to_owned()];
        assert!(PathRules::new(HOME, &[], &[]).without(&nope).is_err());
        let secrets = vec!["*.vault".to_owned()];
        let rules = PathRules::new(HOME, &secrets, &[])
            .without(&dropped)
            .unwrap();
        assert_eq!(rules.protection("/ws/.npmrc", false), None);
        assert_eq!(
            rules.protection("/ws/x.vault", false),
            Some(("*.vault".to_owned(), Protection::Secret))
        );
    }
}
