//! Connecting connectors from Slack, end to end: `/workmate connectors` lists what Ana has
//! connected with a private link for each; the link's page names her account and asks for the
//! connector's fields; the form stores them in the vault (audited), and the listing shows them;
//! an OAuth connector signs her in at the other system (a fake authorization server) with PKCE
//! and stores the refresh token. Nothing is stored on a `GET`, by an expired or forged link, or
//! by a callback that did not start in the same browser.

use std::collections::HashMap;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use secrecy::{ExposeSecret, SecretString};
use tower::ServiceExt;
use url::Url;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_connectors::{ConnectorSource, CredentialStore, builtin_connectors, secret_name};
use workmate_identity::{Clock, OAuthApp, SessionKey};
use workmate_protocol::UserId;
use workmate_server::config::HttpLimits;
use workmate_server::http::{ConnectPages, router_with};
use workmate_store::Vault;
use workmate_vault::{Keyring, MasterKey};

use super::commands::{set_role, slash};
use super::*;

const ORIGIN: &str = "http://localhost:8080";

pub(crate) struct Connecting {
    pub(crate) app: SlackApp,
    pub(crate) vault: Vault,
    pub(crate) authorize: MockServer,
    pub(crate) mcp: Arc<workmate_mcp::McpManager>,
}

pub(crate) async fn connecting() -> Connecting {
    connecting_with(None).await
}

/// [`connecting`], its pages letting people signed in through `sso` prove who they are.
pub(crate) async fn connecting_with(
    sso: Option<Arc<workmate_server::http::api::Sso>>,
) -> Connecting {
    let mut app = slack_app().await;
    let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
    let vault = Vault::new(app.store.clone(), Arc::new(keys));
    let connectors = Arc::new(
        ConnectorSource::new(
            builtin_connectors(),
            CredentialStore::new(vault.clone()),
            crate::support::local_network(),
        )
        .unwrap(),
    );
    let authorize = MockServer::start().await;
    let gmail = OAuthApp {
        client_id: "cid".into(),
        client_secret: SecretString::from("csecret".to_owned()),
        authorize_url: Url::parse(&format!("{}/auth", authorize.uri())).unwrap(),
        token_url: Url::parse(&format!("{}/token", authorize.uri())).unwrap(),
        scopes: vec!["https://www.googleapis.com/auth/gmail.readonly".into()],
        extra_params: vec![("access_type".into(), "offline".into())],
        resource: None,
    };
    let settings = workmate_mcp::McpSettings {
        network: crate::support::local_network(),
        ..workmate_mcp::McpSettings::default()
    };
    let mcp = Arc::new(
        workmate_mcp::McpManager::new(app.store.clone(), settings, Some(vault.clone())).unwrap(),
    );
    app.chat.attach_mcp(Arc::clone(&mcp));
    let pages = Arc::new(
        ConnectPages::new(
            Arc::clone(&connectors),
            app.store.clone(),
            SessionKey::from_bytes([9; 32]),
            &Url::parse(ORIGIN).unwrap(),
            HashMap::from([("gmail".to_owned(), gmail)]),
            crate::support::local_egress(),
            Clock::system(),
        )
        .unwrap()
        .with_mcp(Arc::clone(&mcp))
        .with_sso(sso),
    );
    app.chat.attach_connectors(
        connectors,
        Arc::clone(&pages) as Arc<dyn workmate_chat::ConnectLinks>,
    );
    app.router = router_with(
        app.state.clone(),
        Some(pages.routes()),
        HttpLimits::default(),
    );
    Connecting {
        app,
        vault,
        authorize,
        mcp,
    }
}

/// The connect URL in a reply, as a path and query on workmate.
pub(crate) fn connect_path(body: &str) -> String {
    let start = body
        .find(&format!("{ORIGIN}/v1/connectors/connect?token="))
        .unwrap_or_else(|| panic!("no connect link in {body}"));
    let url: String = body[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_.:/?=".contains(*c))
        .collect();
    url.trim_start_matches(ORIGIN).to_owned()
}

/// The confirmation code beside the link in a reply (`K7QF-2MXA`).
pub(crate) fn connect_code(body: &str) -> String {
    let code_char = |c: &u8| c.is_ascii_digit() || c.is_ascii_uppercase();
    let after = body
        .find("Confirmation code")
        .unwrap_or_else(|| panic!("no confirmation code in {body}"));
    body.as_bytes()[after..]
        .windows(9)
        .find(|w| w[4] == b'-' && w[..4].iter().all(code_char) && w[5..].iter().all(code_char))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .unwrap_or_else(|| panic!("no confirmation code in {body}"))
}

/// The whole answer to `/workmate <text>` from `user`, cards included.
pub(crate) async fn slash_reply(app: &SlackApp, user: &str, text: &str) -> String {
    let body = super::commands::slash_body_with(user, text, "trig");
    let (status, reply) = signed(app, "commands", &body, SECRET).await;
    assert_eq!(status, StatusCode::OK, "{reply:#}");
    reply.to_string()
}

/// The whole answer to `/workmate <text>` from `user` in their direct message with workmate.
pub(crate) async fn slash_reply_in_dm(app: &SlackApp, user: &str, text: &str) -> String {
    let body = super::commands::slash_body_with(user, text, "trig")
        .replace("channel_id=C1", "channel_id=D1")
        .replace("channel_name=general", "channel_name=directmessage");
    let (status, reply) = signed(app, "commands", &body, SECRET).await;
    assert_eq!(status, StatusCode::OK, "{reply:#}");
    reply.to_string()
}

pub(crate) async fn browse(
    app: &SlackApp,
    request: Request<Body>,
) -> (StatusCode, HeaderMapLite, String) {
    let response = app.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = HeaderMapLite(
        response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

pub(crate) struct HeaderMapLite(Vec<(String, String)>);

impl HeaderMapLite {
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

pub(crate) fn post_form(uri: &str, form: &[(&str, &str)]) -> Request<Body> {
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap()
}

pub(crate) fn token_of(path: &str) -> String {
    path.split_once("token=").unwrap().1.to_owned()
}

pub(crate) async fn stored(vault: &Vault, connector: &str) -> Option<serde_json::Value> {
    let ana = UserId::from("slack-U1");
    let value = vault
        .get(&tenant_of("T1"), Some(&ana), &secret_name(connector))
        .await
        .unwrap()?;
    Some(serde_json::from_str(value.expose_secret()).unwrap())
}

pub(crate) async fn audited(app: &SlackApp, stage: &str) -> Vec<serde_json::Value> {
    let records = app
        .store
        .audit()
        .list(
            &tenant_of("T1"),
            &workmate_store::AuditQuery::default(),
            100,
        )
        .await
        .unwrap();
    records
        .into_iter()
        .filter(|r| r.stage == stage)
        .map(|r| r.detail)
        .collect()
}

#[tokio::test]
async fn a_token_connector_is_connected_through_the_private_links_form() {
    let Connecting { app, vault, .. } = connecting().await;
    let listing = slash(&app, "U1", "connectors").await;
    assert!(
        listing.contains("GitHub (`github`): not connected"),
        "{listing}"
    );
    assert!(listing.contains("DingTalk Docs"), "{listing}");

    let reply = slash_reply(&app, "U1", "connectors connect github").await;
    assert!(
        reply.contains("ephemeral"),
        "only Ana sees her link: {reply}"
    );
    let link = connect_path(&reply);
    let code = connect_code(&reply);

    // Opening the link (as a link preview would) shows whose account it is and stores nothing.
    let (status, _, page) = browse(&app, get(&link)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Connect GitHub") && page.contains("slack-U1"),
        "{page}"
    );
    assert!(page.contains("type=\"password\" name=\"token\""), "{page}");
    assert!(stored(&vault, "github").await.is_none());

    // A form without the token stores nothing and says what is missing.
    let token = token_of(&link);
    let (status, _, page) = browse(
        &app,
        post_form(
            "/v1/connectors/connect",
            &[
                ("connect_token", &token),
                ("confirmation_code", &code),
                ("token", ""),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("needs"), "{page}");
    assert!(stored(&vault, "github").await.is_none());

    // A forged link stores nothing.
    let (status, _, _) = browse(
        &app,
        post_form(
            "/v1/connectors/connect",
            &[
                ("connect_token", &format!("{token}x")),
                ("confirmation_code", &code),
                ("token", "ghp_evil"),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, _, page) = browse(
        &app,
        post_form(
            "/v1/connectors/connect",
            &[
                ("connect_token", &token),
                ("confirmation_code", &code),
                ("token", "ghp_ada"),
                ("base_url", ""),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("GitHub is connected"), "{page}");
    assert!(!page.contains("ghp_ada"), "the token is never shown back");
    assert_eq!(stored(&vault, "github").await.unwrap()["token"], "ghp_ada");
    let records = audited(&app, "connector_connected").await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["connector"], "github");
    assert_eq!(records[0]["via"], "form");

    let listing = slash(&app, "U1", "connectors").await;
    assert!(
        listing.contains("GitHub (`github`): connected (your account)"),
        "{listing}"
    );

    let refused = slash(&app, "U1", "connectors connect github team").await;
    assert!(refused.contains("Only admins"), "{refused}");
    let gone = slash(&app, "U1", "connectors disconnect github").await;
    assert!(gone.contains("GitHub is disconnected"), "{gone}");
    assert!(stored(&vault, "github").await.is_none());
    assert_eq!(audited(&app, "connector_disconnected").await.len(), 1);
    let unknown = slash(&app, "U1", "connectors connect jenkins").await;
    assert!(
        unknown.contains("There is no connector `jenkins`"),
        "{unknown}"
    );
}

#[tokio::test]
async fn an_admin_connects_for_the_team() {
    let Connecting { app, vault, .. } = connecting().await;
    // Ana's first command creates her user; then she is made an admin.
    slash(&app, "U1", "whoami").await;
    set_role(&app.store, "U1", workmate_store::Role::Admin).await;
    // Not in a channel: a team link is only given in a direct message.
    let refused = slash(&app, "U1", "connectors connect jira team").await;
    assert!(refused.contains("direct message"), "{refused}");
    let reply = slash_reply_in_dm(&app, "U1", "connectors connect jira team").await;
    let (link, code) = (connect_path(&reply), connect_code(&reply));
    let (_, _, page) = browse(&app, get(&link)).await;
    assert!(page.contains("for everyone in workspace"), "{page}");
    let token = token_of(&link);
    let (status, _, page) = browse(
        &app,
        post_form(
            "/v1/connectors/connect",
            &[
                ("connect_token", &token),
                ("confirmation_code", &code),
                ("base_url", "https://acme.atlassian.net"),
                ("email", "bot@acme.com"),
                ("api_token", "atl"),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let team = vault
        .get(&tenant_of("T1"), None, &secret_name("jira"))
        .await
        .unwrap();
    assert!(team.is_some(), "stored as the tenant's");
    let listing = slash(&app, "U1", "connectors").await;
    assert!(
        listing.contains("Jira (`jira`): connected (the team's account)"),
        "{listing}"
    );
}

#[tokio::test]
async fn an_oauth_connector_signs_in_with_pkce_and_keeps_the_refresh_token() {
    let Connecting {
        app,
        vault,
        authorize,
        ..
    } = connecting().await;
    let reply = slash_reply(&app, "U1", "connectors gmail").await;
    let (link, code) = (connect_path(&reply), connect_code(&reply));
    let (_, _, page) = browse(&app, get(&link)).await;
    assert!(page.contains("Sign in to Gmail"), "{page}");

    let (status, headers, _) = browse(
        &app,
        post_form(
            "/v1/connectors/oauth/start",
            &[
                ("connect_token", &token_of(&link)),
                ("confirmation_code", &code),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = Url::parse(headers.get("location").unwrap()).unwrap();
    assert!(
        location
            .as_str()
            .starts_with(&format!("{}/auth?", authorize.uri()))
    );
    let query: HashMap<String, String> = location.query_pairs().into_owned().collect();
    assert_eq!(query["client_id"], "cid");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["access_type"], "offline");
    assert_eq!(
        query["redirect_uri"],
        format!("{ORIGIN}/v1/connectors/oauth/callback")
    );
    let cookie = headers.get("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("Path=/v1/connectors/oauth"),
        "{cookie}"
    );
    let cookie = cookie.split(';').next().unwrap().to_owned();

    Mock::given(method("POST"))
        .and(path("/token"))
        .and(body_string_contains("grant_type=authorization_code"))
        .and(body_string_contains("code=c0de"))
        .and(body_string_contains("client_secret=csecret"))
        .and(body_string_contains("code_verifier="))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "access_token": "ya29.ana", "refresh_token": "1//rt-ana", "expires_in": 3599, "token_type": "Bearer"
        })))
        .expect(1)
        .mount(&authorize)
        .await;
    let callback = |state: &str, cookie: Option<&str>| {
        let mut request = Request::get(format!(
            "/v1/connectors/oauth/callback?code=c0de&state={state}"
        ));
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.body(Body::empty()).unwrap()
    };
    // Not this browser's flow, or not its state: nothing is exchanged or stored.
    let (status, _, _) = browse(&app, callback(&query["state"], None)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = browse(&app, callback("forged", Some(&cookie))).await;
    assert_ne!(status, StatusCode::OK);
    assert!(stored(&vault, "gmail").await.is_none());

    let (status, headers, page) = browse(&app, callback(&query["state"], Some(&cookie))).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("Gmail is connected"), "{page}");
    assert!(headers.get("set-cookie").unwrap().contains("Max-Age=0"));
    let grant = stored(&vault, "gmail").await.unwrap();
    assert_eq!(grant["refresh_token"], "1//rt-ana");
    assert_eq!(grant["client_id"], "cid");
    assert_eq!(grant["token_url"], format!("{}/token", authorize.uri()));
    let records = audited(&app, "connector_connected").await;
    assert_eq!(records[0]["via"], "oauth");
}

#[tokio::test]
async fn a_person_signs_in_to_an_mcp_server_that_asks_for_it() {
    let Connecting {
        app,
        vault,
        authorize,
        mcp,
    } = connecting().await;
    let tenant = tenant_of("T1");
    let (_, def) = workmate_mcp::ServerDef::parse(&serde_json::json!({
        "url": "https://wiki.acme.example/mcp",
        "oauth": {
            "client_id": "workmate",
            "authorize_url": format!("{}/auth", authorize.uri()),
            "token_url": format!("{}/token", authorize.uri()),
        }
    }))
    .unwrap();
    mcp.add(&tenant, "wiki", &def, "admin").await.unwrap();
    let listing = slash(&app, "U1", "mcp").await;
    assert!(listing.contains("/workmate mcp connect wiki"), "{listing}");
    let refused = slash(&app, "U1", "mcp connect nowiki").await;
    assert!(
        refused.contains("No MCP server named `nowiki`"),
        "{refused}"
    );

    let reply = slash_reply(&app, "U1", "mcp connect wiki").await;
    let (link, code) = (connect_path(&reply), connect_code(&reply));
    let (_, _, page) = browse(&app, get(&link)).await;
    assert!(page.contains("Sign in to MCP server wiki"), "{page}");
    assert!(
        !page.contains("type=\"password\""),
        "no form to type a token into"
    );
    let (status, headers, _) = browse(
        &app,
        post_form(
            "/v1/connectors/oauth/start",
            &[
                ("connect_token", &token_of(&link)),
                ("confirmation_code", &code),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = Url::parse(headers.get("location").unwrap()).unwrap();
    let query: HashMap<String, String> = location.query_pairs().into_owned().collect();
    assert_eq!(
        query["resource"], "https://wiki.acme.example/mcp",
        "the token is bound to the server"
    );
    let cookie = headers
        .get("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(body_string_contains("grant_type=authorization_code"))
        .and(body_string_contains(
            "resource=https%3A%2F%2Fwiki.acme.example%2Fmcp",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"access_token": "wiki-at", "refresh_token": "wiki-rt"}),
        ))
        .expect(1)
        .mount(&authorize)
        .await;
    let request = Request::get(format!(
        "/v1/connectors/oauth/callback?code=c&state={}",
        query["state"]
    ))
    .header(header::COOKIE, cookie)
    .body(Body::empty())
    .unwrap();
    let (status, _, page) = browse(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let ana = UserId::from("slack-U1");
    assert!(mcp.signed_in(&tenant, &ana, "wiki").await);
    let kept = vault
        .get(&tenant, Some(&ana), &workmate_mcp::grant_secret("wiki"))
        .await
        .unwrap()
        .unwrap();
    assert!(kept.expose_secret().contains("wiki-rt"));
    assert_eq!(
        audited(&app, "connector_connected").await[0]["connector"],
        "mcp:wiki"
    );
}
