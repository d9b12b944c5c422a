//! Data-loss-prevention redaction for workmate: what must never leave in clear text is replaced
//! by `[redacted:<rule>]` before it reaches an audit record, a log line, or (when a tenant asks)
//! a model.
//!
//! Two kinds of rule:
//! - **field names**: in JSON, the value of a key such as `password`, `api_key` or
//!   `Authorization` is replaced whole, whatever it holds (names compare without case, `-` and
//!   `_`); so is the text value of any key whose name holds `token`, `secret`, `key`,
//!   `password`, `authorization`, `cookie` or `signature` (`PRIVATE-TOKEN`, `x-api-key`,
//!   `app_secret`; a number such as `input_tokens` is kept);
//! - **patterns**: in any text (JSON strings included), matches of the built-in patterns (cloud
//!   and chat-platform keys, bearer tokens, JWTs, private keys, mainland-China resident ID numbers
//!   with a valid check digit, phone numbers) and of an operator's own are replaced.
//!
//! Invariants: redaction never fails and never panics, whatever the input; it only removes (the
//! output never holds a match of a rule); the count it returns is how many values it replaced,
//! which is all a caller may pass on (never what was replaced); the process-wide rules
//! ([`global`]) are the built-in ones until the server installs the configured ones at start.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// Field names whose values are always hidden (compared without case, `-` and `_`).
pub const BUILTIN_FIELDS: [&str; 16] = [
    "password",
    "passwd",
    "secret",
    "clientsecret",
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "apikey",
    "authorization",
    "cookie",
    "setcookie",
    "privatekey",
    "signingsecret",
    "encryptkey",
    "encodingaeskey",
];

/// What a field's name holds (after [`normalized`]) for its text value to be hidden.
const SECRET_NAME_PARTS: [&str; 7] = [
    "token",
    "secret",
    "key",
    "password",
    "authorization",
    "cookie",
    "signature",
];

/// Endings of names that hold a secret word but name something about a secret, not the secret.
const NOT_SECRET_SUFFIXES: [&str; 9] = [
    "id",
    "ids",
    "name",
    "names",
    "count",
    "type",
    "kind",
    "url",
    "expiresat",
];

/// The built-in patterns: a rule name and its expression. Where the expression has a group
/// named `secret`, only that group is replaced (the name before it stays, to say what was
/// hidden).
const BUILTIN_PATTERNS: [(&str, &str); 17] = [
    (
        "private_key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    ("bearer", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    ("aws_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "api_key",
        r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bsk-(?:proj|ant)-[A-Za-z0-9_-]{16,}",
    ),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "github_token",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}",
    ),
    ("google_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    (
        "gitlab_token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}",
    ),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("workmate_token", r"\bwm_[0-9a-f]{64}\b"),
    (
        "aws_secret",
        r"(?i)\b(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)\b\W{0,3}[:=]\s*\W?(?P<secret>[A-Za-z0-9/+=]{40})",
    ),
    (
        "basic_auth",
        r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})",
    ),
    (
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\[]+:(?P<secret>[^/\s@\[][^/\s@]*)@",
    ),
    (
        "credential",
        r#"(?i)\b[\w-]*(?:token|secret|password|passwd|api[_-]?key|apikey|access[_-]?key|signature)\b["']?\s*[:=]\s*["']?(?P<secret>[^\s"',;&\[][^\s"',;&]{5,})"#,
    ),
    (
        "id_card",
        r"\b[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]\b",
    ),
    (
        "phone",
        r"(?:\+?86[- ]?)?\b1[3-9]\d{9}\b|\+[1-9]\d{0,2}[- ]?\d{3,4}[- ]?\d{3,4}[- ]?\d{3,4}\b",
    ),
];

/// A rule that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A pattern is not a valid regular expression.
    #[error("pattern {index} (`{pattern}`) is not a valid regular expression: {reason}")]
    Pattern {
        /// Its position in the list, from 1.
        index: usize,
        /// The pattern as given.
        pattern: String,
        /// Why not.
        reason: String,
    },
}

/// What redaction gave: the value, and how many values it replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Redacted<T> {
    /// The redacted value.
    pub value: T,
    /// How many values were replaced.
    pub hidden: u32,
}

/// A set of rules.
#[derive(Clone, Debug)]
pub struct Redactor {
    fields: Vec<String>,
    patterns: Vec<(String, Regex)>,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Redactor {
    /// The built-in rules.
    pub fn builtin() -> Self {
        let patterns = BUILTIN_PATTERNS
            .iter()
            .filter_map(|(name, expr)| Regex::new(expr).ok().map(|re| ((*name).to_owned(), re)))
            .collect();
        Self {
            fields: BUILTIN_FIELDS.iter().map(|f| (*f).to_owned()).collect(),
            patterns,
        }
    }

    /// The built-in rules plus an operator's field names and patterns (named `custom`).
    pub fn with_custom(fields: &[String], patterns: &[String]) -> Result<Self, Error> {
        let mut redactor = Self::builtin();
        redactor.fields.extend(
            fields
                .iter()
                .map(|f| normalized(f))
                .filter(|f| !f.is_empty()),
        );
        for (i, pattern) in patterns.iter().enumerate() {
            let re = Regex::new(pattern).map_err(|e| Error::Pattern {
                index: i + 1,
                pattern: pattern.clone(),
                reason: e.to_string(),
            })?;
            redactor.patterns.push(("custom".to_owned(), re));
        }
        Ok(redactor)
    }

    /// `text` with every pattern's matches replaced.
    pub fn text<'t>(&self, text: &'t str) -> Redacted<Cow<'t, str>> {
        let mut out: Cow<'t, str> = Cow::Borrowed(text);
        let mut hidden = 0;
        for (name, re) in &self.patterns {
            let mut count = 0;
            let replaced = re.replace_all(&out, |caps: &regex::Captures<'_>| {
                let found = caps.get(0).map_or("", |m| m.as_str());
                if name == "id_card" && !valid_id_card(found) {
                    return found.to_owned();
                }
                count += 1;
                match (caps.get(0), caps.name("secret")) {
                    (Some(whole), Some(secret)) => {
                        let start = secret.start() - whole.start();
                        let end = secret.end() - whole.start();
                        format!("{}[redacted:{name}]{}", &found[..start], &found[end..])
                    }
                    _ => format!("[redacted:{name}]"),
                }
            });
            if count > 0 {
                hidden += count;
                out = Cow::Owned(replaced.into_owned());
            }
        }
        Redacted { value: out, hidden }
    }

    /// `value` with hidden fields' values replaced whole and every string's matches replaced.
    pub fn json(&self, value: &Value) -> Redacted<Value> {
        let mut hidden = 0;
        let value = self.walk(value, &mut hidden);
        Redacted { value, hidden }
    }

    /// Whether `name` is a field whose value is hidden, whatever it holds.
    pub fn hides_field(&self, name: &str) -> bool {
        let name = normalized(name);
        self.fields.contains(&name)
    }

    /// Whether `name` names a secret, so its text value is hidden: it holds a secret word and
    /// does not name an identifier of one (`key_id`, `token_url`, `signature_type`).
    pub fn hides_text_of(&self, name: &str) -> bool {
        let name = normalized(name);
        SECRET_NAME_PARTS.iter().any(|part| name.contains(part))
            && !NOT_SECRET_SUFFIXES
                .iter()
                .any(|suffix| name.ends_with(suffix))
            && name != "eventkey"
    }

    fn walk(&self, value: &Value, hidden: &mut u32) -> Value {
        match value {
            Value::String(text) => {
                let redacted = self.text(text);
                *hidden += redacted.hidden;
                Value::String(redacted.value.into_owned())
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.walk(v, hidden)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, v)| {
                        let hide = (self.hides_field(key) && !v.is_null())
                            || (v.is_string() && self.hides_text_of(key));
                        let v = if hide {
                            *hidden += 1;
                            Value::String("[redacted:field]".to_owned())
                        } else {
                            self.walk(v, hidden)
                        };
                        (key.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// A field name as compared: lower case, without `-` and `_`.
fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether an 18-character mainland-China resident ID number has a valid check character.
fn valid_id_card(id: &str) -> bool {
    const WEIGHTS: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    const CHECKS: [char; 11] = ['1', '0', 'X', '9', '8', '7', '6', '5', '4', '3', '2'];
    let chars: Vec<char> = id.chars().collect();
    if chars.len() != 18 {
        return false;
    }
    let mut sum = 0;
    for (c, w) in chars.iter().take(17).zip(WEIGHTS) {
        let Some(d) = c.to_digit(10) else {
            return false;
        };
        sum += d * w;
    }
    let expected = CHECKS[(sum % 11) as usize];
    chars[17].to_ascii_uppercase() == expected
}

static GLOBAL: OnceLock<Redactor> = OnceLock::new();

/// The process-wide rules: those [`install`]ed at start, else the built-in ones.
pub fn global() -> &'static Redactor {
    GLOBAL.get_or_init(Redactor::builtin)
}

/// Makes `redactor` the process-wide rules; `false` when rules were already in use (the first
/// stay).
pub fn install(redactor: Redactor) -> bool {
    GLOBAL.set(redactor).is_ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_and_tokens_are_hidden_and_plain_text_is_kept() {
        let r = Redactor::builtin();
        let text = "deploy with sk-proj-abcdefghijklmnop0123 and xoxb-1234567890-abcdef, \
                    AKIAABCDEFGHIJKLMNOP, ghp_abcdefghijklmnopqrstuvwxyz0123456789, \
                    Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345";
        let out = r.text(text);
        assert_eq!(out.hidden, 5, "{}", out.value);
        for secret in [
            "sk-proj",
            "xoxb-",
            "AKIA",
            "ghp_",
            "abcdefghijklmnopqrstuvwxyz012345",
        ] {
            assert!(!out.value.contains(secret), "{secret}: {}", out.value);
        }
        assert!(out.value.starts_with("deploy with [redacted:api_key]"));
        let plain = r.text("merged 12 PRs this week; see PR 1234");
        assert_eq!(plain.hidden, 0);
        assert!(matches!(plain.value, Cow::Borrowed(_)));
    }

    #[test]
    fn id_cards_need_a_valid_check_digit_and_phones_are_hidden() {
        let r = Redactor::builtin();
        // A well-known sample number with a valid check character.
        let out = r.text("ID 11010519491231002X, phone 13812345678 or +1 415 555 0100");
        assert_eq!(out.hidden, 3, "{}", out.value);
        assert!(!out.value.contains("11010519491231002X"));
        assert!(!out.value.contains("13812345678"));
        // The same digits with a wrong check character are not an ID number.
        let wrong = r.text("order 110105194912310021 shipped");
        assert!(
            wrong.value.contains("110105194912310021"),
            "{}",
            wrong.value
        );
    }

    #[test]
    fn fields_are_hidden_whole_and_nested_strings_scanned() {
        let r = Redactor::with_custom(&["X-Internal-Key".into()], &[r"CANARY-\d+".into()]).unwrap();
        let value = json!({
            "command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx'",
            "api_key": 12345,
            "x_internal_key": "k",
            "nested": [{"password": {"deep": true}}, "canary CANARY-42 here"],
            "count": 3,
        });
        let out = r.json(&value);
        assert_eq!(out.hidden, 5);
        assert_eq!(out.value["api_key"], "[redacted:field]");
        assert_eq!(out.value["x_internal_key"], "[redacted:field]");
        assert_eq!(out.value["nested"][0]["password"], "[redacted:field]");
        assert_eq!(out.value["nested"][1], "canary [redacted:custom] here");
        assert_eq!(out.value["count"], 3);
        assert!(Redactor::with_custom(&[], &["(unclosed".into()]).is_err());
    }

    #[test]
    fn secret_names_and_shapes_of_the_second_review_are_hidden() {
        let r = Redactor::builtin();
        let value = json!({
            "PRIVATE-TOKEN": "glpat-abcdefghijklmnopqrst",
            "x-api-key": "k-0123456789",
            "app_secret": "s3cr3t-value",
            "verification_token": "vt-0123456789",
            "client_key": "ck-0123456789",
            "connect_token": "sealed.token.value",
            "input_tokens": 1234,
            "title": "Weekly report",
        });
        let out = r.json(&value);
        for name in [
            "PRIVATE-TOKEN",
            "x-api-key",
            "app_secret",
            "verification_token",
            "client_key",
            "connect_token",
        ] {
            assert_eq!(out.value[name], "[redacted:field]", "{name}");
        }
        assert_eq!(out.value["input_tokens"], 1234);
        let ids = r.json(&json!({"key_id": "k1-95510c", "token_url": "https://x/token", "event_key": "deploy:prod"}));
        assert_eq!(ids.hidden, 0, "{}", ids.value);
        assert_eq!(out.value["title"], "Weekly report");

        for (text, secret) in [
            (
                "curl -H 'PRIVATE-TOKEN: glpat-abcdefghijklmnopqrst' https://gitlab.example.com",
                "glpat-abcdefghijklmnopqrst",
            ),
            (
                "charge with sk_live_abcdefghijklmnop0123",
                "sk_live_abcdefghijklmnop0123",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            (
                "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
                "YWxhZGRpbjpvcGVuc2VzYW1l",
            ),
            (
                "git clone https://ana:hunter2pass@git.example.com/repo.git",
                "hunter2pass",
            ),
            (
                "token wm_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "wm_0123456789abcdef",
            ),
            ("--password=correct-horse-battery", "correct-horse-battery"),
            ("X-Api-Key: abcdef123456", "abcdef123456"),
        ] {
            let out = r.text(text);
            assert!(!out.value.contains(secret), "{text} -> {}", out.value);
            assert!(out.hidden >= 1, "{text}");
        }
        let kept = r.text("git clone https://git.example.com/repo.git; 40 tokens used");
        assert_eq!(kept.hidden, 0, "{}", kept.value);
    }

    proptest::proptest! {
        #[test]
        fn redaction_never_panics_and_leaves_no_match(text in "\\PC{0,200}") {
            let r = Redactor::builtin();
            let out = r.text(&text);
            let again = r.text(&out.value);
            proptest::prop_assert_eq!(again.hidden, 0);
        }
    }
}
