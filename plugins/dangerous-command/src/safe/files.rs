//! Reading, listing and text tools: ls, cat, head, tail, wc, sort, uniq, cut, diff, jq, yq,
//! sed (printing and in-place substitutions), unzip listings, checksums, ... (their options
//! from GNU coreutils', jq's, sed's and unzip's `--help`).

use acp_gate_shell::Arg;
use acp_gate_shell::options::{Item, Opt, Style, Value, parse};
use acp_gate_shell::programs::CHECKSUMS;

use super::{Judge, Program};
use Value::*;

const GNU_INFO: &[(&str, Value)] = &[("--help", Flag), ("--version", Flag)];

/// Programs read with their tables as they are.
pub(super) const PROGRAMS: &[Program] = &[
    Program {
        names: &["ls", "dir", "vdir"],
        options: &[&[
            ("-a", Flag),
            ("--all", Flag),
            ("-A", Flag),
            ("--almost-all", Flag),
            ("--author", Flag),
            ("-b", Flag),
            ("--escape", Flag),
            ("--block-size", Literal),
            ("-B", Flag),
            ("--ignore-backups", Flag),
            ("-c", Flag),
            ("-C", Flag),
            ("--color", Optional),
            ("-d", Flag),
            ("--directory", Flag),
            ("-D", Flag),
            ("--dired", Flag),
            ("-f", Flag),
            ("-F", Flag),
            ("--classify", Optional),
            ("--file-type", Flag),
            ("--format", Literal),
            ("--full-time", Flag),
            ("-g", Flag),
            ("--group-directories-first", Flag),
            ("-G", Flag),
            ("--no-group", Flag),
            ("-h", Flag),
            ("--human-readable", Flag),
            ("--si", Flag),
            ("-H", Flag),
            ("--dereference-command-line", Flag),
            ("--hide", Literal),
            ("--hyperlink", Optional),
            ("--indicator-style", Literal),
            ("-i", Flag),
            ("--inode", Flag),
            ("-I", Literal),
            ("--ignore", Literal),
            ("-k", Flag),
            ("--kibibytes", Flag),
            ("-l", Flag),
            ("-m", Flag),
            ("-n", Flag),
            ("--numeric-uid-gid", Flag),
            ("-N", Flag),
            ("--literal", Flag),
            ("-o", Flag),
            ("-p", Flag),
            ("-q", Flag),
            ("--hide-control-chars", Flag),
            ("--show-control-chars", Flag),
            ("-Q", Flag),
            ("--quote-name", Flag),
            ("--quoting-style", Literal),
            ("-r", Flag),
            ("--reverse", Flag),
            ("-R", Flag),
            ("--recursive", Flag),
            ("-s", Flag),
            ("--size", Flag),
            ("-S", Flag),
            ("--sort", Literal),
            ("--time", Literal),
            ("--time-style", Literal),
            ("-t", Flag),
            ("-T", Literal),
            ("--tabsize", Literal),
            ("-u", Flag),
            ("-U", Flag),
            ("-v", Flag),
            ("-w", Literal),
            ("--width", Literal),
            ("-x", Flag),
            ("-X", Flag),
            ("-Z", Flag),
            ("--context", Flag),
            ("--zero", Flag),
            ("-1", Flag),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["cat", "tac"],
        options: &[&[
            ("-A", Flag),
            ("--show-all", Flag),
            ("-b", Flag),
            ("--number-nonblank", Flag),
            ("-e", Flag),
            ("-E", Flag),
            ("--show-ends", Flag),
            ("-n", Flag),
            ("--number", Flag),
            ("-s", Flag),
            ("--squeeze-blank", Flag),
            ("-t", Flag),
            ("-T", Flag),
            ("--show-tabs", Flag),
            ("-u", Flag),
            ("-v", Flag),
            ("--show-nonprinting", Flag),
            ("-r", Flag),
            ("--regex", Flag),
            ("--before", Flag),
            ("--separator", Literal),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["head", "tail"],
        options: &[&[
            ("-c", Literal),
            ("--bytes", Literal),
            ("-n", Literal),
            ("--lines", Literal),
            ("-q", Flag),
            ("--quiet", Flag),
            ("--silent", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("-z", Flag),
            ("--zero-terminated", Flag),
            ("-f", Flag),
            ("-F", Flag),
            ("--follow", Optional),
            ("--retry", Flag),
            ("-s", Literal),
            ("--sleep-interval", Literal),
            ("--pid", Literal),
            ("-NUM", Flag),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["wc"],
        options: &[&[
            ("-c", Flag),
            ("--bytes", Flag),
            ("-m", Flag),
            ("--chars", Flag),
            ("-l", Flag),
            ("--lines", Flag),
            ("-L", Flag),
            ("--max-line-length", Flag),
            ("-w", Flag),
            ("--words", Flag),
            ("--total", Literal),
            ("--files0-from", Read),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["sort"],
        options: &[&[
            ("-b", Flag),
            ("--ignore-leading-blanks", Flag),
            ("-d", Flag),
            ("--dictionary-order", Flag),
            ("-f", Flag),
            ("--ignore-case", Flag),
            ("-g", Flag),
            ("--general-numeric-sort", Flag),
            ("-i", Flag),
            ("--ignore-nonprinting", Flag),
            ("-M", Flag),
            ("--month-sort", Flag),
            ("-h", Flag),
            ("--human-numeric-sort", Flag),
            ("-n", Flag),
            ("--numeric-sort", Flag),
            ("-R", Flag),
            ("--random-sort", Flag),
            ("--random-source", Read),
            ("-r", Flag),
            ("--reverse", Flag),
            ("--sort", Literal),
            ("-V", Flag),
            ("--version-sort", Flag),
            ("--batch-size", Literal),
            ("-c", Flag),
            ("-C", Flag),
            ("--check", Optional),
            ("--debug", Flag),
            ("--files0-from", Read),
            ("-k", Literal),
            ("--key", Literal),
            ("-m", Flag),
            ("--merge", Flag),
            ("-o", Write),
            ("--output", Write),
            ("-s", Flag),
            ("--stable", Flag),
            ("-S", Literal),
            ("--buffer-size", Literal),
            ("-t", Literal),
            ("--field-separator", Literal),
            ("-T", Write),
            ("--temporary-directory", Write),
            ("--parallel", Literal),
            ("-u", Flag),
            ("--unique", Flag),
            ("-z", Flag),
            ("--zero-terminated", Flag),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["uniq"],
        options: &[&[
            ("-c", Flag),
            ("--count", Flag),
            ("-d", Flag),
            ("--repeated", Flag),
            ("-D", Flag),
            ("--all-repeated", Optional),
            ("-f", Literal),
            ("--skip-fields", Literal),
            ("--group", Optional),
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-s", Literal),
            ("--skip-chars", Literal),
            ("-u", Flag),
            ("--unique", Flag),
            ("-z", Flag),
            ("--zero-terminated", Flag),
            ("-w", Literal),
            ("--check-chars", Literal),
        ]],
        // `uniq INPUT OUTPUT` writes OUTPUT.
        lead: &[Read, Write],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["cut"],
        options: &[&[
            ("-b", Literal),
            ("--bytes", Literal),
            ("-c", Literal),
            ("--characters", Literal),
            ("-d", Literal),
            ("--delimiter", Literal),
            ("-f", Literal),
            ("--fields", Literal),
            ("-n", Flag),
            ("--complement", Flag),
            ("-s", Flag),
            ("--only-delimited", Flag),
            ("--output-delimiter", Literal),
            ("-z", Flag),
            ("--zero-terminated", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["tr"],
        options: &[&[
            ("-c", Flag),
            ("-C", Flag),
            ("--complement", Flag),
            ("-d", Flag),
            ("--delete", Flag),
            ("-s", Flag),
            ("--squeeze-repeats", Flag),
            ("-t", Flag),
            ("--truncate-set1", Flag),
        ]],
        lead: &[Literal, Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["nl"],
        options: &[&[
            ("-b", Literal),
            ("--body-numbering", Literal),
            ("-d", Literal),
            ("--section-delimiter", Literal),
            ("-f", Literal),
            ("--footer-numbering", Literal),
            ("-h", Literal),
            ("--header-numbering", Literal),
            ("-i", Literal),
            ("--line-increment", Literal),
            ("-l", Literal),
            ("--join-blank-lines", Literal),
            ("-n", Literal),
            ("--number-format", Literal),
            ("-p", Flag),
            ("--no-renumber", Flag),
            ("-s", Literal),
            ("--number-separator", Literal),
            ("-v", Literal),
            ("--starting-line-number", Literal),
            ("-w", Literal),
            ("--number-width", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["fold"],
        options: &[&[
            ("-b", Flag),
            ("--bytes", Flag),
            ("-c", Flag),
            ("--characters", Flag),
            ("-s", Flag),
            ("--spaces", Flag),
            ("-w", Literal),
            ("--width", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["fmt"],
        options: &[&[
            ("-c", Flag),
            ("--crown-margin", Flag),
            ("-p", Literal),
            ("--prefix", Literal),
            ("-s", Flag),
            ("--split-only", Flag),
            ("-t", Flag),
            ("--tagged-paragraph", Flag),
            ("-u", Flag),
            ("--uniform-spacing", Flag),
            ("-w", Literal),
            ("--width", Literal),
            ("-g", Literal),
            ("--goal", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["expand", "unexpand"],
        options: &[&[
            ("-i", Flag),
            ("--initial", Flag),
            ("-a", Flag),
            ("--all", Flag),
            ("--first-only", Flag),
            ("-t", Literal),
            ("--tabs", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["rev"],
        options: &[&[("-0", Flag), ("--zero", Flag)]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["column"],
        options: &[&[
            ("-t", Flag),
            ("--table", Flag),
            ("-s", Literal),
            ("--separator", Literal),
            ("-o", Literal),
            ("--output-separator", Literal),
            ("-c", Literal),
            ("--output-width", Literal),
            ("-x", Flag),
            ("--fillrows", Flag),
            ("-n", Literal),
            ("--table-name", Literal),
            ("-N", Literal),
            ("--table-columns", Literal),
            ("-R", Literal),
            ("--table-right", Literal),
            ("-J", Flag),
            ("--json", Flag),
            ("-L", Flag),
            ("--keep-empty-lines", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["paste"],
        options: &[&[
            ("-d", Literal),
            ("--delimiters", Literal),
            ("-s", Flag),
            ("--serial", Flag),
            ("-z", Flag),
            ("--zero-terminated", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["diff"],
        options: &[&[
            ("-q", Flag),
            ("--brief", Flag),
            ("-s", Flag),
            ("--report-identical-files", Flag),
            ("-c", Flag),
            ("-C", Literal),
            ("--context", Optional),
            ("-u", Flag),
            ("-U", Literal),
            ("--unified", Optional),
            ("-e", Flag),
            ("--ed", Flag),
            ("-n", Flag),
            ("--rcs", Flag),
            ("-y", Flag),
            ("--side-by-side", Flag),
            ("-W", Literal),
            ("--width", Literal),
            ("--left-column", Flag),
            ("--suppress-common-lines", Flag),
            ("-p", Flag),
            ("--show-c-function", Flag),
            ("-F", Literal),
            ("--show-function-line", Literal),
            ("--label", Literal),
            ("--expand-tabs", Flag),
            ("-t", Flag),
            ("-T", Flag),
            ("--initial-tab", Flag),
            ("--tabsize", Literal),
            ("--suppress-blank-empty", Flag),
            ("-l", Flag),
            ("--paginate", Flag),
            ("-r", Recurse),
            ("--recursive", Recurse),
            ("--no-dereference", Flag),
            ("-N", Flag),
            ("--new-file", Flag),
            ("--unidirectional-new-file", Flag),
            ("--ignore-file-name-case", Flag),
            ("--no-ignore-file-name-case", Flag),
            ("-x", Literal),
            ("--exclude", Literal),
            ("-X", Read),
            ("--exclude-from", Read),
            ("-S", Literal),
            ("--starting-file", Literal),
            ("--from-file", Read),
            ("--to-file", Read),
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-E", Flag),
            ("--ignore-tab-expansion", Flag),
            ("-Z", Flag),
            ("--ignore-trailing-space", Flag),
            ("-b", Flag),
            ("--ignore-space-change", Flag),
            ("-w", Flag),
            ("--ignore-all-space", Flag),
            ("-B", Flag),
            ("--ignore-blank-lines", Flag),
            ("-I", Literal),
            ("--ignore-matching-lines", Literal),
            ("-a", Flag),
            ("--text", Flag),
            ("--strip-trailing-cr", Flag),
            ("-D", Literal),
            ("--ifdef", Literal),
            ("--line-format", Literal),
            ("--old-line-format", Literal),
            ("--new-line-format", Literal),
            ("--unchanged-line-format", Literal),
            ("--old-group-format", Literal),
            ("--new-group-format", Literal),
            ("--changed-group-format", Literal),
            ("--unchanged-group-format", Literal),
            ("-d", Flag),
            ("--minimal", Flag),
            ("--horizon-lines", Literal),
            ("--speed-large-files", Flag),
            ("--color", Optional),
            ("--palette", Literal),
            ("--normal", Flag),
            ("--help", Flag),
            ("-v", Flag),
            ("--version", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["cmp"],
        options: &[&[
            ("-b", Flag),
            ("--print-bytes", Flag),
            ("-i", Literal),
            ("--ignore-initial", Literal),
            ("-l", Flag),
            ("--verbose", Flag),
            ("-n", Literal),
            ("--bytes", Literal),
            ("-s", Flag),
            ("--quiet", Flag),
            ("--silent", Flag),
        ]],
        lead: &[Read, Read],
        rest: Literal,
        style: Style::Gnu,
    },
    Program {
        names: &["comm"],
        options: &[&[
            ("-1", Flag),
            ("-2", Flag),
            ("-3", Flag),
            ("--check-order", Flag),
            ("--nocheck-order", Flag),
            ("--output-delimiter", Literal),
            ("--total", Flag),
            ("-z", Flag),
            ("--zero-terminated", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: CHECKSUMS,
        options: &[&[
            ("-b", Flag),
            ("--binary", Flag),
            ("-c", Flag),
            ("--check", Flag),
            ("--tag", Flag),
            ("-t", Flag),
            ("--text", Flag),
            ("-z", Flag),
            ("--zero", Flag),
            ("--ignore-missing", Flag),
            ("--quiet", Flag),
            ("--status", Flag),
            ("--strict", Flag),
            ("-w", Flag),
            ("--warn", Flag),
            ("-l", Literal),
            ("--length", Literal),
            ("-a", Literal),
            ("--algorithm", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["file"],
        options: &[&[
            ("-b", Flag),
            ("--brief", Flag),
            ("-i", Flag),
            ("--mime", Flag),
            ("--mime-type", Flag),
            ("--mime-encoding", Flag),
            ("-L", Flag),
            ("-h", Flag),
            ("-z", Flag),
            ("-s", Flag),
            ("-k", Flag),
            ("-N", Flag),
            ("-0", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["stat"],
        options: &[&[
            ("-L", Flag),
            ("--dereference", Flag),
            ("-f", Flag),
            ("--file-system", Flag),
            ("-c", Literal),
            ("--format", Literal),
            ("--printf", Literal),
            ("-t", Flag),
            ("--terse", Flag),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["realpath", "readlink"],
        options: &[&[
            ("-e", Flag),
            ("--canonicalize-existing", Flag),
            ("-m", Flag),
            ("--canonicalize-missing", Flag),
            ("-f", Flag),
            ("--canonicalize", Flag),
            ("-L", Flag),
            ("--logical", Flag),
            ("-P", Flag),
            ("--physical", Flag),
            ("-q", Flag),
            ("--quiet", Flag),
            ("-s", Flag),
            ("--strip", Flag),
            ("--no-symlinks", Flag),
            ("-z", Flag),
            ("--zero", Flag),
            ("-n", Flag),
            ("--no-newline", Flag),
            ("-v", Flag),
            ("--verbose", Flag),
            ("--relative-to", Name),
            ("--relative-base", Name),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["du"],
        options: &[&[
            ("-a", Flag),
            ("--all", Flag),
            ("--apparent-size", Flag),
            ("-B", Literal),
            ("--block-size", Literal),
            ("-b", Flag),
            ("--bytes", Flag),
            ("-c", Flag),
            ("--total", Flag),
            ("-d", Literal),
            ("--max-depth", Literal),
            ("-h", Flag),
            ("--human-readable", Flag),
            ("--inodes", Flag),
            ("-k", Flag),
            ("-m", Flag),
            ("-L", Flag),
            ("--dereference", Flag),
            ("-l", Flag),
            ("--count-links", Flag),
            ("-P", Flag),
            ("--no-dereference", Flag),
            ("-s", Flag),
            ("--summarize", Flag),
            ("--si", Flag),
            ("-t", Literal),
            ("--threshold", Literal),
            ("--time", Optional),
            ("-x", Flag),
            ("--one-file-system", Flag),
            ("--exclude", Literal),
            ("-0", Flag),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["df"],
        options: &[&[
            ("-a", Flag),
            ("--all", Flag),
            ("-B", Literal),
            ("--block-size", Literal),
            ("-h", Flag),
            ("--human-readable", Flag),
            ("-H", Flag),
            ("--si", Flag),
            ("-i", Flag),
            ("--inodes", Flag),
            ("-k", Flag),
            ("-l", Flag),
            ("--local", Flag),
            ("--output", Optional),
            ("-P", Flag),
            ("--portability", Flag),
            ("--total", Flag),
            ("-t", Literal),
            ("--type", Literal),
            ("-T", Flag),
            ("--print-type", Flag),
            ("-x", Literal),
            ("--exclude-type", Literal),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["tree"],
        options: &[&[
            ("-a", Flag),
            ("-d", Flag),
            ("-f", Flag),
            ("-x", Flag),
            ("-L", Literal),
            ("-R", Flag),
            ("-P", Literal),
            ("-I", Literal),
            ("--gitignore", Flag),
            ("--ignore-case", Flag),
            ("--matchdirs", Flag),
            ("--prune", Flag),
            ("--filelimit", Literal),
            ("--noreport", Flag),
            ("--charset", Literal),
            ("-o", Write),
            ("-q", Flag),
            ("-N", Flag),
            ("-Q", Flag),
            ("-p", Flag),
            ("-u", Flag),
            ("-g", Flag),
            ("-s", Flag),
            ("-h", Flag),
            ("--si", Flag),
            ("--du", Flag),
            ("-D", Flag),
            ("--timefmt", Literal),
            ("-F", Flag),
            ("--inodes", Flag),
            ("--device", Flag),
            ("-v", Flag),
            ("-t", Flag),
            ("-c", Flag),
            ("-U", Flag),
            ("-r", Flag),
            ("--dirsfirst", Flag),
            ("--filesfirst", Flag),
            ("--sort", Literal),
            ("-i", Flag),
            ("-A", Flag),
            ("-S", Flag),
            ("-n", Flag),
            ("-C", Flag),
            ("-X", Flag),
            ("-J", Flag),
            ("--version", Flag),
            ("--help", Flag),
        ]],
        lead: &[],
        rest: Name,
        style: Style::Gnu,
    },
    Program {
        names: &["strings"],
        options: &[&[
            ("-a", Flag),
            ("--all", Flag),
            ("-d", Flag),
            ("--data", Flag),
            ("-f", Flag),
            ("--print-file-name", Flag),
            ("-n", Literal),
            ("--bytes", Literal),
            ("-NUM", Flag),
            ("-t", Literal),
            ("--radix", Literal),
            ("-e", Literal),
            ("--encoding", Literal),
            ("-w", Flag),
            ("--include-all-whitespace", Flag),
            ("-s", Literal),
            ("--output-separator", Literal),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["od"],
        options: &[&[
            ("-A", Literal),
            ("--address-radix", Literal),
            ("--endian", Literal),
            ("-j", Literal),
            ("--skip-bytes", Literal),
            ("-N", Literal),
            ("--read-bytes", Literal),
            ("-S", Literal),
            ("--strings", Optional),
            ("-t", Literal),
            ("--format", Literal),
            ("-v", Flag),
            ("--output-duplicates", Flag),
            ("-w", Optional),
            ("--width", Optional),
            ("-a", Flag),
            ("-b", Flag),
            ("-c", Flag),
            ("-d", Flag),
            ("-f", Flag),
            ("-i", Flag),
            ("-l", Flag),
            ("-o", Flag),
            ("-s", Flag),
            ("-x", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["hexdump", "hd"],
        options: &[&[
            ("-b", Flag),
            ("-c", Flag),
            ("-C", Flag),
            ("--canonical", Flag),
            ("-d", Flag),
            ("-o", Flag),
            ("-x", Flag),
            ("-e", Literal),
            ("--format", Literal),
            ("-f", Read),
            ("--format-file", Read),
            ("-n", Literal),
            ("--length", Literal),
            ("-s", Literal),
            ("--skip", Literal),
            ("-v", Flag),
            ("--no-squeezing", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["xxd"],
        options: &[&[
            ("-a", Flag),
            ("-b", Flag),
            ("-C", Flag),
            ("-c", Literal),
            ("-E", Flag),
            ("-e", Flag),
            ("-g", Literal),
            ("-i", Flag),
            ("-l", Literal),
            ("-n", Literal),
            ("-o", Literal),
            ("-p", Flag),
            ("-ps", Flag),
            ("-s", Literal),
            ("-u", Flag),
            ("-d", Flag),
        ]],
        // `xxd INFILE OUTFILE` writes OUTFILE.
        lead: &[Read, Write],
        rest: Flag,
        style: Style::Words,
    },
    Program {
        names: &["base64", "base32", "basenc"],
        options: &[&[
            ("-d", Flag),
            ("--decode", Flag),
            ("-i", Flag),
            ("--ignore-garbage", Flag),
            ("-w", Literal),
            ("--wrap", Literal),
            ("--base64", Flag),
            ("--base64url", Flag),
            ("--base32", Flag),
            ("--base16", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["join"],
        options: &[&[
            ("-a", Literal),
            ("-e", Literal),
            ("-i", Flag),
            ("--ignore-case", Flag),
            ("-j", Literal),
            ("-o", Literal),
            ("-t", Literal),
            ("-v", Literal),
            ("-1", Literal),
            ("-2", Literal),
            ("--check-order", Flag),
            ("--nocheck-order", Flag),
            ("--header", Flag),
            ("-z", Flag),
        ]],
        lead: &[],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["date"],
        options: &[&[
            ("-d", Literal),
            ("--date", Literal),
            ("-f", Read),
            ("--file", Read),
            ("-I", Optional),
            ("--iso-8601", Optional),
            ("-R", Flag),
            ("--rfc-email", Flag),
            ("--rfc-3339", Literal),
            ("-r", Name),
            ("--reference", Name),
            ("-u", Flag),
            ("--utc", Flag),
            ("--universal", Flag),
            ("--debug", Flag),
        ]],
        // `+FORMAT`; `date MMDDhhmm` would set the clock, but only as root.
        lead: &[Literal],
        rest: Flag,
        style: Style::Gnu,
    },
    Program {
        names: &["jq"],
        options: &[&[
            ("-r", Flag),
            ("--raw-output", Flag),
            ("-j", Flag),
            ("--join-output", Flag),
            ("-a", Flag),
            ("--ascii-output", Flag),
            ("-c", Flag),
            ("--compact-output", Flag),
            ("-n", Flag),
            ("--null-input", Flag),
            ("-R", Flag),
            ("--raw-input", Flag),
            ("-s", Flag),
            ("--slurp", Flag),
            ("-S", Flag),
            ("--sort-keys", Flag),
            ("-C", Flag),
            ("--color-output", Flag),
            ("-M", Flag),
            ("--monochrome-output", Flag),
            ("-e", Flag),
            ("--exit-status", Flag),
            ("--tab", Flag),
            ("--indent", Literal),
            ("--seq", Flag),
            ("--stream", Flag),
            ("--arg", Pair),
            ("--argjson", Pair),
            ("-f", PatternFile),
            ("--from-file", PatternFile),
            ("-h", Flag),
            ("--help", Flag),
            ("--version", Flag),
        ]],
        lead: &[Pattern],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["yq"],
        options: &[&[
            ("-y", Flag),
            ("--yaml-output", Flag),
            ("--yml-output", Flag),
            ("-Y", Flag),
            ("--yaml-roundtrip", Flag),
            ("-w", Literal),
            ("--width", Literal),
            ("--indentless-lists", Flag),
            ("--indentless", Flag),
            ("-r", Flag),
            ("--raw-output", Flag),
            ("-c", Flag),
            ("--compact-output", Flag),
            ("-e", Flag),
            ("-S", Flag),
            ("--sort-keys", Flag),
            ("-n", Flag),
            ("-s", Flag),
            ("--arg", Pair),
            ("--version", Flag),
            ("-h", Flag),
            ("--help", Flag),
        ]],
        lead: &[Pattern],
        rest: Read,
        style: Style::Gnu,
    },
    Program {
        names: &["tee"],
        options: &[&[
            ("-a", Flag),
            ("--append", Flag),
            ("-i", Flag),
            ("--ignore-interrupts", Flag),
            ("-p", Flag),
            ("--output-error", Optional),
        ]],
        lead: &[],
        rest: Write,
        style: Style::Gnu,
    },
    Program {
        names: &["unzip", "zipinfo"],
        options: &[&[
            ("-l", Flag),
            ("-v", Flag),
            ("-t", Flag),
            ("-z", Flag),
            ("-Z", Flag),
            ("-q", Flag),
            ("-qq", Flag),
            ("-1", Flag),
            ("-2", Flag),
            ("-s", Flag),
            ("-m", Flag),
            ("-h", Flag),
            ("-T", Flag),
        ]],
        lead: &[Read],
        rest: Literal,
        style: Style::Words,
    },
];

/// The commands of a `sed` script that only print, delete or substitute in the text stream
/// (no `w` file, `r` file, `e` command, `W`, `R`).
fn sed_script_is_pure(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_address = |i: &mut usize| {
        loop {
            match chars.get(*i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                    *i += 1
                }
                Some('/') => {
                    *i += 1;
                    while let Some(&c) = chars.get(*i) {
                        *i += 1;
                        match c {
                            '\\' => *i += 1,
                            '/' => break,
                            _ => {}
                        }
                    }
                }
                _ => break,
            }
        }
    };
    while i < chars.len() {
        skip_address(&mut i);
        let Some(&command) = chars.get(i) else {
            return true;
        };
        i += 1;
        match command {
            'p' | 'd' | 'D' | 'P' | 'q' | 'Q' | '=' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x'
            | 'l' | 'z' | '{' | '}' => {}
            ';' | '\n' | ' ' => continue,
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    return false;
                };
                if delim == '\\' || delim == '\n' {
                    return false;
                }
                i += 1;
                for _ in 0..2 {
                    while let Some(&c) = chars.get(i) {
                        i += 1;
                        if c == '\\' {
                            i += 1;
                        } else if c == delim {
                            break;
                        }
                    }
                }
                if command == 's' {
                    while let Some(&flag) = chars.get(i) {
                        match flag {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                            c if c.is_ascii_digit() => i += 1,
                            ';' | '\n' | ' ' | '}' => break,
                            _ => return false,
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

const SED: &[(&str, Value)] = &[
    ("-n", Flag),
    ("--quiet", Flag),
    ("--silent", Flag),
    ("-E", Flag),
    ("-r", Flag),
    ("--regexp-extended", Flag),
    ("-s", Flag),
    ("--separate", Flag),
    ("-u", Flag),
    ("--unbuffered", Flag),
    ("-z", Flag),
    ("--null-data", Flag),
    ("--posix", Flag),
    ("--debug", Flag),
    ("-e", Pattern),
    ("--expression", Pattern),
    ("-i", Optional),
    ("--in-place", Optional),
    ("-l", Literal),
    ("--line-length", Literal),
];

/// `sed`: every script pure; with `-i`, the files are written (edits in place).
fn sed(judge: &mut Judge, args: &[Arg]) -> bool {
    let items = parse(args, &[SED], Style::Gnu);
    let in_place = items
        .iter()
        .any(|i| matches!(i, Item::Option { name, .. } if name.starts_with("-i") || name.starts_with("--in")));
    // A backup suffix with `*` or `/` places the backup copy in another directory.
    let backup_elsewhere = items.iter().any(|i| {
        matches!(i, Item::Option { name: "-i" | "--in-place", arg: Some(suffix), .. }
            if suffix.dynamic || suffix.text.contains(['*', '/']))
    });
    if backup_elsewhere {
        return false;
    }
    let mut scripts: Vec<&Arg> = Vec::new();
    for item in &items {
        if let Item::Option {
            value: Pattern,
            arg: Some(a),
            ..
        } = item
        {
            scripts.push(a);
        }
    }
    let given = !scripts.is_empty();
    let mut safe = true;
    let mut first = true;
    for item in &items {
        match item {
            Item::Operand(a) if first && !given => {
                first = false;
                scripts.push(a);
            }
            Item::Operand(a) => {
                safe &= judge.path(a, if in_place { Write } else { Read });
            }
            Item::Unknown(_) | Item::Missing(_) => safe = false,
            Item::Option { .. } => {}
        }
    }
    safe && !scripts.is_empty()
        && scripts
            .iter()
            .all(|s| !s.dynamic && sed_script_is_pure(&s.text))
}

/// `awk`'s options that only set data (`-F`, `-v`); never `-f` (a program from a file), gawk's
/// `-i`/`-l` (libraries and extensions loaded), `-e` and the others.
const AWK: &[Opt] = &[
    ("-F", Literal),
    ("--field-separator", Literal),
    ("-v", Literal),
    ("--assign", Literal),
];

/// `awk 'PROGRAM' FILES...`: a program that only reads its input and prints; its file operands
/// are read (a `NAME=value` among them is an assignment).
fn awk(judge: &mut Judge, args: &[Arg]) -> bool {
    let items = parse(args, &[AWK], Style::Gnu);
    let mut program = None;
    let mut safe = true;
    for item in &items {
        match item {
            Item::Option { .. } => {}
            Item::Operand(a) if program.is_none() => program = Some(*a),
            Item::Operand(a) if a.assignment().is_some() => safe &= !a.dynamic,
            Item::Operand(a) => safe &= judge.path(a, Read),
            Item::Unknown(_) | Item::Missing(_) => safe = false,
        }
    }
    safe && program.is_some_and(|p| !p.dynamic && awk_program_is_pure(&p.text))
}

/// Whether an awk program only reads its input and prints to its output: no `system()`, no
/// pipe (`|`, `|&`), no `print > file`, no `getline` (reads files, runs commands), no
/// `ENVIRON` or `PROCINFO` (the environment, secrets included), no `ARGV` (the files it
/// reads), no `@` directive or call.
fn awk_program_is_pure(program: &str) -> bool {
    let chars: Vec<char> = program.chars().collect();
    let mut k = 0;
    // Inside a `print`/`printf` statement: a `>` at its top level redirects it to a file.
    let mut printing = false;
    let mut depth = 0usize;
    // What came last, to tell a regex `/re/` from a division.
    let mut operand_before = false;
    while k < chars.len() {
        let c = chars[k];
        match c {
            '"' => {
                k += 1;
                while k < chars.len() && chars[k] != '"' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                operand_before = true;
            }
            '/' if !operand_before => {
                k += 1;
                while k < chars.len() && chars[k] != '/' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                operand_before = true;
            }
            '|' if chars.get(k + 1) == Some(&'|') => {
                k += 1;
                operand_before = false;
            }
            '|' | '@' | '`' => return false,
            '>' if printing && depth == 0 => return false,
            '(' => {
                depth += 1;
                operand_before = false;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                operand_before = true;
            }
            ';' | '{' | '}' | '\n' => {
                printing = false;
                depth = 0;
                operand_before = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = k;
                while k + 1 < chars.len()
                    && (chars[k + 1].is_ascii_alphanumeric() || chars[k + 1] == '_')
                {
                    k += 1;
                }
                let word: String = chars[start..=k].iter().collect();
                match word.as_str() {
                    // `ARGV` and `ARGC` choose the files it reads.
                    "system" | "getline" | "ENVIRON" | "PROCINFO" | "ARGV" | "ARGC" | "close"
                    | "fflush" => {
                        return false;
                    }
                    "print" | "printf" => printing = true,
                    _ => {}
                }
                operand_before = true;
            }
            c if c.is_ascii_digit() || c == '$' => {
                operand_before = c.is_ascii_digit() || operand_before
            }
            c if c.is_whitespace() => {}
            _ => operand_before = false,
        }
        k += 1;
    }
    true
}

/// The reading and text tools; `None` for a name that is none of them.
pub(super) fn judge(judge: &mut Judge, name: &str, args: &[Arg]) -> Option<bool> {
    match name {
        "sed" | "gsed" => return Some(sed(judge, args)),
        "awk" | "gawk" | "mawk" | "nawk" => return Some(awk(judge, args)),
        _ => {}
    }
    let program = PROGRAMS.iter().find(|p| p.names.contains(&name))?;
    // `unzip` extracts unless told to list, test or print.
    if name == "unzip"
        && !args
            .iter()
            .any(|a| matches!(a.text.as_str(), "-l" | "-v" | "-t" | "-Z" | "-z"))
    {
        return Some(false);
    }
    if args.len() == 1 && GNU_INFO.iter().any(|(o, _)| args[0].is(o)) {
        return Some(true);
    }
    // `diff -r` prints a file one side lacks by name, and the lines that differ where both
    // have it: a secret's contents only with `-N`, which prints a missing file as empty.
    let items = parse(args, program.options, program.style);
    judge.filtered_trees = name == "diff"
        && !items.iter().any(|i| {
            matches!(i, Item::Option { name, .. }
                if matches!(*name, "-N" | "--new-file" | "--unidirectional-new-file"))
        });
    let safe = judge.items(&items, program);
    judge.filtered_trees = false;
    Some(safe)
}
