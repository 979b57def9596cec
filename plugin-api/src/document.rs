//! Versioned documents: everything that crosses the plugin boundary.
//!
//! A document is a serde value wrapped in an envelope that names its kind
//! and its format version, in one of two encodings:
//!
//! - **postcard** (compact, the default): the magic bytes `TLCD`, a format
//!   byte `0`, then the postcard encoding of `(kind, major, minor)` followed
//!   by the postcard encoding of the body;
//! - **JSON** (debugging, tools in other languages):
//!   `{"tilec_document": kind, "version": [major, minor], "body": ...}`.
//!
//! A reader accepts a document of its own kind whose major version equals
//! its own and whose minor version is not newer than its own. (postcard is
//! not self-describing, so a newer minor, which may append fields, cannot be
//! read safely; writers therefore write the version the reader asked for.)

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Magic bytes that open a postcard-encoded document.
pub const MAGIC: &[u8; 4] = b"TLCD";

/// How a document is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Encoding {
    Postcard,
    Json,
}

impl Encoding {
    /// The byte that stands for the encoding in ABI calls.
    pub fn to_byte(self) -> u8 {
        match self {
            Encoding::Postcard => 0,
            Encoding::Json => 1,
        }
    }

    pub fn from_byte(b: u8) -> Option<Encoding> {
        match b {
            0 => Some(Encoding::Postcard),
            1 => Some(Encoding::Json),
            _ => None,
        }
    }
}

/// A `major.minor` version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Version {
    pub major: u16,
    pub minor: u16,
}

impl Version {
    pub const fn new(major: u16, minor: u16) -> Self {
        Version { major, minor }
    }

    /// Whether a reader of version `self` can read a document written at
    /// `written`.
    pub fn reads(self, written: Version) -> bool {
        self.major == written.major && written.minor <= self.minor
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A type that crosses the boundary as a document.
pub trait Document: Serialize + DeserializeOwned {
    /// Stable name of the document kind.
    const KIND: &'static str;
    /// The format version this build writes and reads.
    const VERSION: Version;
}

/// Why bytes could not be read as a document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("the bytes are not a tilec document (no `TLCD` header and not JSON)")]
    NotADocument,
    #[error("expected a `{expected}` document, found `{found}`")]
    WrongKind {
        expected: &'static str,
        found: String,
    },
    #[error(
        "`{kind}` document version {found} cannot be read by this build, which reads {reads} (same major, minor up to {reads})"
    )]
    Version {
        kind: &'static str,
        found: Version,
        reads: Version,
    },
    #[error("malformed `{kind}` document: {message}")]
    Malformed { kind: &'static str, message: String },
}

#[derive(Serialize, Deserialize)]
struct Header {
    kind: String,
    major: u16,
    minor: u16,
}

#[derive(Serialize)]
struct JsonOut<'a, T> {
    tilec_document: &'static str,
    version: [u16; 2],
    body: &'a T,
}

#[derive(Deserialize)]
struct JsonIn {
    tilec_document: String,
    version: [u16; 2],
    body: serde_json::Value,
}

/// Encodes a document.
pub fn encode<T: Document>(doc: &T, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Postcard => {
            let mut out = MAGIC.to_vec();
            out.push(0);
            let header = Header {
                kind: T::KIND.to_string(),
                major: T::VERSION.major,
                minor: T::VERSION.minor,
            };
            // Serializing plain data structures into a Vec cannot fail.
            if let Ok(h) = postcard::to_stdvec(&header) {
                out.extend(h);
            }
            if let Ok(b) = postcard::to_stdvec(doc) {
                out.extend(b);
            }
            out
        }
        Encoding::Json => serde_json::to_vec(&JsonOut {
            tilec_document: T::KIND,
            version: [T::VERSION.major, T::VERSION.minor],
            body: doc,
        })
        .unwrap_or_default(),
    }
}

/// The kind and version of a document, without decoding its body.
pub fn peek(bytes: &[u8]) -> Result<(String, Version, Encoding), DocumentError> {
    if let Some(rest) = bytes.strip_prefix(MAGIC.as_slice()) {
        let Some((&0, rest)) = rest.split_first() else {
            return Err(DocumentError::NotADocument);
        };
        let (h, _) =
            postcard::take_from_bytes::<Header>(rest).map_err(|_| DocumentError::NotADocument)?;
        return Ok((h.kind, Version::new(h.major, h.minor), Encoding::Postcard));
    }
    if bytes.first().is_some_and(|b| *b == b'{') {
        let j: JsonIn = serde_json::from_slice(bytes).map_err(|_| DocumentError::NotADocument)?;
        return Ok((
            j.tilec_document,
            Version::new(j.version[0], j.version[1]),
            Encoding::Json,
        ));
    }
    Err(DocumentError::NotADocument)
}

/// Decodes a document of kind `T`, in either encoding.
pub fn decode<T: Document>(bytes: &[u8]) -> Result<T, DocumentError> {
    let (kind, version, encoding) = peek(bytes)?;
    if kind != T::KIND {
        return Err(DocumentError::WrongKind {
            expected: T::KIND,
            found: kind,
        });
    }
    if !T::VERSION.reads(version) {
        return Err(DocumentError::Version {
            kind: T::KIND,
            found: version,
            reads: T::VERSION,
        });
    }
    let malformed = |message: String| DocumentError::Malformed {
        kind: T::KIND,
        message,
    };
    match encoding {
        Encoding::Postcard => {
            let rest = &bytes[MAGIC.len() + 1..];
            let (_, body) =
                postcard::take_from_bytes::<Header>(rest).map_err(|e| malformed(e.to_string()))?;
            let (doc, tail) =
                postcard::take_from_bytes::<T>(body).map_err(|e| malformed(e.to_string()))?;
            if !tail.is_empty() {
                return Err(malformed(format!(
                    "{} unexpected trailing bytes",
                    tail.len()
                )));
            }
            Ok(doc)
        }
        Encoding::Json => {
            let j: JsonIn = serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
            serde_json::from_value(j.body).map_err(|e| malformed(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ErrorCode, PluginError, PluginInfo};

    fn info() -> PluginInfo {
        PluginInfo {
            name: "demo".into(),
            vendor: "tilec".into(),
            plugin_version: "0.1.0".into(),
            ir_formats: (Version::new(0, 1), Version::new(0, 1)),
            targets: vec!["t0".into()],
            default_target: Some("t0".into()),
            ir_level: "tile".into(),
            has_runtime: false,
            notes: vec![],
        }
    }

    #[test]
    fn both_encodings_round_trip() {
        for enc in [Encoding::Postcard, Encoding::Json] {
            let bytes = encode(&info(), enc);
            assert_eq!(decode::<PluginInfo>(&bytes), Ok(info()));
            assert_eq!(peek(&bytes).map(|p| p.2), Ok(enc));
        }
    }

    #[test]
    fn wrong_kind_is_named() {
        let bytes = encode(&info(), Encoding::Postcard);
        assert_eq!(
            decode::<PluginError>(&bytes),
            Err(DocumentError::WrongKind {
                expected: "plugin-error",
                found: "plugin-info".into()
            })
        );
    }

    #[test]
    fn newer_minor_and_other_major_are_refused() {
        let mut bytes = encode(&PluginError::new(ErrorCode::Internal, "x"), Encoding::Json);
        let text = String::from_utf8(bytes.clone()).unwrap_or_default();
        bytes = text
            .replace("\"version\":[1,0]", "\"version\":[1,7]")
            .into_bytes();
        assert!(matches!(
            decode::<PluginError>(&bytes),
            Err(DocumentError::Version {
                found: Version { major: 1, minor: 7 },
                ..
            })
        ));
        let other = text
            .replace("\"version\":[1,0]", "\"version\":[2,0]")
            .into_bytes();
        assert!(matches!(
            decode::<PluginError>(&other),
            Err(DocumentError::Version { .. })
        ));
    }

    #[test]
    fn garbage_is_not_a_document() {
        assert_eq!(
            decode::<PluginInfo>(b"\x00\x01garbage"),
            Err(DocumentError::NotADocument)
        );
        assert_eq!(decode::<PluginInfo>(b""), Err(DocumentError::NotADocument));
        let mut truncated = encode(&info(), Encoding::Postcard);
        truncated.truncate(truncated.len() - 3);
        assert!(matches!(
            decode::<PluginInfo>(&truncated),
            Err(DocumentError::Malformed { .. })
        ));
        let mut extra = encode(&info(), Encoding::Postcard);
        extra.push(7);
        assert!(matches!(
            decode::<PluginInfo>(&extra),
            Err(DocumentError::Malformed { .. })
        ));
    }

    #[test]
    fn version_rule() {
        let v = Version::new(1, 2);
        assert!(v.reads(Version::new(1, 0)));
        assert!(v.reads(Version::new(1, 2)));
        assert!(!v.reads(Version::new(1, 3)));
        assert!(!v.reads(Version::new(2, 0)));
    }
}
