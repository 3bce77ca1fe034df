# A PreToolUse hook the way most hooks in bash are written: the payload read with `jq`, then a
# decision (allowing everything here: only its cost is measured, in the `hooks` section).
command=$(jq -r '.tool_input.command // empty')
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"%s"}}\n' "${command%% *}"
