//! The Circumflex native library (`libcircumflex.so`, loaded by the Java shims; C through
//! `include/circumflex.h`). It is the only crate that is a `cdylib`, depends on `jni` or exports C
//! symbols, and it links only the core and the policies: no simulator, study, report, plot or fuzzing
//! code (checked by `tests/native_symbols.rs`, `make native-check`).
//!
//! Code map: everything is in [`ffi`] (kept as one module so the native log targets the shims name
//! their loggers after, `circumflex::ffi::…`, stay what they were): handles, the error table, the panic
//! guard and the operations both boundaries share (`ffi/mod.rs`), the JNI exports (`ffi/jni.rs`),
//! the C ABI (`ffi/capi.rs`), the scheduler page (`ffi/page.rs`), the native log buffer
//! (`ffi/logbuf.rs`).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod ffi;
