# A Claude Code PreToolUse hook with the default chain's checks, as far as a short bash script
# goes: the PreToolUse event as JSON on stdin, the decision as JSON on stdout. Bash builtins
# only (no jq, no grep, no subshell): the cheapest a hook in its own process can be.
IFS= read -r -d '' event

# The string value of a top-level-looking JSON field, in $value (no escapes: enough here).
field() {
  value=
  if [[ $event =~ \"$1\":\ *\"([^\"]*)\" ]]; then value=${BASH_REMATCH[1]}; fi
}

decide() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s","permissionDecisionReason":"%s"}}\n' "$1" "$2"
  exit 0
}

field command
if [[ -n $value ]]; then
  command=$value
  case $command in
    *"rm -rf ~"* | *"rm -rf /"* | *"| sh"* | *"| bash"* | *"push --force"* | *"push -f"* | *"of=/dev/"*)
      decide deny "dangerous command" ;;
  esac
  # Allowed only when every simple command is a known-safe one.
  parts=${command//&&/;}
  parts=${parts//||/;}
  parts=${parts//|/;}
  IFS=';' read -ra commands <<<"$parts"
  for simple in "${commands[@]}"; do
    read -ra words <<<"$simple"
    case "${words[0]} ${words[1]}" in
      "cargo test" | "cargo build" | "cargo check" | "git status" | "git diff" | "git log" | "ls "*) ;;
      *) decide ask "not a known-safe command: $simple" ;;
    esac
  done
  decide allow ""
fi

field file_path
path=$value
field cwd
workspace=$value
case $path in
  "~/"*) path=$HOME/${path#"~/"} ;;
  /*) ;;
  *) path=$workspace/$path ;;
esac
case $path in
  */.ssh/* | */.env* | */.aws/* | */.gnupg/* | */.bashrc | */.git/hooks/*)
    decide deny "sensitive file $path" ;;
  "$workspace"/*) decide allow "" ;;
esac
decide deny "outside the workspace: $path"
