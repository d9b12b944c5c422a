//! Requests to workmate, and a browser with a cookie jar that signs in at the provider.

use std::collections::BTreeMap;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use super::*;

/// One request to the app: status, the `Set-Cookie` and `Location` headers, and the body.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) cookies: Vec<String>,
    pub(crate) location: Option<String>,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.body))
    }

    /// The value `Set-Cookie` gives cookie `name`, and the whole header.
    pub(crate) fn cookie(&self, name: &str) -> (String, String) {
        let header = self
            .cookies
            .iter()
            .find(|c| c.starts_with(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no Set-Cookie for {name} in {:?}", self.cookies))
            .clone();
        let value = header
            .split(';')
            .next()
            .unwrap()
            .trim_start_matches(&format!("{name}="))
            .to_owned();
        (value, header)
    }
}

pub(crate) async fn call(
    router: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Answer {
    call_with_body(router, method, path, headers, String::new()).await
}

/// [`call`] with a body.
pub(crate) async fn call_with_body(
    router: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: String,
) -> Answer {
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let cookies = response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let location = response
        .headers()
        .get(header::LOCATION)
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        cookies,
        location,
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}

/// A browser at the provider: a cookie jar, no automatic redirects.
pub(crate) struct Browser {
    pub(crate) client: reqwest::Client,
    pub(crate) jar: BTreeMap<String, String>,
}

impl Browser {
    pub(crate) fn new() -> Self {
        Self {
            client: reqwest::Client::builder()
                .tls_backend_preconfigured(workmate_net::tls_config().unwrap())
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar: BTreeMap::new(),
        }
    }

    pub(crate) async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let cookies: Vec<String> = self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let response = request
            .header("cookie", cookies.join("; "))
            .send()
            .await
            .unwrap();
        for set in response.headers().get_all("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            if let Some((name, value)) = pair.split_once('=') {
                self.jar
                    .insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        response
    }

    /// Follows the provider from the authorization URL through its login (as `login`) and consent
    /// pages until it sends the browser back to workmate; that URL's query.
    pub(crate) async fn sign_in(
        &mut self,
        authorization_url: &str,
        login: &str,
    ) -> BTreeMap<String, String> {
        let mut next = reqwest::Url::parse(authorization_url).unwrap();
        let mut pending: Option<Vec<(&str, String)>> = None;
        for _ in 0..20 {
            let response = match pending.take() {
                Some(fields) => {
                    self.send(form(self.client.post(next.clone()), &fields))
                        .await
                }
                None => self.send(self.client.get(next.clone())).await,
            };
            let status = response.status();
            if status.is_redirection() {
                let location = response.headers()["location"].to_str().unwrap().to_owned();
                if location.starts_with(REDIRECT) {
                    let back = reqwest::Url::parse(&location).unwrap();
                    return back.query_pairs().into_owned().collect();
                }
                next = next.join(&location).unwrap();
                continue;
            }
            let page = response.text().await.unwrap();
            assert_eq!(status, 200, "the provider answered {status}: {page}");
            let action = between(&page, "action=\"", "\"")
                .unwrap_or_else(|| panic!("no form on the provider's page: {page}"));
            next = next.join(&action.replace("&amp;", "&")).unwrap();
            let prompt = between(&page, "name=\"prompt\" value=\"", "\"").unwrap();
            pending = Some(match prompt.as_str() {
                "login" => vec![
                    ("prompt", "login".to_owned()),
                    ("login", login.to_owned()),
                    ("password", "any".to_owned()),
                ],
                "consent" => vec![("prompt", "consent".to_owned())],
                other => panic!("unexpected prompt {other}"),
            });
        }
        panic!("the provider did not send the browser back within 20 steps");
    }
}

/// `request` with `fields` as a URL-encoded form body.
pub(crate) fn form(
    request: reqwest::RequestBuilder,
    fields: &[(&str, String)],
) -> reqwest::RequestBuilder {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
}

pub(crate) fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find(end)?;
    Some(text[from..from + len].to_owned())
}

/// What following a "link your account" link came to.
pub(crate) struct Linked {
    /// The confirmation page.
    pub(crate) page: Answer,
    /// The answer to confirming it.
    pub(crate) confirmed: Answer,
}

/// Follows a "link your account" URL as a browser without a workmate session: sent to sign in
/// at the provider (as `login`) and back, shown the account, then confirming the link.
pub(crate) async fn link_as(router: &Router, url: &str, login: &str) -> Linked {
    let origin = REDIRECT.trim_end_matches("/v1/auth/callback");
    let path = url
        .strip_prefix(origin)
        .unwrap_or_else(|| panic!("{url} is not on workmate's origin {origin}"));
    let html = ("accept", "text/html");
    let first = call(router, "GET", path, &[html]).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER, "{}", first.body);
    let to_login = first.location.unwrap();
    assert!(
        to_login.starts_with("/v1/auth/login?return_to="),
        "{to_login}"
    );
    let start = call(router, "GET", &to_login, &[]).await;
    assert_eq!(start.status, StatusCode::SEE_OTHER, "{}", start.body);
    let (login_cookie, _) = start.cookie("workmate_login");
    let query = Browser::new()
        .sign_in(&start.location.unwrap(), login)
        .await;
    let callback = format!(
        "/v1/auth/callback?code={}&state={}",
        query["code"], query["state"]
    );
    let login_cookie = format!("workmate_login={login_cookie}");
    let back = call(router, "GET", &callback, &[("cookie", &login_cookie), html]).await;
    assert_eq!(back.status, StatusCode::SEE_OTHER, "{}", back.body);
    assert_eq!(
        back.location.as_deref(),
        Some(path),
        "the login returns to the link"
    );
    let (session, _) = back.cookie("workmate_session");
    let session = format!("workmate_session={session}");
    let page = call(router, "GET", path, &[("cookie", &session), html]).await;
    let token = path.split("token=").nth(1).unwrap().to_owned();
    let confirmed = call_with_body(
        router,
        "POST",
        "/v1/auth/link",
        &[
            ("cookie", &session),
            ("origin", origin),
            ("content-type", "application/x-www-form-urlencoded"),
            html,
        ],
        format!("token={token}"),
    )
    .await;
    Linked { page, confirmed }
}

/// Starts a login at workmate and signs in at the provider as `login`: the login cookie and the
/// callback's query.
pub(crate) async fn authorize(router: &Router, login: &str) -> (String, BTreeMap<String, String>) {
    let start = call(router, "GET", "/v1/auth/login", &[]).await;
    assert_eq!(start.status, StatusCode::SEE_OTHER, "{}", start.body);
    let (login_cookie, header) = start.cookie("workmate_login");
    assert!(
        header.contains("HttpOnly") && header.contains("SameSite=Lax"),
        "{header}"
    );
    let location = start.location.unwrap();
    assert!(
        location.contains("code_challenge_method=S256"),
        "{location}"
    );
    let query = Browser::new().sign_in(&location, login).await;
    (login_cookie, query)
}
