//! One config file (`~/.config/papayu/config.toml` or `.papa-yu/config.toml`): read into dotted
//! keys, and changed in place with `toml_edit` so the user's comments and layout survive.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;
use toml_edit::{DocumentMut, Item, Table};

use super::keys::{self, API_KEY_ENV, Key, Kind};
use crate::config::{AgentConfig, ConfigError, parse_bool};

/// The values one config file holds, by dotted key, as the strings their variables would hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLayer {
    path: Utf8PathBuf,
    values: BTreeMap<&'static str, String>,
}

impl FileLayer {
    /// Read `path`; `None` when there is no such file.
    ///
    /// # Errors
    ///
    /// [`ConfigError::File`] when it cannot be read or is not TOML, and the errors of
    /// [`FileLayer::parse`].
    pub fn read(path: &Utf8Path) -> Result<Option<FileLayer>, ConfigError> {
        match fs_err::read_to_string(path) {
            Ok(text) => Self::parse(path, &text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(file_error(path, e.to_string())),
        }
    }

    /// Parse `text` as the file at `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::File`] (not TOML), [`ConfigError::UnknownKey`], and
    /// [`ConfigError::SecretInFile`] for a key that must never be in a file.
    pub fn parse(path: &Utf8Path, text: &str) -> Result<FileLayer, ConfigError> {
        let doc: DocumentMut = text
            .parse()
            .map_err(|e: toml_edit::TomlError| file_error(path, e.to_string()))?;
        Self::from_document(path, &doc)
    }

    fn from_document(path: &Utf8Path, doc: &DocumentMut) -> Result<FileLayer, ConfigError> {
        let mut values = BTreeMap::new();
        for (section, item) in doc.iter() {
            let Some(table) = item.as_table_like() else {
                return Err(unknown(path, section));
            };
            for (name, item) in table.iter() {
                let dotted = format!("{section}.{name}");
                let key = keys::find(&dotted).ok_or_else(|| unknown(path, &dotted))?;
                if !key.in_files {
                    return Err(ConfigError::SecretInFile {
                        path: path.to_owned(),
                        key: dotted,
                    });
                }
                let text = item_text(item).ok_or_else(|| ConfigError::InFile {
                    path: path.to_owned(),
                    key: dotted.clone(),
                    value: item.to_string().trim().to_owned(),
                    message: "expected a string, number, boolean or array of tables".into(),
                })?;
                values.insert(key.name, text);
            }
        }
        Ok(FileLayer {
            path: path.to_owned(),
            values,
        })
    }

    /// The file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The value of `key`, as its variable would hold it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Every key the file sets.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.values.iter().map(|(k, v)| (*k, v.as_str()))
    }
}

fn file_error(path: &Utf8Path, message: String) -> ConfigError {
    ConfigError::File {
        path: path.to_owned(),
        message,
    }
}

fn unknown(path: &Utf8Path, key: &str) -> ConfigError {
    ConfigError::UnknownKey {
        path: Some(path.to_owned()),
        key: key.to_owned(),
    }
}

/// A TOML item as the string its variable would hold (arrays and tables as JSON).
fn item_text(item: &Item) -> Option<String> {
    match item {
        Item::Value(v) => Some(match v {
            toml_edit::Value::String(s) => s.value().clone(),
            toml_edit::Value::Boolean(b) => b.value().to_string(),
            toml_edit::Value::Integer(i) => i.value().to_string(),
            toml_edit::Value::Float(f) => f.value().to_string(),
            other => toml_to_json(&Item::Value(other.clone()))?.to_string(),
        }),
        Item::ArrayOfTables(_) | Item::Table(_) => Some(toml_to_json(item)?.to_string()),
        Item::None => None,
    }
}

fn toml_to_json(item: &Item) -> Option<Value> {
    fn value(v: &toml_edit::Value) -> Option<Value> {
        Some(match v {
            toml_edit::Value::String(s) => Value::String(s.value().clone()),
            toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
            toml_edit::Value::Integer(i) => Value::from(*i.value()),
            toml_edit::Value::Float(f) => serde_json::Number::from_f64(*f.value())?.into(),
            toml_edit::Value::Array(a) => Value::Array(a.iter().map(value).collect::<Option<_>>()?),
            toml_edit::Value::InlineTable(t) => Value::Object(
                t.iter()
                    .map(|(k, v)| Some((k.to_owned(), value(v)?)))
                    .collect::<Option<_>>()?,
            ),
            toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        })
    }
    fn table(t: &Table) -> Option<Value> {
        Some(Value::Object(
            t.iter()
                .map(|(k, v)| Some((k.to_owned(), toml_to_json(v)?)))
                .collect::<Option<_>>()?,
        ))
    }
    match item {
        Item::Value(v) => value(v),
        Item::Table(t) => table(t),
        Item::ArrayOfTables(a) => Some(Value::Array(a.iter().map(table).collect::<Option<_>>()?)),
        Item::None => None,
    }
}

fn json_to_toml(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::Array(a) => {
            toml_edit::Value::Array(a.iter().map(json_to_toml).collect::<Option<_>>()?)
        }
        Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in o {
                t.insert(k, json_to_toml(v)?);
            }
            toml_edit::Value::InlineTable(t)
        }
        Value::Null => return None,
    })
}

/// Whether `value` looks like an API key or another secret (it must not go in a file).
pub fn looks_secret(value: &str) -> bool {
    !papayu_llm::find_secrets(value).is_empty()
}

/// `value` for `key` checked as its variable is, and turned into the TOML value a file holds.
///
/// # Errors
///
/// [`ConfigError::SecretInFile`] for a secret (the key itself, or a value that looks like one),
/// [`ConfigError::UnknownKey`], and the key's own check.
pub fn checked_value(key: &str, value: &str) -> Result<(&'static Key, Item), ConfigError> {
    let k = keys::find(key).ok_or_else(|| ConfigError::UnknownKey {
        path: None,
        key: key.to_owned(),
    })?;
    if !k.in_files || looks_secret(value) {
        return Err(ConfigError::SecretInValue {
            key: key.to_owned(),
        });
    }
    let invalid = |message: &str| ConfigError::Invalid {
        variable: key.to_owned(),
        value: value.to_owned(),
        message: message.to_owned(),
    };
    if k.name == API_KEY_ENV
        && !(value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && value.chars().next().is_some_and(|c| !c.is_ascii_digit()))
    {
        return Err(invalid(
            "expected the NAME of an environment variable (e.g. OPENAI_API_KEY), not its value",
        ));
    }
    if k.name == keys::UI_THEME && !["light", "dark", "system"].contains(&value) {
        return Err(invalid("expected light, dark or system"));
    }
    // The same check the variable gets, with the key's name in the error.
    if let Some(var) = k.var {
        let map = BTreeMap::from([(var.to_owned(), value.to_owned())]);
        if let Err(e) = AgentConfig::from_env_map(&map)
            && e.variable() == var
        {
            return Err(e.renamed(key));
        }
    }
    let item = match k.kind {
        Kind::Str => Item::Value(value.into()),
        Kind::Bool => Item::Value(parse_bool(key, value)?.into()),
        Kind::Int => Item::Value(
            value
                .trim()
                .parse::<i64>()
                .map_err(|_| invalid("expected a whole number"))?
                .into(),
        ),
        Kind::Float => Item::Value(
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| invalid("expected a number"))?
                .into(),
        ),
        Kind::Tables => {
            let json: Value = serde_json::from_str(value)
                .map_err(|e| invalid(&format!("expected a JSON array of tables: {e}")))?;
            let mut tables = toml_edit::ArrayOfTables::new();
            for entry in json
                .as_array()
                .ok_or_else(|| invalid("expected a JSON array"))?
            {
                let Some(toml_edit::Value::InlineTable(t)) = json_to_toml(entry) else {
                    return Err(invalid("expected an array of objects"));
                };
                tables.push(t.into_table());
            }
            Item::ArrayOfTables(tables)
        }
    };
    Ok((k, item))
}

/// A config file being changed: its document, with comments and layout.
#[derive(Debug)]
pub struct FileEdit {
    path: Utf8PathBuf,
    doc: DocumentMut,
}

impl FileEdit {
    /// Open `path` for changes (an absent file is an empty document).
    ///
    /// # Errors
    ///
    /// [`ConfigError::File`] when it cannot be read or is not TOML.
    pub fn open(path: &Utf8Path) -> Result<FileEdit, ConfigError> {
        let text = match fs_err::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(file_error(path, e.to_string())),
        };
        let doc = text
            .parse()
            .map_err(|e: toml_edit::TomlError| file_error(path, e.to_string()))?;
        Ok(FileEdit {
            path: path.to_owned(),
            doc,
        })
    }

    /// Set `key` to `value` (checked by [`checked_value`]).
    ///
    /// # Errors
    ///
    /// As [`checked_value`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let (k, item) = checked_value(key, value)?;
        let (section, name) = split(k.name);
        let table = self
            .doc
            .entry(section)
            .or_insert_with(|| Item::Table(Table::new()));
        let Some(table) = table.as_table_like_mut() else {
            return Err(file_error(
                &self.path,
                format!("`{section}` is not a table"),
            ));
        };
        match (table.get_mut(name), item) {
            // Keep the comment and spacing around an existing value.
            (Some(Item::Value(old)), Item::Value(mut new)) => {
                *new.decor_mut() = old.decor().clone();
                *old = new;
            }
            (_, item) => {
                table.insert(name, item);
            }
        }
        Ok(())
    }

    /// Remove `key`; whether it was set.
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownKey`].
    pub fn unset(&mut self, key: &str) -> Result<bool, ConfigError> {
        let k = keys::find(key).ok_or_else(|| ConfigError::UnknownKey {
            path: None,
            key: key.to_owned(),
        })?;
        let (section, name) = split(k.name);
        let removed = self
            .doc
            .get_mut(section)
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.remove(name))
            .is_some();
        if removed
            && self
                .doc
                .get(section)
                .and_then(Item::as_table_like)
                .is_some_and(|t| t.is_empty())
        {
            self.doc.remove(section);
        }
        Ok(removed)
    }

    /// The document as a layer (what the file will say once saved).
    ///
    /// # Errors
    ///
    /// As [`FileLayer::parse`].
    pub fn layer(&self) -> Result<FileLayer, ConfigError> {
        FileLayer::from_document(&self.path, &self.doc)
    }

    /// Write the file atomically (its directory is created when missing).
    ///
    /// # Errors
    ///
    /// [`ConfigError::File`] when it cannot be written.
    pub fn save(&self) -> Result<(), ConfigError> {
        papayu_fs::write_atomic(&self.path, self.doc.to_string().as_bytes())
            .map_err(|e| file_error(&self.path, e.to_string()))
    }

    /// The file's text as it would be saved.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }
}

fn split(name: &'static str) -> (&'static str, &'static str) {
    name.split_once('.').unwrap_or(("", name))
}
