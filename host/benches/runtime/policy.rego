# The benchmark's org policy in Rego: the rules `cargo`, `read-only-git`, `web-fetch`,
# `download-commands`, `node-installs`, `push-to-protected-branch` and `force-push` of
# examples/policies/team-policy.toml, with the same precedence (deny > ask > allow; allow only
# when every simple command is allowed; no rule: abstain). Rego cannot parse shell: a command is
# split on control operators and words on whitespace (no quotes, wrappers or substitutions),
# which is less work than org-policy's brush-parser.
package acpgate

import rego.v1

shell := s if {
	s := input.command.shell
	is_string(s)
} else := ""

commands := [c |
	some part in regex.split(`&&|\|\||[;|&\n]`, shell)
	c := trim_space(part)
	c != ""
]

words(c) := regex.split(`\s+`, c)

# The program name as org-policy normalises it: the last path segment, lower-cased.
program(c) := lower(regex.replace(words(c)[0], `^.*/`, ""))

# What regexes are matched against: the program name and the other words, one space apart.
text(c) := concat(" ", array.concat([program(c)], array.slice(words(c), 1, count(words(c)))))

allowed(c) if {
	program(c) == "cargo"
	words(c)[1] in {"build", "check", "test", "clippy", "fmt", "doc", "nextest", "bench"}
}

allowed(c) if {
	program(c) == "git"
	words(c)[1] in {"status", "diff", "log", "show", "blame"}
}

deny contains "main, master and release/* are protected: push a branch and open a pull request [push-to-protected-branch]" if {
	some c in commands
	regex.match(`^git(\s.*)?\spush(\s.*)?[\s:+](refs/heads/)?(main|master|release/\S+)(\s|$)`, text(c))
}

deny contains "force pushes rewrite shared history [force-push]" if {
	some c in commands
	regex.match(`^git(\s.*)?\spush(\s.*)?\s(--force(-with-lease|-if-includes)?(=\S*)?|-[a-zA-Z]*f[a-zA-Z]*|\+\S+)(\s|$)`, text(c))
}

ask contains "the agent wants to fetch from the network: check the URL [web-fetch]" if {
	input.kind == "fetch"
}

ask contains "the command downloads from the network: check the URL and what is done with it [download-commands]" if {
	some c in commands
	program(c) in {"curl", "wget", "wget2", "aria2c", "xh", "http", "https"}
}

ask contains "installing packages runs their install scripts: a person should check what is added [node-installs]" if {
	some c in commands
	program(c) in {"npm", "pnpm", "yarn", "bun"}
	words(c)[1] in {"install", "i", "add", "ci"}
}

allow if {
	count(commands) > 0
	every c in commands {
		allowed(c)
	}
}

decision := "deny" if {
	count(deny) > 0
} else := "ask" if {
	count(ask) > 0
} else := "allow" if {
	allow
} else := "abstain"
