//! `acp-gate plugin hash | inspect | validate`: what an author runs before pinning a plugin.

use crate::common::{Sandbox, sha256_of, stderr, test_plugin};

#[test]
fn hash_prints_the_pin_line_for_handlers_toml() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("misbehaving");
    let output = sandbox.run(&["plugin", "hash", plugin.to_str().unwrap()], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let digest = sha256_of(&plugin);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("sha256 = \"{digest}\"\n")
    );
}

#[test]
fn inspect_lists_imports_with_the_grant_each_needs() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("fs-reader");
    let output = sandbox.run(
        &[
            "plugin",
            "inspect",
            "--format",
            "json",
            plugin.to_str().unwrap(),
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let info: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // Every plugin built with the SDK also exports the optional `prepare` (keeping nothing).
    assert_eq!(
        info["exports"],
        serde_json::json!([
            "acp-gate:plugin/prepare@0.1.0",
            "acp-gate:plugin/handler@0.1.0"
        ])
    );
    let imports = info["imports"].as_array().unwrap();
    let need = |name: &str| {
        imports
            .iter()
            .find(|i| i[0].as_str().unwrap().starts_with(name))
            .map(|i| i[1].clone())
    };
    assert_eq!(
        need("wasi:filesystem/preopens"),
        Some(serde_json::json!({"grant": "wasi-filesystem"}))
    );
    assert_eq!(
        need("acp-gate:plugin/types"),
        Some(serde_json::json!("nothing"))
    );
}

#[test]
fn validate_names_the_imports_that_would_be_refused() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("fs-reader");
    let output = sandbox.run(&["plugin", "validate", plugin.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output)
            .contains("`wasi:filesystem/preopens@0.2.6` (needs the `wasi-filesystem` grant)"),
        "{}",
        stderr(&output)
    );
    let output = sandbox.run(
        &[
            "plugin",
            "validate",
            "--imports",
            "log,wasi-cli,wasi-clocks,wasi-filesystem",
            plugin.to_str().unwrap(),
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("ok, a plugin for acp-gate:plugin@0.1.0")
    );
}

#[test]
fn a_plugin_built_for_another_wit_version_is_refused_naming_both_versions() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("future-wit");
    let output = sandbox.run(&["plugin", "validate", plugin.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(1));
    let error = stderr(&output);
    assert!(
        error.contains(
            "built for acp-gate:plugin@0.2.0, but this acp-gate implements acp-gate:plugin@0.1.0"
        ),
        "{error}"
    );
}
