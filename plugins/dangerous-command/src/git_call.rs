//! A git command line taken apart: the global options before the command (`-C`, `-c KEY=VALUE`,
//! `--config-env`, `--exec-path=`), the command, and its arguments.

use acp_gate_shell::Arg;

/// A git command line with its global options taken apart.
pub struct GitCall<'a> {
    /// The directories of `-C DIR`, in order: git runs in the last, relative to the others.
    pub dirs: Vec<Arg>,
    pub config: Vec<(String, Arg)>,
    pub exec_path: bool,
    pub subcommand: Option<&'a Arg>,
    pub args: &'a [Arg],
}

/// Takes a git command line (`argv[0]` is git) apart.
pub fn parse_git(argv: &[Arg]) -> GitCall<'_> {
    let mut call = GitCall {
        dirs: Vec::new(),
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
            "-C" => {
                call.dirs.extend(argv.get(i + 1).cloned());
                i += 2;
            }
            "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--list-cmds"
            | "--attr-source" => i += 2,
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

impl GitCall<'_> {
    /// A path as git's command names it (relative to the last `-C` directory), as the shell
    /// would name it; `None` when a `-C` directory is only known at run time.
    pub fn place(&self, path: &str) -> Option<String> {
        place_in(&self.dirs, path)
    }
}

/// `path` placed in the directory that `cd dirs[0]; cd dirs[1]; ...` reaches, as a path the
/// shell would resolve the same way; `None` when a directory is only known at run time.
pub fn place_in(dirs: &[Arg], path: &str) -> Option<String> {
    let mut placed = String::new();
    for segment in dirs.iter().map(|d| d.known()).chain([Some(path)]) {
        let segment = segment?;
        let absolute = segment.starts_with('/') || segment.starts_with('~');
        if absolute || placed.is_empty() {
            placed = segment.to_owned();
        } else {
            placed = format!("{}/{segment}", placed.trim_end_matches('/'));
        }
    }
    Some(placed)
}

/// `key=value` of `git -c`; with `--config-env` the value comes from a variable, so is unknown.
pub fn split_config(arg: &Arg, from_env: bool) -> (String, Arg) {
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
