//! Compaction over Slack's wire: a thread that outgrows its (small) window is compacted on its
//! own and says so in its card, and `/workmate compact` typed in the thread compacts it on
//! request; the thread keeps answering throughout.

use super::*;

/// The summarizer's conversation first (only its request says "Summarize this part"), then the
/// thread's answers.
fn script() -> String {
    let answers: Vec<Value> = (1..=10)
        .map(|n| json!({"text": format!("Answer {n}: {}", "a considered reply on that. ".repeat(10))}))
        .collect();
    json!({"conversations": [
        {"when": "Summarize this part of the conversation", "turns": [{"text": "Goal: a long chat."}]},
        {"when": "*", "turns": answers}
    ]})
    .to_string()
}

#[tokio::test]
async fn a_long_thread_is_compacted_on_its_own_and_on_request() {
    let app = slack_app_admins(&script(), &["U1"]).await;
    let tenant = tenant_of("T1");
    signed(&app, "events", &mention("Ev0"), SECRET).await;
    let session = app.session_of(THREAD).await;
    // The tenant exists once its first event arrived.
    app.store
        .tenants()
        .set_settings(
            &tenant,
            &json!({"compaction": {"context_window": 1000, "threshold_pct": 0.5}}),
        )
        .await
        .unwrap();
    let answered = |n: usize| {
        move |updates: &[Value]| {
            updates
                .iter()
                .any(|u| u.to_string().contains(&format!("Answer {n}:")))
        }
    };
    wait_shown(&app.fake, "the first answer", answered(1)).await;
    for n in 2..=8 {
        let text = format!(
            "<@UBOT> point {n}: {}",
            "a detail worth a look. ".repeat(10)
        );
        let event = in_thread(
            &format!("Ev{n}"),
            &format!("1700000000.{n:04}"),
            "app_mention",
            &text,
        );
        signed(&app, "events", &event, SECRET).await;
        wait_shown(&app.fake, "the answer", answered(n)).await;
    }
    let compacted = |updates: &[Value]| {
        updates
            .iter()
            .any(|u| u.to_string().contains("Context compacted"))
    };
    let posted = calls(&app.fake, "chat.postMessage").await;
    let updated = calls(&app.fake, "chat.update").await;
    assert!(
        compacted(&posted) || compacted(&updated),
        "the card says the thread was compacted"
    );
    let record = app
        .store
        .sessions()
        .get(&tenant, &session.id)
        .await
        .unwrap()
        .unwrap();
    let first = record
        .compaction
        .expect("the thread was compacted on its own")
        .boundary;

    let next = in_thread(
        "Ev9",
        "1700000000.0900",
        "app_mention",
        "<@UBOT> one more point",
    );
    signed(&app, "events", &next, SECRET).await;
    wait_shown(&app.fake, "the answer", answered(9)).await;
    let command = in_thread(
        "Ev10",
        "1700000000.0950",
        "app_mention",
        "<@UBOT> /workmate compact",
    );
    signed(&app, "events", &command, SECRET).await;
    let later = eventually("the session's later compaction", PATIENCE, || async {
        let record = app
            .store
            .sessions()
            .get(&tenant, &session.id)
            .await
            .unwrap()?;
        record.compaction.filter(|v| v.boundary > first)
    })
    .await;
    assert!(later.summary.contains("Goal: a long chat."), "{later:?}");
    let ask = in_thread("Ev11", "1700000000.1000", "app_mention", "<@UBOT> and now?");
    signed(&app, "events", &ask, SECRET).await;
    wait_shown(&app.fake, "the answer after compacting", answered(10)).await;
    app.chat.shutdown(Duration::from_secs(2)).await;
}
