//! A change to a player's profile, as the engine asks a store to make it.
//!
//! Owns: the shape of a profile change (fields set and removed, merge or replace).
//! Must not: check fields or sizes (the engine and the store's write do).

/// A change to a player's profile ([`crate::League::change_profile`],
/// [`RankingStore::set_profile`](crate::store::RankingStore::set_profile)): fields to
/// set and fields to remove, merged into the stored profile, or replacing it whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfileChange {
    /// Each field with its new value, or `None` to remove it.
    pub fields: Vec<(String, Option<String>)>,
    /// Start from an empty profile instead of the stored one: the profile becomes
    /// exactly the fields set.
    pub replace: bool,
}

impl ProfileChange {
    /// A merge that sets these fields and keeps the others.
    pub fn merge(fields: &[(String, String)]) -> Self {
        Self {
            fields: fields
                .iter()
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
            replace: false,
        }
    }

    /// A replacement: the profile becomes exactly these fields.
    pub fn replace(fields: &[(String, String)]) -> Self {
        Self {
            replace: true,
            ..Self::merge(fields)
        }
    }

    /// Sets a field.
    pub fn set(mut self, field: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.push((field.into(), Some(value.into())));
        self
    }

    /// Removes a field (nothing if it is not set).
    pub fn remove(mut self, field: impl Into<String>) -> Self {
        self.fields.push((field.into(), None));
        self
    }
}
