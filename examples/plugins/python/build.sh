#!/usr/bin/env bash
# Builds the change-freeze plugin: app.py -> a WebAssembly component (componentize-py).
# Output: $OUT (default: <repo>/target/examples/python/change_freeze.wasm).
# Toolchain: `pip install componentize-py==0.25.1` (scripts/install-plugin-toolchains.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${OUT:-$repo/target/examples/python/change_freeze.wasm}"
if ! command -v componentize-py >/dev/null; then
  echo "build.sh: componentize-py not found; run scripts/install-plugin-toolchains.sh" >&2
  exit 127
fi
# world.wit (this plugin's imports), with acp-gate's contract as its dependency; the source is
# copied beside it so that Python's bytecode caches stay out of the source tree.
build="$(dirname "$out")"
rm -rf "$build/wit" "$build/src" && mkdir -p "$build/wit/deps/acp-gate-plugin" "$build/src"
cp "$here/world.wit" "$build/wit/" && cp "$repo/wit/plugin.wit" "$build/wit/deps/acp-gate-plugin/"
cp "$here/app.py" "$build/src/"
# --stub-wasi: every WASI import becomes a trap, so the plugin needs no WASI grant (it has no
# use for one: the time comes from the request). Python's hash seed is then fixed at build time.
cd "$build/src"
componentize-py -d "$build/wit" -w plugin componentize --stub-wasi app -o "$out" >/dev/null
echo "$out"
