//! The `acp-gate` command: parse the arguments, run the command, exit with its code.

fn main() -> std::process::ExitCode {
    acp_gate::cli::main()
}
