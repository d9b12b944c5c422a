//! Click keys: what binds an approval card's buttons to the people who may press them, for
//! clicks that come as HTTP card callbacks.
//!
//! DingTalk signs an HTTP card callback's timestamp, not its body: the clicker (`userId`), the
//! card (`outTrackId`) and the choice are whatever the poster wrote. Anything every viewer of the
//! card receives (its shared data, a button's fixed params) comes back in a stranger's own click,
//! where `userId` can be swapped for an approver's. So each person who may decide gets their own
//! key in the card's **private data** (`privateData`, keyed by user id, which only that person's
//! client receives), the approval template's buttons send it back as the param `click_key`
//! (`"click_key": "${click_key}"`), and a click counts only when the key it carries is the one of
//! the `userId` and `outTrackId` it claims.
//!
//! A key is `base64url(HMAC-SHA256(k, len(card) ‖ card ‖ len(user) ‖ user))` with `k` derived
//! from the app's Client Secret, so nothing is stored and every replica computes the same key.
//! Keys are compared in constant time. Clicks over the Stream connection need no key: that
//! connection was opened with the app's credentials and DingTalk itself says who clicked.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::click::callback_param;

/// The approval template's private variable, and the button param that sends it back.
pub const CLICK_KEY: &str = "click_key";

/// What the derived key is for, so it is never the same as another use of the secret.
const PURPOSE: &[u8] = b"workmate/dingtalk/card-click-key/v1";

/// Why a click was not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClickRefusal {
    /// The click names no card or no clicker.
    #[error("the card callback names no outTrackId or no userId")]
    Unnamed,
    /// The button sent no key: a card posted before keys, a template without the `click_key`
    /// param, or a person who was not among the card's deciders.
    #[error(
        "the click carries no click_key: the clicker was not given one on this card, or the \
         approval template's buttons lack the param \"click_key\": \"${{click_key}}\""
    )]
    NoKey,
    /// The key is not the claimed clicker's on this card: a forged or altered click.
    #[error("the click's click_key is not the one of the clicker it names (a forged click)")]
    WrongKey,
}

impl ClickRefusal {
    /// A short word for metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unnamed => "unnamed_click",
            Self::NoKey => "no_click_key",
            Self::WrongKey => "wrong_click_key",
        }
    }
}

/// Makes and checks click keys (see the module docs).
#[derive(Clone)]
pub struct ClickKeys {
    key: [u8; 32],
}

impl fmt::Debug for ClickKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClickKeys(***)")
    }
}

impl ClickKeys {
    /// Keys derived from the app's Client Secret.
    pub fn new(client_secret: &str) -> Self {
        let mut mac = hmac(client_secret.as_bytes());
        mac.update(PURPOSE);
        Self {
            key: mac.finalize().into_bytes().into(),
        }
    }

    /// The key of `user` on card `out_track_id`.
    pub fn key_for(&self, out_track_id: &str, user: &str) -> String {
        let mut mac = hmac(&self.key);
        for part in [out_track_id, user] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// The card's `privateData`: each of `users` gets their own key as `click_key`.
    pub fn private_data(&self, out_track_id: &str, users: &[String]) -> Map<String, Value> {
        users
            .iter()
            .map(|user| {
                let key = self.key_for(out_track_id, user);
                (user.clone(), json!({ "cardParamMap": { CLICK_KEY: key } }))
            })
            .collect()
    }

    /// Whether a card callback's click carries the key of the `userId` and `outTrackId` it names.
    pub fn check(&self, callback: &Value) -> Result<(), ClickRefusal> {
        let named = |key: &str| {
            callback
                .get(key)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
        };
        let (Some(card), Some(user)) = (named("outTrackId"), named("userId")) else {
            return Err(ClickRefusal::Unnamed);
        };
        let presented = callback_param(callback, CLICK_KEY)
            .filter(|key| !key.is_empty())
            .ok_or(ClickRefusal::NoKey)?;
        let expected = self.key_for(card, user);
        if bool::from(presented.as_bytes().ct_eq(expected.as_bytes())) {
            Ok(())
        } else {
            Err(ClickRefusal::WrongKey)
        }
    }
}

fn hmac(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length; this cannot fail.
    <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(card: &str, user: &str, key: Option<&str>) -> Value {
        let mut params = json!({ "action": "once" });
        if let Some(key) = key {
            params[CLICK_KEY] = json!(key);
        }
        let content = json!({ "cardPrivateData": { "actionIds": ["once"], "params": params } });
        json!({ "outTrackId": card, "userId": user, "corpId": "ding1", "content": content.to_string() })
    }

    #[test]
    fn only_the_named_clickers_own_key_on_that_card_counts() {
        let keys = ClickKeys::new("app secret");
        let alice = keys.key_for("approval_1", "alice");
        assert_eq!(
            keys.check(&click("approval_1", "alice", Some(&alice))),
            Ok(())
        );
        // A stranger's own click with `userId` swapped for an approver's carries the wrong key.
        let mallory = keys.key_for("approval_1", "mallory");
        assert_eq!(
            keys.check(&click("approval_1", "alice", Some(&mallory))),
            Err(ClickRefusal::WrongKey)
        );
        // A key is bound to its card.
        assert_eq!(
            keys.check(&click("approval_2", "alice", Some(&alice))),
            Err(ClickRefusal::WrongKey)
        );
        assert_eq!(
            keys.check(&click("approval_1", "alice", None)),
            Err(ClickRefusal::NoKey)
        );
        assert_eq!(
            keys.check(&click("", "alice", Some(&alice))),
            Err(ClickRefusal::Unnamed)
        );
        // Another app's secret gives other keys; parts cannot be shifted between card and user.
        assert_ne!(
            ClickKeys::new("other").key_for("approval_1", "alice"),
            alice
        );
        assert_ne!(keys.key_for("approval_1a", "lice"), alice);
    }

    #[test]
    fn private_data_gives_each_decider_their_own_key() {
        let keys = ClickKeys::new("s");
        let data = keys.private_data("approval_9", &["a".into(), "b".into()]);
        assert_eq!(data.len(), 2);
        assert_eq!(
            data["a"]["cardParamMap"][CLICK_KEY],
            json!(keys.key_for("approval_9", "a"))
        );
        assert_ne!(data["a"], data["b"]);
        assert!(format!("{keys:?}").contains("***"));
    }
}
