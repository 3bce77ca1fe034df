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
