//! `proxy` as a component of an ACP conductor's chain (the proxy-chains RFD): how messages to
//! and from acp-gate's successor (the next proxy, or the agent) are framed. The conductor
//! initializes acp-gate with `proxy/initialize` (the params and answer of `initialize`),
//! delivers each request and notification of the successor wrapped in a `proxy/successor`
//! envelope, and takes acp-gate's for the successor wrapped the same way; answers, and
//! `$/cancel_request`, travel bare. The envelope is the SDK's schema type. The Rust SDK before
//! 5.0 spelt the methods `_proxy/initialize` and `_proxy/successor`: both spellings are read,
//! and acp-gate writes the one its conductor used.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    PROXY_METHOD_NAMES, ProxySuccessorNotification, ProxySuccessorRequest,
};
use serde_json::value::RawValue;

/// The methods as the Rust SDK spelt them before 5.0.
const LEGACY_INITIALIZE: &str = "_proxy/initialize";
const LEGACY_SUCCESSOR: &str = "_proxy/successor";

/// How a conductor spells the proxy methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spelling {
    /// `proxy/initialize`, `proxy/successor` (the RFD, the SDK since 5.0).
    #[default]
    Current,
    /// `_proxy/initialize`, `_proxy/successor`.
    Legacy,
}

impl Spelling {
    /// The spelling of `method` when it is `proxy/initialize`, in either.
    pub fn of_initialize(method: &str) -> Option<Spelling> {
        match method {
            m if m == PROXY_METHOD_NAMES.proxy_initialize => Some(Spelling::Current),
            LEGACY_INITIALIZE => Some(Spelling::Legacy),
            _ => None,
        }
    }

    fn successor(self) -> &'static str {
        match self {
            Spelling::Current => PROXY_METHOD_NAMES.proxy_successor,
            Spelling::Legacy => LEGACY_SUCCESSOR,
        }
    }
}

/// Whether `method` is `proxy/successor`, in either spelling.
pub fn is_successor(method: &str) -> bool {
    method == PROXY_METHOD_NAMES.proxy_successor || method == LEGACY_SUCCESSOR
}

/// The successor's message in a `proxy/successor` envelope (`params`) that came with `id` (a
/// request) or none (a notification): the JSON-RPC line it would be had the successor sent it
/// to acp-gate directly. `id` stays the one its answer goes back with. The envelope's own
/// `_meta` belongs to the hop and is dropped; the message's is in its params.
pub fn unwrap(id: Option<&RawValue>, params: Option<&RawValue>) -> Result<String, String> {
    let params = params.ok_or("a `proxy/successor` envelope without params")?;
    // Read as the SDK reads it; a key given twice is an error, so that acp-gate and the
    // editor cannot read two different messages out of one envelope.
    let envelope: ProxySuccessorNotification = serde_json::from_str(params.get())
        .map_err(|e| format!("an unreadable `proxy/successor` envelope ({e})"))?;
    let method = serde_json::to_string(&*envelope.method).map_err(|e| e.to_string())?;
    let inner = envelope.params.as_deref().map_or("", RawValue::get);
    let mut line = String::with_capacity(inner.len() + method.len() + 64);
    line.push_str(r#"{"jsonrpc":"2.0""#);
    if let Some(id) = id {
        line.push_str(r#","id":"#);
        line.push_str(id.get());
    }
    line.push_str(r#","method":"#);
    line.push_str(&method);
    if !inner.is_empty() {
        line.push_str(r#","params":"#);
        line.push_str(inner);
    }
    line.push('}');
    Ok(line)
}

/// A message for the successor: `method` with `params`, wrapped in a `proxy/successor` request
/// with `id` (its answer comes back bare, with that id) or in a notification.
pub fn wrap(
    spelling: Spelling,
    id: Option<&RawValue>,
    method: &str,
    params: Option<&RawValue>,
) -> String {
    let envelope =
        ProxySuccessorRequest::new(method).params(params.map(|p| Arc::from(p.to_owned())));
    // A struct of a string and raw JSON always serializes.
    let envelope = serde_json::to_string(&envelope).unwrap_or_default();
    let successor = spelling.successor();
    match id {
        Some(id) => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{successor}","params":{envelope}}}"#,
            id.get()
        ),
        None => format!(r#"{{"jsonrpc":"2.0","method":"{successor}","params":{envelope}}}"#),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    fn parsed(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn a_wrapped_message_unwraps_to_itself() {
        let params = raw(r#"{"sessionId":"s","path":"/w/a \"b\".txt","_meta":{"k":1}}"#);
        for id in [Some(raw(r#""c0ffee-1""#)), Some(raw("7")), None] {
            for spelling in [Spelling::Current, Spelling::Legacy] {
                let wrapped = wrap(spelling, id.as_deref(), "fs/write_text_file", Some(&params));
                let outer = parsed(&wrapped);
                assert!(is_successor(outer["method"].as_str().unwrap()));
                assert_eq!(outer["params"]["method"], "fs/write_text_file");
                assert_eq!(
                    outer.get("id"),
                    id.as_deref().map(|i| parsed(i.get())).as_ref()
                );
                let inner = unwrap(id.as_deref(), Some(&raw(&outer["params"].to_string())));
                let mut expected = json!({"jsonrpc": "2.0", "method": "fs/write_text_file", "params": parsed(params.get())});
                if let Some(id) = &id {
                    expected["id"] = parsed(id.get());
                }
                assert_eq!(parsed(&inner.unwrap()), expected);
            }
        }
    }

    #[test]
    fn envelopes_are_read_as_the_conductor_writes_them_and_strictly() {
        // What the conductor delivers (its proxy_wire test's transcript).
        let line = unwrap(
            None,
            Some(&raw(
                r#"{"method":"_vendor/note","params":{"x":1,"_meta":{"inner":true}}}"#,
            )),
        )
        .unwrap();
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","method":"_vendor/note","params":{"x":1,"_meta":{"inner":true}}}"#
        );
        // No params, or null: a message without params; the envelope's own _meta is the hop's.
        for params in [
            r#"{"method":"m"}"#,
            r#"{"method":"m","params":null,"_meta":{"h":1}}"#,
        ] {
            assert_eq!(
                unwrap(Some(&raw("1")), Some(&raw(params))).unwrap(),
                r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#
            );
        }
        // An escaped method name is decoded, as the editor would decode it.
        assert!(
            unwrap(None, Some(&raw(r#"{"method":"\u0066s/read_text_file"}"#)))
                .unwrap()
                .contains(r#""method":"fs/read_text_file""#)
        );
        for unreadable in [
            None,
            Some(r#"{"params":{}}"#),
            Some(r#"{"method":7}"#),
            Some(r#"{"method":"session/update","method":"fs/write_text_file"}"#),
            Some("[]"),
        ] {
            let params = unreadable.map(raw);
            assert!(unwrap(None, params.as_deref()).is_err(), "{unreadable:?}");
        }
    }

    #[test]
    fn both_spellings_are_known() {
        assert_eq!(
            Spelling::of_initialize("proxy/initialize"),
            Some(Spelling::Current)
        );
        assert_eq!(
            Spelling::of_initialize("_proxy/initialize"),
            Some(Spelling::Legacy)
        );
        assert_eq!(Spelling::of_initialize("initialize"), None);
        assert!(is_successor("proxy/successor") && is_successor("_proxy/successor"));
        assert!(!is_successor("proxy/successor/request"));
        let legacy = wrap(Spelling::Legacy, None, "session/cancel", None);
        assert_eq!(
            legacy,
            r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/cancel"}}"#
        );
    }
}
