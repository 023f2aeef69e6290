//! [`Profile`]: a player's profile as the board's cache holds it, JSON text returned
//! as it is stored.
//!
//! A standings page carries up to 1000 profiles. Parsing each into a
//! `serde_json::Value` cost about a quarter of a page's client CPU (a map and two
//! strings per field, all allocated and freed again), and the HTTP server then wrote
//! the same JSON back out. A `Profile` keeps the text: one allocation, checked to be
//! JSON, parsed only when a field is asked for, and serialised as it is.
//!
//! Text that comes back from the store's cache (which leaguekit wrote there from a
//! checked profile) is not even checked when a page is read: checking it was still
//! about a seventh of a kept page's client CPU. It is checked once, on first use
//! (`as_json`, a field, serialising), and text that is not a JSON object reads as
//! `{}` then, as it did when it was checked on reading.
//!
//! The profiles of a page read in one piece (a kept page on Redis) share that piece
//! ([`StoredText`]): each is a range of one reference-counted text, not an allocation
//! of its own.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::store::StoredText;

/// A player's cached profile: a JSON object of field name → string (`{}` when none
/// is set), kept as the text the store holds.
///
/// ```
/// let p = leaguekit::Profile::from_json(r#"{"name":"Ada","avatar":"a1"}"#).unwrap();
/// assert_eq!(p.get("name").as_deref(), Some("Ada"));
/// assert_eq!(p.get("email"), None);
/// assert_eq!(p, serde_json::json!({"avatar": "a1", "name": "Ada"}));
/// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"name":"Ada","avatar":"a1"}"#);
/// ```
#[derive(Clone)]
pub struct Profile(Text);

#[derive(Clone)]
enum Text {
    /// `{}`, without an allocation.
    Empty,
    /// Checked to be a JSON object.
    Checked(Box<RawValue>),
    /// From the store's cache: checked on first use (whether it is a JSON object).
    Stored(StoredText, OnceLock<bool>),
}

/// Whether `text` is one JSON object.
fn is_object(text: &str) -> bool {
    text.trim_start().starts_with('{') && serde_json::from_str::<&RawValue>(text).is_ok()
}

impl Profile {
    /// The profile with no field set (`{}`).
    pub fn empty() -> Profile {
        Profile(Text::Empty)
    }

    /// A profile from JSON text: `None` unless it is a JSON object.
    pub fn from_json(json: impl Into<String>) -> Option<Profile> {
        let json = json.into();
        if !json.trim_start().starts_with('{') {
            return None;
        }
        RawValue::from_string(json)
            .ok()
            .map(|raw| Profile(Text::Checked(raw)))
    }

    /// A profile from the text a store's profile cache returned, checked when first
    /// used rather than now (see the module's header).
    pub(crate) fn from_store(json: StoredText) -> Profile {
        Profile(Text::Stored(json, OnceLock::new()))
    }

    /// The JSON text, as stored.
    pub fn as_json(&self) -> &str {
        match &self.0 {
            Text::Empty => "{}",
            Text::Checked(raw) => raw.get(),
            Text::Stored(text, ok) if *ok.get_or_init(|| is_object(text.as_str())) => text.as_str(),
            Text::Stored(..) => "{}",
        }
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self.fields().is_empty()
    }

    /// One field's value (parses the text).
    pub fn get(&self, field: &str) -> Option<String> {
        self.fields().remove(field)
    }

    /// Every field and its value (parses the text). A value that is not a string
    /// (never written by leaguekit) is given as its JSON text.
    pub fn fields(&self) -> BTreeMap<String, String> {
        let parsed: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(self.as_json()).unwrap_or_default();
        parsed
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect()
    }

    /// The profile as a `serde_json::Value` (an object; parses the text).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.as_json())
            .unwrap_or_else(|_| serde_json::Value::Object(Default::default()))
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::empty()
    }
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_json())
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_json())
    }
}

/// Equal when they hold the same fields and values, whatever the order or spacing
/// of their text.
impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.as_json() == other.as_json() || self.to_value() == other.to_value()
    }
}

impl Eq for Profile {}

impl PartialEq<serde_json::Value> for Profile {
    fn eq(&self, other: &serde_json::Value) -> bool {
        &self.to_value() == other
    }
}

impl Serialize for Profile {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = match &self.0 {
            Text::Checked(raw) => Some(&**raw),
            // Borrowed from the text (`{}` when it is not an object), without a copy.
            Text::Stored(..) => serde_json::from_str::<&RawValue>(self.as_json()).ok(),
            Text::Empty => None,
        };
        match raw {
            Some(raw) => raw.serialize(serializer),
            None => serializer.collect_map(std::iter::empty::<(&str, &str)>()),
        }
    }
}

/// From JSON text only (serde_json's raw values): a JSON object, kept as written.
impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        if !raw.get().trim_start().starts_with('{') {
            return Err(serde::de::Error::custom(format!(
                "a profile is a JSON object, not {}",
                raw.get()
            )));
        }
        Ok(Profile(Text::Checked(raw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_are_profiles() {
        assert!(Profile::from_json("{}").is_some());
        assert!(Profile::from_json(" {\"a\":\"b\"}").is_some());
        assert!(Profile::from_json("[1]").is_none());
        assert!(Profile::from_json("\"x\"").is_none());
        assert!(Profile::from_json("{\"a\":").is_none());
        assert!(Profile::empty().is_empty());
        assert_eq!(Profile::default().as_json(), "{}");
    }

    #[test]
    fn equality_is_by_content() {
        let a = Profile::from_json(r#"{"a":"1","b":"2"}"#).unwrap();
        let b = Profile::from_json(r#"{ "b": "2", "a": "1" }"#).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, Profile::empty());
        assert_eq!(a.get("b").as_deref(), Some("2"));
        assert_eq!(a.fields().len(), 2);
    }

    #[test]
    fn profiles_of_one_page_share_its_text() {
        let page = std::sync::Arc::new(
            "7\u{1f}a\u{1f}{\"name\":\"Ada\"}\u{1f}b\u{1f}[1]\u{1f}c\u{1f}{}\u{1f}d\u{1f}"
                .to_owned(),
        );
        let parts: Vec<&str> = page.split('\u{1f}').collect();
        let of = |part: &str| Profile::from_store(StoredText::within(&page, part));
        let ada = of(parts[2]);
        assert_eq!(ada.as_json(), r#"{"name":"Ada"}"#);
        assert_eq!(ada.get("name").as_deref(), Some("Ada"));
        assert_eq!(serde_json::to_string(&ada).unwrap(), r#"{"name":"Ada"}"#);
        assert_eq!(
            ada,
            Profile::from_store(StoredText::new(r#"{"name":"Ada"}"#))
        );
        // Not an object (or nothing): `{}`, as a text of its own would read.
        assert_eq!(of(parts[4]).as_json(), "{}");
        assert_eq!(of(parts[4]), Profile::empty());
        assert!(of(parts[6]).is_empty());
        assert_eq!(of(parts[8]).as_json(), "{}");
        // A range of the page is the same profile; one past its end is none.
        let at = page.find('{').expect("a profile");
        let by_range = StoredText::part(&page, at..at + 14).expect("in the page");
        assert_eq!(Profile::from_store(by_range), ada);
        assert!(StoredText::part(&page, at..page.len() + 1).is_none());
        // Text from elsewhere is copied, not mistaken for a part of the page.
        let elsewhere = String::from(r#"{"name":"Bo"}"#);
        assert_eq!(of(&elsewhere).get("name").as_deref(), Some("Bo"));
        // Each shares the page; the page lives while one of them does.
        let kept = ada.clone();
        let count = std::sync::Arc::strong_count(&page);
        drop(ada);
        assert_eq!(std::sync::Arc::strong_count(&page), count - 1);
        drop(page);
        assert_eq!(kept.get("name").as_deref(), Some("Ada"));
    }

    #[test]
    fn store_text_is_checked_on_first_use() {
        let good = Profile::from_store(StoredText::new(r#"{"name":"Ada"}"#));
        assert_eq!(good.as_json(), r#"{"name":"Ada"}"#);
        assert_eq!(good.get("name").as_deref(), Some("Ada"));
        assert_eq!(serde_json::to_string(&good).unwrap(), r#"{"name":"Ada"}"#);
        assert_eq!(good, Profile::from_json(r#"{ "name": "Ada" }"#).unwrap());
        // What the eager check refused reads as `{}`, everywhere.
        for bad in ["[1]", "{\"a\":", "\"x\"", "", "{} {}"] {
            let p = Profile::from_store(StoredText::new(bad));
            assert_eq!(p.as_json(), "{}", "{bad:?}");
            assert!(p.is_empty(), "{bad:?}");
            assert_eq!(serde_json::to_string(&p).unwrap(), "{}", "{bad:?}");
            assert_eq!(p, Profile::empty(), "{bad:?}");
        }
    }

    #[test]
    fn serialises_as_stored() {
        let p = Profile::from_json(r#"{"z":"last","a":"é\"q"}"#).unwrap();
        let out = serde_json::to_string(&vec![p.clone()]).unwrap();
        assert_eq!(out, r#"[{"z":"last","a":"é\"q"}]"#);
        assert_eq!(p.get("a").as_deref(), Some("é\"q"));
        let back: Vec<Profile> = serde_json::from_str(&out).unwrap();
        assert_eq!(back, [p]);
        assert!(serde_json::from_str::<Profile>("[1]").is_err());
        assert_eq!(serde_json::to_string(&Profile::empty()).unwrap(), "{}");
    }
}
