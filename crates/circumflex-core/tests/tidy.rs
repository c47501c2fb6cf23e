//! Tidy checks that keep the codebase's conventions true by test rather than by memory
//! (after rust-analyzer's `tidy.rs`): every Rust source file opens with a `//!` module doc, and no
//! test is silently skipped with `#[ignore]` or excused with `#[should_panic]` without a FIXME.
//! It lives in the core's tests but walks every crate of the workspace (`crates/*`).

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn crate_files() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for entry in fs::read_dir(&crates).expect("read crates/").flatten() {
        for sub in ["src", "tests", "benches"] {
            rust_files(&entry.path().join(sub), &mut files);
        }
    }
    assert!(files.len() > 50, "tidy found only {} files under {}: wrong root?", files.len(), crates.display());
    files.sort();
    files
}

#[test]
fn every_source_file_has_a_module_doc() {
    let missing: Vec<_> = crate_files()
        .into_iter()
        .filter(|p| {
            let text = fs::read_to_string(p).unwrap_or_default();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .collect();
    assert!(missing.is_empty(), "files without a leading //! module doc: {missing:#?}");
}

#[test]
fn no_unexplained_ignored_or_should_panic_tests() {
    let mut offenders = Vec::new();
    for p in crate_files() {
        let text = fs::read_to_string(&p).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            if (t.starts_with("#[ignore") || t.starts_with("#[should_panic"))
                && !lines[i.saturating_sub(2)..=i].iter().any(|l| l.contains("FIXME"))
            {
                offenders.push(format!("{}:{}", p.display(), i + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "#[ignore]/#[should_panic] without a FIXME nearby: {offenders:#?}");
}
