//! Compiles `tests/c/smoke.c` against `include/circumflex.h` and the cdylib that cargo built for
//! this test run, runs it, and checks it passed. Skips (with a message) only when gcc is absent.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn lib_name() -> String {
    format!("{}circumflex{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// Newest modification time of any file under `dir`.
fn newest_mtime(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).expect("read src dir").flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest_mtime(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH)
        };
        newest = newest.max(t);
    }
    newest
}

/// A directory holding a cdylib built from the current sources. `cargo test` links integration
/// tests against the rlib and does not refresh the cdylib, so when target/<profile>'s copy is
/// missing or older than the sources, build one in a separate target directory (its own lock, so
/// no deadlock with the cargo that runs this test).
fn fresh_cdylib_dir(crate_dir: &Path) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/c_abi-<hash> -> target/<profile>
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile> directory");
    // The cdylib links the core and the policies, so their sources count too.
    let crates = crate_dir.join("..");
    let sources = ["circumflex-core", "circumflex-policies", "circumflex-ffi"]
        .iter()
        .map(|c| newest_mtime(&crates.join(c).join("src")))
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let fresh = |dir: &Path| {
        std::fs::metadata(dir.join(lib_name())).and_then(|m| m.modified()).is_ok_and(|built| built >= sources)
    };
    if fresh(profile_dir) {
        return profile_dir.to_path_buf();
    }
    let target = profile_dir.parent().expect("target directory").join("c-abi");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args(["build", "-p", "circumflex-ffi", "--lib", "--target-dir"])
        .arg(&target)
        .status()
        .expect("run cargo build for the cdylib");
    assert!(status.success(), "cargo build of the cdylib failed");
    target.join("debug")
}

#[test]
fn c_program_runs_against_header_and_cdylib() {
    if Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: gcc is not installed, so the C ABI smoke test cannot be compiled");
        return;
    }
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib_dir = fresh_cdylib_dir(&crate_dir);
    let lib = lib_dir.join(lib_name());
    assert!(lib.is_file(), "cargo did not build the cdylib at {}", lib.display());
    let out_dir = std::env::temp_dir().join(format!("circumflex-c-abi-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("temp dir");
    let exe = out_dir.join("smoke");
    let compile = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(crate_dir.join("tests/c/smoke.c"))
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-lcircumflex")
        .output()
        .expect("run gcc");
    assert!(compile.status.success(), "gcc failed:\n{}", String::from_utf8_lossy(&compile.stderr));
    // cargo test puts target/<profile> on LD_LIBRARY_PATH, which would win over the rpath.
    let run = Command::new(&exe).env("LD_LIBRARY_PATH", &lib_dir).output().expect("run the C smoke test");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "C smoke test failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out_dir);
}
