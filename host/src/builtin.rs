//! The built-in plugins embedded in the binary (built from `plugins/` and compiled to native
//! code by `build.rs`) and the text of the built-in default chain. They load through the same
//! runtime path as any plugin file; their grants are written in the chain's `handlers.toml`
//! like anyone's. A leaf.

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// A built-in's native code starts on a page of its own in the binary, so that a process
/// deciding one request runs it where it lies (`runtime::load`) instead of copying it.
#[repr(C, align(4096))]
struct PageAligned<T: ?Sized>(T);

/// The default chain's `handlers.toml`, shown by `acp-gate check` as `<builtin>`.
pub const DEFAULT_CHAIN: &str = include_str!("default-chain.toml");

/// What each built-in plugin is for, in a sentence: the one place it is said. `acp-gate chain`
/// shows it beside each handler that runs the plugin, and README.md's table of the built-in
/// handlers carries the same sentences (a test compares them).
pub const PURPOSES: &[(&str, &str)] = &[
    (
        "path-validator",
        "judges every path a request touches: inside the workspace allowed; outside it, writes, deletes and moves denied and reads asked; secrets (keys, credentials, `.env*`) denied for any access and files that run code later (shell start-up files, `.git/hooks`, agents' settings, acp-gate's own files) for writes, wherever they are; the project's own such files (`.pre-commit-config.yaml`, editor tasks) asked about for writes in the workspace; symlinks and case folding resolved by the host",
    ),
    (
        "dangerous-command",
        "judges every shell command, read as a shell reads it (through `&&`, pipes, subshells, `bash -c`, `sudo`, `env`, `timeout`, `xargs`, quoting): known-safe development commands allowed, dangerous ones denied with the reason (`rm -rf ~`, `curl … | sh`, force pushes, history rewrites), what it does not fully understand asked",
    ),
    (
        "mode-guard",
        "judges switches of the session's mode: into a mode in which the agent stops asking (`bypassPermissions`, `yolo`, `full-access`, unknown modes) asked, into one in which it keeps asking (`default`, `plan`, `read-only`) allowed",
    ),
    (
        "org-policy",
        "decides by the rules written in its config (`[[handler.config.rules]]`: command prefixes, regexes, path globs, tool kinds and names, each with examples checked at load); with none, as the default chain's `builtin-policy`, it has no opinion on anything and is never run: your rules go in a handler of your own with `plugin = \"builtin:org-policy\"`",
    ),
    (
        "acpx-policy",
        "acpx's permission policy (`--permission-policy`: autoApprove, autoDeny, escalate, defaultAction), decided as acpx decides it",
    ),
];

/// What the built-in plugin `name` is for ([`PURPOSES`]).
pub fn purpose(name: &str) -> Option<&'static str> {
    PURPOSES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The canonical name of a built-in plugin, if there is one called `name`.
pub fn find(name: &str) -> Option<&'static str> {
    EMBEDDED.iter().map(|(n, ..)| *n).find(|n| *n == name)
}

pub fn names() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, ..)| *n).collect()
}

/// The component bytes of a built-in plugin.
pub fn bytes(name: &str) -> Option<&'static [u8]> {
    EMBEDDED
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, b, ..)| *b)
}

/// What `build.rs` compiled from `component` with the binary's engine settings, when
/// `component` is a built-in plugin's: bytes of the binary itself, so trusted. Empty when the
/// build compiled nothing ahead (cross-compiling).
pub fn compiled(component: &[u8]) -> Option<&'static [u8]> {
    embedded(component).map(|(_, _, compiled, _)| *compiled)
}

/// The sha256 of `component` in hexadecimal, when it is a built-in plugin's (computed by
/// `build.rs`: a start does not hash the built-ins again).
pub fn sha256(component: &[u8]) -> Option<&'static str> {
    embedded(component).map(|(.., digest)| *digest)
}

/// The row of the built-in whose component is `component`: these very bytes of the binary
/// (compared by address first, which is what the loader passes).
fn embedded(
    component: &[u8],
) -> Option<&'static (&'static str, &'static [u8], &'static [u8], &'static str)> {
    EMBEDDED
        .iter()
        .find(|(_, bytes, ..)| std::ptr::eq(*bytes, component) || *bytes == component)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_built_in_plugin_says_what_it_is_for() {
        for name in super::names() {
            assert!(super::purpose(name).is_some(), "`{name}` has no purpose");
        }
        assert_eq!(super::PURPOSES.len(), super::names().len());
    }
}
