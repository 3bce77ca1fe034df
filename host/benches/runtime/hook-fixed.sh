# A PreToolUse hook that reads its input and prints a fixed decision: the least a hook written
# as a script can do, the floor `acp-gate hook claude` is measured against (the `hooks`
# section). Bash builtins only.
IFS= read -r -d '' event
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
