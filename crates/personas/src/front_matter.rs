//! Markdown with a YAML front matter block: `---`, the fields, `---`, then the body.
//!
//! Invariants: the block must open on the first line and close on a line of its own; the fields
//! must be a mapping with text keys; a field of the wrong type is an error naming the field and
//! the type it needs, never a silent default.

use yaml_rust2::{Yaml, YamlLoader};

use crate::ManifestError;

/// The fields of a front matter block, in the order written.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    entries: Vec<(String, Yaml)>,
}

/// Splits `text` into its front matter fields and its body (trimmed).
pub(crate) fn split(text: &str) -> Result<(Fields, String), ManifestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or_default();
    if opening.trim_end() != "---" {
        return Err(ManifestError::new(
            "it must start with a front matter block: a line `---`, the fields as YAML, and \
             another line `---`",
        ));
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(ManifestError::new(
            "its front matter block is not closed: add a line `---` after the fields",
        ));
    }
    let body: String = lines.collect();
    Ok((parse_fields(&yaml)?, body.trim().to_owned()))
}

fn parse_fields(yaml: &str) -> Result<Fields, ManifestError> {
    let documents = YamlLoader::load_from_str(yaml)
        .map_err(|e| ManifestError::new(format!("its front matter is not valid YAML: {e}")))?;
    let Some(document) = documents.into_iter().next() else {
        return Ok(Fields::default());
    };
    let map = match document {
        Yaml::Hash(map) => map,
        Yaml::Null => return Ok(Fields::default()),
        _ => {
            return Err(ManifestError::new(
                "its front matter must be a mapping of fields (`name: value` lines)",
            ));
        }
    };
    let mut entries = Vec::with_capacity(map.len());
    for (key, value) in map {
        let Yaml::String(key) = key else {
            return Err(ManifestError::new(
                "every front matter field needs a text name",
            ));
        };
        entries.push((key, value));
    }
    Ok(Fields { entries })
}

impl Fields {
    /// The names of the fields, in the order written.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    fn get(&self, key: &str) -> Option<&Yaml> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, Yaml::Null))
    }

    /// A text field (numbers are read as their text, so `version: 1.2` works).
    pub(crate) fn text(&self, key: &str) -> Result<Option<String>, ManifestError> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::String(s) | Yaml::Real(s)) => Ok(Some(s.trim().to_owned())),
            Some(Yaml::Integer(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(ManifestError::field(key, "must be text")),
        }
    }

    /// A yes/no field.
    pub(crate) fn flag(&self, key: &str) -> Result<Option<bool>, ManifestError> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::Boolean(b)) => Ok(Some(*b)),
            Some(_) => Err(ManifestError::field(key, "must be true or false")),
        }
    }

    /// A list of text: a YAML list, or one text of comma-separated items.
    pub(crate) fn list(&self, key: &str) -> Result<Option<Vec<String>>, ManifestError> {
        let items = match self.get(key) {
            None => return Ok(None),
            Some(Yaml::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            Some(Yaml::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Yaml::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                        _ => {
                            return Err(ManifestError::field(key, "must be a list of names"));
                        }
                    }
                }
                out
            }
            Some(_) => {
                return Err(ManifestError::field(
                    key,
                    "must be a list of names (or one text of comma-separated names)",
                ));
            }
        };
        Ok(Some(items))
    }

    /// Whether the field is present with any value (for fields read only for their shape).
    pub(crate) fn raw(&self, key: &str) -> Option<&Yaml> {
        self.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_fields_from_the_body() {
        let (fields, body) =
            split("---\nname: Ada\ntools: files, shell\nversion: 1.2\n---\n\n# Hi\nThere\n")
                .unwrap();
        assert_eq!(fields.text("name").unwrap().as_deref(), Some("Ada"));
        assert_eq!(fields.text("version").unwrap().as_deref(), Some("1.2"));
        assert_eq!(
            fields.list("tools").unwrap().unwrap(),
            ["files".to_owned(), "shell".to_owned()]
        );
        assert_eq!(body, "# Hi\nThere");
    }

    #[test]
    fn refuses_what_is_not_front_matter() {
        for (text, says) in [
            ("# no block\n", "must start with"),
            ("---\nname: x\n", "not closed"),
            ("---\n- a\n- b\n---\nbody", "mapping"),
            ("---\nname: [unclosed\n---\nbody", "not valid YAML"),
        ] {
            let error = split(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let (fields, _) = split("---\nname: [a]\nflag: maybe\n---\nx").unwrap();
        assert!(
            fields
                .text("name")
                .unwrap_err()
                .to_string()
                .contains("`name`")
        );
        assert!(
            fields
                .flag("flag")
                .unwrap_err()
                .to_string()
                .contains("true or false")
        );
    }
}
