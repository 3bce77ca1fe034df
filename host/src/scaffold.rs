//! `acp-gate plugin new`: a plugin project written from the templates in
//! `examples/plugins/templates/` (source, build script, CASES.toml, handlers.toml snippet),
//! which builds and passes its own test.

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

/// The files every template has: the plugin's world, its cases, a handlers.toml snippet.
const COMMON: &[TemplateFile] = &[
    (
        "wit/world.wit",
        include_str!("../../examples/plugins/templates/common/world.wit"),
    ),
    (
        "wit/deps/acp-gate-plugin/plugin.wit",
        include_str!("../../wit/plugin.wit"),
    ),
    template!("common", "CASES.toml"),
    template!("common", "handlers.toml"),
    template!("common", "README.md"),
];

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
        }
    }

    /// The grants the built component needs (see `acp-gate plugin inspect`).
    fn imports(self) -> &'static str {
        match self {
            // Rust's standard library on wasm32-wasip2 imports wasi:cli and wasi:io.
            Lang::Rust => r#"["log", "wasi-cli"]"#,
            // Built with their WASI imports stubbed or left out: only what world.wit imports.
            Lang::C | Lang::Js | Lang::Python => r#"["log"]"#,
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
        }
    }

    fn ignored(self) -> &'static str {
        match self {
            Lang::Rust => "/target\n",
            Lang::C => "/bindings\n*.o\n",
            Lang::Js => "node_modules/\n",
            Lang::Python => "__pycache__/\n/wit_world\n",
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
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{name_snake}}", &name.replace('-', "_"))
            .replace("{{wasm}}", &wasm)
            .replace("{{lang}}", language)
            .replace("{{imports}}", lang.imports())
            .replace("{{toolchain}}", toolchain)
    };
    let ignored = format!("{}{wasm}\n", lang.ignored());
    let files = COMMON
        .iter()
        .chain(lang.files())
        .map(|(path, text)| (*path, fill(text)))
        .chain([(".gitignore", ignored)]);
    for (path, text) in files {
        let target = dir.join(path);
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
