//! End-to-end tests: the real `acp-gate` binary, real plugins, real agent processes.

mod common;

mod agent_shapes;
mod cache;
mod conductor;
mod config;
mod corpus;
mod deadlines;
mod distribution;
mod doctor;
mod examples;
mod hooks;
mod orchestrator;
mod otlp;
mod plugin_cmd;
mod policy_check;
mod policy_formats;
mod policy_rules;
mod prepared;
mod protocol;
mod proxy;
mod real_agents;
mod release;
mod resident;
mod run;
mod sandbox;
mod sdk_agent;
mod serve;
mod structure;
mod twins;
