#!/usr/bin/env bash
# Runs every test: the plugins' own unit tests (natively), then the host's unit and
# end-to-end tests (which build the built-in plugins for wasm32-wasip2 and drive the real
# binary). Installs what the tests need first; safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

# rust-toolchain.toml makes rustup fetch the pinned toolchain and the wasm32-wasip2 target on
# first use; this only makes that step visible (and works with older rustups).
rustup target add wasm32-wasip2 >/dev/null

# The toolchains of the example plugins in C, JavaScript, Python and Go (apt, cargo, pip, npm,
# the Go module proxy).
scripts/install-plugin-toolchains.sh

# The registry the OCI distribution tests start on loopback ports (Debian's docker-registry).
scripts/install-test-services.sh

# The test agents written with the ACP TypeScript SDK, and acpx (an ACP client, with the
# Node 22 it needs) that drives `acp-gate proxy`.
# `npm install` (which keeps to package-lock.json) rather than `npm ci`: acpx depends on
# platform packages that npm leaves out of the lock file for other platforms, and `npm ci`
# then refuses the lock file as out of sync.
(cd tests/agents && npm install --no-audit --no-fund --loglevel=error)

# The real agents acp-gate gates (tests/real_agents/): Claude Code, Codex, Gemini CLI and Copilot
# CLI, and Claude Code's and Codex's ACP adapters, at the versions tests/agent-clis pins.
(cd tests/agent-clis && npm install --no-audit --no-fund --loglevel=error)

cargo test --manifest-path plugins/Cargo.toml --workspace
cargo test --workspace
