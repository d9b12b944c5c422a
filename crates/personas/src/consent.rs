//! What an admin consents to when enabling a persona: its capabilities, and the summary they
//! are shown as.

use serde::Serialize;
use serde_json::{Value, json};

use crate::persona::{ConnectorGrant, Persona};

/// The capability words of a persona, sorted: `tool:<group>`, `connector:<id>` (or
/// `connectors:all`), `mcp:<server>` and `model:<id>`. A re-install whose set grew needs consent again.
pub(crate) fn capabilities(persona: &Persona) -> Vec<String> {
    let mut words: Vec<String> = persona
        .tools
        .groups()
        .into_iter()
        .map(|g| format!("tool:{g}"))
        .collect();
    match &persona.connectors {
        ConnectorGrant::None => {}
        ConnectorGrant::All => words.push("connectors:all".to_owned()),
        ConnectorGrant::Ids(ids) => words.extend(ids.iter().map(|id| format!("connector:{id}"))),
    }
    words.extend(persona.model.iter().map(|m| format!("model:{m}")));
    words.extend(persona.mcp.iter().flatten().map(|m| format!("mcp:{m}")));
    words.sort();
    words.dedup();
    words
}

/// Whether `now` asks for something `before` did not.
pub(crate) fn grew(before: &[String], now: &[String]) -> bool {
    now.iter().any(|word| !before.contains(word))
}

/// The risk classes a persona's tool groups reach, sorted.
fn risk(persona: &Persona) -> Vec<&'static str> {
    let mut classes: Vec<&'static str> = persona
        .tools
        .groups()
        .iter()
        .flat_map(|group| match group.as_str() {
            "files" => &["read", "write_local"][..],
            "memory" => &["read"][..],
            "shell" => &["exec"][..],
            "web" => &["network"][..],
            "automation" | "wake" => &["schedule"][..],
            _ => &[][..],
        })
        .copied()
        .collect();
    classes.sort_unstable();
    classes.dedup();
    classes
}

/// What a persona asks for, as shown to the admin who decides (spec §10.3's consent summary).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConsentSummary {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Its version.
    pub version: String,
    /// The tool groups it may use.
    pub tools: Vec<String>,
    /// The risk classes those reach (`exec`, `network`, `read`, `schedule`, `write_local`).
    pub risk: Vec<&'static str>,
    /// `"all"`, or the connector ids.
    pub connectors: Value,
    /// The MCP servers it narrows its sessions to (empty: all the tenant's).
    pub mcp: Vec<String>,
    /// The model its sessions switch to.
    pub model: Option<String>,
    /// Models it recommends.
    pub recommended_models: Vec<String>,
    /// The mode it recommends.
    pub recommended_mode: &'static str,
    /// The skills its bundle ships.
    pub skills: Vec<String>,
    /// Where it came from.
    pub source: String,
    /// Whether workmate ships it.
    pub builtin: bool,
    /// The version of the installed persona it replaces (`""` when that one had none); absent
    /// for a fresh install.
    pub replaces: Option<String>,
    /// Every capability word ([`Persona`]'s tools, connectors and model).
    pub capabilities: Vec<String>,
    /// Whether an admin must consent before anyone can use it.
    pub needs_consent: bool,
}

impl ConsentSummary {
    pub(crate) fn new(persona: &Persona, skills: Vec<String>, source: &str) -> Self {
        let connectors = match &persona.connectors {
            ConnectorGrant::All => json!("all"),
            ConnectorGrant::None => json!([]),
            ConnectorGrant::Ids(ids) => json!(ids),
        };
        Self {
            id: persona.id.clone(),
            name: persona.name.clone(),
            description: persona.description.clone(),
            version: persona.version.clone(),
            tools: persona.tools.groups(),
            risk: risk(persona),
            connectors,
            mcp: persona.mcp.clone().unwrap_or_default(),
            model: persona.model.clone(),
            recommended_models: persona.recommended_models.clone(),
            recommended_mode: persona.mode.as_str(),
            skills,
            source: source.to_owned(),
            builtin: persona.builtin,
            replaces: None,
            capabilities: capabilities(persona),
            needs_consent: !persona.builtin,
        }
    }
}
