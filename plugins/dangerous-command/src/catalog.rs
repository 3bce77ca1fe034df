//! The catalogue of the checker's rules: every id a finding carries, with what it catches. This
//! is what `disable_rules` may name, and what the README's table lists.

/// Every rule id, with what it catches. `disable_rules` takes these ids.
pub const RULES: &[(&str, &str)] = &[
    (
        "unparseable",
        "ask: the command (or a word in it) cannot be parsed",
    ),
    ("too-complex", "ask: nested too deeply or too long to check"),
    (
        "dynamic-command",
        "ask: the command word is only known at run time ($CMD, $(...))",
    ),
    (
        "dynamic-code",
        "ask: code run by eval / bash -c / source is only known at run time",
    ),
    (
        "unicode-confusable",
        "ask: invisible characters or look-alike letters in the command",
    ),
    (
        "rm-root",
        "deny: recursive delete of /, ~, the workspace root, system or top-level directories",
    ),
    (
        "rm-dynamic",
        "ask: recursive delete of a path only known at run time",
    ),
    (
        "find-delete",
        "ask: find -delete (deny when it starts at / or the home directory)",
    ),
    (
        "sensitive-write",
        "deny: writes, moves or deletes a sensitive path (~/.ssh, shell start-up files, /etc, .git/hooks, .env*)",
    ),
    (
        "sensitive-read",
        "deny: reads a credential file (~/.ssh, ~/.aws, .env*, ...) or another user's home",
    ),
    (
        "recursive-read",
        "ask: reads every file of a tree that may hold credential files (grep -r x ., tar c ., rg -uu)",
    ),
    (
        "glob-option",
        "ask: a glob that may expand to a file named like an option (rm *, find . *) without -- or ./",
    ),
    (
        "patch-unread",
        "ask: applying a patch whose files are not known (from a pipe, not a unified or git diff) or that makes a symbolic link",
    ),
    (
        "env-dump",
        "ask: prints every environment variable (env, printenv, export -p, set, declare -p, ps e)",
    ),
    (
        "secret-variable",
        "deny: prints a variable whose name marks a secret (echo $GITHUB_TOKEN); ask when into a pipe or file",
    ),
    (
        "device-write",
        "deny: writes to a disk device (dd of=/dev/sda, > /dev/nvme0n1); ask for other devices",
    ),
    (
        "terminal",
        "ask: reads or writes a person's terminal (/dev/tty, /dev/pts/N, /dev/console): their keystrokes, or escape sequences",
    ),
    (
        "disk-format",
        "deny: creates file systems or repartitions disks (mkfs, wipefs, fdisk)",
    ),
    (
        "chmod-recursive",
        "deny: recursive chmod/chown of roots or to world-writable; ask for other recursive ones",
    ),
    (
        "fork-bomb",
        "deny: a function that calls itself in a pipeline or in the background",
    ),
    (
        "remote-code",
        "deny: code from the network run by a shell or interpreter (curl | sh, bash <(curl ..))",
    ),
    (
        "decoded-payload",
        "deny: decoded or unpacked bytes run by a shell (base64 -d | sh)",
    ),
    (
        "stdin-script",
        "ask: a shell or interpreter runs code from an input that cannot be checked",
    ),
    (
        "git-force-push",
        "deny: git push --force / -f / --force-with-lease / +refspec / --mirror",
    ),
    ("git-remote-delete", "ask: git push --delete / :branch"),
    (
        "git-history-rewrite",
        "deny: git filter-branch / filter-repo",
    ),
    (
        "git-discard",
        "ask: local git commands that throw away what git keeps nowhere else (reset --hard, clean -f, checkout/restore of files, forced checkouts, branch -D, tag -d, update-ref, stash drop/clear, reflog expire, gc --prune, prune, worktree remove --force)",
    ),
    (
        "git-no-verify",
        "ask: git commit/merge/rebase/push --no-verify (-n) skips the repository's hooks",
    ),
    (
        "git-exec-option",
        "deny: git options that run programs (-c core.sshCommand=, -c alias.x=!.., --upload-pack, --exec-path=)",
    ),
    (
        "privilege-escalation",
        "deny: sudo, su, doas, pkexec, run0, sudoedit, setpriv, ...",
    ),
    (
        "persistence",
        "deny: schedulers and service units (crontab, at, systemctl enable, launchctl load)",
    ),
    (
        "exfiltration",
        "deny: sends a secret file over the network (curl -d @~/.ssh/id_rsa, scp of keys)",
    ),
    (
        "local-file",
        "ask: fetches local files by a pattern, from another host, or from a path only known when it runs (curl file:...)",
    ),
    (
        "reverse-shell",
        "deny: a shell connected to the network (/dev/tcp, nc -e, socat exec:, python socket + pty)",
    ),
    (
        "outside-write",
        "deny: a command writes, deletes or moves a file outside the workspace (as the path validator denies a tool's)",
    ),
    (
        "outside-read",
        "ask: a command reads or lists a file outside the workspace (as the path validator asks about a tool's)",
    ),
    (
        "workspace-root-delete",
        "deny: deletes or moves away the workspace root itself (as the path validator denies a tool's delete of it)",
    ),
    (
        "env-code-injection",
        "deny: variables that load code (LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, NODE_OPTIONS=--require ..); ask for LD_LIBRARY_PATH and the like",
    ),
    ("rg-pre", "ask: rg --pre runs a program on every file"),
    (
        "fetched-code",
        "ask: npx, uvx, pipx run, pnpm/yarn dlx, uv run --with, go run PKG@V fetch a package the workspace does not pin and run it (npx of a program the workspace installed in node_modules/.bin runs that one)",
    ),
    (
        "package-install",
        "ask: npm/pnpm/yarn/bun install, pip install, uv add, poetry add, cargo install, go install, bundle install, gem install, composer require, dotnet add package fetch packages and may run code they ship",
    ),
    ("system-power", "deny: shutdown, reboot, halt, kill -1"),
    (
        "config-deny",
        "deny: an `extra_deny` pattern from the config matched",
    ),
    (
        "config-ask",
        "ask: an `extra_ask` pattern from the config matched",
    ),
];
