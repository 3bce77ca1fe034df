//! `acp-gate plugin new`: a plugin project written from the templates in
//! `examples/plugins/templates/` (source, build script, CASES.toml, handlers.toml snippet),
//! which builds and passes its own test. A Rust project gets acp-gate's SDK and shell crates
//! vendored (the sources this binary's built-ins were built from); the other languages get the
//! WIT, whose `shell` import has the host read commands for them.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

/// The languages `plugin new` has a template for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    Rust,
    C,
    Js,
    Python,
    Go,
}

/// A template file: where it goes in the new project, and its text with `{{...}}` placeholders.
type TemplateFile = (&'static str, &'static str);

macro_rules! template {
    ($lang:literal, $file:literal) => {
        (
            $file,
            include_str!(concat!(
                "../../examples/plugins/templates/",
                $lang,
                "/",
                $file
            )),
        )
    };
}

/// The files every template has: its cases, a handlers.toml snippet, a README.
const COMMON: &[TemplateFile] = &[
    template!("common", "CASES.toml"),
    template!("common", "handlers.toml"),
    template!("common", "README.md"),
];

/// What a plugin built by its language's toolchain from WIT imports: its world, and
/// acp-gate's contract beside it.
const WIT: &[TemplateFile] = &[
    (
        "wit/world.wit",
        include_str!("../../examples/plugins/templates/common/world.wit"),
    ),
    (
        "wit/deps/acp-gate-plugin/plugin.wit",
        include_str!("../../wit/plugin.wit"),
    ),
];

// `VENDORED`: the SDK and shell crates' sources, their WIT, and the plugins' workspace
// manifest and lock, as built into this binary (see `build.rs`).
include!(concat!(env!("OUT_DIR"), "/vendored.rs"));

/// Where a Rust project keeps the vendored sources: the repository's own layout beneath it, so
/// that the SDK finds its WIT where it does in the repository (`../../wit`).
const VENDOR: &str = "vendor/acp-gate";

impl Lang {
    fn files(self) -> &'static [TemplateFile] {
        match self {
            Lang::Rust => &[
                template!("rust", "Cargo.toml"),
                template!("rust", "src/lib.rs"),
                template!("rust", "build.sh"),
            ],
            Lang::C => &[template!("c", "plugin.c"), template!("c", "build.sh")],
            Lang::Js => &[
                template!("js", "app.js"),
                template!("js", "package.json"),
                template!("js", "build.sh"),
            ],
            Lang::Python => &[
                template!("python", "app.py"),
                template!("python", "build.sh"),
            ],
            Lang::Go => &[
                template!("go", "export_acp_gate_plugin_handler/plugin.go"),
                template!("go", "go.mod"),
                template!("go", "go.sum"),
                template!("go", "wasi-stub.wat"),
                template!("go", "build.sh"),
            ],
        }
    }

    /// The files of the project beyond the template's own: for Rust, acp-gate's crates
    /// vendored with their lock; for the others, the WIT their toolchain builds from.
    fn support(self) -> Vec<(String, String)> {
        match self {
            Lang::Rust => {
                let mut files: Vec<(String, String)> = VENDORED
                    .iter()
                    .filter(|(path, _)| !path.starts_with("plugins/Cargo."))
                    .map(|(path, text)| (format!("{VENDOR}/{path}"), (*text).to_owned()))
                    .collect();
                files.push((
                    "Cargo.lock".to_owned(),
                    vendored("plugins/Cargo.lock").to_owned(),
                ));
                files
            }
            Lang::C | Lang::Js | Lang::Python | Lang::Go => WIT
                .iter()
                .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
                .collect(),
        }
    }

    /// The grants the built component needs (see `acp-gate plugin inspect`).
    fn imports(self) -> &'static str {
        match self {
            // Rust's standard library on wasm32-wasip2 imports wasi:cli and wasi:io; the
            // command is read in the plugin, with the vendored shell crate.
            Lang::Rust => r#"["log", "wasi-cli"]"#,
            // Built with their WASI imports stubbed or left out: only what world.wit imports
            // (`shell`: the host reads the command).
            Lang::C | Lang::Js | Lang::Python | Lang::Go => r#"["log", "shell"]"#,
        }
    }

    /// How the plugin reads a command, for its README.
    fn reading(self) -> &'static str {
        match self {
            Lang::Rust => {
                "It reads the command with the crates acp-gate's built-in plugins use, vendored \
                 under `vendor/acp-gate/` for this acp-gate's version: `acp-gate-plugin` (the \
                 request, the verdict, the export; `acp_gate_plugin::sensitive`, the \
                 sensitive-path tables) and `acp-gate-shell` (every simple command of a command \
                 line, through `&&`, pipes, `bash -c`, quoting and wrappers); `Cargo.lock` pins \
                 the versions the built-ins are built with. `cargo test` runs its own tests."
            }
            Lang::C | Lang::Js | Lang::Python | Lang::Go => {
                "It asks the host to read the command (`acp-gate:plugin/shell`, the `shell` \
                 grant): the simple commands the built-in plugins see, through `&&`, pipes, \
                 `bash -c`, quoting and wrappers. `wit/world.wit` lists what the plugin imports; \
                 `wit/deps/acp-gate-plugin/plugin.wit` is acp-gate's contract, every field \
                 documented."
            }
        }
    }

    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Lang::Rust => ("Rust", "rustup target add wasm32-wasip2"),
            Lang::C => (
                "C",
                "clang, lld, wasi-libc (Debian), wit-bindgen-cli and wasm-tools (cargo), the \
                 preview1 reactor adapter: see scripts/install-plugin-toolchains.sh",
            ),
            Lang::Js => (
                "JavaScript",
                "node and npm; build.sh installs componentize-qjs",
            ),
            Lang::Python => ("Python", "pip install componentize-py==0.25.1"),
            Lang::Go => (
                "Go",
                "Go 1.25 or later; wit-bindgen-cli 0.61.1 and wasm-tools (cargo): see \
                 scripts/install-plugin-toolchains.sh",
            ),
        }
    }

    fn ignored(self) -> &'static str {
        match self {
            Lang::Rust => "/target\n",
            Lang::C => "/bindings\n*.o\n",
            Lang::Js => "node_modules/\n",
            Lang::Python => "__pycache__/\n/wit_world\n",
            // What build.sh writes from wit-bindgen go.
            Lang::Go => "/acp_gate_plugin_*/\n/wit_exports.go\n",
        }
    }
}

/// Writes the project for plugin `name` in `lang` into `dir` (default `./NAME`).
pub fn new(name: &str, lang: Lang, dir: Option<PathBuf>) -> Result<()> {
    let valid = name.split('-').all(|word| {
        word.starts_with(|c: char| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    if !valid {
        bail!(
            "`{name}`: a plugin name is lowercase words of letters and digits joined by dashes (like `prod-guard`)"
        );
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!("{}: exists and is not empty", dir.display());
    }
    let (language, toolchain) = lang.describe();
    let wasm = format!("{name}.wasm");
    let workspace = workspace_tables();
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{name_snake}}", &name.replace('-', "_"))
            .replace("{{wasm}}", &wasm)
            .replace("{{lang}}", language)
            .replace("{{imports}}", lang.imports())
            .replace("{{toolchain}}", toolchain)
            .replace("{{reading}}", lang.reading())
            .replace("{{workspace}}", &workspace)
    };
    let ignored = format!("{}{wasm}\n", lang.ignored());
    let files = (COMMON.iter().chain(lang.files()))
        .map(|(path, text)| ((*path).to_owned(), fill(text)))
        .chain(lang.support())
        .chain([(".gitignore".to_owned(), ignored)]);
    for (path, text) in files {
        let target = dir.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        std::fs::write(&target, text)
            .with_context(|| format!("{}: cannot write", target.display()))?;
        #[cfg(unix)]
        if path.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    println!("created {} ({language} plugin `{name}`)", dir.display());
    println!(
        "next:  cd {} && ./build.sh && acp-gate plugin test {wasm} CASES.toml",
        dir.display()
    );
    Ok(())
}

/// The text of a vendored file.
fn vendored(path: &str) -> &'static str {
    VENDORED
        .iter()
        .find(|(p, _)| *p == path)
        .map_or("", |(_, text)| text)
}

/// The `[workspace.package]` and `[workspace.dependencies]` tables of acp-gate's plugins'
/// workspace (`plugins/Cargo.toml`), with paths into the vendored copy: the vendored crates
/// inherit their settings and dependency versions from them, as they do in the repository.
fn workspace_tables() -> String {
    let mut kept = String::new();
    let mut keep = false;
    for line in vendored("plugins/Cargo.toml").lines() {
        if line.starts_with('[') {
            keep = matches!(
                line.trim(),
                "[workspace.package]" | "[workspace.dependencies]"
            );
        }
        if keep {
            kept.push_str(&line.replace("path = \"", &format!("path = \"{VENDOR}/plugins/")));
            kept.push('\n');
        }
    }
    format!("{}\n", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_project_takes_the_plugins_workspace_settings_with_paths_into_its_vendor_dir() {
        let manifest = template!("rust", "Cargo.toml").1.replace("{{name}}", "x");
        let manifest = manifest.replace("{{workspace}}", &workspace_tables());
        let parsed: toml::Table = toml::from_str(&manifest).unwrap();
        let workspace = &parsed["workspace"];
        assert_eq!(
            workspace["dependencies"]["acp-gate-plugin"]["path"].as_str(),
            Some("vendor/acp-gate/plugins/sdk")
        );
        assert!(workspace["package"]["version"].is_str());
        // Everything the vendored crates inherit is there.
        for (path, text) in VENDORED
            .iter()
            .filter(|(p, _)| p.ends_with("/Cargo.toml") && *p != "plugins/Cargo.toml")
        {
            let member: toml::Table = toml::from_str(text).unwrap();
            let inherited = member["package"].as_table().unwrap().iter();
            for (key, _) in inherited.filter(|(_, v)| v.get("workspace").is_some()) {
                assert!(
                    workspace["package"].get(key).is_some(),
                    "{path}: package.{key}"
                );
            }
            for (name, dep) in member
                .get("dependencies")
                .and_then(|d| d.as_table())
                .into_iter()
                .flatten()
            {
                if dep.get("workspace").is_some() {
                    assert!(
                        workspace["dependencies"].get(name).is_some(),
                        "{path}: {name}"
                    );
                }
            }
        }
        assert!(vendored("wit/plugin.wit").contains("interface shell"));
        assert!(vendored("plugins/Cargo.lock").contains("name = \"brush-parser\""));
    }

    #[test]
    fn every_go_plugin_in_the_repository_pins_the_module_the_go_template_pins() {
        // scripts/install-plugin-toolchains.sh downloads it once, for all of them.
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for dir in ["examples/plugins/go", "tests/plugins/misbehaving-go"] {
            for file in ["go.mod", "go.sum"] {
                let text = std::fs::read_to_string(repo.join(dir).join(file)).unwrap();
                let template = Lang::Go.files().iter().find(|(path, _)| *path == file);
                assert_eq!(
                    Some(text.as_str()),
                    template.map(|(_, t)| *t),
                    "{dir}/{file}"
                );
            }
        }
    }
}
