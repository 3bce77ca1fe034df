#!/usr/bin/env bash
# Builds {{wasm}} (JavaScript, QuickJS via componentize-qjs from npm).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-{{wasm}}}"
[ -x node_modules/.bin/componentize-qjs ] || npm install --no-audit --no-fund --loglevel=error
# --sync: no component-model async ABI; --stub-wasi: no WASI imports at all.
node_modules/.bin/componentize-qjs --wit wit --world plugin --js app.js --sync --stub-wasi -o "$out" >/dev/null
echo "$out"
