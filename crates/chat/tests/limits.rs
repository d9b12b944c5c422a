//! The per-minute limit on deliveries: over it a delivery is refused unacknowledged (nothing is
//! stored, so the platform's redelivery is taken once there is room), under it every delivery
//! is stored.

use workmate_chat::{ChatError, Taken};

use crate::support::{DONE, TestChat, message};

#[tokio::test]
async fn a_delivery_over_the_per_minute_limit_is_refused_and_nothing_is_stored() {
    let t = TestChat::new(DONE).await;
    let limited = t.limited("replica-l", DONE, 2);
    for id in ["Ev1", "Ev2"] {
        let taken = limited
            .accept(message(id, "U1", id, "hello"))
            .await
            .unwrap();
        assert_eq!(taken, Taken::Stored, "{id} is under the limit");
    }
    let refused = limited
        .accept(message("Ev3", "U1", "Ev3", "hello"))
        .await
        .unwrap_err();
    match &refused {
        ChatError::OverLimit { limit, retry_after } => {
            assert_eq!(*limit, 2);
            assert!(
                retry_after.as_secs() <= 60 && !retry_after.is_zero(),
                "{retry_after:?}"
            );
        }
        other => panic!("refused for another reason: {other}"),
    }
    assert!(
        refused.to_string().contains("2 deliveries a minute"),
        "{refused}"
    );
    let stored = t
        .store
        .intake()
        .get(&workmate_store::IntakeKey {
            tenant_id: t.tenant.clone(),
            platform: crate::support::SURFACE.as_str().into(),
            delivery_id: "Ev3".into(),
        })
        .await
        .unwrap();
    assert!(
        stored.is_none(),
        "nothing of the refused delivery was stored"
    );
    // A layer without the limit takes it: the limit, not the delivery, refused it.
    assert_eq!(
        t.send(message("Ev3", "U1", "Ev3", "hello")).await,
        Taken::Stored
    );
}
