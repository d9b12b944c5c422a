//! Shared fixtures of the DingTalk tests: the fake Stream gateway and a fake chat layer.

pub(crate) mod api;
pub(crate) mod gateway;
pub(crate) mod sink;
