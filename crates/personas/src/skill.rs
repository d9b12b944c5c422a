//! A skill in the `SKILL.md` format (spec §10.4): front matter with `name`, `description` and
//! optional `allowed-tools`, then the procedure.
//!
//! Invariants: a parsed skill has a valid name, a one-line description (all a model sees before
//! loading it) and non-empty instructions.

use crate::ManifestError;
use crate::front_matter::split;

/// The longest skill name.
const MAX_NAME: usize = 64;

/// The longest description kept in the catalog.
const MAX_DESCRIPTION: usize = 400;

/// A skill: when it applies and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name (`release-notes`).
    pub name: String,
    /// When it applies, in one line.
    pub description: String,
    /// The procedure.
    pub instructions: String,
    /// Tools the procedure expects (advisory).
    pub allowed_tools: Vec<String>,
}

/// Whether `name` is a valid skill name: 1–64 letters, digits, `.`, `_` or `-`, starting with a
/// letter or digit.
pub fn valid_skill_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= MAX_NAME
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Parses a `SKILL.md`; `folder` (the skill's folder name) is its name when it gives none.
pub fn parse_skill(text: &str, folder: &str) -> Result<Skill, ManifestError> {
    let (fields, body) = split(text)?;
    for name in fields.names() {
        if !matches!(
            name,
            "name" | "description" | "allowed-tools" | "allowed_tools" | "license" | "metadata"
        ) {
            return Err(ManifestError::new(format!(
                "unknown field `{name}`; a SKILL.md has name, description and allowed-tools"
            )));
        }
    }
    let name = fields.text("name")?.unwrap_or_else(|| folder.to_owned());
    let allowed_tools = match fields.list("allowed-tools")? {
        Some(tools) => tools,
        None => fields.list("allowed_tools")?.unwrap_or_default(),
    };
    Skill::new(
        &name,
        &fields.text("description")?.unwrap_or_default(),
        &body,
        allowed_tools,
    )
}

impl Skill {
    /// A skill from its parts, checked as a `SKILL.md` would be.
    pub fn new(
        name: &str,
        description: &str,
        instructions: &str,
        allowed_tools: Vec<String>,
    ) -> Result<Self, ManifestError> {
        let name = name.trim();
        if !valid_skill_name(name) {
            return Err(ManifestError::field(
                "name",
                &format!(
                    "{name:?} must be 1–64 letters, digits, `.`, `_` or `-`, starting with a letter or digit"
                ),
            ));
        }
        let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
        if description.is_empty() {
            return Err(ManifestError::field(
                "description",
                "is missing: say in one line when the skill applies (it is all a model sees until it loads the skill)",
            ));
        }
        if description.chars().count() > MAX_DESCRIPTION {
            return Err(ManifestError::field(
                "description",
                &format!("is longer than {MAX_DESCRIPTION} characters: keep it to one line"),
            ));
        }
        let instructions = instructions.trim();
        if instructions.is_empty() {
            return Err(ManifestError::new(
                "its instructions are empty: write the procedure below the front matter",
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            description,
            instructions: instructions.to_owned(),
            allowed_tools,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_skill_md() {
        let skill = parse_skill(
            "---\ndescription: Draft release notes\n  from merged PRs\nallowed-tools: shell, files\n---\n1. List the PRs.\n",
            "release-notes",
        )
        .unwrap();
        assert_eq!(skill.name, "release-notes");
        assert_eq!(skill.description, "Draft release notes from merged PRs");
        assert_eq!(skill.allowed_tools, ["shell", "files"]);
        assert_eq!(skill.instructions, "1. List the PRs.");
    }

    #[test]
    fn refuses_bad_skills_with_the_reason() {
        for (text, says) in [
            ("---\nname: -x\ndescription: d\n---\nbody", "must be 1–64"),
            ("---\nname: x\n---\nbody", "description"),
            (
                "---\nname: x\ndescription: d\n---\n",
                "instructions are empty",
            ),
            (
                "---\nname: x\ndescription: d\nrun: now\n---\nbody",
                "unknown field `run`",
            ),
        ] {
            let error = parse_skill(text, "folder").unwrap_err().to_string();
            assert!(error.contains(says), "{text:?}: {error}");
        }
        assert!(valid_skill_name("Deploy.v2_x"));
        assert!(!valid_skill_name(&"a".repeat(65)));
    }
}
