//! When an automation runs: a 5-field cron expression or a one-off time, in an IANA time zone.
//!
//! Invariants: the next run is always computed in the schedule's own zone, strictly after the
//! given instant, so a wall-clock time that a DST change skips runs once at the first instant
//! after the gap and one that a DST change repeats runs once; a one-off time fires only before
//! its first run; a schedule that never fires again yields `None`.

use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// A schedule that cannot be used, with what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

/// When an automation runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Whenever a 5-field cron expression matches, in `timezone`.
    Cron {
        /// `minute hour day-of-month month day-of-week`.
        cron: String,
        /// An IANA zone name, such as `Asia/Shanghai`.
        timezone: String,
    },
    /// Once, at `fire_at`.
    Once {
        /// RFC 3339 with the zone's offset.
        fire_at: String,
        /// An IANA zone name.
        timezone: String,
    },
}

impl Schedule {
    /// A cron schedule, checked: exactly five fields, each valid, and a known zone.
    pub fn cron(expression: &str, timezone: &str) -> Result<Self, ScheduleError> {
        zone(timezone)?;
        let expression = expression.split_whitespace().collect::<Vec<_>>().join(" ");
        parse_cron(&expression)?;
        Ok(Self::Cron {
            cron: expression,
            timezone: timezone.to_owned(),
        })
    }

    /// A one-off schedule. `fire_at` is RFC 3339 (`2026-12-01T09:00:00+08:00`) or a local time
    /// without offset (`2026-12-01T09:00`), read in `timezone`.
    pub fn once(fire_at: &str, timezone: &str) -> Result<Self, ScheduleError> {
        let tz = zone(timezone)?;
        let at = parse_instant(fire_at.trim(), tz)?;
        Ok(Self::Once {
            fire_at: at.with_timezone(&tz).to_rfc3339(),
            timezone: timezone.to_owned(),
        })
    }

    /// Reads a stored schedule and checks it again.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, ScheduleError> {
        let parsed: Self = serde_json::from_value(value.clone())
            .map_err(|e| ScheduleError(format!("not a schedule: {e}")))?;
        match &parsed {
            Self::Cron { cron, timezone } => Self::cron(cron, timezone),
            Self::Once { fire_at, timezone } => Self::once(fire_at, timezone),
        }
    }

    /// The schedule as stored.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The schedule's zone name.
    pub fn timezone(&self) -> &str {
        match self {
            Self::Cron { timezone, .. } | Self::Once { timezone, .. } => timezone,
        }
    }

    /// The first run strictly after `after_ms`, given how many runs happened and the cap on
    /// them. `None`: it never runs again.
    pub fn next_after(&self, after_ms: i64, run_count: i64, max_runs: Option<u32>) -> Option<i64> {
        if max_runs.is_some_and(|max| run_count >= i64::from(max)) {
            return None;
        }
        let tz = zone(self.timezone()).ok()?;
        match self {
            Self::Once { fire_at, .. } => {
                let at = DateTime::parse_from_rfc3339(fire_at)
                    .ok()?
                    .timestamp_millis();
                (run_count == 0).then_some(at)
            }
            Self::Cron { cron, .. } => {
                let cron = parse_cron(cron).ok()?;
                let after = DateTime::from_timestamp_millis(after_ms)?.with_timezone(&tz);
                let next = cron.find_next_occurrence(&after, false).ok()?;
                Some(next.timestamp_millis())
            }
        }
    }

    /// The schedule in words: "At 09:00, on Monday … (Asia/Shanghai)", "Once at …".
    pub fn describe(&self) -> String {
        match self {
            Self::Cron { cron, timezone } => match parse_cron(cron) {
                Ok(parsed) => format!("{} ({timezone})", parsed.describe()),
                Err(_) => format!("{cron} ({timezone})"),
            },
            Self::Once { fire_at, timezone } => {
                let at = DateTime::parse_from_rfc3339(fire_at)
                    .map(|at| at.timestamp_millis())
                    .ok();
                match at {
                    Some(at) => format!("Once at {}", format_in(at, timezone)),
                    None => format!("Once at {fire_at}"),
                }
            }
        }
    }
}

/// `ms` as a local time in `timezone` ("Mon 1 Dec 2026 09:00 CST"); UTC if the zone is unknown.
pub fn format_in(ms: i64, timezone: &str) -> String {
    let Some(at) = DateTime::from_timestamp_millis(ms) else {
        return ms.to_string();
    };
    match zone(timezone) {
        Ok(tz) => at
            .with_timezone(&tz)
            .format("%a %-d %b %Y %H:%M %Z")
            .to_string(),
        Err(_) => at.format("%a %-d %b %Y %H:%M UTC").to_string(),
    }
}

/// An IANA zone by name.
pub fn zone(name: &str) -> Result<Tz, ScheduleError> {
    Tz::from_str(name.trim()).map_err(|_| {
        ScheduleError(format!(
            "unknown time zone {name:?}: use an IANA name such as \"Asia/Shanghai\" or \"Europe/Berlin\""
        ))
    })
}

fn parse_cron(expression: &str) -> Result<croner::Cron, ScheduleError> {
    let fields = expression.split_whitespace().count();
    if fields != 5 {
        return Err(ScheduleError(format!(
            "cron {expression:?} has {fields} fields; use five: minute hour day-of-month month day-of-week (\"0 9 * * 1-5\" is weekdays at 9)"
        )));
    }
    croner::Cron::from_str(expression)
        .map_err(|e| ScheduleError(format!("cron {expression:?} is not valid: {e}")))
}

fn parse_instant(text: &str, tz: Tz) -> Result<DateTime<Utc>, ScheduleError> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    let naive = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
        .ok_or_else(|| {
            ScheduleError(format!(
                "cannot read the time {text:?}: use \"2026-12-01T09:00\" (in the automation's zone) or RFC 3339 with an offset"
            ))
        })?;
    // A time a DST change skips runs at the first valid instant after it; a repeated one once.
    tz.from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            (1..=180)
                .map(|m| naive + chrono::Duration::minutes(m))
                .find_map(|later| tz.from_local_datetime(&later).earliest())
        })
        .map(|at| at.with_timezone(&Utc))
        .ok_or_else(|| ScheduleError(format!("{text:?} does not exist in {tz}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(rfc3339: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc3339)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn weekday_mornings_follow_the_zone() {
        let schedule = Schedule::cron("0 9 * * 1-5", "Asia/Shanghai").unwrap();
        // Friday 10:00 in Shanghai → Monday 09:00.
        let next = schedule.next_after(ms("2026-12-04T10:00:00+08:00"), 0, None);
        assert_eq!(next, Some(ms("2026-12-07T09:00:00+08:00")));
    }

    #[test]
    fn a_daily_run_neither_skips_nor_doubles_across_dst() {
        let daily = Schedule::cron("30 2 * * *", "America/New_York").unwrap();
        let mut at = ms("2026-03-07T12:00:00-05:00");
        let mut runs = Vec::new();
        for _ in 0..3 {
            at = daily.next_after(at, 0, None).unwrap();
            runs.push(at);
        }
        // 02:30 does not exist on 8 March: that day's run is at 03:00 EDT.
        assert_eq!(
            runs,
            [
                ms("2026-03-08T03:00:00-04:00"),
                ms("2026-03-09T02:30:00-04:00"),
                ms("2026-03-10T02:30:00-04:00"),
            ]
        );
        let repeated = Schedule::cron("30 1 * * *", "America/New_York").unwrap();
        // 01:30 happens twice on 1 November; a run just after the first is next due a day later.
        let after_first = ms("2026-11-01T01:31:00-04:00");
        assert_eq!(
            repeated.next_after(after_first, 0, None),
            Some(ms("2026-11-02T01:30:00-05:00"))
        );
    }

    #[test]
    fn a_one_off_fires_only_before_its_first_run() {
        let once = Schedule::once("2026-12-01T09:00", "Europe/Berlin").unwrap();
        let at = ms("2026-12-01T09:00:00+01:00");
        assert_eq!(once.next_after(0, 0, None), Some(at));
        assert_eq!(
            once.next_after(at + 1, 0, None),
            Some(at),
            "still owed once"
        );
        assert_eq!(once.next_after(at + 1, 1, None), None);
    }

    #[test]
    fn max_runs_ends_a_schedule() {
        let hourly = Schedule::cron("0 * * * *", "UTC").unwrap();
        assert!(hourly.next_after(0, 2, Some(3)).is_some());
        assert_eq!(hourly.next_after(0, 3, Some(3)), None);
    }

    #[test]
    fn bad_input_says_what_to_write() {
        let six = Schedule::cron("0 0 9 * * 1", "UTC").unwrap_err();
        assert!(six.0.contains("use five"), "{six}");
        let bad = Schedule::cron("61 * * * *", "UTC").unwrap_err();
        assert!(bad.0.contains("not valid"), "{bad}");
        let tz = Schedule::cron("0 9 * * *", "Mars/Olympus").unwrap_err();
        assert!(tz.0.contains("IANA"), "{tz}");
        let when = Schedule::once("next tuesday", "UTC").unwrap_err();
        assert!(when.0.contains("2026-12-01T09:00"), "{when}");
    }

    #[test]
    fn stored_schedules_read_back_and_describe_themselves() {
        let schedule = Schedule::cron("0  9 * * 1-5", "Asia/Shanghai").unwrap();
        let back = Schedule::from_json(&schedule.to_json()).unwrap();
        assert_eq!(back, schedule);
        assert!(
            schedule.describe().contains("Monday"),
            "{}",
            schedule.describe()
        );
        assert!(
            Schedule::from_json(
                &serde_json::json!({"kind": "cron", "cron": "x", "timezone": "UTC"})
            )
            .is_err()
        );
        let once = Schedule::once("2026-12-01T09:00:00+08:00", "Asia/Shanghai").unwrap();
        assert_eq!(once.describe(), "Once at Tue 1 Dec 2026 09:00 CST");
    }
}
