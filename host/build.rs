//! Builds the built-in plugins in `plugins/` as wasm32-wasip2 components, compiles them to
//! native code with the engine settings the binary uses, and embeds both.
//!
//! The plugins are a workspace of their own; this script runs a nested `cargo build` for them in
//! a target directory of their own (so it never waits on the outer build's lock) and writes
//! `builtins.rs`, a table of `(name, component, compiled, sha256)` that `host/src/builtin.rs`
//! includes (the sha256 computed here, so that a start does not hash the components again).
//! Compiled here, the built-ins depend on no file outside the binary and cost no compile at
//! start. (wasmtime is a build dependency with the binary's own features and profile, so cargo
//! builds it once for both: see the workspace's `Cargo.toml`.)

#[path = "src/runtime/engine.rs"]
#[allow(dead_code)] // the binary's other ways of allocating instances
mod engine;

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::Digest;

/// `builtin:NAME` -> crate name in `plugins/`.
const BUILTINS: &[&str] = &[
    "path-validator",
    "dangerous-command",
    "org-policy",
    "mode-guard",
    "acpx-policy",
];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let plugins = manifest_dir.join("../plugins");
    let wit = manifest_dir.join("../wit");
    for path in [
        plugins.join("Cargo.toml"),
        plugins.join("Cargo.lock"),
        wit.clone(),
        manifest_dir.join("src/runtime/engine.rs"),
    ] {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for krate in BUILTINS.iter().copied().chain(["sdk", "shell"]) {
        for part in ["src", "Cargo.toml", "tests"] {
            let path = plugins.join(krate).join(part);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }

    // A position-dependent executable: a hook is a process per tool call, and a PIE of this
    // size spends half its start applying ~70,000 relocations to pages it then owns dirty
    // (BENCHMARKS.md, section 9). The libraries it loads keep their randomised addresses.
    // Not on musl: there rustc links a static PIE with musl's own start-up code for one, which
    // crashes in a position-dependent executable; `-C relocation-model=static` gives a musl
    // build the same start (scripts/release.sh).
    let target = |key: &str, value: &str| std::env::var(key).as_deref() == Ok(value);
    if target("CARGO_CFG_TARGET_OS", "linux") && !target("CARGO_CFG_TARGET_ENV", "musl") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }

    ensure_wasm_target();
    let target_dir = workspace_target_dir(&manifest_dir).join("wasm-plugins");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&plugins)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(&target_dir);
    // The outer build's flags, wrappers (clippy) and jobserver are not for the guest build.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let inherited =
            key.starts_with("CARGO_") && key != "CARGO_HOME" && key != "CARGO_NET_OFFLINE";
        if inherited || key.starts_with("RUSTC_") || key == "RUSTFLAGS" {
            build.env_remove(key.as_ref());
        }
    }
    let status = build
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo for plugins/: {e}"));
    assert!(
        status.success(),
        "building the built-in plugins failed (is the wasm32-wasip2 target installed? \
         `rustup target add wasm32-wasip2`; rust-toolchain.toml asks rustup for it)"
    );

    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let engine = native_engine();
    let mut table =
        String::from("pub(crate) static EMBEDDED: &[(&str, &[u8], &[u8], &str)] = &[\n");
    // Native code on pages of its own: a process deciding one request runs it where it lies.
    let mut pages = String::new();
    for (index, name) in BUILTINS.iter().enumerate() {
        let built = target_dir
            .join("wasm32-wasip2/release")
            .join(format!("{}.wasm", name.replace('-', "_")));
        let bytes = std::fs::read(&built).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
        let compiled = match &engine {
            Some(engine) => engine
                .precompile_component(&bytes)
                .unwrap_or_else(|e| panic!("{}: cannot be compiled: {e:#}", built.display())),
            None => Vec::new(),
        };
        let mut row = format!("    ({name:?}");
        for (extension, contents) in [("wasm", &bytes), ("cwasm", &compiled)] {
            let embedded = out_dir.join(format!("{name}.{extension}"));
            std::fs::write(&embedded, contents).unwrap();
            let included = format!("include_bytes!({:?})", embedded.display().to_string());
            if extension == "wasm" {
                row.push_str(&format!(", {included}"));
            } else {
                row.push_str(&format!(", &COMPILED_{index}.0"));
                pages.push_str(&format!(
                    "static COMPILED_{index}: PageAligned<[u8; {}]> = PageAligned(*{included});\n",
                    contents.len()
                ));
            }
        }
        let digest: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        row.push_str(&format!(", {digest:?}"));
        table.push_str(&row);
        table.push_str("),\n");
    }
    table.push_str("];\n");
    table.push_str(&pages);
    std::fs::write(out_dir.join("builtins.rs"), table).unwrap();
    vendored_sources(&manifest_dir.join(".."), &out_dir);
}

/// `vendored.rs`: the sources `acp-gate plugin new --lang rust` writes under the new project's
/// `vendor/acp-gate/` (the plugins' SDK and shell crates with their tests, the WIT they build
/// against, the plugins' workspace manifest and lock), each as `(path in the repository,
/// text)`: the new plugin builds against exactly the crates the built-ins of this binary were
/// built with.
fn vendored_sources(repository: &Path, out_dir: &Path) {
    let mut files = vec![
        PathBuf::from("wit/plugin.wit"),
        PathBuf::from("plugins/Cargo.toml"),
        PathBuf::from("plugins/Cargo.lock"),
    ];
    for krate in ["plugins/sdk", "plugins/shell"] {
        files.push(Path::new(krate).join("Cargo.toml"));
        // Its sources, and its tests: a target the manifest names (the shell crate's
        // differential test) must be there for cargo to read the manifest at all.
        let mut dirs: Vec<PathBuf> = ["src", "tests"]
            .iter()
            .map(|dir| Path::new(krate).join(dir))
            .filter(|dir| repository.join(dir).is_dir())
            .collect();
        while let Some(dir) = dirs.pop() {
            let entries = std::fs::read_dir(repository.join(&dir))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            for entry in entries {
                let path = dir.join(entry.unwrap().file_name());
                match repository.join(&path).is_dir() {
                    true => dirs.push(path),
                    false => files.push(path),
                }
            }
        }
    }
    files.sort();
    let mut table = String::from("pub(crate) const VENDORED: &[(&str, &str)] = &[\n");
    for file in files {
        let absolute = repository.join(&file).canonicalize().unwrap();
        table.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            file.display().to_string(),
            absolute.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("vendored.rs"), table).unwrap();
}

/// The engine the binary will run (with its instance pool), when it runs where it is built or
/// on the same architecture and system with another C library (a static musl build: then for
/// the architecture's baseline, so that a release runs on any CPU of it, not only on ones like
/// the build machine's); otherwise (cross-compiling, or the pool refused here) nothing is
/// compiled ahead and the binary compiles the built-ins in memory at each start.
fn native_engine() -> Option<wasmtime::Engine> {
    let (target, host) = (std::env::var("TARGET").ok()?, std::env::var("HOST").ok()?);
    let mut config = engine::config(engine::Instances::Pooled);
    if target != host {
        fn machine(triple: &str) -> (Option<&str>, Option<&str>) {
            let mut parts = triple.split('-');
            (parts.next(), parts.nth(1))
        }
        if machine(&target) != machine(&host) {
            return None;
        }
        config.target(&target).ok()?;
        if target.starts_with("x86_64-") {
            // x86-64-v2 (every x86-64 CPU since 2009): what cranelift needs for WebAssembly's
            // SIMD, which the engine enables where it runs.
            for flag in [
                "has_cmpxchg16b",
                "has_sse3",
                "has_ssse3",
                "has_sse41",
                "has_sse42",
                "has_popcnt",
            ] {
                // SAFETY: a flag the CPUs it runs on lack fails wasmtime's check when the
                // binary loads the code, which then compiles it again: never wrong code.
                unsafe { config.cranelift_flag_enable(flag) };
            }
        }
    }
    wasmtime::Engine::new(&config)
        .inspect_err(|e| {
            println!(
                "cargo:warning=the built-in plugins are not compiled ahead ({e:#}): the binary \
                 will compile them at each start"
            )
        })
        .ok()
}

/// Installs the wasm32-wasip2 standard library through rustup when the toolchain lacks it.
/// rust-toolchain.toml asks rustup for it, but a toolchain installed earlier without it stays
/// without it where rustup does not install by itself (`RUSTUP_AUTO_INSTALL=0`): the first
/// `cargo run` would then fail with "can't find crate for `core`".
fn ensure_wasm_target() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", "wasm32-wasip2"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    if libdir.is_some_and(|dir| dir.is_dir()) {
        return;
    }
    println!(
        "cargo:warning=the wasm32-wasip2 target is missing: installing it with `rustup target add wasm32-wasip2` (the built-in plugins are built for it)"
    );
    // `RUSTUP_TOOLCHAIN`, set by rustup's cargo, makes this the toolchain being built with.
    let added = Command::new("rustup")
        .args(["target", "add", "wasm32-wasip2"])
        .status();
    match added {
        Ok(status) if status.success() => {}
        Ok(status) => panic!(
            "`rustup target add wasm32-wasip2` failed ({status}); install the target and build again"
        ),
        Err(error) => panic!(
            "the wasm32-wasip2 target is missing and rustup cannot be run ({error}): install the \
             target for this toolchain (the built-in plugins are built for it) and build again"
        ),
    }
}

/// The outer build's target directory: `CARGO_TARGET_DIR`, or `target/` beside the workspace.
fn workspace_target_dir(manifest_dir: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir.join("../target"),
    }
}
