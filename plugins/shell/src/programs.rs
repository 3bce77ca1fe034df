//! What the walk knows about programs by name: shells, interpreters, network fetchers,
//! decoders, privilege escalators, checksum printers.

use crate::arg::{Arg, Feed};

/// The name a command word runs: its last path segment, lower-cased so that a
/// case-insensitive file system cannot hide a command (`/usr/bin/GIT` -> `git`).
pub fn program_name(word: &str) -> String {
    word.rsplit('/').next().unwrap_or(word).to_lowercase()
}

/// Shells whose `-c` runs a shell string.
pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "pdksh"
            | "ash"
            | "yash"
            | "fish"
            | "csh"
            | "tcsh"
            | "rbash"
            | "oksh"
            | "loksh"
    )
}

/// Interpreters that run code read from their standard input when given no script.
pub fn is_interpreter(name: &str) -> bool {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        stem,
        "python"
            | "pypy"
            | "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "luajit"
            | "tclsh"
            | "wish"
            | "osascript"
            | "pwsh"
            | "powershell"
            | "jshell"
            | "irb"
            | "ghci"
            | "r"
            | "rscript"
            | "julia"
            | "deno"
            | "bun"
            | "expect"
    )
}

/// Programs that print checksums of the files they are given.
pub const CHECKSUMS: &[&str] = &[
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "shasum",
    "sum",
];

/// Programs that run other programs with raised privileges.
pub fn is_escalator(name: &str) -> bool {
    matches!(
        name,
        "sudo"
            | "su"
            | "doas"
            | "pkexec"
            | "run0"
            | "runuser"
            | "sudoedit"
            | "ksu"
            | "calife"
            | "setpriv"
    )
}

/// Programs whose output is bytes from the network.
pub fn is_fetcher(name: &str) -> bool {
    matches!(
        name,
        "curl"
            | "wget"
            | "wget2"
            | "fetch"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "http"
            | "https"
            | "xh"
            | "xhs"
            | "aria2c"
            | "lwp-request"
            | "get"
            | "lynx"
            | "links"
            | "w3m"
            | "ftp"
            | "tftp"
            | "scp"
            | "rsync"
            | "telnet"
    )
}

/// What a command writes to its standard output, as a feed for what comes after it.
pub fn produces(name: &str, argv: &[Arg]) -> Feed {
    let args = argv.get(1..).unwrap_or_default();
    let has = |flags: &[&str]| args.iter().any(|a| flags.iter().any(|f| a.is(f)));
    if is_fetcher(name) {
        return Feed::Network;
    }
    let decodes = match name {
        "base64" | "base32" | "basenc" | "gbase64" => has(&["-d", "-D", "--decode", "-di", "-id"]),
        "xxd" => args
            .iter()
            .any(|a| !a.dynamic && a.text.starts_with('-') && a.text.contains('r')),
        "openssl" => has(&["-d", "base64", "-base64", "enc"]),
        "uudecode" | "gunzip" | "zcat" | "bzcat" | "xzcat" | "zstdcat" | "lzcat" | "unxz"
        | "bunzip2" | "brotli" | "rev" => true,
        "gzip" | "bzip2" | "xz" | "zstd" => has(&["-d", "--decode", "--decompress", "-dc", "-cd"]),
        "tr" | "perl" | "python" | "python3" | "ruby" | "node" | "awk" | "sed" => false,
        _ => false,
    };
    if decodes {
        return Feed::Decoded;
    }
    match name {
        "echo" | "printf" => {
            let mut words = Vec::new();
            for a in args {
                if a.dynamic {
                    return a.feed.strong().join(Feed::Unknown);
                }
                if name == "echo"
                    && words.is_empty()
                    && matches!(a.text.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en")
                {
                    if a.text.contains('e') && args.iter().any(|w| w.text.contains('\\')) {
                        return Feed::Decoded;
                    }
                    continue;
                }
                words.push(a.text.as_str());
            }
            let text = words.join(" ");
            if name == "printf" && (text.contains('\\') || text.contains('%')) {
                Feed::Decoded
            } else {
                Feed::Text(text)
            }
        }
        _ => args
            .iter()
            .fold(Feed::Unknown, |feed, a| feed.join(a.feed.strong())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_paths_and_case() {
        assert_eq!(program_name("/bin/rm"), "rm");
        assert_eq!(program_name("/usr/bin/RM"), "rm");
        assert_eq!(program_name("./x/y"), "y");
    }

    #[test]
    fn interpreters_with_versions() {
        assert!(is_interpreter("python3.12"));
        assert!(is_interpreter("perl5"));
        assert!(!is_interpreter("pytest"));
    }
}
