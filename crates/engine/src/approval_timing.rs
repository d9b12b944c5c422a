//! How long a prompt may wait: the tenant setting `approvals`, `{"remind_after_minutes": 30,
//! "expire_after_hours": 24}` (both optional; unset means never). A prompt waiting longer than
//! the first is announced again once; one waiting longer than the second is dismissed as
//! expired, and its turn goes on as if it had been denied. The scheduler's tick applies both
//! ([`crate::Scheduler`]), audited as `approval_reminded` and `approval_expired`.

use serde_json::{Map, Value};

/// The most minutes before a reminder (a week).
const MAX_REMIND_MINUTES: u64 = 7 * 24 * 60;
/// The most hours before a prompt expires (thirty days).
const MAX_EXPIRE_HOURS: u64 = 30 * 24;

/// A tenant's prompt timing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApprovalTiming {
    /// Remind once after this long, in milliseconds.
    pub remind_after_ms: Option<i64>,
    /// Dismiss as expired after this long, in milliseconds.
    pub expire_after_ms: Option<i64>,
}

impl ApprovalTiming {
    /// The timing in a tenant's settings (nothing for an unset or unreadable setting).
    pub fn of(settings: &Value) -> Self {
        let field = |key: &str| {
            settings
                .pointer(&format!("/approvals/{key}"))
                .and_then(Value::as_u64)
                .filter(|&n| n > 0)
        };
        Self {
            remind_after_ms: field("remind_after_minutes")
                .map(|m| i64::try_from(m * 60_000).unwrap_or(i64::MAX)),
            expire_after_ms: field("expire_after_hours")
                .map(|h| i64::try_from(h * 3_600_000).unwrap_or(i64::MAX)),
        }
    }

    /// Whether anything is set.
    pub fn is_set(&self) -> bool {
        self.remind_after_ms.is_some() || self.expire_after_ms.is_some()
    }
}

/// The `approvals` setting as stored, or what it takes.
pub(crate) fn parse_setting(value: &Value) -> Result<Value, String> {
    let example = r#"{"remind_after_minutes": 30, "expire_after_hours": 24}"#;
    let Some(fields) = value.as_object() else {
        return Err(format!("is an object such as {example}"));
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let max = match key.as_str() {
            "remind_after_minutes" => MAX_REMIND_MINUTES,
            "expire_after_hours" => MAX_EXPIRE_HOURS,
            other => {
                return Err(format!(
                    "takes remind_after_minutes and expire_after_hours, not `{other}`; e.g. {example}"
                ));
            }
        };
        let n = value
            .as_u64()
            .filter(|&n| (1..=max).contains(&n))
            .ok_or_else(|| format!("`{key}` is a whole number from 1 to {max}, not {value}"))?;
        out.insert(key.clone(), Value::from(n));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_setting_takes_whole_minutes_and_hours_and_says_what_it_takes() {
        let stored =
            parse_setting(&json!({"remind_after_minutes": 30, "expire_after_hours": 24})).unwrap();
        let timing = ApprovalTiming::of(&json!({ "approvals": stored }));
        assert_eq!(timing.remind_after_ms, Some(30 * 60_000));
        assert_eq!(timing.expire_after_ms, Some(24 * 3_600_000));
        assert!(!ApprovalTiming::of(&json!({})).is_set());
        for bad in [
            json!(5),
            json!({"remind_after": 5}),
            json!({"remind_after_minutes": 0}),
            json!({"expire_after_hours": "24"}),
            json!({"expire_after_hours": 100_000}),
        ] {
            assert!(parse_setting(&bad).is_err(), "{bad}");
        }
    }
}
