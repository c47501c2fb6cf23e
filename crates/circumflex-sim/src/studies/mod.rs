//! The paper reproductions: one module per paper (or thesis chapter), each a `circumflex reproduce`
//! subcommand that writes a report folder under `results/`. The algorithms they measure live in
//! `circumflex-policies`; what lives here is what only a study needs (fluid and resource-aware
//! simulators, workload generators of the papers, tables, plots and prose).
//!
//! - [`asrpt`]: the efficiency-ratio paper's Section VII (`reproduce asrpt`).
//! - [`rtmr`]: RTMR's Workload I and II (`reproduce rtmr`).
//! - [`adaptive_ch3`]: the Adaptive Scheduler, thesis chapter 3 (`reproduce adaptive-ch3`).
//! - [`ras`]: RAS and Reverse-Adaptive, chapters 4 and 5 (`reproduce ras-ch4`, `reverse-ch5`).
//! - [`circumflex`]: CIRCUMFLEX's fluid simulator and 225-configuration study (`reproduce circumflex`).
//! - [`flowflex`]: FlowFlex's §4 study (`reproduce flowflex`).
//!
//! **Decision: a report's prose lives in `docs/discussion/<study>.md`, not in code.** The prose quotes
//! figures of the committed run, so it is revised with the results, not with the code; [`discussion`]
//! reads it when the report is written and the report includes it verbatim (the committed reports
//! regenerate byte for byte). The path is the source checkout's (`CARGO_MANIFEST_DIR`), so the CLI
//! finds it from any working directory; a missing file is an error naming the path.

use std::path::{Path, PathBuf};

use circumflex_core::error::{Error, Result};

pub mod adaptive_ch3;
pub mod asrpt;
pub mod circumflex;
pub mod flowflex;
pub mod ras;
pub mod rtmr;

/// The source checkout's `docs/discussion/` directory.
pub fn discussion_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/discussion")
}

/// The discussion prose of study `name` (`docs/discussion/<name>.md`), to include in its report.
pub fn discussion(name: &str) -> Result<String> {
    let path = discussion_dir().join(format!("{name}.md"));
    std::fs::read_to_string(&path).map_err(|e| Error::io(&path, &e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_report_finds_its_discussion() {
        for name in ["adaptive-ch3", "adaptive-ch3-experiment3", "circumflex", "flowflex", "ras-ch4", "reverse-ch5"] {
            let text = super::discussion(name).unwrap();
            assert!(text.len() > 500, "{name}: {} bytes", text.len());
        }
        let err = super::discussion("no-such-study").unwrap_err().to_string();
        assert!(err.contains("no-such-study.md"), "{err}");
    }
}
