//! Error types of the core. Every variant names what was wrong (the key or field, the value and
//! what is allowed) because these messages reach Hadoop operators and job submitters verbatim.
//! The FFI layer maps each variant to one named Java exception (see `ffi`).

use thiserror::Error;

/// Result alias for the core.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in the core. No variant is ever produced by a bug alone: bugs
/// panic, and the FFI layer turns panics into `CircumflexInternalException`.
///
/// Not `#[non_exhaustive]`: the native library's one error-to-kind table (`circumflex-ffi`) matches
/// every variant, so a new variant fails its build until the table names its Java exception.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A scheduler configuration key has a value that is not allowed.
    #[error("invalid configuration: {key} = '{value}': expected {allowed}")]
    InvalidConfig {
        /// The key, e.g. `circumflex.policy`.
        key: String,
        /// The offending value as given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A job specification field is invalid (from a job configuration, a trace or the FFI).
    #[error("invalid job: {field} = '{value}': expected {allowed}")]
    InvalidJob {
        /// The field, e.g. `weight` or `circumflex.job.weight`.
        field: String,
        /// The offending value.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A job, node or handle id that the engine does not know.
    #[error("unknown {kind} id {id}")]
    UnknownId {
        /// "job", "node" or "handle".
        kind: &'static str,
        /// The id as given.
        id: i64,
    },
    /// A malformed or truncated input file (trace, workload).
    #[error("{file}:{line}: field '{field}': {message}")]
    BadInput {
        /// File name.
        file: String,
        /// 1-based line (0 when not line-oriented).
        line: usize,
        /// Field name or column.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A JSON document on the FFI boundary could not be decoded.
    #[error("malformed {what} JSON: {message}")]
    Json {
        /// What the document was meant to be ("job spec", "configuration").
        what: &'static str,
        /// serde_json's message (with line and column).
        message: String,
    },
    /// The job was refused by admission control. The message says why, for the submitter.
    #[error("job rejected by {policy}: {reason}")]
    Rejected {
        /// Policy name.
        policy: String,
        /// Human-readable reason (e.g. by how much the deadline would be missed).
        reason: String,
    },
    /// An IO error, with the path.
    #[error("{path}: {message}")]
    Io {
        /// Path involved.
        path: String,
        /// The OS message.
        message: String,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidConfig`].
    pub fn config(key: &str, value: impl ToString, allowed: impl ToString) -> Error {
        Error::InvalidConfig { key: key.to_string(), value: value.to_string(), allowed: allowed.to_string() }
    }

    /// Shorthand for [`Error::Io`] from an OS error on `path`.
    pub fn io(path: &std::path::Path, err: &std::io::Error) -> Error {
        Error::Io { path: path.display().to_string(), message: err.to_string() }
    }

    /// Shorthand for [`Error::InvalidJob`].
    pub fn job(field: &str, value: impl ToString, allowed: impl ToString) -> Error {
        Error::InvalidJob { field: field.to_string(), value: value.to_string(), allowed: allowed.to_string() }
    }
}
