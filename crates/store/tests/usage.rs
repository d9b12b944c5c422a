//! Token usage: recording, totals by user and by model, and per-day sums.

use workmate_protocol::{SessionId, UserId};
use workmate_store::{Clock, NewUsage, UsageGroup, UsageTotal, utc_day};

use crate::support::tenant_with_session;

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

fn call(session: &SessionId, user: Option<&str>, model: &str, tokens: [u64; 4]) -> NewUsage {
    NewUsage {
        session_id: session.clone(),
        user_id: user.map(UserId::from),
        model: model.into(),
        input: tokens[0],
        output: tokens[1],
        cache_read: tokens[2],
        cache_write: tokens[3],
    }
}

fn total(key: &str, tokens: [u64; 4], calls: u64) -> UsageTotal {
    UsageTotal {
        key: key.into(),
        input: tokens[0],
        output: tokens[1],
        cache_read: tokens[2],
        cache_write: tokens[3],
        calls,
    }
}

backend_matrix! {
    async fn usage_totals_by_user_model_and_day(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "usage").await;
        let usage = ctx.store.usage();
        let alice = UserId::from("u_alice");
        let bob = UserId::from("u_bob");

        // Day one: 2026-05-28, from 20:26:40 UTC.
        let start = ctx.clock.now_ms();
        let day_one = utc_day(start);
        assert_eq!(day_one, "2026-05-28");
        usage.record(&tenant, &call(&session.id, Some("u_alice"), "claude-x", [100, 10, 1_000, 5])).await.unwrap();
        ctx.clock.advance_ms(MINUTE);
        usage.record(&tenant, &call(&session.id, Some("u_bob"), "gpt-y", [200, 20, 0, 0])).await.unwrap();
        ctx.clock.advance_ms(MINUTE);
        usage.record(&tenant, &call(&session.id, Some("u_alice"), "gpt-y", [50, 5, 0, 0])).await.unwrap();
        ctx.clock.advance_ms(MINUTE);
        usage.record(&tenant, &call(&session.id, None, "claude-x", [7, 3, 0, 0])).await.unwrap();

        // Day two, a few hours later.
        ctx.clock.advance_ms(4 * HOUR);
        let day_two_at = ctx.clock.now_ms();
        let day_two = utc_day(day_two_at);
        assert_eq!(day_two, "2026-05-29");
        usage.record(&tenant, &call(&session.id, Some("u_alice"), "claude-x", [1, 2, 3, 4])).await.unwrap();
        let end = ctx.clock.now_ms() + 1;

        // Day one only, by user: calls billed to nobody sort first under "".
        let by_user = usage.totals(&tenant, start, day_two_at, UsageGroup::User).await.unwrap();
        assert_eq!(by_user, vec![
            total("", [7, 3, 0, 0], 1),
            total("u_alice", [150, 15, 1_000, 5], 2),
            total("u_bob", [200, 20, 0, 0], 1),
        ]);

        // Both days, by model.
        let by_model = usage.totals(&tenant, start, end, UsageGroup::Model).await.unwrap();
        assert_eq!(by_model, vec![
            total("claude-x", [108, 15, 1_003, 9], 3),
            total("gpt-y", [250, 25, 0, 0], 2),
        ]);

        // The window is half-open: [start + 1 min, start + 3 min) holds the second and third calls.
        let window = usage.totals(&tenant, start + MINUTE, start + 3 * MINUTE, UsageGroup::User).await.unwrap();
        assert_eq!(window, vec![
            total("u_alice", [50, 5, 0, 0], 1),
            total("u_bob", [200, 20, 0, 0], 1),
        ]);
        assert!(usage.totals(&tenant, end, end + HOUR, UsageGroup::Model).await.unwrap().is_empty());

        // Per day: every kind of token counts.
        assert_eq!(usage.tokens_on_day(&tenant, None, &day_one).await.unwrap(), 1_115 + 220 + 55 + 10);
        assert_eq!(usage.tokens_on_day(&tenant, Some(&alice), &day_one).await.unwrap(), 1_115 + 55);
        assert_eq!(usage.tokens_on_day(&tenant, Some(&bob), &day_one).await.unwrap(), 220);
        assert_eq!(usage.tokens_on_day(&tenant, None, &day_two).await.unwrap(), 10);
        assert_eq!(usage.tokens_on_day(&tenant, Some(&alice), &day_two).await.unwrap(), 10);
        assert_eq!(usage.tokens_on_day(&tenant, Some(&bob), &day_two).await.unwrap(), 0);
        assert_eq!(usage.tokens_on_day(&tenant, None, "2026-05-30").await.unwrap(), 0);
    }

    async fn usage_is_per_tenant(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "usage-a").await;
        let (other, _) = tenant_with_session(&ctx.store, "usage-b").await;
        let usage = ctx.store.usage();
        let day = utc_day(ctx.clock.now_ms());
        let start = ctx.clock.now_ms();
        usage.record(&tenant, &call(&session.id, Some("u_alice"), "claude-x", [10, 20, 30, 40])).await.unwrap();
        let end = start + HOUR;

        for group in [UsageGroup::User, UsageGroup::Model] {
            assert!(usage.totals(&other, start, end, group).await.unwrap().is_empty());
            assert_eq!(usage.totals(&tenant, start, end, group).await.unwrap().len(), 1);
        }
        assert_eq!(usage.tokens_on_day(&other, None, &day).await.unwrap(), 0);
        assert_eq!(usage.tokens_on_day(&other, Some(&UserId::from("u_alice")), &day).await.unwrap(), 0);
        assert_eq!(usage.tokens_on_day(&tenant, Some(&UserId::from("u_alice")), &day).await.unwrap(), 100);
    }
}

#[test]
fn utc_day_at_the_epoch() {
    assert_eq!(utc_day(0), "1970-01-01");
    assert_eq!(utc_day(86_399_999), "1970-01-01");
    assert_eq!(utc_day(86_400_000), "1970-01-02");
}

#[test]
fn utc_day_on_a_leap_day() {
    assert_eq!(utc_day(1_709_164_800_000 - 1), "2024-02-28");
    assert_eq!(utc_day(1_709_164_800_000), "2024-02-29");
    assert_eq!(utc_day(1_709_251_200_000 - 1), "2024-02-29");
    assert_eq!(utc_day(1_709_251_200_000), "2024-03-01");
}

#[test]
fn utc_day_late_in_2026() {
    assert_eq!(utc_day(1_795_996_800_000), "2026-11-30");
    assert_eq!(utc_day(1_795_996_800_000 + 86_399_999), "2026-11-30");
    assert_eq!(utc_day(1_795_996_800_000 + 86_400_000), "2026-12-01");
}

#[test]
fn usage_group_is_snake_case() {
    assert_eq!(
        serde_json::to_string(&UsageGroup::User).unwrap(),
        "\"user\""
    );
    let model: UsageGroup = serde_json::from_str("\"model\"").unwrap();
    assert_eq!(model, UsageGroup::Model);
}
