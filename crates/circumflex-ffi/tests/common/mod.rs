//! What the tests that load the native library share: its file name and a directory holding a copy
//! built from the current sources.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The native library's file name on this platform (`libcircumflex.so` on Linux).
pub fn lib_name() -> String {
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
pub fn fresh_cdylib_dir(crate_dir: &Path) -> PathBuf {
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
