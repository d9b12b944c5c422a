//! What the engine tells an observer (the server's metrics): every state event once it is
//! queued for the store, and every model call with how long it took.
//!
//! Invariants: observing never blocks or fails a turn (an observer returns nothing and must be
//! quick); an observer is installed once per hub, before sessions run ([`crate::SessionHub::observe`]);
//! without one, nothing is observed.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use workmate_protocol::{Event, TokenUsage};

/// How a model call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelCallOutcome {
    /// A complete reply.
    Ok,
    /// The provider failed (an error, a broken stream).
    Error,
    /// The turn was stopped while it streamed.
    Interrupted,
}

impl ModelCallOutcome {
    /// The label value, e.g. `"ok"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Interrupted => "interrupted",
        }
    }
}

/// Sees what the engine does. Every method has an empty default.
pub trait EngineObserver: Send + Sync + fmt::Debug {
    /// A state event was queued for the store and published.
    fn event(&self, _event: &Event) {}

    /// A call of `model` ended after `elapsed`, with the tokens it reported.
    fn model_call(
        &self,
        _model: &str,
        _elapsed: Duration,
        _outcome: ModelCallOutcome,
        _usage: Option<&TokenUsage>,
    ) {
    }
}

/// The hub's observer, once installed.
#[derive(Debug, Default)]
pub(crate) struct ObserverSlot(OnceLock<Arc<dyn EngineObserver>>);

impl ObserverSlot {
    /// Installs `observer`; `false` when one was installed before (it stays).
    pub(crate) fn install(&self, observer: Arc<dyn EngineObserver>) -> bool {
        self.0.set(observer).is_ok()
    }

    /// The observer, if any.
    pub(crate) fn get(&self) -> Option<&Arc<dyn EngineObserver>> {
        self.0.get()
    }
}
