//! A plugin that tries to read the host's files: it imports wasi:filesystem.
use acp_gate_plugin::{Plugin, Request, Verdict};

struct FsReader;

impl Plugin for FsReader {
    type Config = serde::de::IgnoredAny;

    fn evaluate(_request: &Request, _config: &Self::Config) -> Result<Verdict, String> {
        Ok(match std::fs::read_to_string("/etc/passwd") {
            Ok(text) => Verdict::Deny(format!("read {} bytes of /etc/passwd", text.len())),
            Err(_) => Verdict::Allow,
        })
    }
}

acp_gate_plugin::export_plugin!(FsReader);
