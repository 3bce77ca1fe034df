"""{{name}}: an acp-gate permission plugin. Asks before any command that mentions one of the
words in its config; abstains on everything else.

`componentize-py -d wit -w plugin bindings .` writes the `wit_world` bindings for an editor;
the build generates them itself. Raising `Err(text)` returns the `err` case (the host then
applies on_error).
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log
from wit_world.imports.types import Request, ToolKind, Verdict, Verdict_Abstain, Verdict_Ask


class Handler(exports.Handler):
    def evaluate(self, request: Request, config: str) -> Verdict:
        words = json.loads(config).get("words", [])
        if not isinstance(words, list):
            raise Err("invalid [handler.config]: `words` must be a list")
        if request.kind != ToolKind.EXECUTE or request.command is None:
            return Verdict_Abstain()
        text = request.command.shell or " ".join(request.command.argv or [])
        for word in words:
            if word in text:
                log.write(log.Level.INFO, f"matched `{word}`")
                return Verdict_Ask(f"the command mentions `{word}`")
        return Verdict_Abstain()
