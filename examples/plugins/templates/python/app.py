"""{{name}}: an acp-gate permission plugin. Denies a `git commit` whose message does not name a
ticket (`ABC-123`, of one of the projects in its config), in any spelling; asks when it cannot
see the message; abstains on everything else.

The host reads the command (`shell.parse`, the `shell` grant) as the built-in plugins read it:
every simple command, through `&&`, pipes, `$(...)`, `bash -c`, quoting, `sudo`, `env`,
`timeout` and other wrappers, with its program's name normalised (`/usr/bin/git` is `git`).
Nothing here splits shell text by hand.

`componentize-py -d wit -w plugin bindings .` writes the `wit_world` bindings for an editor;
the build generates them itself. An import's `result` returns its ok value or raises `Err`;
raising `Err(text)` returns the `err` case (the host then applies on_error).
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log, shell
from wit_world.imports.types import Request, ToolKind, Verdict, Verdict_Abstain, Verdict_Ask, Verdict_Deny

# git's global options that take a value (`git -C DIR commit`): the subcommand comes after.
GIT_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
FROM_ELSEWHERE = "the message comes from a file or another commit"
TICKET = re.compile(r"([A-Z][A-Z0-9]+)-[0-9]")


def subcommand_at(argv: list[str]) -> int:
    """Where the subcommand of a git command line is: the first word after git's global options."""
    i = 1
    while i < len(argv):
        if argv[i] == "--":
            return i + 1
        if not argv[i].startswith("-"):
            return i
        i += 2 if argv[i] in GIT_VALUED else 1
    return len(argv)


def messages(args: list[str]) -> tuple[list[str], str | None]:
    """The messages of `git commit ARGS`, or why they cannot be seen."""
    texts: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        if word.startswith("--"):
            name, glued, value = word[2:].partition("=")
            if name and "message".startswith(name):  # git takes any unambiguous abbreviation
                if glued:
                    texts.append(value)
                else:
                    texts.append(args[i] if i < len(args) else "")
                    i += 1
            elif name in ("file", "reuse-message", "reedit-message"):
                return texts, FROM_ELSEWHERE
            continue
        if word.startswith("-") and len(word) > 1:
            # A cluster of short options: `-m TEXT`, `-mTEXT`, `-am TEXT`; `-F FILE`, `-C COMMIT`.
            for k, letter in enumerate(word[1:], start=1):
                if letter in "FCc":
                    return texts, FROM_ELSEWHERE
                if letter in "mt":
                    if k + 1 < len(word):
                        value = word[k + 1 :]
                    else:
                        value = args[i] if i < len(args) else ""
                        i += 1
                    if letter == "m":
                        texts.append(value)
                    break
    return texts, None


def names_ticket(text: str, projects: list[str]) -> bool:
    """Whether `text` names a ticket: KEY-123, KEY one of `projects` (or, with none, any upper-case key)."""
    return any(not projects or m.group(1) in projects for m in TICKET.finditer(text))


class Handler(exports.Handler):
    def evaluate(self, request: Request, config: str) -> Verdict:
        projects = json.loads(config).get("projects", [])
        if not isinstance(projects, list):
            raise Err("invalid [handler.config]: `projects` must be a list")
        if request.kind != ToolKind.EXECUTE or request.command is None:
            return Verdict_Abstain()
        try:
            reading = shell.parse(request.command)
        except Err as why:
            return Verdict_Ask(f"cannot read the command: {why.value}")
        verdict: Verdict = Verdict_Abstain()
        for command in reading.commands:
            at = subcommand_at(command.argv)
            if command.program != "git" or at >= len(command.argv) or command.argv[at] != "commit":
                continue
            if command.dynamic:
                texts, unseen = [], "part of it is only known when it runs"
            else:
                texts, unseen = messages(command.argv[at + 1 :])
            if unseen is not None:
                verdict = Verdict_Ask(f"cannot check the commit message for a ticket id: {unseen}")
            elif not names_ticket("\n\n".join(texts), projects):
                line = " ".join(command.argv)
                of = f" of {', '.join(projects)}" if projects else ""
                log.write(log.Level.INFO, f"no ticket in: {line}")
                return Verdict_Deny(f"a commit message must name a ticket (like ABC-123){of}: `{line}`")
        return verdict
