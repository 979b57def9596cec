//! Where a fact in a target description comes from and how sure it is.

use serde::{Deserialize, Serialize};

/// How a fact is known, with the tags of the project's hardware-facts notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    /// `[D]`: vendor manuals or API references.
    #[serde(rename = "D")]
    Documented,
    /// `[V]`: source code the vendor maintains (libraries, compilers).
    #[serde(rename = "V")]
    VendorCode,
    /// `[R]`: reverse-engineered or third-party; nothing official behind it.
    #[serde(rename = "R")]
    ReverseEngineered,
    /// `[M]`: measured on the hardware by this project (a driver query, a
    /// test kernel).
    #[serde(rename = "M")]
    Measured,
}

/// The provenance of one group of facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub status: Status,
    /// `✓`: checked mechanically (an evaluator over every lane, a vendor
    /// tool run, a query on the device).
    pub checked: bool,
    /// Ids of entries in [`super::TargetDescription::sources`].
    pub sources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A document or piece of code facts are taken from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Short id that [`Provenance::sources`] refers to.
    pub id: String,
    /// What it is, including the section.
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Where the project recorded it (for example a hardware-facts
    /// section), or how it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A fact the description deliberately leaves unset, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unknown {
    /// The field, as a path (`registers.per_thread`).
    pub field: String,
    pub reason: String,
}
