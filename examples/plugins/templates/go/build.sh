#!/usr/bin/env bash
# Builds {{wasm}} (Go): wit-bindgen go (bindings) -> go build for GOOS=wasip1 (a reactor) ->
# wasm-tools component embed, then component new with wasi-stub.wat in place of WASI.
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-{{wasm}}}"
for tool in go wit-bindgen wasm-tools; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (see README.md)" >&2; exit 127; }
done
# The bindings: the acp_gate_plugin_* packages and wit_exports.go (package main, the exports).
# wit-bindgen also writes a go.mod; this project keeps its own, with go.sum beside it.
generated="$(mktemp -d)"
trap 'rm -rf "$generated"' EXIT
if ! log="$(wit-bindgen go wit --world plugin --out-dir "$generated" 2>&1)"; then echo "$log" >&2; exit 1; fi
rm -rf acp_gate_plugin_* wit_exports.go
cp -R "$generated"/acp_gate_plugin_* "$generated/wit_exports.go" .
# A reactor (-buildmode=c-shared): no main; the component's export is the entry point. The
# bindings' runtime links to runtime.sbrk (-checklinkname=0); -trimpath and -buildvcs=false
# keep the bytes, and so the sha256 pin, the same wherever it is built.
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags=-checklinkname=0 -trimpath \
  -buildvcs=false -o plugin.core.wasm .
wasm-tools component embed wit --world plugin plugin.core.wasm -o plugin.core.wasm
wasm-tools component new plugin.core.wasm --adapt wasi_snapshot_preview1=wasi-stub.wat -o "$out"
rm -f plugin.core.wasm
echo "$out"
