#!/usr/bin/env bash
# Builds {{wasm}} (Python via componentize-py from PyPI).
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-$(pwd)/{{wasm}}}"
command -v componentize-py >/dev/null || { echo "build.sh: pip install componentize-py==0.25.1" >&2; exit 127; }
# --stub-wasi: every WASI import becomes a trap, so the plugin needs no WASI grant.
export PYTHONDONTWRITEBYTECODE=1
componentize-py -d wit -w plugin componentize --stub-wasi app -o "$out" >/dev/null
rm -rf __pycache__
echo "$out"
