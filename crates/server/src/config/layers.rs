//! Turning each configuration source into entries and merging them in precedence order.
//!
//! Invariant: every entry that leaves this module names a known key, holds a value of that key's
//! type, and remembers its origin; later layers replace earlier ones key by key.

use std::collections::BTreeMap;
use std::path::Path;

use toml::{Table, Value};

use super::keys::{self, Kind, Source};
use super::{ConfigError, Overrides};

/// Prefix of the environment variables that set configuration keys.
const ENV_PREFIX: &str = "WORKMATE__";

/// One value from one source.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) section: String,
    pub(crate) key: String,
    pub(crate) value: Value,
    pub(crate) origin: Source,
}

/// All layers merged: the winning value of every key that was set, and where it came from.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    pub(crate) table: Table,
    pub(crate) origins: BTreeMap<(String, String), Source>,
}

impl Merged {
    /// Where the winning value of a key came from ([`Source::Default`] if nothing set it).
    pub(crate) fn origin(&self, section: &str, key: &str) -> Source {
        self.origins
            .get(&(section.to_owned(), key.to_owned()))
            .cloned()
            .unwrap_or(Source::Default)
    }
}

/// Merges layers given lowest precedence first.
pub(crate) fn merge(layers: impl IntoIterator<Item = Vec<Entry>>) -> Merged {
    let mut merged = Merged::default();
    for entry in layers.into_iter().flatten() {
        let path: Vec<&str> = entry.section.split('.').collect();
        insert_at(&mut merged.table, &path, entry.key.clone(), entry.value);
        merged
            .origins
            .insert((entry.section, entry.key), entry.origin);
    }
    merged
}

/// Puts `key = value` in the table at `path` (`["providers", "scripted"]`), creating tables.
fn insert_at(table: &mut Table, path: &[&str], key: String, value: Value) {
    match path.split_first() {
        None => {
            table.insert(key, value);
        }
        Some((first, rest)) => {
            let slot = table
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(inner) = slot {
                insert_at(inner, rest, key, value);
            }
        }
    }
}

/// Reads a configuration file.
pub(crate) fn file_entries(path: &Path) -> Result<Vec<Entry>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::FileUnreadable {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let table: Table = toml::from_str(&text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_and_column(&text, span.start));
        ConfigError::FileSyntax {
            path: path.to_owned(),
            line,
            column,
            message: one_line(e.message()),
        }
    })?;
    let origin = Source::File(path.to_owned());
    let mut entries = Vec::new();
    for (section, body) in table {
        let Value::Table(body) = body else {
            return Err(ConfigError::NotASection {
                name: section,
                origin,
            });
        };
        flatten(&section, body, &origin, &mut entries)?;
    }
    Ok(entries)
}

/// The entries of one section; a table inside it is the dotted section `outer.inner`
/// (`[providers.scripted]`).
fn flatten(
    section: &str,
    body: Table,
    origin: &Source,
    entries: &mut Vec<Entry>,
) -> Result<(), ConfigError> {
    for (key, value) in body {
        match value {
            Value::Table(inner) if keys::find(section, &key).is_none() => {
                flatten(&format!("{section}.{key}"), inner, origin, entries)?;
            }
            value => entries.push(checked(section.to_owned(), key, value, origin.clone())?),
        }
    }
    Ok(())
}

/// Reads `WORKMATE__SECTION__KEY` variables, plus `RUST_LOG` as a lower-precedence alias of
/// `WORKMATE__LOG__LEVEL`. Other variables are ignored.
///
/// A value is typed by the key it sets: integer keys parse it as a TOML integer, string keys take
/// it verbatim (so `WORKMATE__SERVER__DATA_DIR=2024` is the folder "2024", not a type error).
pub(crate) fn env_entries(
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<Entry>, ConfigError> {
    let mut vars: Vec<(String, String)> = env
        .into_iter()
        .filter(|(name, _)| name.starts_with(ENV_PREFIX) || name == "RUST_LOG")
        .collect();
    // RUST_LOG sorts after WORKMATE__…; put it first so the specific variable wins.
    vars.sort_by(|a, b| (a.0 != "RUST_LOG", &a.0).cmp(&(b.0 != "RUST_LOG", &b.0)));
    let mut entries = Vec::new();
    for (name, raw) in vars {
        let (section, key) = if name == "RUST_LOG" {
            if raw.trim().is_empty() {
                continue;
            }
            ("log".to_owned(), "level".to_owned())
        } else {
            split_env_name(&name)?
        };
        let origin = Source::Env(name);
        let value = match keys::find(&section, &key).map(|k| k.kind) {
            Some(Kind::Int) => match raw.trim().parse::<i64>() {
                Ok(n) => Value::Integer(n),
                Err(_) => Value::String(raw),
            },
            Some(Kind::Bool) => match raw.trim().to_ascii_lowercase().as_str() {
                "true" => Value::Boolean(true),
                "false" => Value::Boolean(false),
                _ => Value::String(raw),
            },
            Some(Kind::StrList) => Value::Array(
                raw.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_owned()))
                    .collect(),
            ),
            _ => Value::String(raw),
        };
        entries.push(checked(section, key, value, origin)?);
    }
    Ok(entries)
}

/// Entries for the command-line flags that were given.
pub(crate) fn flag_entries(flags: &Overrides) -> Vec<Entry> {
    let flag = |section: &str, key: &str, name: &'static str, value: &Option<String>| {
        value.as_ref().map(|v| Entry {
            section: section.to_owned(),
            key: key.to_owned(),
            value: Value::String(v.clone()),
            origin: Source::Flag(name),
        })
    };
    let format = flags.log_format.map(|f| f.as_str().to_owned());
    [
        flag("server", "listen", "--listen", &flags.listen),
        flag("server", "data_dir", "--data-dir", &flags.data_dir),
        flag("database", "url", "--database-url", &flags.database_url),
        flag("log", "format", "--log-format", &format),
        flag("log", "level", "--log-level", &flags.log_level),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn split_env_name(name: &str) -> Result<(String, String), ConfigError> {
    // `WORKMATE__SECTION__KEY`, or `WORKMATE__OUTER__INNER__KEY` for `[outer.inner] key`.
    let rest = name.strip_prefix(ENV_PREFIX).unwrap_or(name);
    let parts: Vec<&str> = rest.split("__").collect();
    match parts.split_last() {
        Some((key, section)) if !section.is_empty() && parts.iter().all(|p| !p.is_empty()) => {
            Ok((section.join(".").to_lowercase(), key.to_lowercase()))
        }
        _ => Err(ConfigError::MalformedEnvName {
            name: name.to_owned(),
        }),
    }
}

/// Rejects unknown keys and values of the wrong type.
fn checked(
    section: String,
    key: String,
    value: Value,
    origin: Source,
) -> Result<Entry, ConfigError> {
    let Some(known) = keys::find(&section, &key) else {
        let section_keys = keys::keys_of(&section);
        if section_keys.is_empty() {
            return Err(ConfigError::UnknownSection {
                section,
                origin,
                known: keys::sections().join(", "),
            });
        }
        return Err(ConfigError::UnknownKey {
            section,
            key,
            origin,
            known: section_keys.join(", "),
        });
    };
    let fits = match known.kind {
        Kind::Str => value.is_str(),
        Kind::Int => value.is_integer(),
        Kind::Bool => value.is_bool(),
        Kind::StrList => value
            .as_array()
            .is_some_and(|items| items.iter().all(Value::is_str)),
    };
    if !fits {
        return Err(ConfigError::WrongType {
            section,
            key,
            origin,
            expected: known.kind.name(),
            found: type_name(&value),
        });
    }
    Ok(Entry {
        section,
        key,
        value,
        origin,
    })
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn env_names_map_to_lowercase_section_and_key() {
        let entries = env_entries(env(&[
            ("WORKMATE__SERVER__DATA_DIR", "2024"),
            ("WORKMATE__DATABASE__MAX_CONNECTIONS", "7"),
            ("PATH", "/bin"),
        ]))
        .unwrap();
        let got: Vec<_> = entries
            .iter()
            .map(|e| (e.section.as_str(), e.key.as_str(), e.value.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("database", "max_connections", Value::Integer(7)),
                ("server", "data_dir", Value::String("2024".into())),
            ]
        );
    }

    #[test]
    fn specific_log_variable_beats_rust_log() {
        let merged = merge([env_entries(env(&[
            ("WORKMATE__LOG__LEVEL", "debug"),
            ("RUST_LOG", "trace"),
        ]))
        .unwrap()]);
        assert_eq!(merged.table["log"]["level"].as_str(), Some("debug"));
        assert_eq!(
            merged.origin("log", "level"),
            Source::Env("WORKMATE__LOG__LEVEL".into())
        );
    }

    #[test]
    fn malformed_env_names_and_types_are_rejected() {
        let err = env_entries(env(&[("WORKMATE__LISTEN", "x")])).unwrap_err();
        assert!(matches!(err, ConfigError::MalformedEnvName { .. }), "{err}");
        let err = env_entries(env(&[("WORKMATE__DATABASE__MAX_CONNECTIONS", "many")])).unwrap_err();
        assert!(err.to_string().contains("must be an integer"), "{err}");
    }

    #[test]
    fn positions_are_one_based() {
        assert_eq!(line_and_column("a = 1\nb = ?", 10), (2, 5));
    }
}
