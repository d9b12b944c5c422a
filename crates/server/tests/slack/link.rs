//! Linking a Slack account to the company directory, end to end: the fake Slack, workmate, and a
//! real OpenID provider (npm `oidc-provider`). In a workspace that requires a link, an unlinked
//! account gets the card once, may chat but cannot approve; after it follows the link, signs in
//! and confirms, it approves with the role its directory groups give it. A forwarded link
//! cannot move the account to someone else.

use axum::http::StatusCode;
use serde_json::json;
use workmate_cards::ButtonAction;
use workmate_store::{InboxItemState, Role};

use super::*;
use crate::oidc::browser::link_as;
use crate::oidc::provider::{Provider, sso_for, with_sso};

/// The one "link your account" URL in a body.
pub(crate) fn link_url(body: &str) -> Option<String> {
    let start = body.find("http://localhost:8080/v1/auth/link?token=")?;
    let url: String = body[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_.:/?=".contains(*c))
        .collect();
    Some(url)
}

#[tokio::test]
async fn an_unlinked_slack_account_links_through_single_sign_on_and_only_then_approves() {
    let Some(provider) = Provider::start_or_skip() else {
        return;
    };
    let mut app = slack_app().await;
    let sso = sso_for(&provider, app._dir.path());
    app.router = with_sso(app.state.clone(), sso, false);
    let tenant = tenant_of("T1");
    app.store.tenants().ensure(&tenant, "Acme").await.unwrap();
    app.store
        .tenants()
        .set_settings(
            &tenant,
            &json!({"identity_binding": {"required": true, "unbound_may_chat": true}}),
        )
        .await
        .unwrap();

    // Ana mentions workmate: she may chat, so the turn runs and parks its approval; she gets the
    // card, privately.
    let (status, _) = signed(&app, "events", &mention("Ev1"), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let ephemeral = wait_for(&app.fake, "chat.postEphemeral", "the link card", |e| {
        e.iter().any(|b| link_url(&b.to_string()).is_some())
    })
    .await;
    let card = ephemeral
        .iter()
        .find(|b| link_url(&b.to_string()).is_some())
        .unwrap();
    assert_eq!(card["user"], "U1", "only Ana sees her link");
    assert!(card.to_string().contains("Link your account"), "{card}");
    let url = link_url(&card.to_string()).unwrap();
    let posts = wait_for(&app.fake, "chat.postMessage", "the approval", |p| {
        p.iter()
            .any(|b| button_values(b).iter().any(|v| v.contains("once")))
    })
    .await;
    let once = posts
        .iter()
        .flat_map(button_values)
        .find(|v| v.contains("once"))
        .unwrap();
    let ButtonAction::Resolve { item_id, .. } =
        workmate_slack::blocks::decode_button_value(&once).unwrap()
    else {
        panic!("the once button resolves the item");
    };

    // Unlinked, Ana cannot approve even her own call.
    let (status, _) = signed(&app, "interactions", &click("U1", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let refusal = eventually("the refusal in the audit log", PATIENCE, || async {
        app.store
            .audit()
            .recent(&tenant, 50)
            .await
            .unwrap()
            .into_iter()
            .find(|r| r.stage == "approval_refused")
    })
    .await;
    assert!(
        refusal.detail["reason"]
            .as_str()
            .unwrap()
            .contains("Link your chat account"),
        "{:?}",
        refusal.detail
    );
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.state, InboxItemState::Pending);
    // The card came once: the click brought no second one.
    let with_link = calls(&app.fake, "chat.postEphemeral")
        .await
        .iter()
        .filter(|b| link_url(&b.to_string()).is_some())
        .count();
    assert_eq!(with_link, 1);

    // She follows the link, signs in as Bob's directory account (an approver), sees whose account
    // it is, and confirms.
    let linked = link_as(&app.router, &url, "bob").await;
    assert_eq!(linked.page.status, StatusCode::OK, "{}", linked.page.body);
    assert!(
        linked.page.body.contains("Slack account <b>Ana Lima</b>"),
        "{}",
        linked.page.body
    );
    assert_eq!(
        linked.confirmed.status,
        StatusCode::OK,
        "{}",
        linked.confirmed.body
    );
    assert!(
        linked.confirmed.body.contains("Linked"),
        "{}",
        linked.confirmed.body
    );
    let user = app
        .store
        .tenants()
        .get_user(&tenant, &"slack-U1".into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.sso_subject.as_deref(), Some("bob"));
    assert_eq!(user.role, Role::Approver, "from [auth.groups]");
    assert!(user.directory_groups.contains(&"wm-approvers".to_owned()));
    let audit = app.store.audit().recent(&tenant, 50).await.unwrap();
    assert!(audit.iter().any(|r| r.stage == "identity_bound"));

    // The same link, forwarded and redeemed by Alice, cannot take the account over.
    let forwarded = link_as(&app.router, &url, "alice").await;
    assert_eq!(
        forwarded.confirmed.status,
        StatusCode::CONFLICT,
        "{}",
        forwarded.confirmed.body
    );
    assert!(forwarded.confirmed.body.contains("already linked"));

    // Linked, the same click approves.
    let (status, _) = signed(&app, "interactions", &click("U1", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let item = eventually("the inbox item after the click", PATIENCE, || async {
        let item = app
            .store
            .inbox()
            .get(&tenant, &item_id)
            .await
            .unwrap()
            .unwrap();
        (item.state == InboxItemState::Resolved).then_some(item)
    })
    .await;
    assert_eq!(
        item.resolved_by.as_ref().map(|u| u.as_str()),
        Some("slack-U1")
    );

    // A link that was altered is refused with a reason, and asks for a new one.
    let bad = crate::oidc::browser::call(
        &app.router,
        "GET",
        &format!("{}x", url.trim_start_matches("http://localhost:8080")),
        &[],
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    assert!(bad.body.contains("/workmate link"), "{}", bad.body);
}
