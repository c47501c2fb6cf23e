//! The committed C header must match what cbindgen generates from `src/ffi/capi.rs` today.
//! Regenerate it with `CIRCUMFLEX_BLESS=1 cargo test -p circumflex-ffi --test c_header`.

use std::path::PathBuf;

#[test]
fn committed_header_matches_cbindgen_output() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/ffi/capi.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = crate_dir.join("include/circumflex.h");
    if std::env::var_os("CIRCUMFLEX_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/circumflex.h");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "crates/circumflex-ffi/include/circumflex.h is stale (it differs from cbindgen's output for src/ffi/capi.rs).\n\
         Regenerate it with:\n    CIRCUMFLEX_BLESS=1 cargo test -p circumflex-ffi --test c_header\n\
         and commit the result."
    );
}
