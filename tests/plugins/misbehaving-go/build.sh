#!/usr/bin/env bash
# Builds the misbehaving Go plugin as examples/plugins/go/build.sh builds the Go example:
# wit-bindgen go -> go build (GOOS=wasip1, a reactor) -> wasm-tools component embed + new,
# with examples/plugins/templates/go/wasi-stub.wat in place of WASI.
# Output: $OUT (default: <repo>/target/test-plugins/go/misbehaving_go.wasm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${OUT:-$repo/target/test-plugins/go/misbehaving_go.wasm}"
for tool in go wit-bindgen wasm-tools; do
  command -v "$tool" >/dev/null \
    || { echo "build.sh: $tool not found; run scripts/install-plugin-toolchains.sh" >&2; exit 127; }
done
build="$(dirname "$out")"
rm -rf "$build/wit" "$build/src" && mkdir -p "$build/wit/deps/acp-gate-plugin" "$build/src"
cp "$here/world.wit" "$build/wit/" && cp "$repo/wit/plugin.wit" "$build/wit/deps/acp-gate-plugin/"
if ! log="$(wit-bindgen go "$build/wit" --world plugin --out-dir "$build/src" 2>&1)"; then
  echo "$log" >&2
  exit 1
fi
cp "$here/go.mod" "$here/go.sum" "$build/src/" && cp -R "$here/export_acp_gate_plugin_handler" "$build/src/"
(cd "$build/src" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared \
  -ldflags=-checklinkname=0 -trimpath -buildvcs=false -o "$build/misbehaving_go.core.wasm" .)
wasm-tools component embed "$build/wit" --world plugin "$build/misbehaving_go.core.wasm" \
  -o "$build/misbehaving_go.core.wasm"
wasm-tools component new "$build/misbehaving_go.core.wasm" \
  --adapt "wasi_snapshot_preview1=$repo/examples/plugins/templates/go/wasi-stub.wat" -o "$out"
echo "$out"
