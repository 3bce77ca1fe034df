//! One reading of the shell for acp-gate's plugins: a command line (a shell string or an argv)
//! becomes the list of simple commands it would run, the same list for every plugin that
//! judges commands (`dangerous-command`, `org-policy`).
//!
//! - [`scan`] splits one word into its pieces (quotes, escapes, expansions);
//! - [`arg`] holds a word as a command receives it, and what a pipe carries;
//! - [`command`] holds what the walk produces: the simple commands, and what it could not see;
//! - [`environment`] knows what setting a variable does to the programs that run;
//! - [`walk`] walks brush-parser's syntax tree and collects every simple command, under one
//!   set of depth and size limits;
//! - [`wrappers`] reads the programs that run another command (`sudo`, `env`, `timeout`,
//!   `xargs`, `bash -c`, `find -exec`, ...), with their tables of options, into what the walk
//!   follows;
//! - [`options`] reads a program's options the way getopt does (clusters, glued values,
//!   `--opt=value`, `--`), against a table of the options it takes;
//! - [`paths`] makes the paths a command names absolute;
//! - [`subcommand`] knows the global options common CLIs take before their sub-command;
//! - [`programs`] knows programs by name (shells, interpreters, fetchers, decoders);
//! - [`patch`] reads which files a patch changes from its headers (the host's
//!   `paths.patch-files`).

pub mod arg;
pub mod command;
pub mod environment;
pub mod options;
pub mod patch;
pub mod paths;
pub mod programs;
pub mod scan;
pub mod subcommand;
pub mod walk;
pub mod wrappers;

pub use arg::{Arg, Feed};
pub use command::{Command, Note, NoteKind, Reading, Runs};
pub use programs::program_name;
pub use scan::{Piece, decode_ansi_c, scan};
pub use walk::{MAX_DEPTH, MAX_INPUT, read_argv, read_command, read_shell};
