//! The native library carries only what the daemons call: no simulator, study, plot, report,
//! fuzzing or benchmark code, and no `rand*`, `clap` or `indicatif`. Checked with `nm` on the built
//! `.so` (issue 18). `make native-check` runs this against the release library the jars ship
//! (`CIRCUMFLEX_NATIVE_LIB=target/native/libcircumflex.so`); `make test` runs it against the test
//! profile's library. Skipped, with a message, where `nm` is not installed.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// Demangled-symbol fragments that must not appear: the lab's crate, its dependencies, the lab's
/// module names, and the benchmark-only JNI export (behind the `bench-export` feature).
const FORBIDDEN: &[&str] = &[
    "circumflex_sim::",
    "rand::",
    "rand_core::",
    "rand_pcg::",
    "rand_distr::",
    "clap::",
    "clap_builder::",
    "indicatif::",
    "criterion::",
    "proptest::",
    "::studies::",
    "::study::",
    "::fuzzing::",
    "::plot::",
    "::gridmix::",
    "::simulator::",
    "JniBench",
];

fn nm(args: &[&str], lib: &PathBuf) -> Option<String> {
    let out = Command::new("nm").args(args).arg(lib).output().ok()?;
    assert!(out.status.success(), "nm {args:?} {} failed: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn native_library_holds_no_lab_code() {
    let lib = match std::env::var_os("CIRCUMFLEX_NATIVE_LIB") {
        Some(path) => PathBuf::from(path),
        None => common::fresh_cdylib_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR"))).join(common::lib_name()),
    };
    assert!(lib.is_file(), "no native library at {}", lib.display());
    let Some(all) = nm(&["-C"], &lib) else {
        eprintln!("SKIPPED: nm is not installed, so the native library's symbols cannot be checked");
        return;
    };
    let exported = nm(&["-D", "--defined-only"], &lib).unwrap_or_default();
    let offenders: Vec<&str> =
        all.lines().chain(exported.lines()).filter(|l| FORBIDDEN.iter().any(|f| l.contains(f))).take(20).collect();
    let size = std::fs::metadata(&lib).map(|m| m.len()).unwrap_or(0);
    println!(
        "{}: {size} bytes, {} symbols, {} exported (defined, dynamic)",
        lib.display(),
        all.lines().count(),
        exported.lines().count()
    );
    assert!(offenders.is_empty(), "{} links lab or benchmark code:\n{}", lib.display(), offenders.join("\n"));
    let jni_exports = exported.lines().filter(|l| l.contains(" Java_")).count();
    assert!(jni_exports > 0, "{} exports no JNI method: is this the native library?", lib.display());
}
