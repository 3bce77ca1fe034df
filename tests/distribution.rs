//! Plugins from an OCI registry and an image layout: a real CNCF `distribution` registry
//! (Debian's `docker-registry`, installed by test.sh) on a loopback port, the real binary
//! pushing, signing, pulling and deciding; tampering, missing and untrusted signatures, and a
//! registry that goes away.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Sandbox, pipe, stderr, test_plugin, titled, verdict_of};

/// A `docker-registry serve` on a free loopback port, storing under the sandbox; stopped on drop.
struct TestRegistry {
    child: Option<Child>,
    port: u16,
    storage: PathBuf,
}

impl TestRegistry {
    fn start(sandbox: &Sandbox) -> TestRegistry {
        let binary = Path::new("/usr/bin/docker-registry");
        assert!(
            binary.exists(),
            "{} is missing: run ./test.sh (scripts/install-test-services.sh installs Debian's docker-registry)",
            binary.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let storage = sandbox.root.join(format!("registry-{port}"));
        let config = sandbox.write(
            &format!("registry-{port}.yml"),
            &format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.display()
            ),
        );
        let child = Command::new(binary)
            .args(["serve"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        TestRegistry {
            child: Some(child),
            port,
            storage,
        }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The path of a blob in the registry's filesystem storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `acp-gate ARGS` with its OCI store in `data` (a fresh machine has its own).
fn acp(sandbox: &Sandbox, data: &str, args: &[&str]) -> Output {
    let mut command = sandbox.command(args);
    command
        .env("ACP_GATE_DATA_DIR", sandbox.root.join(data))
        .env("COSIGN_PASSWORD", "correct horse")
        .env("DOCKER_CONFIG", sandbox.root.join("docker"));
    pipe(&mut command, "")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed ({:?}): {}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The `plugin = "…"` a push, pull or package printed.
fn pinned(stdout: &str) -> String {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("plugin = \""))
        .unwrap_or_else(|| panic!("no plugin line in {stdout}"));
    line.trim_end_matches('"').to_owned()
}

/// An org file with one handler running `plugin` (the misbehaving test plugin denying titles
/// that mention rm, allowing the rest), and `trust` above it.
fn org_file(sandbox: &Sandbox, name: &str, plugin: &str, trust: &str) -> PathBuf {
    sandbox.write(
        name,
        &format!(
            "{trust}\n[[handler]]\nname = \"guard\"\nplugin = \"{plugin}\"\n[handler.config]\nbehaviour = \"allow-unless-rm\"\n"
        ),
    )
}

/// The guard's verdict on an `rm` and an `ls` request, with the org file `org`, and the
/// output (whose stderr carries load failures).
fn guard_verdicts(sandbox: &Sandbox, data: &str, org: &Path) -> (Vec<String>, String) {
    guard_verdicts_with(sandbox, data, org, "--org-handlers")
}

/// [`guard_verdicts`] with the file as `flag` (`--org-handlers`, or `--handlers`: the user's).
fn guard_verdicts_with(
    sandbox: &Sandbox,
    data: &str,
    file: &Path,
    flag: &str,
) -> (Vec<String>, String) {
    let requests: String = [titled("rm -rf build"), titled("ls")]
        .iter()
        .map(|r| format!("{r}\n"))
        .collect();
    let file = file.display().to_string();
    let mut command = sandbox.command(&["check", "--format", "json", flag, &file, "-"]);
    command.env("ACP_GATE_DATA_DIR", sandbox.root.join(data));
    let output = pipe(&mut command, &requests);
    let verdicts = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            verdict_of(&line, "guard")["verdict"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    (verdicts, stderr(&output))
}

/// The guard loads with `org` and decides as its config says: rm denied, the rest allowed.
fn loads_and_decides(sandbox: &Sandbox, data: &str, org: &Path) {
    let (verdicts, errors) = guard_verdicts(sandbox, data, org);
    assert_eq!(verdicts, ["deny", "allow"], "{errors}");
}

/// The guard never loads with `org`: it counts as its on_error (deny) on both requests, and the
/// load's message says `why`.
fn refused(sandbox: &Sandbox, data: &str, org: &Path, why: &str) -> String {
    let (verdicts, errors) = guard_verdicts(sandbox, data, org);
    assert_eq!(verdicts, ["deny", "deny"], "{errors}");
    assert!(errors.contains("handler `guard`"), "{errors}");
    assert!(errors.contains(why), "{errors}");
    errors
}

/// A file under the sandbox root, as an argument.
fn at(sandbox: &Sandbox, name: &str) -> String {
    sandbox.root.join(name).display().to_string()
}

/// `acp-gate plugin push` of the guard to `name` in `registry`: the reference and the pinned
/// `oci://…@sha256:…` it printed.
fn push(sandbox: &Sandbox, registry: &TestRegistry, name: &str) -> (String, String) {
    let reference = format!("{}/{name}", registry.host());
    let output = acp(
        sandbox,
        "publisher",
        &["plugin", "push", &plugin_file(), &reference],
    );
    (reference, pinned(&ok(&output)))
}

fn plugin_file() -> String {
    test_plugin("misbehaving").display().to_string()
}

#[test]
fn pushed_pinned_pulled_once_then_decides_offline() {
    let sandbox = Sandbox::new();
    let mut registry = TestRegistry::start(&sandbox);
    let (reference, pushed) = push(&sandbox, &registry, "acme/guard:1.0");
    assert!(
        pushed.starts_with(&format!("oci://{reference}@sha256:")),
        "{pushed}"
    );

    // What acp-gate pushed is a Wasm OCI artifact, as `wkg` reads it.
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(registry.blob_file(pushed.split('@').nth(1).unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);

    // A new machine: the first load pulls, then decides as the plugin says.
    let org = org_file(&sandbox, "org.toml", &pushed, "");
    loads_and_decides(&sandbox, "engineer", &org);

    // The registry goes away: decisions go on from the store.
    registry.stop();
    loads_and_decides(&sandbox, "engineer", &org);

    // A machine that never pulled it gets a clear error and the handler's on_error.
    let errors = refused(&sandbox, "another-engineer", &org, "unreachable");
    assert!(errors.contains(&pushed), "{errors}");
}

#[test]
fn an_org_file_refuses_a_tag_without_a_digest_and_a_wrong_digest_never_loads() {
    let sandbox = Sandbox::new();
    let registry = TestRegistry::start(&sandbox);
    let (reference, pushed) = push(&sandbox, &registry, "acme/guard:1.0");

    let tag_only = org_file(&sandbox, "tag.toml", &format!("oci://{reference}"), "");
    let output = acp(
        &sandbox,
        "engineer",
        &[
            "plugin",
            "validate",
            "--resolve",
            &tag_only.display().to_string(),
        ],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "tag.toml:4: handler[0].plugin: an org file must pin an OCI plugin by digest"
        ),
        "{}",
        stderr(&output)
    );

    // A digest the registry does not have (someone else's build).
    let other = format!("oci://{reference}@sha256:{}", "ab".repeat(32));
    let org = org_file(&sandbox, "other.toml", &other, "");
    refused(&sandbox, "engineer", &org, "has no manifest");

    // The registry's copy of the manifest tampered with: its bytes no longer have the pinned digest.
    let digest = pushed.split('@').nth(1).unwrap();
    let file = registry.blob_file(digest);
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"schemaVersion\":2", "\"schemaVersion\":2 ");
    std::fs::write(&file, text).unwrap();
    let org = org_file(&sandbox, "org.toml", &pushed, "");
    refused(&sandbox, "fresh", &org, "does not match its digest");
}

#[test]
fn signatures_decide_whether_a_plugin_loads() {
    let sandbox = Sandbox::new();
    let mut registry = TestRegistry::start(&sandbox);
    let (_, pushed) = push(&sandbox, &registry, "acme/guard:2.0");
    for prefix in ["org", "stranger"] {
        ok(&acp(
            &sandbox,
            "publisher",
            &[
                "plugin",
                "keygen",
                "--output-key-prefix",
                &format!("../{prefix}"),
            ],
        ));
    }
    let trusting = |name: &str, keys: &str| {
        org_file(
            &sandbox,
            name,
            &pushed,
            &format!("[trust]\nkeys = [{keys}]\n"),
        )
    };
    let org = trusting("org.toml", "\"org.pub\"");

    // Unsigned, with signatures required: never loads, counts as on_error.
    refused(&sandbox, "engineer", &org, "not signed");

    // Signed by a key the org does not trust.
    let stranger_key = at(&sandbox, "stranger.key");
    ok(&acp(
        &sandbox,
        "publisher",
        &["plugin", "sign", "--key", &stranger_key, &pushed],
    ));
    refused(&sandbox, "engineer", &org, "does not trust");

    // Signed by the org's key (beside the stranger's signature, as cosign keeps both): loads.
    let org_key = at(&sandbox, "org.key");
    ok(&acp(
        &sandbox,
        "publisher",
        &["plugin", "sign", "--key", &org_key, &pushed],
    ));
    loads_and_decides(&sandbox, "engineer", &org);
    let org_pub = at(&sandbox, "org.pub");
    let verified = ok(&acp(
        &sandbox,
        "engineer",
        &["plugin", "verify", "--key", &org_pub, &pushed],
    ));
    assert!(verified.contains("verified"), "{verified}");
    let stranger_pub = at(&sandbox, "stranger.pub");
    assert!(
        acp(&sandbox, "engineer", &["plugin", "verify", "--key", &stranger_pub, "oci://127.0.0.1:1/none/x@sha256:0000000000000000000000000000000000000000000000000000000000000000"])
            .status
            .code()
            == Some(1)
    );

    // An empty trust list trusts nothing.
    let empty = trusting("empty.toml", "");
    refused(&sandbox, "engineer", &empty, "trusts no key");

    // validate --resolve says the same, per plugin, as JSON.
    let validate = |file: &Path| {
        let file = file.display().to_string();
        let args = ["plugin", "validate", "--resolve", "--format", "json", &file];
        let output = acp(&sandbox, "engineer", &args);
        let line: Value = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code(), line)
    };
    let (code, line) = validate(&empty);
    assert_eq!(code, Some(1));
    assert_eq!(
        (line["handler"].as_str(), line["ok"].as_bool()),
        (Some("guard"), Some(false))
    );
    let (code, line) = validate(&org);
    assert_eq!((code, &line["ok"]), (Some(0), &Value::Bool(true)), "{line}");
    assert_eq!(
        line["signed_by"].as_str().map(|k| k.ends_with("org.pub")),
        Some(true)
    );

    // The signed artifact carried to a site with no registry: its signatures come along.
    let bundle = at(&sandbox, "bundle");
    let layout = pinned(&ok(&acp(
        &sandbox,
        "engineer",
        &["plugin", "package", &pushed, &bundle],
    )));
    registry.stop();
    let air_gapped = org_file(
        &sandbox,
        "air-gapped.toml",
        &layout,
        "[trust]\nkeys = [\"org.pub\"]\n",
    );
    loads_and_decides(&sandbox, "air-gapped-machine", &air_gapped);

    // A key that is not a public key stops the load, naming the file and key.
    let bad = trusting("bad.toml", "\"org.key\"");
    let output = acp(
        &sandbox,
        "engineer",
        &[
            "plugin",
            "validate",
            "--resolve",
            &bad.display().to_string(),
        ],
    );
    assert!(
        stderr(&output).contains("bad.toml:2: trust.keys[0]"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_image_layout_works_with_no_registry_at_all() {
    let sandbox = Sandbox::new();
    ok(&acp(
        &sandbox,
        "publisher",
        &["plugin", "keygen", "--output-key-prefix", "../org"],
    ));
    let bundle = at(&sandbox, "bundle");
    let layout = pinned(&ok(&acp(
        &sandbox,
        "publisher",
        &["plugin", "package", &plugin_file(), &bundle],
    )));
    assert!(layout.starts_with("oci-layout://"), "{layout}");
    let org_key = at(&sandbox, "org.key");
    ok(&acp(
        &sandbox,
        "publisher",
        &["plugin", "sign", "--key", &org_key, &layout],
    ));

    let org = org_file(
        &sandbox,
        "org.toml",
        &layout,
        "[trust]\nkeys = [\"org.pub\"]\n",
    );
    loads_and_decides(&sandbox, "engineer", &org);

    // A component swapped inside the bundle never loads.
    let manifest_digest = layout.rsplit('@').next().unwrap();
    let blobs = sandbox.root.join("bundle/blobs/sha256");
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(blobs.join(manifest_digest.trim_start_matches("sha256:"))).unwrap(),
    )
    .unwrap();
    let layer = manifest["layers"][0]["digest"].as_str().unwrap();
    let component = blobs.join(layer.trim_start_matches("sha256:"));
    let mut bytes = std::fs::read(&component).unwrap();
    bytes.push(0);
    std::fs::write(&component, bytes).unwrap();
    refused(&sandbox, "engineer", &org, "does not match its digest");
}

#[test]
fn a_plugin_file_is_signed_beside_it_as_cosign_sign_blob_does() {
    let sandbox = Sandbox::new();
    ok(&acp(
        &sandbox,
        "x",
        &["plugin", "keygen", "--output-key-prefix", "../org"],
    ));
    let copy = sandbox.root.join("guard.wasm");
    std::fs::copy(test_plugin("misbehaving"), &copy).unwrap();
    let org = sandbox.write(
        "org.toml",
        &format!(
            "[trust]\nkeys = [\"org.pub\"]\n[[handler]]\nname = \"guard\"\nplugin = \"guard.wasm\"\nsha256 = \"{}\"\n[handler.config]\nbehaviour = \"allow-unless-rm\"\n",
            crate::common::sha256_of(&copy)
        ),
    );
    refused(&sandbox, "x", &org, "guard.wasm.sig");
    let org_key = at(&sandbox, "org.key");
    ok(&acp(
        &sandbox,
        "x",
        &[
            "plugin",
            "sign",
            "--key",
            &org_key,
            &copy.display().to_string(),
        ],
    ));
    loads_and_decides(&sandbox, "x", &org);
}

/// Runs tests/fixtures/oci/wkg_style_push.py: a push by other tooling. Its manifest digest.
fn wkg_style_push(registry: &TestRegistry, repository: &str, tag: &str, extra: &[&str]) -> String {
    let output = Command::new("python3")
        .arg(crate::common::repo().join("tests/fixtures/oci/wkg_style_push.py"))
        .args([&registry.host(), repository, tag, &plugin_file()])
        .args(extra)
        .output()
        .expect("python3 runs the wkg-style pusher");
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn what_other_tooling_pushed_in_the_wasm_oci_format_loads_and_anything_else_is_refused() {
    let sandbox = Sandbox::new();
    let mut registry = TestRegistry::start(&sandbox);
    let digest = wkg_style_push(&registry, "acme/wkg-guard", "3.0", &[]);

    // `plugin pull` by tag prints the same digest the other tool computed.
    let reference = format!("{}/acme/wkg-guard:3.0", registry.host());
    let pulled = pinned(&ok(&acp(
        &sandbox,
        "engineer",
        &["plugin", "pull", &reference],
    )));
    assert_eq!(pulled, format!("oci://{reference}@{digest}"));

    // A user's own file may name a tag alone: it resolves once, then holds offline.
    let user = org_file(&sandbox, "user.toml", &format!("oci://{reference}"), "");
    let (verdicts, errors) = guard_verdicts_with(&sandbox, "engineer", &user, "--handlers");
    assert_eq!(verdicts, ["deny", "allow"], "{errors}");
    let org = org_file(&sandbox, "org.toml", &pulled, "");
    loads_and_decides(&sandbox, "engineer", &org);

    // Not the Wasm OCI format: another config type, or more than one layer.
    let odd = wkg_style_push(
        &registry,
        "acme/odd",
        "1",
        &["--config-type", "application/vnd.oci.image.config.v1+json"],
    );
    let two = wkg_style_push(&registry, "acme/two", "1", &["--extra-layer"]);
    for (repository, digest, why) in [
        ("acme/odd", odd, "not a Wasm component artifact"),
        ("acme/two", two, "exactly one layer"),
    ] {
        let plugin = format!("oci://{}/{repository}:1@{digest}", registry.host());
        let org = org_file(&sandbox, "odd.toml", &plugin, "");
        refused(&sandbox, "engineer", &org, why);
    }

    registry.stop();
    let (verdicts, errors) = guard_verdicts_with(&sandbox, "engineer", &user, "--handlers");
    assert_eq!(verdicts, ["deny", "allow"], "{errors}");
}

#[test]
fn a_managed_install_precompiles_a_distributed_plugin_and_reads_it_from_its_cache_only() {
    let sandbox = Sandbox::new();
    let bundle = at(&sandbox, "etc/bundle");
    let layout = pinned(&ok(&acp(
        &sandbox,
        "x",
        &["plugin", "package", &plugin_file(), &bundle],
    )));
    let managed = sandbox.root.join("managed");
    let org = org_file(
        &sandbox,
        "etc/handlers.toml",
        &layout,
        &format!("[settings]\ncache_dir = \"{}\"\n", managed.display()),
    );
    let output = acp(
        &sandbox,
        "x",
        &["plugin", "precompile", &org.display().to_string()],
    );
    assert!(
        ok(&output).contains(&format!("compiled into {}", managed.display())),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(std::fs::read_dir(&managed).unwrap().count(), 1);

    // Loads read it from there: nothing is compiled into the user's cache.
    let user_cache = sandbox.root.join("user-cache");
    let requests = format!("{}\n{}\n", titled("rm -rf build"), titled("ls"));
    let mut command = sandbox.command(&["check", "--format", "json", "-"]);
    command
        .env("ACP_GATE_ORG_HANDLERS", &org)
        .env("ACP_GATE_CACHE_DIR", &user_cache);
    let output = pipe(&mut command, &requests);
    let verdicts: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| verdict_of(&serde_json::from_str(l).unwrap(), "guard")["verdict"].clone())
        .collect();
    assert_eq!(verdicts, ["deny", "allow"], "{}", stderr(&output));
    assert!(
        !user_cache.exists() || std::fs::read_dir(&user_cache).unwrap().next().is_none(),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_projects_file_never_makes_acp_gate_contact_a_registry() {
    let sandbox = Sandbox::new();
    let registry = TestRegistry::start(&sandbox);
    let (_, pushed) = push(&sandbox, &registry, "acme/guard:1.0");
    org_file(&sandbox, "workspace/.acp-gate/handlers.toml", &pushed, "");
    let decide = || {
        let requests = format!("{}\n{}\n", titled("rm -rf build"), titled("ls"));
        let mut command = sandbox.command(&["check", "--format", "json", "-"]);
        command.env("ACP_GATE_DATA_DIR", sandbox.root.join("engineer"));
        let output = pipe(&mut command, &requests);
        let verdicts: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| verdict_of(&serde_json::from_str(l).unwrap(), "guard")["verdict"].clone())
            .collect();
        (verdicts, stderr(&output))
    };
    // The cloned repository names a plugin this machine does not have: it is not pulled.
    let (verdicts, errors) = decide();
    assert_eq!(verdicts, ["deny", "deny"], "{errors}");
    assert!(errors.contains("acp-gate plugin pull"), "{errors}");
    // The person pulls it: from then on it runs.
    ok(&acp(&sandbox, "engineer", &["plugin", "pull", &pushed]));
    let (verdicts, errors) = decide();
    assert_eq!(verdicts, ["deny", "allow"], "{errors}");
}
