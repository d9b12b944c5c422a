//! Two replicas behind a round-robin balancer, in callback mode: WeCom asks for a stream again
//! and again, and each refresh reaches one replica or the other; every refresh shows the stream
//! as it stands, whichever replica answers and whichever runs the turn.

use axum::http::StatusCode;

use super::{STREAMED, mention, wecom_app};

#[tokio::test]
async fn every_refresh_shows_the_stream_whichever_replica_answers() {
    let a = wecom_app(STREAMED).await;
    let b = a.replica("replica-b", STREAMED).await;
    let (status, reply) = a.post(&mention("M1", "count to ten", &a.fake)).await;
    assert_eq!(status, StatusCode::OK);
    let stream = reply["stream"]["id"].as_str().unwrap().to_owned();
    let replicas = [&a, &b];
    let turn = std::sync::atomic::AtomicUsize::new(0);
    let seen = std::sync::Mutex::new(Vec::<(usize, String, bool)>::new());
    let (turn, seen, stream) = (&turn, &seen, stream.as_str());
    // Refreshes alternate between the two replicas, as WeCom's may.
    let seen = crate::support::eventually_ok(
        "the stream finished",
        std::time::Duration::from_secs(20),
        || async move {
            let which = turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 2;
            let (content, finish) = replicas[which].refresh(stream).await;
            let mut seen = seen.lock().unwrap();
            seen.push((which, content, finish));
            if finish {
                Ok(seen.clone())
            } else {
                Err(seen.clone())
            }
        },
    )
    .await;
    let answer = "one two three four five six seven eight nine ten";
    let (_, last, _) = seen.last().unwrap();
    assert!(last.contains(answer), "{seen:#?}");
    // Once a's refreshes show the stream, b's show it too.
    let mut a_showed = false;
    for (which, content, _) in &seen {
        if *which == 0 {
            a_showed |= !content.is_empty();
        } else if a_showed {
            assert!(
                !content.is_empty(),
                "b showed nothing while a showed the stream: {seen:#?}"
            );
        }
    }
    assert!(
        seen.iter()
            .any(|(which, content, _)| *which == 1 && content.contains("one")),
        "b showed the streamed answer: {seen:#?}"
    );
    // Finished, it stays as it is on both.
    assert_eq!(b.refresh(stream).await, (last.clone(), true));
    assert_eq!(a.refresh(stream).await, (last.clone(), true));
}
