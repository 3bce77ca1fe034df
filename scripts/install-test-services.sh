#!/usr/bin/env bash
# Installs the services the end-to-end tests start on loopback ports themselves: the CNCF
# `distribution` registry (Debian's docker-registry), for the OCI distribution tests
# (tests/distribution.rs). Safe to run again; fails loudly, naming the step, and never skips.
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
