#!/usr/bin/env bash
# Builds the branch-guard plugin: export_acp_gate_plugin_handler/ -> a WebAssembly component.
#   wit-bindgen go (bindings) -> go build for GOOS=wasip1 (a reactor) -> wasm-tools component
#   embed, then component new with templates/go/wasi-stub.wat in place of WASI -> a component.
# Output: $OUT (default: <repo>/target/examples/go/branch_guard.wasm).
# Toolchain: Go 1.25 or later (go.mod, go.sum pin the bindings' runtime package, from the Go
# module proxy); wit-bindgen-cli, wasm-tools (cargo): scripts/install-plugin-toolchains.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${OUT:-$repo/target/examples/go/branch_guard.wasm}"
for tool in go wit-bindgen wasm-tools; do
  command -v "$tool" >/dev/null \
    || { echo "build.sh: $tool not found; run scripts/install-plugin-toolchains.sh" >&2; exit 127; }
done

# The module is built in the build directory: the source and go.mod/go.sum copied beside the
# bindings wit-bindgen writes from world.wit (with acp-gate's wit/ as its dependency), so the
# source tree stays as it is. wit-bindgen's own go.mod is replaced by the pinned one.
build="$(dirname "$out")"
rm -rf "$build/wit" "$build/src" && mkdir -p "$build/wit/deps/acp-gate-plugin" "$build/src"
cp "$here/world.wit" "$build/wit/" && cp "$repo/wit/plugin.wit" "$build/wit/deps/acp-gate-plugin/"
if ! log="$(wit-bindgen go "$build/wit" --world plugin --out-dir "$build/src" 2>&1)"; then
  echo "$log" >&2
  exit 1
fi
cp "$here/go.mod" "$here/go.sum" "$build/src/" && cp -R "$here/export_acp_gate_plugin_handler" "$build/src/"

# A reactor (-buildmode=c-shared): no main; the component's export is the entry point. The
# bindings' runtime links to runtime.sbrk (-checklinkname=0); -trimpath and -buildvcs=false
# keep the bytes, and so the sha256 pin, the same wherever it is built.
(cd "$build/src" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared \
  -ldflags=-checklinkname=0 -trimpath -buildvcs=false -o "$build/branch_guard.core.wasm" .)
wasm-tools component embed "$build/wit" --world plugin "$build/branch_guard.core.wasm" \
  -o "$build/branch_guard.core.wasm"
wasm-tools component new "$build/branch_guard.core.wasm" \
  --adapt "wasi_snapshot_preview1=$repo/examples/plugins/templates/go/wasi-stub.wat" -o "$out"
echo "$out"
