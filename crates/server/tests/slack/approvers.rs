//! A prompt that waits for approvers (here: separation of duties keeps the person who asked
//! from approving their own command) reaches each approver privately, in their direct chat with
//! the app, with its buttons; an approver who turned notices off gets none; the first answer
//! wins and every copy then shows who answered. A reminder reaches the thread and, below their
//! copy, each approver told of it.

use super::*;

#[tokio::test]
async fn approvers_get_a_private_copy_and_every_copy_shows_who_answered() {
    let app = slack_app().await;
    let tenant = tenant_of("T1");
    support::separation_of_duties(&app.store, &tenant).await;
    support::approver_on(&app.store, &tenant, "slack", "UAPP", "Bea Approver").await;
    let quiet = support::approver_on(&app.store, &tenant, "slack", "UQUIET", "Quinn Quiet").await;
    app.store
        .approvers()
        .set_notices(&tenant, &quiet, false)
        .await
        .unwrap();

    let (status, _) = signed(&app, "events", &mention("EvAsk"), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    // Bea's copy comes to her direct chat, with the buttons.
    let posts = wait_for(
        &app.fake,
        "chat.postMessage",
        "the approver's copy",
        |posts| {
            posts.iter().any(|p| {
                p["channel"] == "UAPP" && button_values(p).iter().any(|v| v.contains("once"))
            })
        },
    )
    .await;
    let copy = posts.iter().find(|p| p["channel"] == "UAPP").unwrap();
    assert!(copy.to_string().contains("echo hi"), "{copy:#}");
    assert!(copy.get("thread_ts").is_none_or(Value::is_null), "{copy:#}");
    for nobody in ["UQUIET", "U1"] {
        assert!(
            posts.iter().all(|p| p["channel"] != nobody),
            "no copy for {nobody}: {posts:#?}"
        );
    }
    // Reminded (the scheduler's tick calls this once the tenant's time has passed): the thread
    // hears it still waits, and Bea hears it again below her copy; Quinn still hears nothing.
    let waiting = app
        .store
        .inbox()
        .list(&tenant, &workmate_store::InboxFilter::default(), 10)
        .await
        .unwrap();
    let item = waiting.first().unwrap();
    workmate_engine::RunObserver::prompt_still_waits(&app.chat, item).await;
    let posts = wait_for(&app.fake, "chat.postMessage", "the reminders", |posts| {
        posts
            .iter()
            .filter(|p| p.to_string().contains("⏰ Still waiting"))
            .count()
            >= 2
    })
    .await;
    let reminders: Vec<&Value> = posts
        .iter()
        .filter(|p| p.to_string().contains("⏰ Still waiting"))
        .collect();
    assert!(
        reminders
            .iter()
            .any(|p| p["channel"] == "UAPP"
                && p.to_string().contains("Still waiting for your approval")),
        "{reminders:#?}"
    );
    assert!(
        reminders.iter().any(|p| p["channel"] == "C1"),
        "{reminders:#?}"
    );
    assert!(reminders.iter().all(|p| p["channel"] != "UQUIET"));

    // The person who asked cannot approve their own command here; Bea can, from her copy.
    let once = button_values(copy)
        .into_iter()
        .find(|v| v.contains("once"))
        .unwrap();
    signed(&app, "interactions", &click("U1", &once), SECRET).await;
    signed(&app, "interactions", &click("UAPP", &once), SECRET).await;
    // Both the thread's card and Bea's copy now say who approved.
    let updates = wait_for(&app.fake, "chat.update", "every copy answered", |updates| {
        updates
            .iter()
            .filter(|u| u.to_string().contains("Approved by Bea Approver"))
            .count()
            >= 2
    })
    .await;
    assert!(!updates.is_empty());
    wait_shown(&app.fake, "the answer", |updates| {
        updates.iter().any(|u| u.to_string().contains("Done."))
    })
    .await;
}
