//! How the chat surfaces learn about runs, so they can show them in the automation's thread, and
//! about prompts that have waited long, so they can remind the people who can answer them.

use std::future::Future;
use std::pin::Pin;

use workmate_store::{Automation, AutomationRun, InboxItem};

/// A future an observer returns.
pub type ObserverFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Told when a run starts (its session exists, nothing has happened in it yet) and when it
/// ends. Implementations must not fail the run: they log their own errors.
pub trait RunObserver: Send + Sync + std::fmt::Debug {
    /// The run's session exists; its events will follow.
    fn run_started<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a>;

    /// The run ended; `run` holds its outcome.
    fn run_finished<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a>;

    /// `item` has waited longer than its tenant's `approvals.remind_after_minutes` (told once).
    fn prompt_still_waits<'a>(&'a self, _item: &'a InboxItem) -> ObserverFuture<'a> {
        Box::pin(async {})
    }
}

/// Told after every tick, for metrics.
pub trait TickObserver: Send + Sync + std::fmt::Debug {
    /// One tick ended after `took`: with its report, or failed (`None`).
    fn tick_finished(&self, report: Option<&super::TickReport>, took: std::time::Duration);
}

/// An observer that does nothing (no chat surface is configured).
#[derive(Debug, Default)]
pub struct NoObserver;

impl RunObserver for NoObserver {
    fn run_started<'a>(&'a self, _: &'a Automation, _: &'a AutomationRun) -> ObserverFuture<'a> {
        Box::pin(async {})
    }

    fn run_finished<'a>(&'a self, _: &'a Automation, _: &'a AutomationRun) -> ObserverFuture<'a> {
        Box::pin(async {})
    }
}
