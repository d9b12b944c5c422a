//! One repository per table (or per pair of tables that only make sense together).
//! Every method takes the tenant first and names it in every statement.

pub(crate) mod appends;
pub(crate) mod approvers;
pub(crate) mod audit;
pub(crate) mod audit_chain;
pub(crate) mod audit_outbox;
pub(crate) mod automations;
pub(crate) mod bindings;
pub(crate) mod cards;
pub(crate) mod connection_leases;
mod counters;
pub(crate) mod events;
pub(crate) mod inbox;
pub(crate) mod intake;
pub(crate) mod leases;
pub(crate) mod mcp_servers;
pub(crate) mod memories;
pub(crate) mod message_sessions;
pub(crate) mod messages;
pub(crate) mod offboarding;
pub(crate) mod open_turns;
mod opt_outs;
pub(crate) mod personas;
pub(crate) mod roles;
pub(crate) mod secrets;
pub(crate) mod sessions;
pub(crate) mod shared_values;
pub(crate) mod skills;
pub(crate) mod spent_links;
pub(crate) mod tenants;
pub(crate) mod tool_calls;
pub(crate) mod usage;
pub(crate) mod wakes;
