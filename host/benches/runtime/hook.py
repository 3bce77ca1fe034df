"""A Claude Code PreToolUse hook with the default chain's checks, as far as a short Python
script goes: the PreToolUse event as JSON on stdin, the decision as JSON on stdout."""

import json
import os
import re
import shlex
import sys

DANGEROUS = re.compile(r"rm\s+-rf\s+[~/]|\|\s*(ba)?sh\b|push\s+(--force|-f)\b|of=/dev/")
SAFE = {("cargo", "test"), ("cargo", "build"), ("cargo", "check"),
        ("git", "status"), ("git", "diff"), ("git", "log")}
SENSITIVE = re.compile(r"/\.ssh/|/\.env|/\.aws/|/\.gnupg/|/\.bashrc$|/\.git/hooks/")


def decide(decision, reason=""):
    json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                      "permissionDecision": decision,
                                      "permissionDecisionReason": reason}}, sys.stdout)
    sys.exit(0)


event = json.load(sys.stdin)
tool_input = event.get("tool_input") or {}
if "command" in tool_input:
    command = tool_input["command"]
    if DANGEROUS.search(command):
        decide("deny", "dangerous command")
    # Allowed only when every simple command is a known-safe one.
    for simple in re.split(r"&&|\|\||[;|&\n]", command):
        words = shlex.split(simple)
        if tuple(words[:2]) not in SAFE and (not words or words[0] != "ls"):
            decide("ask", f"not a known-safe command: {simple.strip()}")
    decide("allow")

workspace = event["cwd"]
path = os.path.normpath(os.path.join(workspace, os.path.expanduser(tool_input.get("file_path", ""))))
if SENSITIVE.search(path):
    decide("deny", f"sensitive file {path}")
if path.startswith(workspace + "/"):
    decide("allow")
decide("deny", f"outside the workspace: {path}")
