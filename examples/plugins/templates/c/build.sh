#!/usr/bin/env bash
# Builds {{wasm}} (C): wit-bindgen c -> clang --target=wasm32-wasi (wasi-libc) ->
# wasm-tools component new --adapt (the WASI preview1 reactor adapter).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-{{wasm}}}"
adapter="${ACP_GATE_WASI_ADAPTER:-${XDG_DATA_HOME:-$HOME/.local/share}/acp-gate/wasi_snapshot_preview1.reactor.wasm}"
for tool in clang wit-bindgen wasm-tools; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (see README.md)" >&2; exit 127; }
done
[ -f "$adapter" ] || { echo "build.sh: $adapter not found (see README.md)" >&2; exit 127; }
if ! log="$(wit-bindgen c wit --world plugin --out-dir bindings 2>&1)"; then echo "$log" >&2; exit 1; fi
clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Werror -I bindings \
  plugin.c bindings/plugin.c bindings/plugin_component_type.o -o plugin.core.wasm
wasm-tools component new plugin.core.wasm --adapt "wasi_snapshot_preview1=$adapter" -o "$out"
rm -f plugin.core.wasm
echo "$out"
