//! An agent's settings file as a document to edit: JSON (Claude Code, Gemini CLI, Copilot)
//! or TOML (Codex, with `toml_edit`, which keeps its comments and layout). A JSON file is read
//! one level at a time ([`Json::open`]): what an edit does not go into stays as it was written
//! (its formatting, its keys' order), and only the objects and lists on the edit's path are
//! written again, indented as the file is.

use anyhow::{Context, Result, bail};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A JSON value, read as far as an edit needed.
#[derive(Debug, Clone)]
pub enum Json {
    /// Not read yet: written back exactly as it was.
    Raw(Box<RawValue>),
    /// A list whose items are read as far as needed.
    Array(Vec<Json>),
    /// An object whose keys keep their order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value in `text`, read one level.
    pub fn parse(text: &str) -> Result<Json> {
        let mut value = Json::Raw(serde_json::from_str(text)?);
        value.open()?;
        Ok(value)
    }

    /// A string acp-gate writes.
    pub fn string(text: &str) -> Json {
        Json::scalar(&serde_json::Value::from(text))
    }

    /// A number acp-gate writes.
    pub fn number(n: u64) -> Json {
        Json::scalar(&serde_json::Value::from(n))
    }

    fn scalar(value: &serde_json::Value) -> Json {
        Json::Raw(RawValue::from_string(value.to_string()).expect("a scalar serialises as JSON"))
    }

    /// An object acp-gate writes, its keys in this order.
    pub fn object(members: Vec<(&str, Json)>) -> Json {
        Json::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// Reads this value one level, if it is a list or an object not read yet.
    pub fn open(&mut self) -> Result<()> {
        let Json::Raw(raw) = self else {
            return Ok(());
        };
        let text = raw.get();
        *self = match text.trim_start().as_bytes().first() {
            Some(b'{') => Json::Object(serde_json::from_str::<Members>(text)?.0),
            Some(b'[') => Json::Array(
                serde_json::from_str::<Vec<Box<RawValue>>>(text)?
                    .into_iter()
                    .map(Json::Raw)
                    .collect(),
            ),
            _ => return Ok(()),
        };
        Ok(())
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<String> {
        match self {
            Json::Raw(raw) => serde_json::from_str(raw.get()).ok(),
            _ => None,
        }
    }

    /// The member `key` of an object, read one level; `None` when there is none (or `self` is
    /// no object).
    pub fn member(&mut self, key: &str) -> Result<Option<&mut Json>> {
        self.open()?;
        let Json::Object(members) = self else {
            return Ok(None);
        };
        match members.iter_mut().find(|(k, _)| k == key) {
            Some((_, value)) => {
                value.open()?;
                Ok(Some(value))
            }
            None => Ok(None),
        }
    }

    /// The member `key`, made `empty` (last) when there is none; an error when `self` is not
    /// an object.
    pub fn member_or(&mut self, key: &str, empty: Json) -> Result<&mut Json> {
        self.open()?;
        let Json::Object(members) = self else {
            bail!("not an object");
        };
        let at = match members.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                members.push((key.to_owned(), empty));
                members.len() - 1
            }
        };
        let value = &mut members[at].1;
        value.open()?;
        Ok(value)
    }

    pub fn remove(&mut self, key: &str) {
        if let Json::Object(members) = self {
            members.retain(|(k, _)| k != key);
        }
    }

    /// Whether it is an empty list or object.
    pub fn is_empty(&self) -> bool {
        match self {
            Json::Array(items) => items.is_empty(),
            Json::Object(members) => members.is_empty(),
            Json::Raw(raw) => matches!(raw.get().trim(), "[]" | "{}"),
        }
    }
}

/// An object's members in their order, their values not read.
struct Members(Vec<(String, Json)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members: Vec<(String, Json)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Box<RawValue>>()? {
                    // A repeated key: the last one counts, as for serde_json, in its place.
                    members.retain(|(k, _)| *k != key);
                    members.push((key, Json::Raw(value)));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Raw(raw) => raw.serialize(serializer),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

/// A JSON settings file: its value, and how it is indented.
pub struct JsonText {
    pub value: Json,
    indent: String,
}

impl JsonText {
    /// Reads `text` (an empty file is an empty object); the error says what is wrong, and that
    /// a file with comments is edited by hand (its comments would be lost).
    pub fn parse(text: &str) -> Result<JsonText> {
        if text.trim().is_empty() {
            return Ok(JsonText {
                value: Json::Object(Vec::new()),
                indent: "  ".to_owned(),
            });
        }
        let value = Json::parse(text).context(
            "not JSON that acp-gate can edit (a file with comments must be edited by hand: \
             acp-gate would drop them)",
        )?;
        if !matches!(value, Json::Object(_)) {
            bail!("not a JSON object");
        }
        // The indentation of the first indented line: the file's own.
        let indent = text
            .lines()
            .skip(1)
            .map(|line| &line[..line.len() - line.trim_start().len()])
            .find(|indent| !indent.is_empty())
            .unwrap_or("  ")
            .to_owned();
        Ok(JsonText { value, indent })
    }

    /// The file's text, indented as it was, ending with a newline.
    pub fn render(&self) -> Result<String> {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        self.value.serialize(&mut serializer)?;
        out.push(b'\n');
        Ok(String::from_utf8(out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_edit_does_not_go_into_is_written_back_as_it_was() {
        let text =
            "{\n    \"zeta\": {\"b\": [true, null, 2.5], \"a\": \"x\"},\n    \"alpha\": [1,2]\n}\n";
        let mut file = JsonText::parse(text).unwrap();
        assert_eq!(file.render().unwrap(), text);
        let list = file
            .value
            .member_or("alpha", Json::Array(Vec::new()))
            .unwrap();
        let Json::Array(items) = list else { panic!() };
        items.push(Json::number(3));
        assert_eq!(
            file.render().unwrap(),
            "{\n    \"zeta\": {\"b\": [true, null, 2.5], \"a\": \"x\"},\n    \"alpha\": [\n        1,\n        2,\n        3\n    ]\n}\n"
        );
    }

    #[test]
    fn comments_and_non_objects_are_refused_not_dropped() {
        let error = JsonText::parse("{\n  // mine\n  \"a\": 1\n}")
            .err()
            .unwrap();
        assert!(format!("{error:#}").contains("comments"), "{error:#}");
        assert!(JsonText::parse("[1]").is_err());
        assert!(JsonText::parse(" \n").unwrap().value.is_empty());
    }
}
