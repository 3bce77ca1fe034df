//! Globs that can expand into options: a word such as `*` or `*.txt` becomes the names of the
//! files there, and a file may be named `-rf`, `-delete` or `--checkpoint-action=exec=sh x`
//! (`rm *`, `find . *`, `chmod -R u+w *`, `tar cf x.tar *`). Such a glob is at most asked
//! about, unless `--` before it or a leading `./` (`./*`) keeps every name an operand, or the
//! program is one whose every option only changes what it prints (`ls *`, `cat *.md`,
//! `wc -l *`), or a search whose names all end the same way (`grep x *.py`: no option of grep
//! can end in `.py` and harm), or the directory it expands in holds no name starting with `-`
//! (the host lists it: `paths.entries`), so that the glob is as good as its matches.

use acp_gate_shell::programs::CHECKSUMS;
use acp_gate_shell::{Arg, Runs};

use crate::context::Context;
use crate::judgement::Findings;

/// Programs whose every option only changes what they print, and which read nothing but their
/// operands (and the checksum printers): an option smuggled in through a file name changes
/// their output, nothing else.
const PRINT_ONLY: &[&str] = &[
    "ls", "dir", "vdir", "cat", "tac", "head", "wc", "nl", "file", "stat", "du", "realpath",
    "readlink", "basename", "dirname", "echo", "printf", "test", "[",
];

/// Searches that read only their operands when no operand can become `-r`: a glob whose names
/// all end in the same text (`*.py`) spells no harmful option of theirs.
const SEARCHES: &[&str] = &["grep", "egrep", "fgrep", "zgrep"];

/// Whether a word expands into names that may start with `-`: an unquoted glob whose first
/// character is a wildcard (`*`, `?*.txt`, `[a-z]*`); `./*` and `src/*` may not.
fn may_become_an_option(a: &Arg) -> bool {
    a.glob && !a.dynamic && a.text.starts_with(['*', '?', '['])
}

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings, cx: &Context) {
    let inv = f.inv;
    let name = inv.name.as_str();
    if inv.runs == Runs::Script
        || name.is_empty()
        || PRINT_ONLY.contains(&name)
        || CHECKSUMS.contains(&name)
    {
        return;
    }
    let suffixed = |a: &Arg| {
        let last = a.text.rsplit('/').next().unwrap_or(&a.text);
        !last.ends_with(['*', '?', ']'])
    };
    let glob = inv.own_args().iter().take_while(|a| !a.is("--")).find(|a| {
        may_become_an_option(a) && !(SEARCHES.contains(&inv.name.as_str()) && suffixed(a))
    });
    let Some(glob) = glob else {
        return;
    };
    // What is there now is what the glob expands to when the command runs next: a directory
    // with no name starting with `-` makes it its matches.
    let named = match cx.entries_here(inv) {
        Some(names) => match names.into_iter().find(|n| n.starts_with('-')) {
            Some(name) => format!("`{name}` is there"),
            None => return,
        },
        None => "the names there are not known".to_owned(),
    };
    f.ask(
        "glob-option",
        format!(
            "the glob `{}` may expand to a file named like an option ({named}): write `./{}` or put `--` before it",
            glob.text, glob.text
        ),
    );
}
