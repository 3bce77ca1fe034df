#!/usr/bin/env python3
"""The SBOM of acp-gate's release binary: every crate compiled into it (the normal dependencies
of the `acp-gate` package on the release's target, build scripts and tests left out), as a
CycloneDX 1.5 JSON document with each crate's name, version, licence, package URL and the
sha256 of its crates.io source (from Cargo.lock). Reads `cargo metadata` from the workspace.

    scripts/sbom.py TARGET-TRIPLE > acp-gate.cdx.json
"""

import json
import subprocess
import sys
import uuid

target = sys.argv[1]
meta = json.loads(subprocess.check_output(
    ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", target]))
lock = {}
with open("Cargo.lock") as f:
    current = {}
    for line in f.read().splitlines() + ["[[package]]"]:
        if line == "[[package]]":
            if "name" in current:
                lock[(current["name"], current["version"])] = current.get("checksum")
            current = {}
        elif " = " in line:
            key, value = line.split(" = ", 1)
            current[key] = value.strip('"')

packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
root = next(p["id"] for p in meta["packages"] if p["name"] == "acp-gate" and p["source"] is None)

# The closure of normal dependencies from the binary's package.
seen, todo = set(), [root]
while todo:
    at = todo.pop()
    if at in seen:
        continue
    seen.add(at)
    for dep in nodes[at]["deps"]:
        if any(k["kind"] is None for k in dep["dep_kinds"]):
            todo.append(dep["pkg"])


def ref(pid):
    return f"{packages[pid]['name']}@{packages[pid]['version']}"


def component(pid):
    p = packages[pid]
    c = {
        "type": "application" if pid == root else "library",
        "bom-ref": ref(pid),
        "name": p["name"],
        "version": p["version"],
        "purl": f"pkg:cargo/{p['name']}@{p['version']}",
    }
    if p.get("license"):
        c["licenses"] = [{"expression": p["license"]}]
    checksum = lock.get((p["name"], p["version"]))
    if checksum:
        c["hashes"] = [{"alg": "SHA-256", "content": checksum}]
    return c


root_pkg = packages[root]
document = {
    "bomFormat": "CycloneDX",
    "specVersion": "1.5",
    "serialNumber": f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, 'acp-gate/' + root_pkg['version'] + '/' + target)}",
    "version": 1,
    "metadata": {"component": component(root), "properties": [{"name": "target", "value": target}]},
    "components": [component(pid) for pid in sorted(seen - {root}, key=lambda i: (packages[i]["name"], packages[i]["version"]))],
    "dependencies": [
        {"ref": ref(pid), "dependsOn": sorted(ref(d["pkg"]) for d in nodes[pid]["deps"] if d["pkg"] in seen
                                              and any(k["kind"] is None for k in d["dep_kinds"]))}
        for pid in sorted(seen, key=ref)
    ],
}
json.dump(document, sys.stdout, indent=1, sort_keys=True)
print()
