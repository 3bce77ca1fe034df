#!/usr/bin/env bash
# Installs the services the end-to-end tests start themselves: the CNCF
# `distribution` registry (Debian's docker-registry), for the OCI distribution tests
# (tests/distribution.rs); the ACP conductor, for the proxy-chain tests (tests/conductor.rs);
# PostgreSQL (a throwaway cluster, started here when none runs) and
# Debian's Chromium with playwright-core, for the review service's tests (tests/serve.rs); the
# official OpenTelemetry protocol definitions for Python, which the OTLP test's receiver
# (tests/otlp/receiver.py) reads what acp-gate exports with.
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
# PostgreSQL for the review service's tests (tests/serve.rs): Debian's server and client. When
# no cluster answers at the URL the tests use, a throwaway one is started in a temporary
# directory as the `postgres` user, on a loopback port, and its URL written where the tests
# read it (target/test-postgres.url; $ACP_GATE_TEST_POSTGRES names another server instead).
apt_install() {
  command -v apt-get >/dev/null || fail "apt-get not found: install $* by hand"
  [ -n "${APT_UPDATED:-}" ] || { run_root apt-get update -qq || fail "apt-get update"; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive run_root apt-get install -y -qq --no-install-recommends "$@" \
    || fail "apt-get install $*"
}
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || ! command -v psql >/dev/null; then
  apt_install postgresql postgresql-client
  # The package's own cluster is not wanted: the tests start their own.
  if command -v systemctl >/dev/null && systemctl is-active --quiet postgresql 2>/dev/null; then
    run_root systemctl disable --now postgresql >/dev/null 2>&1 || true
  fi
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p target
url_file=target/test-postgres.url
pg_url=${ACP_GATE_TEST_POSTGRES:-$(cat "$url_file" 2>/dev/null || true)}
if [ -n "$pg_url" ] && psql "$pg_url" -qAtc 'SELECT 1' >/dev/null 2>&1; then
  echo "ok: PostgreSQL answers at $pg_url"
else
  pg_dir=$(mktemp -d /tmp/acp-gate-postgres.XXXXXX)
  chmod 755 "$pg_dir"
  # The first free loopback port from 55432 (another checkout's cluster may hold one).
  pg_port=${ACP_GATE_TEST_POSTGRES_PORT:-55432}
  while (exec 3<>"/dev/tcp/127.0.0.1/$pg_port") 2>/dev/null; do
    pg_port=$((pg_port + 1))
  done
  as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else run_root runuser -u postgres -- "$@"; fi; }
  run_root chown postgres "$pg_dir" 2>/dev/null || true
  as_postgres "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres >/dev/null \
    || fail "initdb of a throwaway PostgreSQL cluster in $pg_dir"
  as_postgres "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
    -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off" start >/dev/null \
    || fail "starting a throwaway PostgreSQL cluster (see $pg_dir/log)"
  pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres"
  echo "$pg_url" > "$url_file"
  echo "ok: no PostgreSQL was running, so a throwaway cluster was started in $pg_dir at $pg_url"
  echo "    (stop it with: runuser -u postgres -- $pg_bin/pg_ctl -D $pg_dir/data stop)"
fi

# A real browser for the review page's test (tests/browser/): Debian's Chromium, driven by
# playwright-core from npm (never a browser download of Playwright's own).
if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium missing after install"
echo "ok: $(/usr/bin/chromium --version 2>/dev/null | head -1)"
(cd tests/browser && npm install --no-audit --no-fund --loglevel=error) || fail "npm install in tests/browser"
echo "ok: playwright-core $(node -p 'require("./tests/browser/node_modules/playwright-core/package.json").version')"

# The OpenTelemetry protocol's generated Python classes (and protobuf), pinned: the receiver
# of tests/otlp.rs parses every export with them.
OTEL_PROTO_VERSION=1.45.2
if ! python3 -c "import opentelemetry.proto, sys; from importlib.metadata import version; sys.exit(version('opentelemetry-proto') != '$OTEL_PROTO_VERSION')" 2>/dev/null; then
  python3 -m pip install --quiet "opentelemetry-proto==$OTEL_PROTO_VERSION" \
    || fail "pip install opentelemetry-proto==$OTEL_PROTO_VERSION"
fi
python3 -c "import opentelemetry.proto.collector.logs.v1.logs_service_pb2" \
  || fail "opentelemetry-proto installed but not importable by python3"
echo "ok: opentelemetry-proto $OTEL_PROTO_VERSION"
