//! `/workmate automations …` and `/workmate rules …`: the tenant's automations and their standing
//! rules, from a chat.
//!
//! Invariants: every change goes through the automation service (`check_manager`, `change`), so a
//! chat command is refused exactly as the API refuses it; only an automation's owner or an admin
//! runs, pauses, resumes, deletes it or revokes its rules; a revoke that names a rule standing on
//! several automations changes none of them until the caller says which.

use std::fmt::Write as _;

use workmate_engine::automations::{
    AutomationChange, AutomationError, ChangedBy, change, check_manager, delete, public_view,
    tenant_timezone,
};
use workmate_protocol::AutomationId;
use workmate_store::Automation;
use workmate_tools::automations::{AutomationSettings, format_in, zone};

use super::{AutomationAction, Caller, Outcome};
use crate::{Chat, Result};

/// Automations read for a list or a rule lookup.
const LIST_LIMIT: u32 = 500;
/// Lines shown at most.
const LIST_LINES: usize = 30;

impl Chat {
    /// The zone to show times in: the one the platform keeps for the caller, else the
    /// tenant's. Platforms bound their profile lookups, so the command still answers in time.
    async fn viewer_time_zone(&self, caller: &Caller) -> Result<String> {
        if let Ok(slot) = self.slot(caller.surface)
            && let Some(tz) = slot
                .platform
                .profile(&caller.person.platform_id)
                .await
                .time_zone
            && zone(&tz).is_ok()
        {
            return Ok(tz);
        }
        Ok(tenant_timezone(self.store(), &caller.person.tenant).await?)
    }

    /// One line per automation: title, id, schedule, enabled or paused, next run.
    pub(super) async fn automations(&self, caller: &Caller) -> Result<Outcome> {
        let store = self.store();
        let automations = store
            .automations()
            .list(&caller.person.tenant, LIST_LIMIT)
            .await?;
        if automations.is_empty() {
            return Ok(Outcome::ok(
                "No automations yet. Ask workmate to schedule a task, and it will show up here.",
            ));
        }
        let tz = self.viewer_time_zone(caller).await?;
        let total = automations.len();
        let mut text = format!(
            "{total} automation{} (next runs in {tz}):",
            if total == 1 { "" } else { "s" }
        );
        for automation in automations.iter().take(LIST_LINES) {
            let view = public_view(automation, Some(&tz));
            let schedule = view["schedule"].as_str().unwrap_or("unreadable schedule");
            let state = match (automation.enabled, &automation.running_run_id) {
                (true, Some(_)) => "enabled, running now",
                (true, None) => "enabled",
                (false, Some(_)) => "paused, running now",
                (false, None) => "paused",
            };
            let next = view["next_run"]
                .as_str()
                .map_or_else(|| "no next run".to_owned(), |at| format!("next run {at}"));
            let _ = write!(
                text,
                "\n• “{}” `{}`: {schedule}; {state}; {next}",
                automation.title, automation.id
            );
        }
        if total > LIST_LINES {
            let _ = write!(text, "\n… and {} more", total - LIST_LINES);
        }
        Ok(Outcome::ok(text))
    }

    /// Runs, pauses, resumes or deletes one automation, for its owner or an admin.
    pub(super) async fn automation(
        &self,
        caller: &Caller,
        action: AutomationAction,
        id: &str,
    ) -> Result<Outcome> {
        let store = self.store();
        let Some(automation) = store
            .automations()
            .get(&caller.person.tenant, &AutomationId::from(id))
            .await?
        else {
            return Ok(Outcome::refused(format!(
                "No automation {id} in this workspace; `/workmate automations` lists them."
            )));
        };
        if let Some(refusal) = refusal(
            check_manager(
                store,
                &caller.person.tenant,
                &automation,
                &caller.person.user.id,
            )
            .await,
        )? {
            return Ok(refusal);
        }
        let title = automation.title.clone();
        let outcome = match action {
            AutomationAction::Run => self.run_by_hand(caller, &automation).await?,
            AutomationAction::Pause if !automation.enabled => {
                Outcome::ok(format!("“{title}” was already paused; nothing changed."))
            }
            AutomationAction::Pause => {
                self.set_enabled(caller, &automation, false).await?;
                Outcome::ok(format!("Paused “{title}”. It will not run until resumed."))
            }
            AutomationAction::Resume => {
                let was_paused = !automation.enabled;
                let Some(resumed) = self.set_enabled(caller, &automation, true).await? else {
                    return Ok(Outcome::refused(format!(
                        "“{title}” was deleted meanwhile."
                    )));
                };
                let tz = self.viewer_time_zone(caller).await?;
                let next = resumed.next_run_ms.map_or_else(
                    || "Its schedule has no run left.".to_owned(),
                    |ms| format!("Next run: {}.", format_in(ms, &tz)),
                );
                if was_paused {
                    Outcome::ok(format!("Resumed “{title}”. {next}"))
                } else {
                    Outcome::ok(format!("“{title}” was not paused. {next}"))
                }
            }
            AutomationAction::Delete => {
                let by = ChangedBy {
                    user: &caller.person.user.id,
                    via: caller.surface.as_str(),
                };
                if delete(store, &caller.person.tenant, &automation, by).await? {
                    Outcome::ok(format!("Deleted “{title}” and its run history."))
                } else {
                    Outcome::refused(format!("“{title}” was deleted meanwhile."))
                }
            }
        };
        tracing::info!(
            tenant = %caller.person.tenant,
            automation = %automation.id,
            by = %caller.person.user.id,
            action = ?action,
            "Automation command from chat."
        );
        Ok(outcome)
    }

    async fn run_by_hand(&self, caller: &Caller, automation: &Automation) -> Result<Outcome> {
        let title = &automation.title;
        let Some(scheduler) = self.inner.scheduler.get() else {
            return Ok(Outcome::refused(format!(
                "Runs by hand are not available on this connection; start “{title}” with \
                 POST /v1/automations/{}/run.",
                automation.id
            )));
        };
        match scheduler
            .run_now(
                &caller.person.tenant,
                &automation.id,
                &caller.person.user.id,
            )
            .await
        {
            Ok(run) => {
                let target = AutomationSettings::from_json(&automation.settings).target;
                let whereto = if target.is_some() {
                    " Its cards and result are posted in its thread."
                } else {
                    ""
                };
                Ok(Outcome::ok(format!(
                    "Started a run of “{title}” now (run {}).{whereto}",
                    run.id
                )))
            }
            Err(
                e @ (workmate_engine::Error::Rejected(_)
                | workmate_engine::Error::Busy(_)
                | workmate_engine::Error::ShuttingDown),
            ) => Ok(Outcome::refused(format!("Did not start “{title}”: {e}."))),
            Err(e) => Err(e.into()),
        }
    }

    async fn set_enabled(
        &self,
        caller: &Caller,
        automation: &Automation,
        enabled: bool,
    ) -> Result<Option<Automation>> {
        let request = AutomationChange {
            enabled: Some(enabled),
            ..AutomationChange::default()
        };
        let by = ChangedBy {
            user: &caller.person.user.id,
            via: caller.surface.as_str(),
        };
        Ok(change(
            self.store(),
            &caller.person.tenant,
            &automation.id,
            by,
            request,
        )
        .await?)
    }

    /// The standing rules, grouped by automation.
    pub(super) async fn rules(&self, caller: &Caller) -> Result<Outcome> {
        let automations = self
            .store()
            .automations()
            .list(&caller.person.tenant, LIST_LIMIT)
            .await?;
        let mut text = String::from(
            "Standing rules (calls an automation's runs make without asking), by automation:",
        );
        let mut any = false;
        for automation in &automations {
            let rules = AutomationSettings::from_json(&automation.settings).standing_rules;
            if rules.is_empty() {
                continue;
            }
            any = true;
            let _ = write!(text, "\n“{}” `{}`:", automation.title, automation.id);
            for rule in rules {
                let _ = write!(text, "\n• {}", rule.entry());
            }
        }
        if !any {
            return Ok(Outcome::ok(
                "No automation has standing rules. An automation gets them when it is approved \
                 with the calls its runs must make without asking.",
            ));
        }
        text.push_str(
            "\nRemove one with `/workmate rules revoke <tool> <target>` (its automation's owner \
             or an admin).",
        );
        Ok(Outcome::ok(text))
    }

    /// Removes a standing rule: `<tool> <target>`, or `<automation id> <tool> <target>` when the
    /// same rule stands on several automations.
    pub(super) async fn revoke_rule(&self, caller: &Caller, typed: &str) -> Result<Outcome> {
        let store = self.store();
        let automations = store
            .automations()
            .list(&caller.person.tenant, LIST_LIMIT)
            .await?;
        let named = typed
            .split_once(char::is_whitespace)
            .and_then(|(first, rest)| {
                automations
                    .iter()
                    .find(|a| a.id.as_str() == first)
                    .map(|a| (a, rest))
            });
        let (candidates, entry) = match named {
            Some((automation, rest)) => (vec![automation], normalized(rest)),
            None => (automations.iter().collect(), normalized(typed)),
        };
        let holding: Vec<&Automation> = candidates
            .into_iter()
            .filter(|a| {
                AutomationSettings::from_json(&a.settings)
                    .standing_rules
                    .iter()
                    .any(|r| r.entry() == entry)
            })
            .collect();
        let automation = match holding.as_slice() {
            [] => {
                return Ok(Outcome::refused(format!(
                    "No standing rule “{entry}”; `/workmate rules` lists them."
                )));
            }
            [one] => *one,
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|a| format!("“{}” `{}`", a.title, a.id))
                    .collect();
                return Ok(Outcome::refused(format!(
                    "“{entry}” stands on {} automations: {}. Say which: \
                     `/workmate rules revoke <automation id> {entry}`.",
                    several.len(),
                    names.join(", ")
                )));
            }
        };
        if let Some(refusal) = refusal(
            check_manager(
                store,
                &caller.person.tenant,
                automation,
                &caller.person.user.id,
            )
            .await,
        )? {
            return Ok(refusal);
        }
        let request = AutomationChange {
            revoke: Some(entry.clone()),
            ..AutomationChange::default()
        };
        let by = ChangedBy {
            user: &caller.person.user.id,
            via: caller.surface.as_str(),
        };
        let changed = change(store, &caller.person.tenant, &automation.id, by, request).await;
        if let Some(refusal) = refusal(changed.map(|_| ()))? {
            return Ok(refusal);
        }
        tracing::info!(
            tenant = %caller.person.tenant,
            automation = %automation.id,
            by = %caller.person.user.id,
            "Standing rule revoked from chat."
        );
        Ok(Outcome::ok(format!(
            "Revoked “{entry}” from “{}”. Its runs will ask before that call again.",
            automation.title
        )))
    }
}

/// A refused or invalid request as the reply; store failures stay errors.
fn refusal(result: Result<(), AutomationError>) -> Result<Option<Outcome>> {
    match result {
        Ok(()) => Ok(None),
        Err(AutomationError::Forbidden(why) | AutomationError::Invalid(why)) => {
            Ok(Some(Outcome::refused(format!("Refused: {why}."))))
        }
        Err(e) => Err(e.into()),
    }
}

/// `<tool> <target>` with one space between them, as rules are stored.
fn normalized(entry: &str) -> String {
    let entry = entry.trim();
    match entry.split_once(char::is_whitespace) {
        Some((tool, target)) => format!("{tool} {}", target.trim()),
        None => entry.to_owned(),
    }
}
