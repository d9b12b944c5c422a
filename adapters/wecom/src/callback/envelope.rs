//! The encrypted envelopes on the wire: the ciphertext inside a request body, and the passive
//! replies around a ciphertext.
//!
//! - Smart robot: request `{"encrypt": "…"}`; reply
//!   `{"encrypt","msgsignature","timestamp","nonce"}` with the timestamp as a JSON number.
//! - Self-built app: request `<xml><ToUserName/><Encrypt/><AgentID/></xml>`; reply
//!   `<xml><Encrypt/><MsgSignature/><TimeStamp/><Nonce/></xml>`, laid out byte for byte as
//!   WeCom's SDK samples write it.
//!
//! Invariant: the ciphertext is taken exactly as sent (the signature covers its bytes), and a
//! reply's text values cannot break out of their CDATA sections.

use std::borrow::Cow;

use serde::Deserialize;

use super::CallbackError;

/// The `encrypt` of a smart-robot body.
pub(super) fn json_ciphertext(body: &[u8]) -> Result<Cow<'_, str>, CallbackError> {
    #[derive(Deserialize)]
    struct Sealed<'a> {
        #[serde(default, borrow)]
        encrypt: Option<Cow<'a, str>>,
    }
    let text = utf8(body)?;
    let sealed: Sealed<'_> = serde_json::from_str(text).map_err(|e| {
        CallbackError::BadBody(format!(
            "not JSON ({e}); the smart robot posts {{\"encrypt\": …}} (is this the self-built \
             app's XML callback?)"
        ))
    })?;
    sealed.encrypt.filter(|e| !e.is_empty()).ok_or_else(|| {
        CallbackError::BadBody(
            "the JSON has no \"encrypt\" string; the smart robot posts {\"encrypt\": …}".into(),
        )
    })
}

/// The `<Encrypt>` of a self-built-app body.
pub(super) fn xml_ciphertext(body: &[u8]) -> Result<String, CallbackError> {
    #[derive(Deserialize)]
    struct Sealed {
        #[serde(default, rename = "Encrypt")]
        encrypt: Option<String>,
    }
    let text = utf8(body)?;
    let sealed: Sealed = quick_xml::de::from_str(text).map_err(|e| {
        CallbackError::BadBody(format!(
            "not XML ({e}); the self-built app posts <xml>…<Encrypt>…</Encrypt>…</xml> (is this \
             the smart robot's JSON callback?)"
        ))
    })?;
    sealed.encrypt.filter(|e| !e.is_empty()).ok_or_else(|| {
        CallbackError::BadBody("the XML has no <Encrypt> element; the self-built app posts <xml>…<Encrypt>…</Encrypt>…</xml>".into())
    })
}

fn utf8(body: &[u8]) -> Result<&str, CallbackError> {
    std::str::from_utf8(body)
        .map_err(|e| CallbackError::BadBody(format!("the body is not UTF-8 ({e})")))
}

/// The smart robot's passive reply.
pub(super) fn json_reply(encrypt: &str, signature: &str, timestamp: u64, nonce: &str) -> String {
    serde_json::json!({
        "encrypt": encrypt,
        "msgsignature": signature,
        "timestamp": timestamp,
        "nonce": nonce,
    })
    .to_string()
}

/// The self-built app's passive reply.
pub(super) fn xml_reply(encrypt: &str, signature: &str, timestamp: u64, nonce: &str) -> String {
    format!(
        "<xml>\n<Encrypt><![CDATA[{}]]></Encrypt>\n<MsgSignature><![CDATA[{}]]></MsgSignature>\n\
         <TimeStamp>{timestamp}</TimeStamp>\n<Nonce><![CDATA[{}]]></Nonce>\n</xml>",
        cdata(encrypt),
        cdata(signature),
        cdata(nonce),
    )
}

/// Text for a CDATA section: a `]]>` inside is split across two sections.
fn cdata(text: &str) -> Cow<'_, str> {
    if text.contains("]]>") {
        Cow::Owned(text.replace("]]>", "]]]]><![CDATA[>"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdata_cannot_be_closed_early() {
        let reply = xml_reply("e", "s", 1, "a]]><x/>");
        assert!(reply.contains("<Nonce><![CDATA[a]]]]><![CDATA[><x/>]]></Nonce>"));
    }

    #[test]
    fn escaped_json_ciphertexts_are_unescaped() {
        let sealed = json_ciphertext(br#"{"encrypt":"a\/b+c=="}"#).unwrap();
        assert_eq!(sealed, "a/b+c==");
    }
}
