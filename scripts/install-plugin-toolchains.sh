#!/usr/bin/env bash
# Installs every toolchain the example plugins (examples/plugins/) and `acp-gate plugin new`
# templates need, from Debian's packages, crates.io, PyPI, npm and the Go module proxy only.
# Safe to run again: what is installed at the pinned version is left alone. Fails loudly
# (non-zero, naming the step) if anything cannot be installed; it never skips.
#
#   C           clang, lld, wasi-libc, libclang-rt-dev-wasm32 (apt); wit-bindgen-cli, wasm-tools
#               (cargo install); the WASI preview1 reactor adapter (from the crate
#               wasi-preview1-component-adapter-provider, the host's wasmtime version)
#   JavaScript  componentize-qjs (npm ci in examples/plugins/js, pinned by its lockfile)
#   Python      componentize-py (pip)
#   Go          the machine's Go (1.25 or later: checked, not installed; Debian's is older);
#               wit-bindgen-cli and wasm-tools, as for C; the module the bindings import
#               (go.bytecodealliance.org/pkg, from the Go module proxy, pinned by go.sum)
#   Rust        the wasm32-wasip2 target (rustup; rust-toolchain.toml also asks for it)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_TOOLS_VERSION=1.254.2      # wasmparser 0.254, as in wasmtime 48's lockfile
WIT_BINDGEN_VERSION=0.61.1      # as the Rust plugins' wit-bindgen
ADAPTER_VERSION=48.0.8          # = the host's wasmtime
COMPONENTIZE_PY_VERSION=0.25.1
# Where C builds find the adapter (build.sh reads $ACP_GATE_WASI_ADAPTER, else this path).
ADAPTER="${ACP_GATE_WASI_ADAPTER:-${XDG_DATA_HOME:-$HOME/.local/share}/acp-gate/wasi_snapshot_preview1.reactor.wasm}"

step() { printf '\n== %s\n' "$*"; }
fail() { printf '\ninstall-plugin-toolchains.sh: FAILED: %s\n' "$*" >&2; exit 1; }
run_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

step "Debian packages: clang lld wasi-libc libclang-rt-dev-wasm32"
apt_packages=(clang lld wasi-libc libclang-rt-dev-wasm32)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || fail "apt-get not found: install ${missing[*]} by hand"
  run_root apt-get update -qq || fail "apt-get update"
  DEBIAN_FRONTEND=noninteractive run_root apt-get install -y -qq "${missing[@]}" \
    || fail "apt-get install ${missing[*]}"
fi
echo "ok: ${apt_packages[*]}"

# cargo install TOOL VERSION BINARY: only when BINARY --version does not already say VERSION.
cargo_tool() {
  local crate=$1 version=$2 binary=$3
  if "$binary" --version 2>/dev/null | grep -qF " $version"; then
    echo "ok: $crate $version"
    return
  fi
  echo "building $crate $version with cargo (a few minutes)..."
  cargo install --locked --quiet "$crate" --version "$version" \
    || fail "cargo install $crate --version $version"
}
step "crates.io: wasm-tools, wit-bindgen-cli"
command -v cargo >/dev/null || fail "cargo not found (install rustup)"
cargo_tool wasm-tools "$WASM_TOOLS_VERSION" wasm-tools
cargo_tool wit-bindgen-cli "$WIT_BINDGEN_VERSION" wit-bindgen

step "crates.io: the WASI preview1 reactor adapter ($ADAPTER_VERSION)"
stamp="$ADAPTER.version"
if [ -s "$ADAPTER" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ADAPTER_VERSION" ]; then
  echo "ok: $ADAPTER"
else
  # The crate embeds the adapter's bytes as a constant: a two-line program writes them out.
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/src" "$(dirname "$ADAPTER")"
  cat >"$work/Cargo.toml" <<EOF
[package]
name = "write-adapter"
version = "0.0.0"
edition = "2021"
[dependencies]
wasi-preview1-component-adapter-provider = "=$ADAPTER_VERSION"
[workspace]
EOF
  cat >"$work/src/main.rs" <<'EOF'
fn main() {
    let path = std::env::args().nth(1).expect("usage: write-adapter PATH");
    std::fs::write(path, wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER).unwrap();
}
EOF
  cargo run --quiet --manifest-path "$work/Cargo.toml" --target-dir "$work/target" -- "$ADAPTER" \
    || fail "writing the adapter from wasi-preview1-component-adapter-provider $ADAPTER_VERSION"
  echo "$ADAPTER_VERSION" >"$stamp"
  echo "ok: $ADAPTER"
fi

step "PyPI: componentize-py $COMPONENTIZE_PY_VERSION"
if componentize-py --version 2>/dev/null | grep -qF "$COMPONENTIZE_PY_VERSION"; then
  echo "ok: componentize-py $COMPONENTIZE_PY_VERSION"
else
  python3 -m pip install --quiet "componentize-py==$COMPONENTIZE_PY_VERSION" \
    || fail "pip install componentize-py==$COMPONENTIZE_PY_VERSION"
  hash -r
  command -v componentize-py >/dev/null \
    || fail "componentize-py installed but not on PATH (add pip's script directory to PATH)"
fi

step "npm: componentize-qjs (examples/plugins/js/package-lock.json)"
command -v npm >/dev/null || fail "npm not found (apt-get install nodejs npm)"
# `npm install`, not `npm ci`: componentize-qjs 0.4.5 lists platform bindings that were never
# published (linux-arm64-musl, win32-*), which `npm ci` reports as a lockfile mismatch. With
# the lockfile present, `npm install` installs exactly the locked versions; `--no-save` keeps
# npm 11 from writing those platform entries back into the lockfile (a clean tree after a run).
(cd examples/plugins/js && npm install --no-save --no-audit --no-fund --loglevel=error) \
  || fail "npm install in examples/plugins/js"
[ -x examples/plugins/js/node_modules/.bin/componentize-qjs ] \
  || fail "componentize-qjs missing after npm install"
echo "ok: componentize-qjs"

step "Go: go 1.25 or later, and the module wit-bindgen's Go bindings import (go.sum)"
command -v go >/dev/null \
  || fail "go not found: install Go 1.25 or later (Debian's golang is older) and put it on PATH"
go_version="$(go env GOVERSION)"
[[ "$go_version" =~ ^go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 25 ] \
  || fail "$go_version is too old: Go plugins need Go 1.25 or later (//go:wasmexport, the bindings' go.mod)"
# wit-bindgen-cli's Go output: built into the binary installed above.
wit-bindgen go --help >/dev/null 2>&1 || fail "wit-bindgen $WIT_BINDGEN_VERSION has no \`go\` subcommand"
# The examples, the templates and the test plugin pin the same module in identical go.sum files:
# one download serves every Go build (the module cache), checked against go.sum.
(cd examples/plugins/go && go mod download) || fail "go mod download in examples/plugins/go"
echo "ok: $go_version, go.bytecodealliance.org/pkg (examples/plugins/go/go.sum)"

step "rustup: wasm32-wasip2"
rustup target add wasm32-wasip2 >/dev/null || fail "rustup target add wasm32-wasip2"
echo "ok: wasm32-wasip2"

step "check"
for tool in clang wasm-ld wasm-tools wit-bindgen componentize-py go; do
  command -v "$tool" >/dev/null || fail "$tool is not on PATH after installing"
done
[ -f /usr/include/wasm32-wasi/stdlib.h ] || fail "wasi-libc headers not found in /usr/include/wasm32-wasi"
echo "every plugin toolchain is installed"
