//! `acp-gate-demo-agent [--script demo|ask|repeat|inject|die|soak:N|flood:N|switch-itself|start-bypassed]`: the scripted ACP agent on stdio.
//! `$ACP_GATE_DEMO_SCRIPT` chooses the script when the flag is absent.

use std::process::ExitCode;

use acp_gate_demo_agent::{Script, serve_stdio};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let name = match (args.next().as_deref(), args.next()) {
        (Some("--script"), Some(name)) => name,
        (None, _) => std::env::var("ACP_GATE_DEMO_SCRIPT").unwrap_or_else(|_| "demo".into()),
        _ => {
            eprintln!(
                "usage: acp-gate-demo-agent [--script demo|ask|repeat|inject|die|soak:N|flood:N|switch-itself|start-bypassed]"
            );
            return ExitCode::from(2);
        }
    };
    let Some(script) = Script::parse(&name) else {
        eprintln!(
            "acp-gate-demo-agent: unknown script `{name}` (demo, ask, repeat, inject, die, soak:N, flood:N, switch-itself, start-bypassed)"
        );
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(serve_stdio(script)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("acp-gate-demo-agent: {error}");
            ExitCode::FAILURE
        }
    }
}
