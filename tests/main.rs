//! End-to-end tests: the real `acp-gate` binary, real plugins, real agent processes.

mod common;

mod config;
mod sandbox;
