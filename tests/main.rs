//! End-to-end tests: the real `acp-gate` binary, real plugins, real agent processes.

mod common;

mod agent_shapes;
mod cache;
mod config;
mod corpus;
mod distribution;
mod examples;
mod orchestrator;
mod plugin_cmd;
mod policy_formats;
mod policy_rules;
mod prepared;
mod protocol;
mod proxy;
mod run;
mod sandbox;
mod sdk_agent;
mod serve;
