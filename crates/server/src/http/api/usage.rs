//! `GET /v1/usage?from=&to=&group_by=user|model`: tokens spent, per person or per model.
//!
//! Invariant: only the tenant's admins see it, and only their own tenant's usage.

use axum::Json;
use axum::extract::{Extension, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_store::UsageGroup;

use super::Principal;
use crate::http::{ApiError, AppState};

/// `GET /v1/usage` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsageQuery {
    /// Start: Unix milliseconds, or a UTC date `YYYY-MM-DD` (its first instant). Default: today.
    from: Option<String>,
    /// End (exclusive): Unix milliseconds, or a UTC date (the end of that day). Default: now.
    to: Option<String>,
    /// `user` (default) or `model`.
    group_by: Option<UsageGroup>,
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

pub(crate) async fn usage(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Query(query): Query<UsageQuery>,
) -> Result<Json<Value>, ApiError> {
    let store = &state.store;
    caller.require_admin(store, "see its usage").await?;
    let now = workmate_store::Clock::now_ms(&workmate_store::SystemClock);
    let from = match query.from.as_deref() {
        Some(text) => instant(text, false)?,
        None => now - now.rem_euclid(DAY_MS),
    };
    let to = match query.to.as_deref() {
        Some(text) => instant(text, true)?,
        None => now + 1,
    };
    if to <= from {
        return Err(ApiError::BadRequest("`to` must be after `from`".into()));
    }
    let group = query.group_by.unwrap_or(UsageGroup::User);
    let totals = store
        .usage()
        .totals(&caller.tenant, from, to, group)
        .await?;
    Ok(Json(
        json!({ "from_ms": from, "to_ms": to, "group_by": group, "totals": totals }),
    ))
}

/// Unix milliseconds, or a UTC date's first instant (`end`: the next day's first instant).
fn instant(text: &str, end: bool) -> Result<i64, ApiError> {
    if let Ok(ms) = text.trim().parse::<i64>() {
        return Ok(ms);
    }
    let bad = || {
        ApiError::BadRequest(format!(
            "{text:?} is neither Unix milliseconds nor a date like 2026-11-30"
        ))
    };
    let mut parts = text.trim().splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let (y, m, d) = (
        y.parse::<i64>().map_err(|_| bad())?,
        m.parse::<i64>().map_err(|_| bad())?,
        d.parse::<i64>().map_err(|_| bad())?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let start = days_from_civil(y, m, d) * DAY_MS;
    Ok(if end { start + DAY_MS } else { start })
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_become_day_boundaries_that_round_trip() {
        assert_eq!(instant("1970-01-01", false).unwrap(), 0);
        assert_eq!(instant("1970-01-01", true).unwrap(), DAY_MS);
        let start = instant("2026-11-30", false).unwrap();
        assert_eq!(workmate_store::utc_day(start), "2026-11-30");
        assert_eq!(
            workmate_store::utc_day(instant("2024-02-29", false).unwrap()),
            "2024-02-29"
        );
        assert_eq!(instant("1796040206609", false).unwrap(), 1_796_040_206_609);
        assert!(instant("yesterday", false).is_err());
        assert!(instant("2026-13-01", false).is_err());
    }
}
