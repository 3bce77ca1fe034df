#!/usr/bin/env bash
# Builds a release an organisation can verify, in OUT (default target/release-archive):
#   acp-gate-VERSION-x86_64-linux.tar.gz   the binary (static: musl, so it runs on any common
#                                          distribution), README.md, LICENSE text, reproducibly
#                                          packed (sorted, no owners, no times)
#   acp-gate-VERSION.cdx.json              the SBOM: every crate in the binary (scripts/sbom.py)
#   SHA256SUMS                             the sha256 of both
#   SHA256SUMS.sig                         its signature with KEY, as `cosign sign-blob` writes
#                                          it (acp-gate's own cosign-compatible signing)
#
#   scripts/release.sh --key cosign.key [--out DIR] [--binary FILE]
#
# KEY is a cosign key (`acp-gate plugin keygen` or `cosign generate-key-pair`; its password in
# $COSIGN_PASSWORD). --binary packs an acp-gate built elsewhere instead of building one (the
# tests pack the one they built). Verifying, with the public key:
#   cosign verify-blob --key acp-gate.pub --signature SHA256SUMS.sig SHA256SUMS && sha256sum -c SHA256SUMS
#   (or: acp-gate plugin verify --key acp-gate.pub SHA256SUMS && sha256sum -c SHA256SUMS)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }
run_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

key=""
out=target/release-archive
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --key) key=${2:?--key needs a file}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --binary) binary=${2:?--binary needs a file}; shift 2 ;;
    *) fail "unknown argument $1 (usage: scripts/release.sh --key KEY [--out DIR] [--binary FILE])" ;;
  esac
done
[ -n "$key" ] || fail "--key KEY is needed: the release is signed (acp-gate plugin keygen makes a key pair)"
[ -f "$key" ] || fail "--key $key: no such file"

target=x86_64-unknown-linux-musl
if [ -z "$binary" ]; then
  # musl's C library is linked in: no glibc version to match on the machine it runs on.
  if ! command -v musl-gcc >/dev/null; then
    command -v apt-get >/dev/null || fail "musl-gcc not found and no apt-get: install musl-tools"
    run_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive run_root apt-get install -y -qq musl-tools \
      || fail "apt-get install musl-tools"
  fi
  rustup target add "$target" >/dev/null || fail "rustup target add $target"
  # Position-dependent, as the glibc build is (host/build.rs): a hook is a process per tool
  # call, and a static PIE of this size spends much of its start relocating itself.
  RUSTFLAGS="${RUSTFLAGS:-} -C relocation-model=static" \
    cargo build --release --locked --target "$target" -p acp-gate || fail "cargo build --release --target $target"
  binary=target/$target/release/acp-gate
fi
[ -x "$binary" ] || fail "$binary: not an executable"

version=$("$binary" --version | awk '{print $2}')
name=acp-gate-$version-x86_64-linux
linking=$(if readelf -d "$binary" 2>/dev/null | grep -q NEEDED; then echo dynamic; else echo static; fi)

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$binary" "$stage/$name/acp-gate"
# Symbols and debug information are not shipped.
strip "$stage/$name/acp-gate" || fail "strip $binary"
cp README.md "$stage/$name/"
printf 'acp-gate %s is licensed under the Apache License, Version 2.0:\nhttps://www.apache.org/licenses/LICENSE-2.0\n' "$version" > "$stage/$name/LICENSE"
chmod 755 "$stage/$name/acp-gate"
chmod 644 "$stage/$name/README.md" "$stage/$name/LICENSE"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" \
  | gzip -n -9 > "$out/$name.tar.gz"
python3 scripts/sbom.py "$target" > "$out/acp-gate-$version.cdx.json" || fail "scripts/sbom.py"
(cd "$out" && sha256sum "$name.tar.gz" "acp-gate-$version.cdx.json" > SHA256SUMS)
rm -f "$out/SHA256SUMS.sig"
"$binary" plugin sign --key "$key" "$out/SHA256SUMS" >/dev/null || fail "signing SHA256SUMS with $key"

echo "release $version ($linking binary) in $out:"
(cd "$out" && ls -l "$name.tar.gz" "acp-gate-$version.cdx.json" SHA256SUMS SHA256SUMS.sig)
echo "verify with the public key:"
echo "  cosign verify-blob --key acp-gate.pub --signature SHA256SUMS.sig SHA256SUMS && sha256sum -c SHA256SUMS"
