//! Linking a Feishu account to the company directory, end to end: the fake Feishu, workmate, and
//! a real OpenID provider. In a tenant that requires a link and does not let unlinked accounts
//! chat, a message gets the "link your account" card instead of an answer; once the account is
//! linked, with the role the tenant's own `auth_groups` give, the next message runs a turn.

use std::time::Duration;

use serde_json::json;
use workmate_store::Role;

use super::*;
use crate::oidc::browser::link_as;
use crate::oidc::provider::{Provider, sso_for, with_sso};
use crate::slack::link::link_url;

/// The direct cards sent to `open_id` so far that carry a link.
async fn link_cards(app: &FeishuApp, open_id: &str) -> Vec<String> {
    calls(&app.fake, "/open-apis/im/v1/messages")
        .await
        .iter()
        .filter(|c| c.body["receive_id"] == open_id)
        .filter_map(|c| link_url(&c.body.to_string()))
        .collect()
}

#[tokio::test]
async fn an_unlinked_feishu_account_gets_the_card_until_it_links_then_chats() {
    let Some(provider) = Provider::start_or_skip() else {
        return;
    };
    let mut app = feishu_app(SHELL).await;
    let sso = sso_for(&provider, app._dir.path());
    app.router = with_sso(app.state.clone(), sso, false);
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    app.store.tenants().ensure(&tenant, "Acme").await.unwrap();
    app.store
        .tenants()
        .set_settings(
            &tenant,
            &json!({
                "identity_binding": {"required": true, "unbound_may_chat": false},
                "auth_groups": {"approver": ["staff"]},
            }),
        )
        .await
        .unwrap();

    // Ana writes: the card comes to her alone, and no turn runs.
    let (status, _) = post(&app, "events", &mention("Ev1", "run it")).await;
    assert_eq!(status, StatusCode::OK);
    let url = eventually("the link card for Ana", PATIENCE, || async {
        link_cards(&app, "ou_ana").await.into_iter().next()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        calls(&app.fake, "/open-apis/cardkit/v1/cards")
            .await
            .is_empty(),
        "an unlinked account got an answer"
    );
    // Each message gets the card again while she is not linked.
    let (status, _) = post(&app, "events", &mention("Ev2", "run it now")).await;
    assert_eq!(status, StatusCode::OK);
    eventually("a second link card for Ana", PATIENCE, || async {
        (link_cards(&app, "ou_ana").await.len() >= 2).then_some(())
    })
    .await;

    // She links her account as Carol (directory group `staff`): a member under [auth.groups],
    // an approver under this tenant's own `auth_groups`.
    let linked = link_as(&app.router, &url, "carol").await;
    assert_eq!(linked.page.status, StatusCode::OK, "{}", linked.page.body);
    assert!(
        linked.page.body.contains("Feishu account"),
        "{}",
        linked.page.body
    );
    assert_eq!(
        linked.confirmed.status,
        StatusCode::OK,
        "{}",
        linked.confirmed.body
    );
    let user = app
        .store
        .tenants()
        .get_user(&tenant, &"feishu-ou_ana".into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.sso_subject.as_deref(), Some("carol"));
    assert_eq!(user.email.as_deref(), Some("carol@example.com"));
    assert_eq!(user.role, Role::Approver);

    // Linked, her next message runs a turn.
    let (status, _) = post(&app, "events", &mention("Ev3", "run it")).await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    assert_eq!(
        item.requested_by.as_ref().map(|u| u.as_str()),
        Some("feishu-ou_ana")
    );
}
