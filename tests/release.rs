//! A release an organisation can verify: scripts/release.sh packs the binary (here the one the
//! tests built), its SBOM and their checksums, signed with a cosign-compatible key; the
//! signature and the checksums verify, a tampered archive or checksum file does not, and the
//! archive is the same byte for byte when packed again.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{BIN, Sandbox, repo, stderr};

fn release(sandbox: &Sandbox, key: &Path, out: &Path) {
    let output = Command::new(repo().join("scripts/release.sh"))
        .args([
            "--key",
            key.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--binary",
            BIN,
        ])
        .env("COSIGN_PASSWORD", "release-password")
        .current_dir(&sandbox.root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

fn sha256sum_check(dir: &Path) -> bool {
    Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn a_release_archive_verifies_and_a_tampered_one_does_not() {
    let sandbox = Sandbox::new();
    let keygen = sandbox
        .command(&["plugin", "keygen", "--output-key-prefix", "release"])
        .current_dir(&sandbox.root)
        .env("COSIGN_PASSWORD", "release-password")
        .output()
        .unwrap();
    assert!(keygen.status.success(), "{}", stderr(&keygen));
    let (key, public) = (
        sandbox.root.join("release.key"),
        sandbox.root.join("release.pub"),
    );
    let out = sandbox.root.join("out");
    release(&sandbox, &key, &out);

    let version = env!("CARGO_PKG_VERSION");
    let archive = out.join(format!("acp-gate-{version}-x86_64-linux.tar.gz"));
    let sums = out.join("SHA256SUMS");
    let verify = || {
        sandbox.run(
            &[
                "plugin",
                "verify",
                "--key",
                public.to_str().unwrap(),
                sums.to_str().unwrap(),
            ],
            "",
        )
    };
    let verified = verify();
    assert!(verified.status.success(), "{}", stderr(&verified));
    assert!(sha256sum_check(&out));

    // What it holds: the binary (it runs), the README and the licence.
    let unpacked = sandbox.root.join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let tar = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(tar.success());
    let dir = unpacked.join(format!("acp-gate-{version}-x86_64-linux"));
    for file in ["acp-gate", "README.md", "LICENSE"] {
        assert!(dir.join(file).is_file(), "no {file} in the archive");
    }
    let runs = Command::new(dir.join("acp-gate"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&runs.stdout).trim(),
        format!("acp-gate {version}")
    );

    // The SBOM names the crates in the binary, with their sources' digests.
    let sbom: Value = serde_json::from_slice(
        &std::fs::read(out.join(format!("acp-gate-{version}.cdx.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(sbom["bomFormat"], "CycloneDX");
    let components = sbom["components"].as_array().unwrap();
    let wasmtime = components
        .iter()
        .find(|c| c["name"] == "wasmtime")
        .expect("wasmtime in the SBOM");
    assert_eq!(wasmtime["version"], "48.0.8");
    assert_eq!(wasmtime["hashes"][0]["alg"], "SHA-256");
    assert!(
        !components.iter().any(|c| c["name"] == "proptest"),
        "a test-only crate is not in the binary"
    );

    // Packed again: the same archive, byte for byte.
    let first = std::fs::read(&archive).unwrap();
    release(&sandbox, &key, &out);
    assert!(
        std::fs::read(&archive).unwrap() == first,
        "the archive is not reproducible"
    );

    // One byte changed in the archive: its checksum no longer holds.
    let mut tampered = first.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 1;
    std::fs::write(&archive, &tampered).unwrap();
    assert!(
        !sha256sum_check(&out),
        "a tampered archive passed sha256sum -c"
    );
    // The checksum file changed to match it: its signature no longer holds.
    let text = std::fs::read_to_string(&sums).unwrap();
    let digest = |bytes: &[u8]| {
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(bytes))
    };
    std::fs::write(&sums, text.replace(&digest(&first), &digest(&tampered))).unwrap();
    assert!(sha256sum_check(&out));
    let refused = verify();
    assert_eq!(
        refused.status.code(),
        Some(1),
        "a re-written SHA256SUMS verified"
    );
}
