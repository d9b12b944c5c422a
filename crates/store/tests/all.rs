//! The store's test suite. Every test in `backend_matrix!` runs unchanged on SQLite, MariaDB/MySQL
//! and Postgres; the server-backed halves need `WORKMATE_TEST_MYSQL_URL` and
//! `WORKMATE_TEST_POSTGRES_URL` and are reported as ignored when those were unset at build time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[macro_use]
mod support;

mod audit_chain;
mod automations;
mod bindings;
mod concurrency;
mod connection_leases;
mod inbox;
mod intake;
mod isolation;
mod ledger;
mod migrations;
mod offboarding;
mod personas;
mod records;
mod roles;
mod secrets;
mod spent_links;
mod usage;
mod writer;
