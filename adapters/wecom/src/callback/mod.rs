//! The callback URL's checks, for the smart robot and the self-built app alike.
//!
//! - `GET ?msg_signature&timestamp&nonce&echostr`: URL verification. The signature covers
//!   `echostr`; its decryption is answered verbatim (no quotes, no newline), within 1 s.
//! - `POST`: the smart robot's JSON `{"encrypt": …}` or the app's XML `<Encrypt>`; the signature
//!   covers the ciphertext; the plaintext is JSON or XML for [`crate::inbound`].
//! - Passive replies: the answer encrypted, signed over the new ciphertext with the reply's own
//!   timestamp and nonce, in the envelope of the surface it answers.
//!
//! Invariants: a plaintext leaves this module only from a request whose signature matched and
//! whose ciphertext decrypted with the configured key to the configured receive id (the corp id
//! for an app; empty for an internal smart robot); every refusal says which setting to check.
//! No freshness window is enforced here: WeCom documents none, and redeliveries are deduped on
//! their ids by the chat layer.

mod envelope;
mod query;

use workmate_wxcrypto::{Crypto, CryptoError};

pub use query::Query;

use crate::inbound::{self, AppCallback, DecodeError, RobotCallback};

/// Why a callback request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The query lacks a parameter or cannot be read.
    #[error("the callback's query is unusable: {0}")]
    BadQuery(String),
    /// The configured EncodingAESKey cannot be used.
    #[error("cannot set up WeCom's callback crypto: {0}")]
    BadKey(CryptoError),
    /// The signature does not match.
    #[error(
        "the msg_signature does not match: check that the configured Token is the one WeCom's \
         admin console shows for this callback URL"
    )]
    SignatureMismatch,
    /// The signature matched but the ciphertext does not open.
    #[error(
        "the message does not decrypt ({0}): check that the configured EncodingAESKey is the one \
         WeCom's admin console shows for this callback URL"
    )]
    Undecryptable(CryptoError),
    /// The ciphertext was made for another receive id.
    #[error(
        "the message was encrypted for receive id {found:?}, not the configured {expected:?}: a \
         self-built app's receive id is its corp id (CorpID); an internal smart robot's is empty"
    )]
    ReceiveIdMismatch {
        /// The configured receive id.
        expected: String,
        /// The one the message carries.
        found: String,
    },
    /// The body is not the envelope this surface posts.
    #[error("the body is not WeCom's encrypted envelope: {0}")]
    BadBody(String),
    /// The plaintext is not the callback this surface sends.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

impl From<CryptoError> for CallbackError {
    fn from(error: CryptoError) -> Self {
        match error {
            CryptoError::SignatureMismatch => Self::SignatureMismatch,
            CryptoError::ReceiveIdMismatch { expected, found } => {
                Self::ReceiveIdMismatch { expected, found }
            }
            CryptoError::BadKey(_) => Self::BadKey(error),
            other => Self::Undecryptable(other),
        }
    }
}

/// One callback URL's secrets: its Token, its EncodingAESKey and its receive id.
#[derive(Clone, Debug)]
pub struct CallbackAuth {
    crypto: Crypto,
}

impl From<Crypto> for CallbackAuth {
    fn from(crypto: Crypto) -> Self {
        Self { crypto }
    }
}

impl CallbackAuth {
    /// The checks of one callback URL. `receive_id` is the corp id for a self-built app and
    /// empty for an internal smart robot.
    pub fn new(
        token: &str,
        encoding_aes_key: &str,
        receive_id: &str,
    ) -> Result<Self, CallbackError> {
        Crypto::new(token, encoding_aes_key, receive_id)
            .map(Self::from)
            .map_err(CallbackError::BadKey)
    }

    /// URL verification: the decrypted `echostr`, to answer verbatim as the response body.
    pub fn verify_url(&self, query: &Query) -> Result<String, CallbackError> {
        let echostr = query.echostr.as_deref().ok_or_else(|| {
            CallbackError::BadQuery(
                "echostr is missing (URL verification is a GET with echostr; a message is a \
                 POST)"
                    .into(),
            )
        })?;
        self.open(query, echostr)
    }

    /// The plaintext JSON of a smart-robot `POST` body `{"encrypt": …}`.
    pub fn open_json(&self, query: &Query, body: &[u8]) -> Result<String, CallbackError> {
        self.open(query, &envelope::json_ciphertext(body)?)
    }

    /// The plaintext XML of a self-built-app `POST` body `<xml>…<Encrypt>…</Encrypt>…</xml>`.
    pub fn open_xml(&self, query: &Query, body: &[u8]) -> Result<String, CallbackError> {
        self.open(query, &envelope::xml_ciphertext(body)?)
    }

    /// The smart robot's encrypted passive reply carrying `plaintext` (a JSON reply such as a
    /// stream snapshot): `{"encrypt","msgsignature","timestamp","nonce"}`, the timestamp (Unix
    /// seconds) as a number.
    pub fn seal_json(&self, plaintext: &str, timestamp: u64, nonce: &str) -> String {
        let encrypt = self.crypto.encrypt(plaintext);
        self.json_envelope(&encrypt, timestamp, nonce)
    }

    /// [`Self::seal_json`] with a given random prefix, to reproduce a ciphertext.
    pub fn seal_json_with(
        &self,
        random_prefix: [u8; 16],
        plaintext: &str,
        timestamp: u64,
        nonce: &str,
    ) -> String {
        let encrypt = self.crypto.encrypt_with(random_prefix, plaintext);
        self.json_envelope(&encrypt, timestamp, nonce)
    }

    /// The self-built app's encrypted passive reply carrying `plaintext` (a reply XML):
    /// `<xml><Encrypt/><MsgSignature/><TimeStamp/><Nonce/></xml>`.
    pub fn seal_xml(&self, plaintext: &str, timestamp: u64, nonce: &str) -> String {
        let encrypt = self.crypto.encrypt(plaintext);
        self.xml_envelope(&encrypt, timestamp, nonce)
    }

    /// [`Self::seal_xml`] with a given random prefix, to reproduce a ciphertext.
    pub fn seal_xml_with(
        &self,
        random_prefix: [u8; 16],
        plaintext: &str,
        timestamp: u64,
        nonce: &str,
    ) -> String {
        let encrypt = self.crypto.encrypt_with(random_prefix, plaintext);
        self.xml_envelope(&encrypt, timestamp, nonce)
    }

    fn open(&self, query: &Query, ciphertext: &str) -> Result<String, CallbackError> {
        Ok(self.crypto.decrypt(
            &query.msg_signature,
            &query.timestamp,
            &query.nonce,
            ciphertext,
        )?)
    }

    fn json_envelope(&self, encrypt: &str, timestamp: u64, nonce: &str) -> String {
        let signature = self
            .crypto
            .signature(&timestamp.to_string(), nonce, encrypt);
        envelope::json_reply(encrypt, &signature, timestamp, nonce)
    }

    fn xml_envelope(&self, encrypt: &str, timestamp: u64, nonce: &str) -> String {
        let signature = self
            .crypto
            .signature(&timestamp.to_string(), nonce, encrypt);
        envelope::xml_reply(encrypt, &signature, timestamp, nonce)
    }
}

/// The smart robot's inbound path: verify, decrypt and decode one `POST`.
pub fn open_robot_message(
    auth: &CallbackAuth,
    query: &Query,
    body: &[u8],
) -> Result<RobotCallback, CallbackError> {
    Ok(inbound::decode_robot(&auth.open_json(query, body)?)?)
}

/// The self-built app's inbound path: verify, decrypt and decode one `POST`.
pub fn open_app_message(
    auth: &CallbackAuth,
    query: &Query,
    body: &[u8],
) -> Result<AppCallback, CallbackError> {
    Ok(inbound::decode_app(&auth.open_xml(query, body)?)?)
}
