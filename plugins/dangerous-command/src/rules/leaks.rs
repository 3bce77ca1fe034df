//! Rules for what a command prints that the agent must not read: the whole environment (`env`,
//! `printenv`, `export -p`, `set`, `declare -p`, `ps e`), and a variable whose name marks a
//! secret (`echo $GITHUB_TOKEN`, `printenv AWS_SECRET_ACCESS_KEY`, `cat <<< "$API_KEY"`).
//! Printing a harmless variable (`echo $PATH`, `$HOME`) is not a leak; neither is handing a
//! secret to the program it is for (`curl -H "Authorization: Bearer $TOKEN"`), nor its length
//! (`${#TOKEN}`), nor whether it is set (`${TOKEN:+set}`).

use acp_gate_shell::{Arg, Runs};

use crate::judgement::{Findings, Level};

/// Text that marks a secret wherever it is in a name (upper-cased).
const SECRET_TEXT: &[&str] = &["SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"];

/// Words of a name (between `_`) that mark a secret: `GITHUB_TOKEN`, `STRIPE_KEY`, `DB_PASS`,
/// `GITLAB_PAT`, `SENTRY_DSN`, `NPM_CONFIG__AUTH` (not `SSH_AUTH_SOCK`, whose `AUTH` is not
/// last, nor `GIT_AUTHOR_NAME`).
const SECRET_WORDS: &[&str] = &[
    "TOKEN", "KEY", "APIKEY", "PASS", "PWD", "PAT", "DSN", "COOKIE", "WEBHOOK",
];

/// Databases and brokers whose `_URL` / `_URI` holds a password (`DATABASE_URL`, `REDIS_URL`).
const URL_WITH_PASSWORD: &[&str] = &[
    "DATABASE",
    "DB",
    "POSTGRES",
    "POSTGRESQL",
    "PG",
    "MYSQL",
    "MONGO",
    "MONGODB",
    "REDIS",
    "AMQP",
    "RABBITMQ",
];

/// Cloud providers' and secret managers' variables: every one of them is about an account.
const PROVIDER_PREFIXES: &[&str] = &[
    "AWS_",
    "AZURE_",
    "ARM_",
    "GOOGLE_",
    "GCP_",
    "GCLOUD_",
    "CLOUDSDK_",
    "DIGITALOCEAN_",
    "CLOUDFLARE_",
    "HEROKU_",
    "VERCEL_",
    "NETLIFY_",
    "VAULT_",
    "DOPPLER_",
    "OP_",
];

/// Whether the variable `name` holds a secret, by how it is named.
pub(crate) fn secret_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split('_').filter(|w| !w.is_empty()).collect();
    let last = words.last().copied().unwrap_or("");
    upper != "PWD"
        && (SECRET_TEXT.iter().any(|t| upper.contains(t))
            || words.iter().any(|w| SECRET_WORDS.contains(w))
            || last.ends_with("TOKEN")
            || last == "AUTH"
            || (matches!(last, "URL" | "URI")
                && words.iter().any(|w| URL_WITH_PASSWORD.contains(w)))
            || PROVIDER_PREFIXES.iter().any(|p| upper.starts_with(p)))
}

/// The variables whose values `word` holds, as the shell expands it: `$NAME`, `${NAME}`,
/// `${NAME:-x}`, `${NAME:0:4}`; not `${#NAME}` (a length), `${NAME:+x}` / `${NAME+x}` (whether
/// it is set). `${!NAME}` (a value named by another) counts as a secret.
fn printed_variables(word: &Arg) -> Vec<String> {
    let mut names = Vec::new();
    if !word.dynamic {
        return names;
    }
    let text = word.text.as_str();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let (braced, body) = match rest.strip_prefix('{') {
            Some(body) => (true, body),
            None => (false, rest),
        };
        if braced && body.starts_with('#') {
            continue;
        }
        if braced && body.starts_with('!') {
            names.push("!".to_owned());
            continue;
        }
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = &body[name.len()..];
        if name.is_empty() || (braced && (after.starts_with(":+") || after.starts_with('+'))) {
            continue;
        }
        names.push(name);
    }
    names
}

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings) {
    let inv = f.inv;
    if inv.runs != Runs::Nothing {
        return;
    }
    let args = inv.args();
    let operands: Vec<&Arg> = args
        .iter()
        .filter(|a| !a.text.starts_with('-') || a.dynamic)
        .collect();
    let options_only = |allowed: &str| {
        args.iter().all(|a| {
            !a.dynamic
                && a.text.starts_with('-')
                && a.text[1..].chars().all(|c| allowed.contains(c))
        })
    };
    let dumps = match inv.name.as_str() {
        // `env` with no command to run prints the environment (with its own assignments).
        "env" => !args.iter().any(|a| a.is("--help") || a.is("--version")),
        "printenv" => {
            operands.is_empty() && !args.iter().any(|a| a.is("--help") || a.is("--version"))
        }
        "export" => options_only("p"),
        "declare" | "typeset" => {
            options_only("pxrgaAilnut") && !args.iter().any(|a| a.text.contains(['f', 'F']))
        }
        "set" => args.is_empty() || args.iter().all(|a| a.is("--")),
        "readonly" | "local" => args.is_empty() || options_only("p"),
        // BSD-style `ps e`, `ps auxe`, `ps eww`: every process's environment.
        "ps" => args.iter().enumerate().any(|(k, a)| {
            let value_of = k > 0 && PS_VALUED.iter().any(|o| args[k - 1].is(o));
            !a.dynamic
                && !value_of
                && !a.text.starts_with('-')
                && a.text.chars().all(|c| c.is_ascii_alphabetic())
                && a.text.contains('e')
        }),
        _ => false,
    };
    if dumps {
        f.ask(
            "env-dump",
            "prints every environment variable, secrets (tokens, keys) included",
        );
        return;
    }
    // The variables the command prints: the words of a printer, the names `printenv` and
    // `declare -p` are given, the here-document or here-string given to a program that
    // prints its input.
    let mut printed: Vec<String> = Vec::new();
    match inv.name.as_str() {
        "echo" | "printf" | "print" => {
            printed.extend(args.iter().flat_map(printed_variables));
        }
        "printenv" => printed.extend(operands.iter().map(|a| a.text.clone())),
        "declare" | "typeset" | "export" | "readonly" if args.iter().any(|a| a.is("-p")) => {
            printed.extend(operands.iter().map(|a| a.text.clone()))
        }
        _ => {}
    }
    // Printed where the agent reads it (not into a pipe, a substitution or a file): denied.
    let to_agent = !inv.piped && inv.writes.is_empty();
    if let Some(name) = printed
        .iter()
        .find(|n| n.as_str() == "!" || secret_variable(n))
    {
        // A variable named by another may or may not be a secret: asked.
        let level = if to_agent && name != "!" {
            Level::Deny
        } else {
            Level::Ask
        };
        f.push(level, "secret-variable", printed_reason(name));
        return;
    }
    // A here-document or here-string holding a secret, given to a program: a program that
    // prints its input prints it.
    let printer = matches!(
        inv.name.as_str(),
        "cat"
            | "tee"
            | "head"
            | "tail"
            | "tac"
            | "nl"
            | "rev"
            | "cut"
            | "sort"
            | "uniq"
            | "od"
            | "xxd"
            | "hexdump"
            | "base64"
            | "strings"
    );
    let fed = inv
        .input
        .iter()
        .flat_map(printed_variables)
        .find(|n| n == "!" || secret_variable(n));
    if let Some(name) = fed {
        let level = if printer && to_agent {
            Level::Deny
        } else {
            Level::Ask
        };
        f.push(level, "secret-variable", printed_reason(&name));
    }
}

/// `ps` options that take the next word as their value.
const PS_VALUED: &[&str] = &[
    "-o",
    "-O",
    "-p",
    "-q",
    "-u",
    "-U",
    "-C",
    "-G",
    "-g",
    "-t",
    "-s",
    "--sort",
    "--pid",
    "--ppid",
    "--user",
    "--format",
    "--cols",
    "--columns",
    "--rows",
];

fn printed_reason(name: &str) -> String {
    if name == "!" {
        "prints a variable named by another, which may hold a secret".to_owned()
    } else {
        format!("prints the variable `{name}`, whose name marks a secret")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_mark_secrets() {
        for name in [
            "GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "db_password",
            "STRIPE_KEY",
            "SENTRY_DSN",
            "DATABASE_URL",
            "NPM_AUTH_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "REDIS_URL",
            "NEXTAUTH_SECRET",
            "NPM_CONFIG__AUTH",
            "GITHUB_PAT",
            "DB_PASS",
        ] {
            assert!(secret_variable(name), "{name}");
        }
        for name in [
            "PATH", "HOME", "PWD", "OLDPWD", "USER", "SHELL", "LANG", "TERM", "CI",
        ] {
            assert!(!secret_variable(name), "{name}");
        }
    }

    #[test]
    fn printed_variables_skip_lengths_and_tests() {
        let word = |t: &str| Arg::unknown(t);
        assert_eq!(printed_variables(&word("$A ${B} ${C:-x}")), ["A", "B", "C"]);
        assert!(printed_variables(&word("${#A} ${B:+set} ${C+set}")).is_empty());
        assert_eq!(printed_variables(&word("${!P}")), ["!"]);
        assert!(printed_variables(&Arg::literal("$A")).is_empty());
    }
}
