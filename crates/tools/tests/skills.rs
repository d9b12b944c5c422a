//! `load_skill` and `save_skill`: a saved skill is loadable at once in its channel (not in
//! another), a tenant skill everywhere; a miss lists what exists; bad skills are refused.

use serde_json::json;

use crate::support::{World, err};

#[tokio::test]
async fn a_saved_skill_loads_in_its_channel_and_a_miss_lists_the_names() {
    let world = World::new().await;
    let saved = world
        .call(
            "save_skill",
            json!({"name": "triage", "description": "Sort a new bug report", "instructions": "1. Label it.\n2. Assign it.", "allowed_tools": ["grep"]}),
        )
        .await
        .unwrap();
    assert_eq!(
        saved,
        json!({"saved": true, "name": "triage", "scope": "channel"})
    );
    world
        .call(
            "save_skill",
            json!({"name": "standup", "description": "Run the daily standup", "instructions": "Ask each person.", "scope": "tenant"}),
        )
        .await
        .unwrap();

    let loaded = world
        .call("load_skill", json!({"name": "triage"}))
        .await
        .unwrap();
    assert_eq!(
        loaded,
        json!({"name": "triage", "instructions": "1. Label it.\n2. Assign it.", "allowed_tools": ["grep"]})
    );

    let mut elsewhere = world.ctx.clone();
    elsewhere.channel = "slack:C2".into();
    let missed = world
        .call_with(&elsewhere, "load_skill", json!({"name": "triage"}))
        .await
        .unwrap();
    assert_eq!(
        missed,
        json!({"error": "unknown skill: triage", "available": ["standup"]})
    );
}

#[tokio::test]
async fn a_bad_skill_is_refused_with_the_reason() {
    let world = World::new().await;
    let bad_name = world
        .call(
            "save_skill",
            json!({"name": "../etc", "description": "d", "instructions": "i"}),
        )
        .await;
    assert!(err(bad_name).contains("must be 1–64 letters"));
    let no_description = world
        .call(
            "save_skill",
            json!({"name": "x", "description": " ", "instructions": "i"}),
        )
        .await;
    assert!(err(no_description).contains("description"));
    let bad_scope = world
        .call(
            "save_skill",
            json!({"name": "x", "description": "d", "instructions": "i", "scope": "galaxy"}),
        )
        .await;
    assert!(err(bad_scope).contains("not one of channel, tenant"));
}
