//! A persona manifest (spec §10.2): who answers, with which instructions, tools, connectors and
//! model.
//!
//! Invariants: a parsed persona has a valid id, non-empty instructions and only tool groups
//! workmate knows; `all` (every tool, every connector) is reserved to built-ins; an unknown field
//! is an error, so a typo never silently grants or drops anything.

use std::collections::BTreeSet;

use workmate_protocol::PermissionMode;
pub use workmate_tools::ConnectorGrant;

use crate::ManifestError;
use crate::front_matter::{Fields, split};

/// The tool groups a persona can ask for: the categories of workmate's tools.
pub const TOOL_GROUPS: [&str; 6] = ["files", "shell", "web", "memory", "automation", "wake"];

/// The groups `scheduling: true` adds.
const SCHEDULING_GROUPS: [&str; 2] = ["automation", "wake"];

/// The groups an installed persona gets when its manifest names none: nothing that runs
/// commands or reaches the network.
const DEFAULT_GROUPS: [&str; 2] = ["files", "memory"];

/// OpenWorker's tool ids, read as the group that holds them here (`todo` has no counterpart:
/// workmate's plans live in the turn).
const ALIASES: [(&str, Option<&str>); 4] = [
    ("code_files", Some("files")),
    ("search", Some("files")),
    ("git", Some("shell")),
    ("todo", None),
];

/// Fields read for their shape only: accepted so that OpenWorker manifests install unchanged.
const ACCEPTED: [&str; 7] = [
    "requires_folder",
    "subagents",
    "messaging",
    "ships",
    "group",
    "family",
    "media",
];

const KNOWN: [&str; 18] = [
    "id",
    "name",
    "icon",
    "tagline",
    "description",
    "version",
    "tools",
    "scheduling",
    "connectors",
    "recommends",
    "team",
    "model",
    "default_model",
    "recommended_models",
    "default_permission_mode",
    "mode",
    "skills",
    "mcp",
];

/// Which tools a persona may be offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolGrant {
    /// Every tool (built-ins only).
    All,
    /// The tools of these groups ([`TOOL_GROUPS`]).
    Groups(BTreeSet<String>),
}

impl ToolGrant {
    /// Whether a tool of `category` may be offered. Tools outside the groups (the engine's own,
    /// skills) always may.
    pub fn allows(&self, category: &str) -> bool {
        match self {
            Self::All => true,
            Self::Groups(groups) => !TOOL_GROUPS.contains(&category) || groups.contains(category),
        }
    }

    /// The groups granted, in a stable order.
    pub fn groups(&self) -> Vec<String> {
        match self {
            Self::All => TOOL_GROUPS.iter().map(|g| (*g).to_owned()).collect(),
            Self::Groups(groups) => groups.iter().cloned().collect(),
        }
    }
}

/// A persona: its identity, its instructions and what it may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Persona {
    /// Its id: `^[a-z0-9][a-z0-9_-]{0,63}$`.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// An emoji or short icon name.
    pub icon: String,
    /// One line under the name.
    pub tagline: String,
    /// What it is for.
    pub description: String,
    /// Its version, as written.
    pub version: String,
    /// The system prompt: the manifest's body.
    pub instructions: String,
    /// The tools it may be offered.
    pub tools: ToolGrant,
    /// The connectors it may use.
    pub connectors: ConnectorGrant,
    /// The model its sessions switch to, if it names one.
    pub model: Option<String>,
    /// Models it works well with (shown at consent).
    pub recommended_models: Vec<String>,
    /// The mode it recommends (shown at consent; sessions keep their own).
    pub mode: PermissionMode,
    /// The bundle skills it uses, when it narrows them.
    pub skills: Option<Vec<String>>,
    /// The tenant's MCP servers its sessions get, when it narrows them (`None`: all of them).
    pub mcp: Option<Vec<String>>,
    /// Whether workmate ships it.
    pub builtin: bool,
}

/// Parses a manifest. `file_stem` names the file (its id when the manifest gives none); `builtin`
/// allows `all`.
pub fn parse_persona(text: &str, file_stem: &str, builtin: bool) -> Result<Persona, ManifestError> {
    let (fields, body) = split(text)?;
    for name in fields.names() {
        if !KNOWN.contains(&name) && !ACCEPTED.contains(&name) {
            return Err(ManifestError::new(format!(
                "unknown field `{name}`; a persona manifest has {}",
                KNOWN.join(", ")
            )));
        }
    }
    if body.is_empty() {
        return Err(ManifestError::new(
            "its body is empty: write the persona's instructions below the front matter",
        ));
    }
    let id = match fields.text("id")? {
        Some(id) if valid_id(&id) => id,
        Some(id) => {
            return Err(ManifestError::field(
                "id",
                &format!(
                    "{id:?} must be 1–64 lowercase letters, digits, `-` or `_`, starting with a letter or digit"
                ),
            ));
        }
        None => slug(file_stem).ok_or_else(|| {
            ManifestError::new(format!(
                "no `id` field, and the file name {file_stem:?} does not make one"
            ))
        })?,
    };
    let connectors = connectors(&fields, builtin)?;
    recommends(&fields, &connectors)?;
    if let Some(team) = fields.text("team")?
        && team != "lead"
        && team != "worker"
    {
        return Err(ManifestError::field("team", "must be `lead` or `worker`"));
    }
    let mode = match fields
        .text("default_permission_mode")?
        .or(fields.text("mode")?)
    {
        None => PermissionMode::Interactive,
        Some(word) => serde_json::from_value::<PermissionMode>(serde_json::Value::String(word))
            .map_err(|_| {
                ManifestError::field(
                    "default_permission_mode",
                    "must be discuss, plan, interactive, custom or auto",
                )
            })?,
    };
    Ok(Persona {
        name: fields.text("name")?.unwrap_or_else(|| id.clone()),
        icon: fields.text("icon")?.unwrap_or_default(),
        tagline: fields.text("tagline")?.unwrap_or_default(),
        description: fields.text("description")?.unwrap_or_default(),
        version: fields.text("version")?.unwrap_or_default(),
        tools: tools(&fields, builtin)?,
        connectors,
        model: fields.text("model")?.or(fields.text("default_model")?),
        recommended_models: fields.list("recommended_models")?.unwrap_or_default(),
        mode,
        skills: fields.list("skills")?,
        mcp: fields.list("mcp")?,
        instructions: body,
        builtin,
        id,
    })
}

/// Whether `id` is a valid persona id.
pub(crate) fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn slug(stem: &str) -> Option<String> {
    let mut out = String::new();
    for c in stem.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(64).collect();
    valid_id(&out).then_some(out)
}

fn tools(fields: &Fields, builtin: bool) -> Result<ToolGrant, ManifestError> {
    let listed = fields.list("tools")?;
    if listed.as_deref() == Some(&["all".to_owned()][..]) {
        return if builtin {
            Ok(ToolGrant::All)
        } else {
            Err(ManifestError::field(
                "tools",
                "cannot be `all` outside workmate's built-in personas: list the groups it needs",
            ))
        };
    }
    let mut groups = BTreeSet::new();
    match listed {
        None => groups.extend(DEFAULT_GROUPS.iter().map(|g| (*g).to_owned())),
        Some(listed) => {
            for id in listed {
                let group = match ALIASES.iter().find(|(alias, _)| *alias == id) {
                    Some((_, group)) => *group,
                    None if TOOL_GROUPS.contains(&id.as_str()) => Some(id.as_str()),
                    None => {
                        return Err(ManifestError::field(
                            "tools",
                            &format!(
                                "names an unknown tool group {id:?}; known: {}",
                                TOOL_GROUPS.join(", ")
                            ),
                        ));
                    }
                };
                groups.extend(group.map(str::to_owned));
            }
        }
    }
    if fields.flag("scheduling")?.unwrap_or(true) {
        groups.extend(SCHEDULING_GROUPS.iter().map(|g| (*g).to_owned()));
    }
    Ok(ToolGrant::Groups(groups))
}

fn connectors(fields: &Fields, builtin: bool) -> Result<ConnectorGrant, ManifestError> {
    if let Some(flag) = fields.raw("connectors").and_then(yaml_rust2::Yaml::as_bool) {
        return Ok(if flag {
            ConnectorGrant::Ids(recommended_connectors(fields)?)
        } else {
            ConnectorGrant::None
        });
    }
    match fields.list("connectors")? {
        None => Ok(ConnectorGrant::None),
        Some(ids) if ids == ["all"] => {
            if builtin {
                Ok(ConnectorGrant::All)
            } else {
                Err(ManifestError::field(
                    "connectors",
                    "cannot be `all` outside workmate's built-in personas: list the connector ids",
                ))
            }
        }
        Some(ids) if ids.is_empty() => Ok(ConnectorGrant::None),
        Some(ids) => Ok(ConnectorGrant::Ids(ids)),
    }
}

/// The connector ids `recommends` names.
fn recommended_connectors(fields: &Fields) -> Result<Vec<String>, ManifestError> {
    let Some(items) = fields.raw("recommends") else {
        return Ok(Vec::new());
    };
    let Some(items) = items.as_vec() else {
        return Err(ManifestError::field(
            "recommends",
            "must be a list of `{connector: id}` or `{mcp: name}` entries",
        ));
    };
    let mut ids = Vec::new();
    for item in items {
        let text = |key: &str| item[key].as_str().map(str::to_owned);
        match (text("connector"), text("mcp")) {
            (Some(id), None) => ids.push(id),
            (None, Some(_)) => {}
            _ => {
                return Err(ManifestError::field(
                    "recommends",
                    "entries each name one `connector` or one `mcp`",
                ));
            }
        }
        if let Some(tier) = text("tier")
            && tier != "core"
            && tier != "optional"
        {
            return Err(ManifestError::field(
                "recommends",
                "entries have a `tier` of core or optional",
            ));
        }
    }
    Ok(ids)
}

fn recommends(fields: &Fields, grant: &ConnectorGrant) -> Result<(), ManifestError> {
    let wanted = recommended_connectors(fields)?;
    let outside = wanted.iter().find(|id| match grant {
        ConnectorGrant::All => false,
        ConnectorGrant::None => true,
        ConnectorGrant::Ids(ids) => !ids.contains(id),
    });
    match outside {
        None => Ok(()),
        Some(id) => Err(ManifestError::field(
            "recommends",
            &format!("names connector {id:?}, which `connectors` does not grant; add it there"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(front: &str) -> Result<Persona, ManifestError> {
        parse_persona(
            &format!("---\n{front}\n---\nYou help.\n"),
            "My Persona",
            false,
        )
    }

    #[test]
    fn defaults_fill_what_a_manifest_leaves_out() {
        let persona = parse("name: Ada").unwrap();
        assert_eq!(persona.id, "my-persona");
        assert_eq!(persona.instructions, "You help.");
        assert_eq!(persona.mode, PermissionMode::Interactive);
        assert_eq!(
            persona.tools.groups(),
            ["automation", "files", "memory", "wake"]
        );
        assert_eq!(persona.connectors, ConnectorGrant::None);
        assert!(persona.tools.allows("skills"));
        assert!(!persona.tools.allows("shell"));
    }

    #[test]
    fn openworker_tool_ids_map_to_groups() {
        let persona = parse("tools: [code_files, git, todo]\nscheduling: false").unwrap();
        assert_eq!(persona.tools.groups(), ["files", "shell"]);
    }

    #[test]
    fn what_is_wrong_is_named() {
        for (front, says) in [
            ("tools: [telepathy]", "unknown tool group \"telepathy\""),
            ("tools: all", "built-in"),
            ("connectors: all", "built-in"),
            ("id: Bad Id", "lowercase"),
            ("colour: red", "unknown field `colour`"),
            ("team: boss", "lead"),
            ("mode: yolo", "discuss, plan"),
            ("recommends: [{connector: github}]", "does not grant"),
        ] {
            let error = parse(front).unwrap_err().to_string();
            assert!(error.contains(says), "{front}: {error}");
        }
        let empty = parse_persona("---\nname: x\n---\n\n", "x", false).unwrap_err();
        assert!(empty.to_string().contains("body is empty"));
    }

    #[test]
    fn connectors_and_models_are_read() {
        let persona = parse(
            "connectors: [github, jira]\nrecommends:\n  - connector: github\n    tier: core\nmodel: gpt-x\nrecommended_models: gpt-x, claude-y\ndefault_permission_mode: plan",
        )
        .unwrap();
        assert_eq!(
            persona.connectors,
            ConnectorGrant::Ids(vec!["github".into(), "jira".into()])
        );
        assert_eq!(persona.model.as_deref(), Some("gpt-x"));
        assert_eq!(persona.recommended_models, ["gpt-x", "claude-y"]);
        assert_eq!(persona.mode, PermissionMode::Plan);
        let legacy = parse("connectors: true\nrecommends: [{connector: github}]").unwrap();
        assert_eq!(
            legacy.connectors,
            ConnectorGrant::Ids(vec!["github".into()])
        );
    }

    #[test]
    fn an_mcp_list_narrows_the_servers_and_is_a_capability() {
        let narrowed = parse("mcp: [wiki, files]").unwrap();
        assert_eq!(narrowed.mcp, Some(vec!["wiki".into(), "files".into()]));
        let words = crate::consent::capabilities(&narrowed);
        assert!(words.contains(&"mcp:wiki".to_owned()), "{words:?}");
        assert_eq!(parse("name: x").unwrap().mcp, None, "absent: every server");
    }
}
