//! Compiles `tests/c/smoke.c` against `include/circumflex.h` and the cdylib that cargo built for
//! this test run, runs it, and checks it passed. Skips (with a message) only when gcc is absent.

mod common;

use std::process::Command;

use common::{fresh_cdylib_dir, lib_name};

#[test]
fn c_program_runs_against_header_and_cdylib() {
    if Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: gcc is not installed, so the C ABI smoke test cannot be compiled");
        return;
    }
    let crate_dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
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
