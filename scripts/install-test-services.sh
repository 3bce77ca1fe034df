#!/usr/bin/env bash
# Installs the services the end-to-end tests start themselves: the CNCF
# `distribution` registry (Debian's docker-registry), for the OCI distribution tests
# (tests/distribution.rs), and the ACP conductor, for the proxy-chain tests (tests/conductor.rs).
# Safe to run again; fails loudly, naming the step, and never skips.
set -euo pipefail

fail() { printf '\ninstall-test-services.sh: FAILED: %s\n' "$*" >&2; exit 1; }
run_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! dpkg-query -W -f='${Status}' docker-registry 2>/dev/null | grep -q "install ok installed"; then
  command -v apt-get >/dev/null || fail "apt-get not found: install docker-registry by hand"
  run_root apt-get update -qq || fail "apt-get update"
  # The package's own service is not wanted (the tests start their own registries): where
  # policy-rc.d allows services to start, it is stopped again below.
  DEBIAN_FRONTEND=noninteractive run_root apt-get install -y -qq docker-registry \
    || fail "apt-get install docker-registry"
  if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
    run_root systemctl disable --now docker-registry >/dev/null 2>&1 || true
  fi
fi
[ -x /usr/bin/docker-registry ] || fail "/usr/bin/docker-registry missing after install"
echo "ok: docker-registry ($(/usr/bin/docker-registry --version 2>/dev/null | head -1))"

# The ACP conductor from crates.io (agent-client-protocol-conductor), that the proxy-chain tests
# (tests/conductor.rs) run acp-gate under. Pinned; built with its own lock file.
CONDUCTOR_VERSION=5.0.0
conductor_bin="${CARGO_HOME:-$HOME/.cargo}/bin/agent-client-protocol-conductor"
if [ "$("$conductor_bin" --version 2>/dev/null)" != "agent-client-protocol-conductor $CONDUCTOR_VERSION" ]; then
  echo "building agent-client-protocol-conductor $CONDUCTOR_VERSION (cargo install, a few minutes)"
  cargo install --quiet --locked --force --root "${CARGO_HOME:-$HOME/.cargo}" \
    agent-client-protocol-conductor --version "$CONDUCTOR_VERSION" \
    || fail "cargo install agent-client-protocol-conductor $CONDUCTOR_VERSION"
fi
"$conductor_bin" --version >/dev/null || fail "$conductor_bin missing after install"
echo "ok: $("$conductor_bin" --version)"
