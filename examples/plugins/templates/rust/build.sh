#!/usr/bin/env bash
# Builds {{wasm}} (Rust; needs `rustup target add wasm32-wasip2`). Cargo.lock pins the versions
# acp-gate's built-in plugins are built with; `cargo test` runs the plugin's own tests natively.
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-{{wasm}}}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release --target wasm32-wasip2 --target-dir "$target"
cp "$target/wasm32-wasip2/release/{{name_snake}}.wasm" "$out"
echo "$out"
