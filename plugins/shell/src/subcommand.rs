//! The global options of common command-line programs: what may stand between a program and
//! its sub-command (`kubectl -n prod delete`, `terraform -chdir=infra apply`, `cargo +nightly
//! --locked build`), from each program's own documentation, so that a rule about `kubectl
//! delete` finds `delete` past them in every spelling (`-n x`, `-nx`, `--namespace x`,
//! `--namespace=x`, read by [`crate::options`]).
//!
//! Each option is either inert (it changes what is printed, or which of the user's configured
//! targets is used: `-n prod`, `--profile p`) or loading: it points the program at other
//! configuration or code (a config file or setting, another directory, another interpreter:
//! `git -c`, `--kubeconfig`, `-chdir`, `make -f`), or sends the credentials the user configured
//! for a target to a server the command line names, or without checking whom they reach
//! (`kubectl --server`, `aws --endpoint-url`, `docker -H`, `--insecure-skip-tls-verify`). A
//! reading that must not be looser than the rule (an allow) reads past inert options only; one
//! that fails toward strictness (a deny) reads past both, and past options no table lists,
//! which may or may not take a value.

use crate::arg::Arg;
use crate::options::{Item, Opt, Style, Value, parse};
use Value::*;

/// A program whose sub-command may follow global options.
pub struct Cli {
    /// The program's names (normalised: `crate::program_name`).
    pub names: &'static [&'static str],
    /// How its options are spelled.
    pub style: Style,
    /// Where its global options may stand.
    pub placement: Placement,
    /// Global options that change only the output or which configured target is used.
    pub inert: &'static [Opt],
    /// Global options that point the program at other configuration or code, or its
    /// configured credentials at a server named on the command line (or at any server).
    pub loading: &'static [Opt],
    /// Words of the form `NAME=value` are settings (`make CC=x all`): loading.
    pub settings: bool,
    /// A first word `+NAME` picks a toolchain (rustup's proxies: `cargo +nightly build`).
    pub toolchain: bool,
}

/// Where a program's global options may stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Before the sub-command only (`git -C x push`, `docker -H x run`, `terraform -chdir=x`).
    Leading,
    /// Anywhere among the sub-command's words too (cobra's persistent flags, argparse, getopt
    /// permuting: `kubectl delete -n prod pod x`, `aws s3 rm --profile p`).
    Anywhere,
}

/// What one word is to a program, where its global options may stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// One of the program's global options with its value: `words` words in all. `loads`: the
    /// option points the program at other configuration or code. `may_take_next`: its value is
    /// optional and may be the next word (`make -j 4`).
    Global {
        words: usize,
        loads: bool,
        may_take_next: bool,
    },
    /// An option the tables do not list, or a word only known at run time: it may take the
    /// next word as its value, or not.
    Unknown,
    /// `--`: the words after it are operands.
    EndOfOptions,
    /// Not an option: the sub-command, one of its words, or an operand.
    Operand,
}

impl Cli {
    /// Reads one word (`dynamic`: only known at run time) where a global option may stand.
    pub fn read(&self, text: &str, dynamic: bool) -> Reading {
        if dynamic {
            return Reading::Unknown;
        }
        if text == "--" {
            return Reading::EndOfOptions;
        }
        let global = |loads| Reading::Global {
            words: 1,
            loads,
            may_take_next: false,
        };
        if self.settings && is_setting(text) {
            return global(true);
        }
        if self.toolchain && text.len() > 1 && text.starts_with('+') {
            // A toolchain by name is one rustup installed; anything else may be a path.
            let named = text[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
            return global(!named);
        }
        if !text.starts_with('-') || text == "-" {
            return Reading::Operand;
        }
        let arg = Arg::literal(text);
        let items = parse(
            std::slice::from_ref(&arg),
            &[self.inert, self.loading],
            self.style,
        );
        let (mut words, mut loads, mut may_take_next) = (1, false, false);
        for item in &items {
            let name = match item {
                Item::Option { name, value, arg } => {
                    may_take_next = *value == Optional && arg.is_none();
                    name
                }
                Item::Missing(name) => {
                    words = 2;
                    name
                }
                Item::Unknown(_) => return Reading::Unknown,
                Item::Operand(_) => return Reading::Operand,
            };
            loads |= self.loading.iter().any(|(n, _)| n == name);
        }
        Reading::Global {
            words,
            loads,
            may_take_next,
        }
    }
}

/// `NAME=value` with a shell-variable-like name.
fn is_setting(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The program named `name` (normalised), if its global options are known.
pub fn cli(name: &str) -> Option<&'static Cli> {
    CLIS.iter().find(|cli| cli.names.contains(&name))
}

/// The programs whose global options are known, from their manuals and `--help`.
pub const CLIS: &[Cli] = &[
    // git(1), OPTIONS.
    Cli {
        names: &["git"],
        style: Style::Gnu,
        placement: Placement::Leading,
        inert: &[
            ("-p", Flag),
            ("--paginate", Flag),
            ("-P", Flag),
            ("--no-pager", Flag),
            ("--no-replace-objects", Flag),
            ("--no-lazy-fetch", Flag),
            ("--no-optional-locks", Flag),
            ("--no-advice", Flag),
            ("--literal-pathspecs", Flag),
            ("--glob-pathspecs", Flag),
            ("--noglob-pathspecs", Flag),
            ("--icase-pathspecs", Flag),
            ("--namespace", Literal),
            ("--html-path", Flag),
            ("--man-path", Flag),
            ("--info-path", Flag),
            ("--version", Flag),
            ("-v", Flag),
            ("--help", Flag),
            ("-h", Flag),
        ],
        loading: &[
            ("-C", Name),
            ("-c", Literal),
            ("--config-env", Literal),
            ("--exec-path", Optional),
            ("--git-dir", Name),
            ("--work-tree", Name),
            ("--bare", Flag),
            ("--super-prefix", Literal),
            ("--attr-source", Literal),
            ("--list-cmds", Literal),
        ],
        settings: false,
        toolchain: false,
    },
    // kubectl options (the flags every command inherits); OpenShift's `oc` has the same.
    Cli {
        names: &["kubectl", "oc"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--as", Literal),
            ("--as-group", Literal),
            ("--as-uid", Literal),
            ("--as-user-extra", Literal),
            ("--cluster", Literal),
            ("--context", Literal),
            ("--disable-compression", Optional),
            ("--match-server-version", Optional),
            ("-n", Literal),
            ("--namespace", Literal),
            ("--password", Literal),
            ("--profile", Literal),
            ("--request-timeout", Literal),
            ("--token", Literal),
            ("--user", Literal),
            ("--username", Literal),
            ("-v", Literal),
            ("--v", Literal),
            ("--vmodule", Literal),
            ("--warnings-as-errors", Optional),
            ("--log-flush-frequency", Literal),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("-s", Literal),
            ("--server", Literal),
            ("--insecure-skip-tls-verify", Optional),
            ("--tls-server-name", Literal),
            ("--kubeconfig", Read),
            ("--kuberc", Read),
            ("--cache-dir", Name),
            ("--certificate-authority", Read),
            ("--client-certificate", Read),
            ("--client-key", Read),
            ("--profile-output", Write),
        ],
        settings: false,
        toolchain: false,
    },
    // helm's "options inherited from parent commands".
    Cli {
        names: &["helm"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--burst-limit", Literal),
            ("--color", Literal),
            ("--colour", Literal),
            ("--debug", Optional),
            ("--kube-as-group", Literal),
            ("--kube-as-user", Literal),
            ("--kube-context", Literal),
            ("--kube-token", Literal),
            ("-n", Literal),
            ("--namespace", Literal),
            ("--qps", Literal),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("--kube-apiserver", Literal),
            ("--kube-insecure-skip-tls-verify", Optional),
            ("--kube-tls-server-name", Literal),
            ("--kubeconfig", Read),
            ("--kube-ca-file", Read),
            ("--registry-config", Read),
            ("--repository-cache", Name),
            ("--repository-config", Read),
            ("--content-cache", Name),
        ],
        settings: false,
        toolchain: false,
    },
    // docker(1): `docker [OPTIONS] COMMAND`.
    Cli {
        names: &["docker"],
        style: Style::Gnu,
        placement: Placement::Leading,
        inert: &[
            ("-c", Literal),
            ("--context", Literal),
            ("-D", Flag),
            ("--debug", Optional),
            ("-l", Literal),
            ("--log-level", Literal),
            ("--tls", Optional),
            ("--tlsverify", Optional),
            ("-v", Flag),
            ("--version", Flag),
            ("--help", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("-H", Literal),
            ("--host", Literal),
            ("--config", Name),
            ("--tlscacert", Read),
            ("--tlscert", Read),
            ("--tlskey", Read),
        ],
        settings: false,
        toolchain: false,
    },
    // docker-compose (and `docker compose`'s own options, which follow `compose`).
    Cli {
        names: &["docker-compose"],
        style: Style::Gnu,
        placement: Placement::Leading,
        inert: &[
            ("-p", Literal),
            ("--project-name", Literal),
            ("--profile", Literal),
            ("--ansi", Literal),
            ("--progress", Literal),
            ("--parallel", Literal),
            ("--dry-run", Flag),
            ("--compatibility", Flag),
            ("--all-resources", Flag),
            ("-v", Flag),
            ("--version", Flag),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            ("-f", Read),
            ("--file", Read),
            ("--env-file", Read),
            ("--project-directory", Name),
        ],
        settings: false,
        toolchain: false,
    },
    // podman(1), GLOBAL OPTIONS (persistent flags: accepted after the command too).
    Cli {
        names: &["podman"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("-c", Literal),
            ("--connection", Literal),
            ("--cgroup-manager", Literal),
            ("--events-backend", Literal),
            ("--log-level", Literal),
            ("-r", Optional),
            ("--remote", Optional),
            ("--ssh", Literal),
            ("--storage-driver", Literal),
            ("--storage-opt", Literal),
            ("--syslog", Optional),
            ("--transient-store", Optional),
            ("-v", Flag),
            ("--version", Flag),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("--url", Literal),
            ("--config", Name),
            ("--conmon", Read),
            ("--hooks-dir", Name),
            ("--identity", Read),
            ("--imagestore", Name),
            ("--module", Read),
            ("--network-cmd-path", Read),
            ("--network-config-dir", Name),
            ("--out", Write),
            ("--root", Name),
            ("--runroot", Name),
            ("--runtime", Read),
            ("--runtime-flag", Literal),
            ("--tmpdir", Name),
            ("--volumepath", Name),
        ],
        settings: false,
        toolchain: false,
    },
    // terraform: `terraform [global options] <subcommand>`; Go's flag syntax (`-chdir=DIR`).
    Cli {
        names: &["terraform", "tofu"],
        style: Style::Single,
        placement: Placement::Leading,
        inert: &[
            ("-help", Flag),
            ("-h", Flag),
            ("-version", Flag),
            ("-v", Flag),
        ],
        loading: &[("-chdir", Name)],
        settings: false,
        toolchain: false,
    },
    // pulumi's global flags (persistent).
    Cli {
        names: &["pulumi"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--color", Literal),
            ("-e", Optional),
            ("--emoji", Optional),
            ("-Q", Optional),
            ("--fully-qualify-stack-names", Optional),
            ("--logflow", Optional),
            ("--logtostderr", Optional),
            ("--non-interactive", Optional),
            ("-v", Literal),
            ("--verbose", Literal),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            ("-C", Name),
            ("--cwd", Name),
            ("--disable-integrity-checking", Optional),
            ("--memprofilerate", Literal),
            ("--profiling", Literal),
            ("--tracing", Literal),
            ("--tracing-header", Literal),
        ],
        settings: false,
        toolchain: false,
    },
    // cargo(1): `cargo [+toolchain] [OPTIONS] COMMAND`.
    Cli {
        names: &["cargo"],
        style: Style::Gnu,
        placement: Placement::Leading,
        inert: &[
            ("-v", Flag),
            ("--verbose", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--color", Literal),
            ("--locked", Flag),
            ("--offline", Flag),
            ("--frozen", Flag),
            ("-V", Flag),
            ("--version", Flag),
            ("--list", Flag),
            ("--explain", Literal),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[("--config", Literal), ("-C", Name), ("-Z", Literal)],
        settings: false,
        toolchain: true,
    },
    // npm: every config option can be given on the command line, anywhere (npm help config).
    Cli {
        names: &["npm", "npx"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("-g", Flag),
            ("--global", Flag),
            ("-w", Literal),
            ("--workspace", Literal),
            ("--workspaces", Flag),
            ("--include-workspace-root", Flag),
            ("--loglevel", Literal),
            ("-s", Flag),
            ("--silent", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-d", Flag),
            ("--verbose", Flag),
            ("--json", Flag),
            ("--color", Literal),
            ("--no-color", Flag),
            ("-y", Flag),
            ("--yes", Flag),
            ("--offline", Flag),
            ("--prefer-offline", Flag),
            ("--prefer-online", Flag),
            ("--no-audit", Flag),
            ("--no-fund", Flag),
            ("--no-progress", Flag),
            ("--ignore-scripts", Flag),
            ("--dry-run", Flag),
            ("--force", Flag),
            ("-f", Flag),
            ("--legacy-peer-deps", Flag),
            ("--foreground-scripts", Flag),
            ("-h", Flag),
            ("--help", Flag),
            ("-v", Flag),
            ("--version", Flag),
        ],
        loading: &[
            ("-C", Name),
            ("--prefix", Name),
            ("--userconfig", Read),
            ("--globalconfig", Read),
            ("--cache", Name),
            ("--registry", Literal),
            ("--script-shell", Read),
            ("--node-options", Literal),
        ],
        settings: false,
        toolchain: false,
    },
    // pnpm's options that every command takes.
    Cli {
        names: &["pnpm", "pnpx"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("-w", Flag),
            ("--workspace-root", Flag),
            ("-F", Literal),
            ("--filter", Literal),
            ("-r", Flag),
            ("--recursive", Flag),
            ("-s", Flag),
            ("--silent", Flag),
            ("--reporter", Literal),
            ("--loglevel", Literal),
            ("--color", Flag),
            ("--no-color", Flag),
            ("--aggregate-output", Flag),
            ("--stream", Flag),
            ("--use-stderr", Flag),
            ("--workspace-concurrency", Literal),
            ("--ignore-workspace", Flag),
            ("--offline", Flag),
            ("--prefer-offline", Flag),
            ("-h", Flag),
            ("--help", Flag),
            ("-v", Flag),
            ("--version", Flag),
        ],
        loading: &[("-C", Name), ("--dir", Name), ("--registry", Literal)],
        settings: false,
        toolchain: false,
    },
    // yarn (1.x `yarn help`, and berry's `--cwd`).
    Cli {
        names: &["yarn"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--verbose", Flag),
            ("--offline", Flag),
            ("--prefer-offline", Flag),
            ("-s", Flag),
            ("--silent", Flag),
            ("--no-progress", Flag),
            ("--non-interactive", Flag),
            ("--network-timeout", Literal),
            ("--json", Flag),
            ("--no-emoji", Flag),
            ("--emoji", Optional),
            ("--frozen-lockfile", Flag),
            ("--pure-lockfile", Flag),
            ("--no-lockfile", Flag),
            ("--ignore-engines", Flag),
            ("--ignore-scripts", Flag),
            ("--production", Optional),
            ("-h", Flag),
            ("--help", Flag),
            ("-v", Flag),
            ("--version", Flag),
        ],
        loading: &[
            ("--cwd", Name),
            ("--registry", Literal),
            ("--modules-folder", Name),
            ("--cache-folder", Name),
            ("--global-folder", Name),
            ("--use-yarnrc", Read),
            ("--no-default-rc", Flag),
        ],
        settings: false,
        toolchain: false,
    },
    // pip's general options (accepted anywhere on the command line).
    Cli {
        names: &["pip", "pip3"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--debug", Flag),
            ("--isolated", Flag),
            ("--require-virtualenv", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-V", Flag),
            ("--version", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--no-input", Flag),
            ("--keyring-provider", Literal),
            ("--retries", Literal),
            ("--resume-retries", Literal),
            ("--timeout", Literal),
            ("--exists-action", Literal),
            ("--no-cache-dir", Flag),
            ("--disable-pip-version-check", Flag),
            ("--no-color", Flag),
            ("--no-python-version-warning", Flag),
            ("--use-feature", Literal),
            ("--use-deprecated", Literal),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("--proxy", Literal),
            ("--trusted-host", Literal),
            ("--python", Read),
            ("--log", Write),
            ("--cert", Read),
            ("--client-cert", Read),
            ("--cache-dir", Name),
        ],
        settings: false,
        toolchain: false,
    },
    // uv's global options (accepted by every command, anywhere).
    Cli {
        names: &["uv"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("-q", Flag),
            ("--quiet", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("--color", Literal),
            ("--native-tls", Flag),
            ("--offline", Flag),
            ("--no-offline", Flag),
            ("--no-progress", Flag),
            ("--python-preference", Literal),
            ("--no-python-downloads", Flag),
            ("--managed-python", Flag),
            ("--no-managed-python", Flag),
            ("--preview", Flag),
            ("--no-preview", Flag),
            ("--isolated", Flag),
            ("--show-settings", Flag),
            ("-n", Flag),
            ("--no-cache", Flag),
            ("-h", Flag),
            ("--help", Flag),
            ("-V", Flag),
            ("--version", Flag),
        ],
        loading: &[
            ("--directory", Name),
            ("--project", Name),
            ("--config-file", Read),
            ("--no-config", Flag),
            ("--cache-dir", Name),
            ("--allow-insecure-host", Literal),
        ],
        settings: false,
        toolchain: false,
    },
    // aws: the global command line options (argparse: anywhere, `--opt value` or `--opt=value`).
    Cli {
        names: &["aws"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--debug", Flag),
            ("--no-paginate", Flag),
            ("--output", Literal),
            ("--query", Literal),
            ("--profile", Literal),
            ("--region", Literal),
            ("--version", Flag),
            ("--color", Literal),
            ("--no-sign-request", Flag),
            ("--cli-read-timeout", Literal),
            ("--cli-connect-timeout", Literal),
            ("--cli-binary-format", Literal),
            ("--no-cli-pager", Flag),
            ("--cli-auto-prompt", Flag),
            ("--no-cli-auto-prompt", Flag),
        ],
        loading: &[
            // the configured credentials sent to a server named here, or unchecked
            ("--endpoint-url", Literal),
            ("--no-verify-ssl", Flag),
            ("--ca-bundle", Read),
        ],
        settings: false,
        toolchain: false,
    },
    // gcloud's global flags.
    Cli {
        names: &["gcloud"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--account", Literal),
            ("--billing-project", Literal),
            ("--configuration", Literal),
            ("--flatten", Literal),
            ("--format", Literal),
            ("--help", Flag),
            ("-h", Flag),
            ("--project", Literal),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--verbosity", Literal),
            ("-v", Flag),
            ("--version", Flag),
            ("--impersonate-service-account", Literal),
            ("--log-http", Flag),
            ("--trace-token", Literal),
            ("--user-output-enabled", Flag),
            ("--no-user-output-enabled", Flag),
        ],
        loading: &[("--flags-file", Read), ("--access-token-file", Read)],
        settings: false,
        toolchain: false,
    },
    // az: the global arguments every command takes.
    Cli {
        names: &["az"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("--debug", Flag),
            ("-h", Flag),
            ("--help", Flag),
            ("--only-show-errors", Flag),
            ("-o", Literal),
            ("--output", Literal),
            ("--query", Literal),
            ("--verbose", Flag),
            ("--subscription", Literal),
        ],
        loading: &[],
        settings: false,
        toolchain: false,
    },
    // gh: `-R, --repo [HOST/]OWNER/REPO`, inherited by the repository commands.
    Cli {
        names: &["gh"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[("-R", Literal), ("--repo", Literal), ("--help", Flag)],
        loading: &[],
        settings: false,
        toolchain: false,
    },
    // GNU make(1): options anywhere among the targets, and `NAME=value` overrides.
    Cli {
        names: &["make", "gmake"],
        style: Style::Gnu,
        placement: Placement::Anywhere,
        inert: &[
            ("-b", Flag),
            ("-m", Flag),
            ("-B", Flag),
            ("--always-make", Flag),
            ("-d", Flag),
            ("--debug", Optional),
            ("-i", Flag),
            ("--ignore-errors", Flag),
            ("-j", Optional),
            ("--jobs", Optional),
            ("-k", Flag),
            ("--keep-going", Flag),
            ("-l", Optional),
            ("--load-average", Optional),
            ("-L", Flag),
            ("--check-symlink-times", Flag),
            ("-n", Flag),
            ("--just-print", Flag),
            ("--dry-run", Flag),
            ("--recon", Flag),
            ("-O", Optional),
            ("--output-sync", Optional),
            ("-p", Flag),
            ("--print-data-base", Flag),
            ("-q", Flag),
            ("--question", Flag),
            ("-r", Flag),
            ("--no-builtin-rules", Flag),
            ("-R", Flag),
            ("--no-builtin-variables", Flag),
            ("-s", Flag),
            ("--silent", Flag),
            ("--quiet", Flag),
            ("--no-silent", Flag),
            ("-S", Flag),
            ("--no-keep-going", Flag),
            ("--stop", Flag),
            ("-t", Flag),
            ("--touch", Flag),
            ("--trace", Flag),
            ("-v", Flag),
            ("--version", Flag),
            ("-w", Flag),
            ("--print-directory", Flag),
            ("--no-print-directory", Flag),
            ("--warn-undefined-variables", Flag),
            ("-h", Flag),
            ("--help", Flag),
        ],
        loading: &[
            ("-C", Name),
            ("--directory", Name),
            ("-f", Read),
            ("--file", Read),
            ("--makefile", Read),
            ("-I", Name),
            ("--include-dir", Name),
            ("-E", Literal),
            ("--eval", Literal),
            ("-e", Flag),
            ("--environment-overrides", Flag),
            ("-o", Name),
            ("--old-file", Name),
            ("--assume-old", Name),
            ("-W", Name),
            ("--what-if", Name),
            ("--new-file", Name),
            ("--assume-new", Name),
            ("--shuffle", Optional),
        ],
        settings: true,
        toolchain: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn read(program: &str, words: &str) -> Vec<Reading> {
        let cli = cli(program).unwrap();
        words
            .split_whitespace()
            .map(|w| cli.read(w, w.starts_with('$')))
            .collect()
    }

    const fn global(words: usize, loads: bool) -> Reading {
        Reading::Global {
            words,
            loads,
            may_take_next: false,
        }
    }

    #[test]
    fn every_spelling_of_a_valued_option() {
        assert_eq!(
            read("kubectl", "-n -nprod --namespace --namespace=prod"),
            [
                global(2, false),
                global(1, false),
                global(2, false),
                global(1, false)
            ]
        );
        assert_eq!(
            read("terraform", "-chdir=infra -chdir"),
            [global(1, true), global(2, true)]
        );
        assert_eq!(
            read("aws", "--profile --region=eu-west-1"),
            [global(2, false), global(1, false)]
        );
    }

    #[test]
    fn unknown_options_dynamic_words_and_operands() {
        assert_eq!(
            read("kubectl", "--bogus -nz -q delete - -- $FLAGS"),
            [
                Reading::Unknown,
                global(1, false),
                Reading::Unknown,
                Reading::Operand,
                Reading::Operand,
                Reading::EndOfOptions,
                Reading::Unknown
            ]
        );
        // An abbreviation could be any option.
        assert_eq!(read("kubectl", "--name=x"), [Reading::Unknown]);
        assert_eq!(read("git", "--no-pager=1"), [Reading::Unknown]);
    }

    #[test]
    fn options_that_load_configuration_or_code() {
        assert_eq!(
            read("git", "-C -c --no-pager"),
            [global(2, true), global(2, true), global(1, false)]
        );
        assert_eq!(
            read("cargo", "+nightly +/tmp/tc -Zx --locked"),
            [
                global(1, false),
                global(1, true),
                global(1, true),
                global(1, false)
            ]
        );
        assert_eq!(
            read("make", "CC=evil X_1= 1X=y"),
            [global(1, true), global(1, true), Reading::Operand]
        );
        assert_eq!(
            read("make", "-j -j4"),
            [
                Reading::Global {
                    words: 1,
                    loads: false,
                    may_take_next: true
                },
                global(1, false)
            ]
        );
        assert_eq!(
            read("docker", "-l -H --tlscert"),
            [global(2, false), global(2, true), global(2, true)]
        );
        // The configured credentials sent to a server the command names.
        assert_eq!(
            read(
                "kubectl",
                "-n --server=https://x --insecure-skip-tls-verify=true"
            ),
            [global(2, false), global(1, true), global(1, true)]
        );
        assert_eq!(read("aws", "--endpoint-url"), [global(2, true)]);
    }

    #[test]
    fn every_program_is_named_once() {
        let mut names: Vec<&str> = CLIS.iter().flat_map(|c| c.names.iter().copied()).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(count, names.len());
        assert!(cli("kubectl").is_some() && cli("go").is_none());
    }

    /// docs/policy-language.md has a row for every program whose options are known.
    #[test]
    fn every_program_is_documented() {
        let docs = include_str!("../../../docs/policy-language.md");
        for cli in CLIS {
            let names: Vec<String> = cli.names.iter().map(|n| format!("`{n}`")).collect();
            let row = format!("| {} |", names.join(", "));
            assert!(
                docs.contains(&row),
                "docs/policy-language.md lacks the row {row}"
            );
        }
    }
}
