//! A pass-through ACP proxy written with the Rust SDK (its `Proxy` forwards everything), for the proxy-chain tests
//! (tests/conductor.rs): a conductor runs it before and after acp-gate, and it appends one line
//! per request it relays, `from-client METHOD` or `from-agent METHOD`, to the file it is given,
//! so that a test can tell where in the chain it sat and what reached it.
//!
//! `logging-proxy LOG_FILE` (built as an example of the host crate).

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_client_protocol::{Agent, Client, Handled, Proxy, Stdio, UntypedMessage};

/// Left to the SDK's proxy, which forwards what no handler took (and initializes the chain).
fn passed_on<R>(request: UntypedMessage, responder: R) -> Handled<(UntypedMessage, R)> {
    Handled::No {
        message: (request, responder),
        retry: false,
    }
}

fn log(file: &Path, line: &str) {
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .expect("the log file opens");
    writeln!(log, "{line}").expect("the log file takes a line");
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), agent_client_protocol::Error> {
    let file: PathBuf = std::env::args_os()
        .nth(1)
        .expect("usage: logging-proxy LOG_FILE")
        .into();
    let (to_agent, to_client) = (file.clone(), file);
    Proxy
        .v1()
        .name("logging-proxy")
        .on_receive_request_from(
            Client,
            async move |request: UntypedMessage, responder, _| {
                log(&to_agent, &format!("from-client {}", request.method));
                Ok(passed_on(request, responder))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request_from(
            Agent,
            async move |request: UntypedMessage, responder, _| {
                log(&to_client, &format!("from-agent {}", request.method));
                Ok(passed_on(request, responder))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
