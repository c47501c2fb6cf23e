//! Trace readers: turn recorded or published workloads into a simulator [`Workload`].
//!
//! - [`swim`]: the SWIM project's TSV workloads (Facebook 2009/2010 synthetic days): bytes per job only,
//!   converted to tasks and durations by a documented, configurable model ([`swim::SwimModel`]).
//! - [`rumen`]: Hadoop Rumen job traces (concatenated JSON objects): per-task durations from attempts.
//!
//! Every reader error is [`Error::BadInput`] naming the file, the 1-based line and the field, so a corrupt
//! or truncated trace can be fixed by hand.

pub mod rumen;
pub mod swim;

use std::path::Path;

use crate::sim::Workload;
use circumflex_core::error::{Error, Result};

/// Reads a whole file, mapping IO failures to [`Error::Io`] with the path.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::BadInput {
            file: path.display().to_string(),
            line: 0,
            field: "file".into(),
            message: "gzip-compressed; decompress it first (gunzip -k)".into(),
        });
    }
    String::from_utf8(bytes).map_err(|e| Error::BadInput {
        file: path.display().to_string(),
        line: 0,
        field: "file".into(),
        message: format!("not UTF-8 text (bad byte at offset {})", e.utf8_error().valid_up_to()),
    })
}

/// Loads `kind:PATH` where kind is `swim` or `rumen` (SWIM with `model`).
pub fn load(spec: &str, model: &swim::SwimModel) -> Result<Workload> {
    match spec.split_once(':') {
        Some(("swim", path)) => swim::read(Path::new(path), model),
        Some(("rumen", path)) => rumen::read(Path::new(path)),
        _ => Err(Error::config("workload", spec, "swim:PATH or rumen:PATH")),
    }
}
