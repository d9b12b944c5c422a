//! The coordinators against the real Redis (`WORKMATE_TEST_REDIS_URL`): two replicas in one
//! process, each with its own connections, as two processes would have. Reported as ignored when
//! the variable was unset at build time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod redis;
