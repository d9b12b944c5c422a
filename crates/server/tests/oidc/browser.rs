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
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) cookies: Vec<String>,
    pub(super) location: Option<String>,
    pub(super) body: String,
}

impl Answer {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.body))
    }

    /// The value `Set-Cookie` gives cookie `name`, and the whole header.
    pub(super) fn cookie(&self, name: &str) -> (String, String) {
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

pub(super) async fn call(
    router: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Answer {
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
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
pub(super) struct Browser {
    pub(super) client: reqwest::Client,
    pub(super) jar: BTreeMap<String, String>,
}

impl Browser {
    pub(super) fn new() -> Self {
        Self {
            client: workmate_server::serve::oidc_http_client().unwrap(),
            jar: BTreeMap::new(),
        }
    }

    pub(super) async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
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
    pub(super) async fn sign_in(
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
pub(super) fn form(
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

pub(super) fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find(end)?;
    Some(text[from..from + len].to_owned())
}

/// Starts a login at workmate and signs in at the provider as `login`: the login cookie and the
/// callback's query.
pub(super) async fn authorize(router: &Router, login: &str) -> (String, BTreeMap<String, String>) {
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
