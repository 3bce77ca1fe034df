//! A plugin whose `[handler.config] behaviour` picks how it misbehaves; with
//! `behaviour = "by-title"` each request's title picks it, so one handler can misbehave on one
//! request and answer the next.
use acp_gate_plugin::{Plugin, Request, Verdict};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    behaviour: String,
}

struct Misbehaving;

impl Plugin for Misbehaving {
    type Config = Config;

    fn evaluate(request: &Request, config: &Config) -> Result<Verdict, String> {
        let behaviour = match config.behaviour.as_str() {
            "by-title" => request.title.as_str(),
            fixed => fixed,
        };
        match behaviour {
            "loop" => loop {
                std::hint::black_box(request.title.len());
            },
            "alloc" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "panic" => panic!("the plugin panicked on purpose"),
            "error" => Err("cannot judge this".into()),
            "huge-reason" => Ok(Verdict::Deny("x".repeat(10 << 20))),
            "escapes" => Ok(Verdict::Ask(
                "\x1b[2J\x1b]0;pwned\x07 clear screen\u{202e}".into(),
            )),
            "empty-deny" => Ok(Verdict::Deny(String::new())),
            "allow" => Ok(Verdict::Allow),
            "allow-unless-rm" => Ok(match request.title.contains("rm") {
                true => Verdict::Deny("mentions rm".into()),
                false => Verdict::Allow,
            }),
            // Counts its calls in a global: a fresh instance per request always says 1.
            "count" => {
                static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                Ok(Verdict::Ask(format!("call {n}")))
            }
            "log" => {
                acp_gate_plugin::log::info("hello from the plugin");
                Ok(Verdict::Abstain)
            }
            other => Err(format!("unknown behaviour {other}")),
        }
    }
}

acp_gate_plugin::export_plugin!(Misbehaving);
