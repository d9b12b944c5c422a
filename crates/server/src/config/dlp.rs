//! `[dlp]`: an operator's own redaction rules, added to the built-in ones (see `workmate_dlp`).
//!
//! Invariant: every pattern compiles when the configuration loads, so a bad one is a
//! configuration error naming it, never a rule silently skipped.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[dlp]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDlp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fields: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) patterns: Option<Vec<String>>,
}

impl RawDlp {
    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_none() && self.patterns.is_none()
    }
}

/// `[dlp]`.
#[derive(Clone, Debug, Default)]
pub struct DlpConfig {
    /// `fields`: more JSON field names whose values are always hidden.
    pub fields: Vec<String>,
    /// `patterns`: more regular expressions whose matches are hidden in any text.
    pub patterns: Vec<String>,
}

impl DlpConfig {
    /// The built-in rules plus these.
    pub fn redactor(&self) -> Result<workmate_dlp::Redactor, workmate_dlp::Error> {
        workmate_dlp::Redactor::with_custom(&self.fields, &self.patterns)
    }
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_dlp(raw: &RawDlp, invalid: Invalid<'_>) -> Result<DlpConfig, ConfigError> {
    let config = DlpConfig {
        fields: raw.fields.clone().unwrap_or_default(),
        patterns: raw.patterns.clone().unwrap_or_default(),
    };
    if config.fields.iter().any(|f| f.trim().is_empty()) {
        return Err(invalid("dlp", "fields", "a field name is empty".into()));
    }
    config
        .redactor()
        .map_err(|e| invalid("dlp", "patterns", e.to_string()))?;
    Ok(config)
}

pub(crate) fn render_dlp(config: &DlpConfig) -> RawDlp {
    RawDlp {
        fields: (!config.fields.is_empty()).then(|| config.fields.clone()),
        patterns: (!config.patterns.is_empty()).then(|| config.patterns.clone()),
    }
}
