#!/usr/bin/env bash
# Builds the prod-guard plugin: prod_guard.c -> a WebAssembly component.
#   wit-bindgen c (bindings) -> clang --target=wasm32-wasi (a core module, wasi-libc from Debian)
#   -> wasm-tools component new --adapt (the WASI preview1 reactor adapter) -> a component.
# Output: $OUT (default: <repo>/target/examples/c/prod_guard.wasm).
# Toolchain: scripts/install-plugin-toolchains.sh (apt: clang lld wasi-libc
# libclang-rt-dev-wasm32; cargo: wit-bindgen-cli, wasm-tools; the adapter).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${OUT:-$repo/target/examples/c/prod_guard.wasm}"
adapter="${ACP_GATE_WASI_ADAPTER:-${XDG_DATA_HOME:-$HOME/.local/share}/acp-gate/wasi_snapshot_preview1.reactor.wasm}"
for tool in clang wit-bindgen wasm-tools; do
  command -v "$tool" >/dev/null \
    || { echo "build.sh: $tool not found; run scripts/install-plugin-toolchains.sh" >&2; exit 127; }
done
[ -f "$adapter" ] \
  || { echo "build.sh: $adapter not found; run scripts/install-plugin-toolchains.sh" >&2; exit 127; }

build="$(dirname "$out")"
rm -rf "$build/wit" "$build/bindings" && mkdir -p "$build/wit/deps/acp-gate-plugin" "$build/bindings"
cp "$here/world.wit" "$build/wit/" && cp "$repo/wit/plugin.wit" "$build/wit/deps/acp-gate-plugin/"
# (quiet unless it fails: it names every file it writes)
if ! log="$(wit-bindgen c "$build/wit" --world plugin --out-dir "$build/bindings" 2>&1)"; then
  echo "$log" >&2
  exit 1
fi

# A reactor: no main; the component's export is the entry point.
clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Werror \
  -I "$build/bindings" "$here/prod_guard.c" "$build/bindings/plugin.c" \
  "$build/bindings/plugin_component_type.o" -o "$build/prod_guard.core.wasm"
wasm-tools component new "$build/prod_guard.core.wasm" \
  --adapt "wasi_snapshot_preview1=$adapter" -o "$out"
echo "$out"
