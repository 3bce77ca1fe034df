#!/usr/bin/env bash
# Builds the domain allow-list plugin: app.js -> a WebAssembly component (componentize-qjs,
# QuickJS; pinned in package.json / package-lock.json, installed into node_modules/ here).
# Output: $OUT (default: <repo>/target/examples/js/domain_allowlist.wasm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${OUT:-$repo/target/examples/js/domain_allowlist.wasm}"
tool="$here/node_modules/.bin/componentize-qjs"
if [ ! -x "$tool" ]; then
  echo "build.sh: $tool not found; run scripts/install-plugin-toolchains.sh (npm ci in $here)" >&2
  exit 127
fi
# world.wit (this plugin's imports), with acp-gate's contract as its dependency.
wit="$(dirname "$out")/wit"
rm -rf "$wit" && mkdir -p "$wit/deps/acp-gate-plugin"
cp "$here/world.wit" "$wit/" && cp "$repo/wit/plugin.wit" "$wit/deps/acp-gate-plugin/"
# --sync: no component-model async ABI; --stub-wasi: the plugin imports no WASI at all.
"$tool" --wit "$wit" --world plugin --js "$here/app.js" --sync --stub-wasi -o "$out" >/dev/null
echo "$out"
