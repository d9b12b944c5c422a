//! Dedupe against a real SQLite store: the first delivery wins until the TTL runs out.

use std::time::Duration;

use workmate_adapter::{
    Error, FEISHU_DEDUPE_TTL, SLACK, SLACK_DEDUPE_TTL, dedupe_ttl, first_delivery,
};
use workmate_protocol::TenantId;

use crate::support::TempStore;

#[tokio::test]
async fn a_redelivery_within_the_ttl_is_not_first() {
    let db = TempStore::new().await;
    let acme = TenantId::from("acme");
    let ttl = dedupe_ttl(SLACK);
    assert!(
        first_delivery(&db.store, &acme, SLACK, "Ev1", ttl)
            .await
            .unwrap()
    );
    // Slack's retries: at once, +1 min, +5 min.
    for after in [0, 60, 240] {
        db.clock.advance(Duration::from_secs(after));
        assert!(
            !first_delivery(&db.store, &acme, SLACK, "Ev1", ttl)
                .await
                .unwrap()
        );
    }
    // Another event, platform or tenant is a different key.
    assert!(
        first_delivery(&db.store, &acme, SLACK, "Ev2", ttl)
            .await
            .unwrap()
    );
    assert!(
        first_delivery(&db.store, &acme, "feishu", "Ev1", ttl)
            .await
            .unwrap()
    );
    assert!(
        first_delivery(&db.store, &TenantId::from("globex"), SLACK, "Ev1", ttl)
            .await
            .unwrap()
    );
    // Past the TTL it counts as new.
    db.clock.advance(SLACK_DEDUPE_TTL);
    assert!(
        first_delivery(&db.store, &acme, SLACK, "Ev1", ttl)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_zero_ttl_is_refused() {
    let db = TempStore::new().await;
    let err = first_delivery(&db.store, &"acme".into(), SLACK, "Ev1", Duration::ZERO)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
}

#[test]
fn ttls_outlast_each_platforms_retry_window() {
    // Slack: last retry 6 min after the first delivery; Feishu: 15 s + 5 min + 1 h + 6 h.
    assert!(dedupe_ttl("slack") > Duration::from_secs(6 * 60));
    let feishu_window = Duration::from_secs(15 + 5 * 60 + 3600 + 6 * 3600);
    assert!(dedupe_ttl("feishu") > feishu_window);
    // DingTalk robot callbacks are accepted for an hour; WeCom nonces are unique for 2 h.
    assert!(dedupe_ttl("dingtalk") > Duration::from_secs(3600));
    assert!(dedupe_ttl("wecom") > Duration::from_secs(2 * 3600));
    assert_eq!(
        dedupe_ttl("matrix"),
        FEISHU_DEDUPE_TTL,
        "unknown: the longest"
    );
}
