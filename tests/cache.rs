//! The compile cache cannot change a decision: a swapped, corrupted or truncated entry is
//! compiled again, the built-in plugins never come from it, and an org's precompiled cache
//! is only read.

use std::path::PathBuf;

use crate::common::{Sandbox, claude_bash, sha256_of, stderr, test_plugin, titled, verdict_of};

/// Two handlers that decide differently: `reader` allows, `denier` denies.
struct Two {
    sandbox: Sandbox,
    cache: PathBuf,
    handlers: PathBuf,
    reader: String,
    denier: String,
}

impl Two {
    fn new() -> Two {
        let sandbox = Sandbox::new();
        let (reader, denier) = (test_plugin("fs-reader"), test_plugin("misbehaving"));
        let handlers = sandbox.write(
            "policy/handlers.toml",
            &format!(
                r#"
[[handler]]
name = "reader"
plugin = "{}"
imports = ["log", "wasi-cli", "wasi-clocks", "wasi-filesystem"]

[[handler]]
name = "denier"
plugin = "{}"
config = {{ behaviour = "empty-deny" }}
"#,
                reader.display(),
                denier.display()
            ),
        );
        let two = Two {
            cache: sandbox.root.join("cache"),
            reader: sha256_of(&reader),
            denier: sha256_of(&denier),
            sandbox,
            handlers,
        };
        two.decides_as_itself();
        two
    }

    /// The cache entry of the plugin whose sha256 is `digest`.
    fn entry(&self, digest: &str) -> PathBuf {
        let entries: Vec<PathBuf> = std::fs::read_dir(&self.cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(digest))
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }

    /// Checks that each handler decides as itself; the stderr of the run.
    fn decides_as_itself(&self) -> String {
        let handlers = self.handlers.display().to_string();
        let (lines, output) = self.sandbox.check_cached(
            &self.cache,
            &["--handlers", &handlers],
            &[titled("anything")],
        );
        assert_eq!(
            verdict_of(&lines[0], "reader")["verdict"],
            "allow",
            "{}",
            lines[0]
        );
        let denier = verdict_of(&lines[0], "denier");
        assert_eq!(denier["verdict"], "deny", "{}", lines[0]);
        assert!(denier.get("error").is_none(), "{denier}");
        stderr(&output)
    }
}

#[test]
fn a_swapped_entry_is_compiled_again_and_each_plugin_decides_as_itself() {
    let two = Two::new();
    let (reader, denier) = (two.entry(&two.reader), two.entry(&two.denier));
    let denier_bytes = std::fs::read(&denier).unwrap();

    std::fs::copy(&reader, &denier).unwrap();
    let stderr = two.decides_as_itself();
    assert!(
        stderr.contains(&format!(
            "{}: not a valid cache entry (compiled from another component)",
            denier.display()
        )),
        "{stderr}"
    );
    // Replaced by a good entry: the next run reads it quietly.
    assert_eq!(std::fs::read(&denier).unwrap(), denier_bytes);
    assert_eq!(two.decides_as_itself(), "");

    std::fs::copy(&denier, &reader).unwrap();
    let stderr = two.decides_as_itself();
    assert!(
        stderr.contains("compiled from another component"),
        "{stderr}"
    );
}

#[test]
fn a_corrupted_or_truncated_entry_is_compiled_again_never_loaded() {
    let two = Two::new();
    let denier = two.entry(&two.denier);
    let good = std::fs::read(&denier).unwrap();
    let flipped = |at: usize| {
        let mut bytes = good.clone();
        bytes[at] ^= 0xff;
        bytes
    };
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "a byte flipped in the code",
            flipped(good.len() / 2),
            "corrupted or truncated",
        ),
        (
            "a byte flipped at the end",
            flipped(good.len() - 1),
            "corrupted or truncated",
        ),
        (
            "a byte flipped in the header",
            flipped(40),
            "another component",
        ),
        (
            "truncated to half",
            good[..good.len() / 2].to_vec(),
            "corrupted or truncated",
        ),
        ("truncated in the header", good[..20].to_vec(), "truncated"),
        ("empty", Vec::new(), "truncated"),
    ];
    for (case, bytes, why) in cases {
        std::fs::write(&denier, bytes).unwrap();
        let stderr = two.decides_as_itself();
        assert!(
            stderr.contains(&denier.display().to_string()),
            "{case}: {stderr}"
        );
        assert!(stderr.contains(why), "{case}: {stderr}");
        assert_eq!(
            std::fs::read(&denier).unwrap(),
            good,
            "{case}: not rewritten"
        );
    }

    // wasmtime's own serialized bytes without acp-gate's header (what older versions wrote).
    let elf = good.windows(4).position(|w| w == b"\x7fELF").unwrap();
    std::fs::write(&denier, &good[elf..]).unwrap();
    let stderr = two.decides_as_itself();
    assert!(stderr.contains("no acp-gate header"), "{stderr}");

    // Not a file at all: a directory, and a FIFO (which must not hang the load).
    std::fs::remove_file(&denier).unwrap();
    std::fs::create_dir(&denier).unwrap();
    assert!(two.decides_as_itself().contains("not a valid cache entry"));
    std::fs::remove_dir(&denier).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&denier)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(two.decides_as_itself().contains("not a valid cache entry"));
}

#[test]
fn the_built_in_chain_never_reads_or_writes_the_cache() {
    let two = Two::new();
    // Only the two plugin files are cached, with what their `prepare` said (a record each);
    // the built-ins' native code is in the binary, and nothing of theirs is kept.
    let entries: Vec<PathBuf> = std::fs::read_dir(&two.cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let compiled = entries
        .iter()
        .filter(|e| e.extension().is_some_and(|x| x == "cwasm"));
    assert_eq!(compiled.count(), 2, "{entries:?}");
    assert_eq!(entries.len(), 4, "{entries:?}");

    // Every file in the cache becomes the (allowing) reader's compiled code, under its own
    // name and under names that could be the built-ins'.
    let reader = std::fs::read(two.entry(&two.reader)).unwrap();
    for entry in &entries {
        std::fs::write(entry, &reader).unwrap();
    }
    for n in 0..3 {
        std::fs::write(
            two.cache.join(format!("{:064x}-{n:016x}.cwasm", n)),
            &reader,
        )
        .unwrap();
    }
    let rm = claude_bash("rm -rf ~", "rm -rf ~");
    let (lines, _) = two
        .sandbox
        .check_cached(&two.cache, &[], std::slice::from_ref(&rm));
    assert_eq!(lines[0]["decision"], "deny", "{}", lines[0]);
    let handlers = two.handlers.display().to_string();
    let (lines, _) = two
        .sandbox
        .check_cached(&two.cache, &["--handlers", &handlers], &[rm]);
    assert_eq!(lines[0]["decision"], "deny", "{}", lines[0]);
    assert_eq!(verdict_of(&lines[0], "denier")["verdict"], "deny");
}

#[test]
fn an_org_precompiles_its_plugins_into_a_cache_that_is_only_read() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("misbehaving");
    let managed = sandbox.root.join("managed");
    let org = sandbox.write(
        "etc/handlers.toml",
        &format!(
            r#"
[settings]
cache_dir = "{}"

[[handler]]
name = "denier"
plugin = "{}"
sha256 = "{}"
config = {{ behaviour = "empty-deny" }}
"#,
            managed.display(),
            plugin.display(),
            sha256_of(&plugin)
        ),
    );
    let org_arg = org.display().to_string();
    let output = sandbox.run(&["plugin", "precompile", &org_arg], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("compiled into {}", managed.display())),
        "{stdout}"
    );
    // The org's plugin only: the built-ins' native code is in the binary.
    let entries: Vec<PathBuf> = std::fs::read_dir(&managed)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = entries[0].clone();
    let digest = sha256_of(&plugin);
    assert!(
        entry
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(&digest),
        "{entry:?}"
    );
    let precompiled = std::fs::read(&entry).unwrap();

    let read_only = |on: bool| {
        use std::os::unix::fs::PermissionsExt;
        let mode = if on { 0o555 } else { 0o755 };
        std::fs::set_permissions(&managed, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    read_only(true);
    let user_cache = sandbox.root.join("user-cache");
    let decide = || {
        let (lines, output) =
            sandbox.check_cached(&user_cache, &["--org-handlers", &org_arg], &[titled("x")]);
        assert_eq!(
            verdict_of(&lines[0], "denier")["verdict"],
            "deny",
            "{}",
            lines[0]
        );
        assert!(verdict_of(&lines[0], "denier").get("error").is_none());
        // The org's plugin is never put in the user's cache.
        assert!(!user_cache.exists() || std::fs::read_dir(&user_cache).unwrap().next().is_none());
        stderr(&output)
    };
    assert_eq!(decide(), "");

    // A bad entry there is compiled in memory, said, and left alone.
    read_only(false);
    let mut corrupted = precompiled.clone();
    let middle = corrupted.len() / 2;
    corrupted[middle] ^= 1;
    std::fs::write(&entry, &corrupted).unwrap();
    read_only(true);
    let said = decide();
    assert!(
        said.contains(&format!("{}: not a valid cache entry", entry.display())),
        "{said}"
    );
    assert_eq!(std::fs::read(&entry).unwrap(), corrupted);

    // Gone: compiled in memory, with a hint to precompile.
    read_only(false);
    std::fs::remove_file(&entry).unwrap();
    read_only(true);
    assert!(decide().contains("plugin precompile"));
    assert!(!entry.exists());

    // Entries under any other name there, even the reader's code, change nothing.
    read_only(false);
    for n in 0..3 {
        std::fs::write(
            managed.join(format!("{n:064x}-{n:016x}.cwasm")),
            &precompiled,
        )
        .unwrap();
    }
    read_only(true);
    let rm = claude_bash("rm -rf ~", "rm -rf ~");
    let (lines, _) = sandbox.check_cached(&user_cache, &["--org-handlers", &org_arg], &[rm]);
    assert_eq!(lines[0]["decision"], "deny", "{}", lines[0]);
    read_only(false);

    // A plugin file alone, into a directory of one's choice.
    let dir = sandbox.root.join("elsewhere");
    let output = sandbox.run(
        &[
            "plugin",
            "precompile",
            "--cache-dir",
            dir.to_str().unwrap(),
            plugin.to_str().unwrap(),
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn only_the_org_file_names_a_cache_dir() {
    let sandbox = Sandbox::new();
    let handlers = sandbox.write("p/handlers.toml", "[settings]\ncache_dir = \"/tmp/x\"\n");
    let output = sandbox.run(
        &["check", "--handlers", handlers.to_str().unwrap(), "-"],
        "",
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("settings.cache_dir: only an org file may set this"),
        "{}",
        stderr(&output)
    );
}
