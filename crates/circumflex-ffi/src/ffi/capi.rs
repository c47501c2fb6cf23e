//! The C ABI over the engine: the same operations as the JNI exports (both call `ffi::ops`), for C
//! hosts and C-level tests. `include/circumflex.h` is generated from this file by cbindgen and
//! checked by `tests/c_header.rs`.
//!
//! Conventions:
//! - An engine is an opaque `CircumflexEngine *` from [`circumflex_engine_new`], freed once with
//!   [`circumflex_engine_free`]. A null, unknown or freed pointer is reported as
//!   `CIRCUMFLEX_UNKNOWN_ID`, never dereferenced.
//! - Every call except `_new` and the frees returns a [`CircumflexStatus`] (0 = OK). On failure it
//!   writes a NUL-terminated message into `err_buf` (at most `err_len` bytes, truncated; pass
//!   `NULL`/0 to skip). Values are returned through out-pointers.
//! - Strings in are NUL-terminated UTF-8. Strings out (`_plan_json`, `_status_json`,
//!   `_status_html`, `_drain_logs`) are owned by the caller and freed with [`circumflex_string_free`].
//!   A NUL inside such a text becomes U+FFFD, so the C string is never cut short (job names with
//!   control characters are refused at submission; this is the last line of defence).
//! - Process-wide calls: [`circumflex_init`] (panic hook and log level; optional, as the JNI
//!   `nativeInit`), [`circumflex_version`], [`circumflex_drain_logs`], [`circumflex_counter_name`].
//! - Panics never cross the boundary: they become `CIRCUMFLEX_INTERNAL` with the panic message.
//! - Codes: phase 0 = map, 1 = reduce; locality 0 = node, 1 = rack, 2 = any; times in ms.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{
    close_handle, create_handle, ops, panic_message, with_handle, EngineHandle, FfiError, CHOICE_STRIDE, COUNTER_NAMES,
};

/// Opaque engine type for C.
pub struct CircumflexEngine {
    _private: [u8; 0],
}

/// Status codes returned by every call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircumflexStatus {
    /// Success.
    CircumflexOk = 0,
    /// Bad scheduler configuration (the message names key, value and what is allowed).
    CircumflexConfig = 1,
    /// Bad job configuration.
    CircumflexInvalidJob = 2,
    /// Unknown job, node or engine.
    CircumflexUnknownId = 3,
    /// The job was refused by admission control (the message says why).
    CircumflexRejected = 4,
    /// A bad argument (null pointer, negative count, unknown phase code).
    CircumflexArgument = 5,
    /// IO or input errors.
    CircumflexIo = 6,
    /// A panic or an engine poisoned by one.
    CircumflexInternal = 7,
}

impl CircumflexStatus {
    fn from_code(code: i32) -> CircumflexStatus {
        match code {
            1 => CircumflexStatus::CircumflexConfig,
            2 => CircumflexStatus::CircumflexInvalidJob,
            3 => CircumflexStatus::CircumflexUnknownId,
            4 => CircumflexStatus::CircumflexRejected,
            5 => CircumflexStatus::CircumflexArgument,
            6 => CircumflexStatus::CircumflexIo,
            _ => CircumflexStatus::CircumflexInternal,
        }
    }
}

/// Copies `message` into the caller's buffer, truncated and NUL-terminated.
fn write_message(message: &str, err_buf: *mut c_char, err_len: usize) {
    if err_buf.is_null() || err_len == 0 {
        return;
    }
    let bytes = message.as_bytes();
    let n = bytes.len().min(err_len - 1);
    // SAFETY: the caller promises `err_buf` points to `err_len` writable bytes; we write n + 1 <= err_len.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), err_buf.cast::<u8>(), n);
        *err_buf.add(n) = 0;
    }
}

/// Runs `f` with panics caught; maps the outcome to a status and message.
fn guard(err_buf: *mut c_char, err_len: usize, f: impl FnOnce() -> Result<(), FfiError>) -> CircumflexStatus {
    let outcome = catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(FfiError::Panic(panic_message(payload.as_ref()))));
    match outcome {
        Ok(()) => CircumflexStatus::CircumflexOk,
        Err(err) => {
            write_message(&err.to_string(), err_buf, err_len);
            CircumflexStatus::from_code(err.kind().c_code())
        }
    }
}

fn c_str<'a>(name: &str, p: *const c_char) -> Result<&'a str, FfiError> {
    if p.is_null() {
        return Err(FfiError::Argument(format!("{name} is NULL")));
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string alive for the call.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|e| FfiError::Argument(format!("{name} is not UTF-8: {e}")))
}

fn on_engine<T>(
    engine: *mut CircumflexEngine,
    f: impl FnOnce(&EngineHandle) -> Result<T, FfiError>,
) -> Result<T, FfiError> {
    with_handle(engine as usize as i64, f)
}

fn put<T>(out: *mut T, value: T) -> Result<(), FfiError> {
    if out.is_null() {
        return Err(FfiError::Argument("out pointer is NULL".to_string()));
    }
    // SAFETY: non-null; the caller promises it points to a writable T.
    unsafe { out.write(value) };
    Ok(())
}

/// Creates an engine from a JSON object of `circumflex.*` keys (string values), e.g.
/// `{"circumflex.policy":"fair"}`. Returns NULL on failure, with the message in `err_buf`.
/// Free the engine with [`circumflex_engine_free`].
///
/// # Safety
/// `config_json` must be NUL-terminated; `err_buf` must have `err_len` writable bytes or be NULL.
#[no_mangle]
pub unsafe extern "C" fn circumflex_engine_new(
    config_json: *const c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> *mut CircumflexEngine {
    super::install_panic_hook();
    let mut raw = 0usize;
    let status = guard(err_buf, err_len, || {
        let json = c_str("config_json", config_json)?;
        let config: BTreeMap<String, String> = super::parse_string_map(json, super::JSON_CONFIG)?;
        raw = create_handle(&config)?;
        Ok(())
    });
    if status == CircumflexStatus::CircumflexOk {
        raw as *mut CircumflexEngine
    } else {
        std::ptr::null_mut()
    }
}

/// Frees an engine. Freeing NULL is a no-op; freeing twice returns `CIRCUMFLEX_UNKNOWN_ID`.
///
/// # Safety
/// `engine` must come from [`circumflex_engine_new`] (or be NULL).
#[no_mangle]
pub unsafe extern "C" fn circumflex_engine_free(engine: *mut CircumflexEngine) -> CircumflexStatus {
    if engine.is_null() {
        return CircumflexStatus::CircumflexOk;
    }
    guard(std::ptr::null_mut(), 0, || close_handle(engine as usize as i64))
}

/// Registers a node; writes its id to `out_node`. Shared pools pass all slots as `map_slots`.
///
/// # Safety
/// Strings NUL-terminated; `out_node` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_add_node(
    engine: *mut CircumflexEngine,
    name: *const c_char,
    rack: *const c_char,
    map_slots: i32,
    reduce_slots: i32,
    out_node: *mut i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let (name, rack) = (c_str("name", name)?, c_str("rack", rack)?);
        put(out_node, on_engine(engine, |h| ops::add_node(h, name, rack, map_slots, reduce_slots))?)
    })
}

/// Marks a node lost; report its running tasks with `success` = false.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_remove_node(
    engine: *mut CircumflexEngine,
    node: i32,
    now: i64,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::remove_node(h, node, now)))
}

/// Changes a node's slots.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_set_node_capacity(
    engine: *mut CircumflexEngine,
    node: i32,
    map_slots: i32,
    reduce_slots: i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::set_node_capacity(h, node, map_slots, reduce_slots)))
}

/// Tells the engine whether a job's reduces may run now.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_set_reduces_ready(
    engine: *mut CircumflexEngine,
    job: i32,
    ready: bool,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::set_reduces_ready(h, job, ready)))
}

/// Submits a job from a JSON object of its configuration keys at `now`; writes its id to
/// `out_job`. A refusal is `CIRCUMFLEX_REJECTED` with the reason in `err_buf`.
///
/// # Safety
/// As for [`circumflex_add_node`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_submit_job(
    engine: *mut CircumflexEngine,
    job_conf_json: *const c_char,
    now: i64,
    out_job: *mut i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let json = c_str("job_conf_json", job_conf_json)?;
        put(out_job, on_engine(engine, |h| ops::submit_job(h, json, now))?)
    })
}

/// Sets the pending task count of a job's phase.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_set_pending(
    engine: *mut CircumflexEngine,
    job: i32,
    phase: i32,
    pending: i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::set_pending(h, job, phase, pending)))
}

/// Reports a task launch.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_task_started(
    engine: *mut CircumflexEngine,
    job: i32,
    phase: i32,
    node: i32,
    locality: i32,
    now: i64,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::task_started(h, job, phase, node, locality, now)))
}

/// Reports a task end (`success` = 0 puts the task back to pending).
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_task_finished(
    engine: *mut CircumflexEngine,
    job: i32,
    phase: i32,
    node: i32,
    duration_ms: i64,
    success: bool,
    now: i64,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        on_engine(engine, |h| ops::task_finished(h, job, phase, node, duration_ms, success, now))
    })
}

/// Ends a job (finished, killed or failed).
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_finish_job(
    engine: *mut CircumflexEngine,
    job: i32,
    now: i64,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::finish_job(h, job, now)))
}

/// Re-plans if due; writes whether it planned to `out_planned`.
///
/// # Safety
/// `out_planned` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_tick(
    engine: *mut CircumflexEngine,
    now: i64,
    out_planned: *mut bool,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || put(out_planned, on_engine(engine, |h| ops::tick(h, now))?))
}

/// Answers a heartbeat: writes up to `out_len / 4` choices into `out` (job, phase, count,
/// locality per choice) and their number into `out_written`.
///
/// # Safety
/// `out` must have `out_len` writable `int32_t`s; `out_written` writable.
#[no_mangle]
pub unsafe extern "C" fn circumflex_node_update(
    engine: *mut CircumflexEngine,
    node: i32,
    free_map: i32,
    free_reduce: i32,
    now: i64,
    out: *mut i32,
    out_len: usize,
    out_written: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        if out.is_null() || out_len < CHOICE_STRIDE {
            return Err(FfiError::Argument(format!(
                "out must hold at least {CHOICE_STRIDE} ints (out_len = {out_len})"
            )));
        }
        // SAFETY: non-null, and the caller promises out_len writable ints.
        let slice = unsafe { std::slice::from_raw_parts_mut(out, out_len) };
        put(out_written, on_engine(engine, |h| ops::node_update(h, node, free_map, free_reduce, now, slice))?)
    })
}

/// Hands `text` to the caller as an owned C string (freed with [`circumflex_string_free`]).
fn string_out(out_json: *mut *mut c_char, text: String) -> Result<(), FfiError> {
    if out_json.is_null() {
        return Err(FfiError::Argument("out pointer is NULL".to_string()));
    }
    let text = if text.contains('\0') { text.replace('\0', "\u{fffd}") } else { text };
    let c = CString::new(text).map_err(|e| FfiError::Internal(format!("text contains NUL: {e}")))?;
    put(out_json, c.into_raw())
}

/// Writes the current plan as JSON to `*out_json` (free with [`circumflex_string_free`]).
///
/// # Safety
/// `out_json` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_plan_json(
    engine: *mut CircumflexEngine,
    out_json: *mut *mut c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || string_out(out_json, on_engine(engine, ops::plan_json)?))
}

/// Writes the engine status as JSON to `*out_json` (free with [`circumflex_string_free`]).
///
/// # Safety
/// `out_json` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_status_json(
    engine: *mut CircumflexEngine,
    now: i64,
    out_json: *mut *mut c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || string_out(out_json, on_engine(engine, |h| ops::status_json(h, now))?))
}

/// Frees a string returned by this library. NULL is a no-op.
///
/// # Safety
/// `s` must come from `_plan_json`, `_status_json`, `_status_html` or `_drain_logs` and not be
/// freed twice.
#[no_mangle]
pub unsafe extern "C" fn circumflex_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: `s` came from CString::into_raw in string_out.
        drop(unsafe { CString::from_raw(s) });
    }
}

// ----- observability, refresh and pools: the same ops as the JNI exports ----------------------

/// Number of values [`circumflex_counters`] writes (`ffi::COUNTER_NAMES`).
pub const CIRCUMFLEX_COUNTER_COUNT: usize = 13;

const _: () = assert!(CIRCUMFLEX_COUNTER_COUNT == COUNTER_NAMES.len());

/// Installs the panic hook and the native log buffer with `log_level` (`env_logger` directives such
/// as `"info"` or `"info,circumflex::ffi=debug"`; NULL or empty = `"warn"`). Optional: without it
/// no native log record is kept. A later call changes the level. A level that does not parse is
/// `CIRCUMFLEX_CONFIG` naming it, and the previous level stays.
///
/// # Safety
/// `log_level` NUL-terminated or NULL; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_init(
    log_level: *const c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let level = if log_level.is_null() { "" } else { c_str("log_level", log_level)? };
        super::init(level).map(|_| ())
    })
}

/// The library version, a static NUL-terminated string (do not free).
#[no_mangle]
pub extern "C" fn circumflex_version() -> *const c_char {
    static VERSION_C: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    VERSION_C.get_or_init(|| CString::new(super::VERSION).unwrap_or_default()).as_ptr()
}

/// Replaces the engine's policy and parameters (operator refresh) from a JSON object of every
/// `circumflex.*` key, and re-plans at `now`. A configuration that does not parse, names an unknown
/// policy or changes `circumflex.pool.mode` is `CIRCUMFLEX_CONFIG` with the key, value and what is
/// allowed in `err_buf`; the running policy then stays.
///
/// # Safety
/// `config_json` NUL-terminated; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_reconfigure(
    engine: *mut CircumflexEngine,
    config_json: *const c_char,
    now: i64,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let json = c_str("config_json", config_json)?;
        on_engine(engine, |h| ops::reconfigure(h, json, now))
    })
}

/// Writes the engine's counters into `out` (at most `out_len`, in the order of
/// [`circumflex_counter_name`]: plans, last and total plan ns, node updates, admitted, rejected,
/// finished, deadline misses, active jobs) and how many it wrote into `out_written`.
///
/// # Safety
/// `out` must have `out_len` writable `int64_t`s; `out_written` writable.
#[no_mangle]
pub unsafe extern "C" fn circumflex_counters(
    engine: *mut CircumflexEngine,
    out: *mut i64,
    out_len: usize,
    out_written: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        if out.is_null() {
            return Err(FfiError::Argument("out is NULL".to_string()));
        }
        // SAFETY: non-null, and the caller promises out_len writable int64s.
        let slice = unsafe { std::slice::from_raw_parts_mut(out, out_len) };
        put(out_written, on_engine(engine, |h| ops::counters(h, slice))?)
    })
}

/// The name of counter `index` (`"plans"`, ..., `"active_jobs"`), a static NUL-terminated string;
/// NULL when `index >= CIRCUMFLEX_COUNTER_COUNT`.
#[no_mangle]
pub extern "C" fn circumflex_counter_name(index: usize) -> *const c_char {
    static NAMES: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| COUNTER_NAMES.iter().filter_map(|n| CString::new(*n).ok()).collect());
    names.get(index).map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Writes the status as an HTML fragment (the daemons' scheduler page; every job-supplied text
/// escaped) to `*out_html` (free with [`circumflex_string_free`]).
///
/// # Safety
/// `out_html` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_status_html(
    engine: *mut CircumflexEngine,
    now: i64,
    out_html: *mut *mut c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || string_out(out_html, on_engine(engine, |h| ops::status_html(h, now))?))
}

/// Takes every buffered native log record (kept once [`circumflex_init`] ran) into `*out_text`:
/// `LEVEL` 0x1F `target` 0x1F `message` 0x1E per record, oldest first; empty when there is nothing.
/// Free it with [`circumflex_string_free`].
///
/// # Safety
/// `out_text` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_drain_logs(
    out_text: *mut *mut c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || string_out(out_text, super::drain_logs()))
}

/// Puts a node in or out of the accelerated pool (hardware affinity; the YARN shim's node labels).
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_set_node_accelerated(
    engine: *mut CircumflexEngine,
    node: i32,
    accelerated: bool,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || on_engine(engine, |h| ops::set_node_accelerated(h, node, accelerated)))
}

// ----- batches and primitive-only answers (`ffi::batch`) ---------------------------------------

/// A read-only view of `len` host values, or an argument error for a NULL pointer with `len > 0`.
fn in_slice<'a, T>(name: &str, p: *const T, len: usize) -> Result<&'a [T], FfiError> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(FfiError::Argument(format!("{name} is NULL")));
    }
    // SAFETY: non-null, and the caller promises `len` readable values alive for the call.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The caller-owned output array `out` of `len` values (empty when `len` is 0, refused when NULL).
fn out_slice<'a, T>(out: *mut T, len: usize) -> Result<&'a mut [T], FfiError> {
    if len == 0 {
        return Ok(&mut []);
    }
    if out.is_null() {
        return Err(FfiError::Argument("out is NULL".to_string()));
    }
    // SAFETY: non-null, and the caller promises `len` writable values alive for the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(out, len) })
}

/// Reports the first `count` task starts of `records` (4 `int32_t`s each: job, phase, node,
/// locality; `records_len` values in all) at `now`, in one call; writes how many were applied into
/// `out_applied` (records naming a job or node the engine no longer knows are skipped). A malformed
/// record is `CIRCUMFLEX_ARGUMENT` naming it, and nothing is applied.
///
/// # Safety
/// `records` must have `records_len` readable `int32_t`s; `out_applied` writable; `err_buf` as for
/// [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_tasks_started(
    engine: *mut CircumflexEngine,
    records: *const i32,
    records_len: usize,
    count: i32,
    now: i64,
    out_applied: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let packed = in_slice("records", records, records_len)?;
        put(out_applied, on_engine(engine, |h| super::batch::tasks_started(h, packed, count, now))?)
    })
}

/// Reports the first `count` task ends of `records` (6 `int64_t`s each: job, phase, node, duration
/// ms, success 0 or 1, finish time ms; `records_len` values in all) in one call; writes how many were
/// applied into `out_applied`, as [`circumflex_tasks_started`].
///
/// # Safety
/// `records` must have `records_len` readable `int64_t`s; `out_applied` writable; `err_buf` as for
/// [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_tasks_finished(
    engine: *mut CircumflexEngine,
    records: *const i64,
    records_len: usize,
    count: i32,
    out_applied: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let packed = in_slice("records", records, records_len)?;
        put(out_applied, on_engine(engine, |h| super::batch::tasks_finished(h, packed, count))?)
    })
}

/// Sets both phases' pending task counts of a job in one call.
///
/// # Safety
/// `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_set_pending_phases(
    engine: *mut CircumflexEngine,
    job: i32,
    pending_map: i32,
    pending_reduce: i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        on_engine(engine, |h| super::batch::set_pending_phases(h, job, pending_map, pending_reduce))
    })
}

/// Submits a job (as [`circumflex_submit_job`]) with its reduce readiness and pending counts, in one
/// call.
///
/// # Safety
/// `job_conf_json` NUL-terminated; `out_job` writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_submit_job_with(
    engine: *mut CircumflexEngine,
    job_conf_json: *const c_char,
    now: i64,
    reduces_ready: bool,
    pending_map: i32,
    pending_reduce: i32,
    out_job: *mut i32,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let json = c_str("job_conf_json", job_conf_json)?;
        let job = on_engine(engine, |h| {
            super::batch::submit_job_with(h, json, now, reduces_ready, pending_map, pending_reduce)
        })?;
        put(out_job, job)
    })
}

/// Writes the current plan's job ids in priority order into `out` (up to `out_len`) and the plan's
/// length into `out_total`; a caller whose array was too short grows it and calls again.
///
/// # Safety
/// `out` must have `out_len` writable `int32_t`s (may be NULL when `out_len` is 0); `out_total`
/// writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_plan_order(
    engine: *mut CircumflexEngine,
    out: *mut i32,
    out_len: usize,
    out_total: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let slice = out_slice(out, out_len)?;
        put(out_total, on_engine(engine, |h| super::batch::plan_order(h, slice))?)
    })
}

/// Asks the engine for preemption decisions at `now` (from the host's timer, after
/// [`circumflex_tick`]; never from a heartbeat) and writes as many whole decisions as fit into `out`
/// (4 `int32_t`s each: victim job, phase, count, beneficiary job; `out_len` values in all); writes how
/// many it wrote into `out_written`. Decisions that did not fit are kept and written first by the next
/// call: a caller whose array came back full calls again. Report the kills with
/// [`circumflex_tasks_preempted`] (`docs/preemption.md`).
///
/// # Safety
/// `out` must have `out_len` writable `int32_t`s (may be NULL when `out_len` is 0); `out_written`
/// writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_preemptions(
    engine: *mut CircumflexEngine,
    now: i64,
    out: *mut i32,
    out_len: usize,
    out_written: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let slice = out_slice(out, out_len)?;
        put(out_written, on_engine(engine, |h| super::batch::preemptions(h, now, slice))?)
    })
}

/// Reports the first `count` tasks of `records` killed for a preemption (5 `int64_t`s each: job,
/// phase, node, ran ms, kill time ms; `records_len` values in all), instead of their ends; writes how
/// many were applied into `out_applied`, as [`circumflex_tasks_finished`].
///
/// # Safety
/// `records` must have `records_len` readable `int64_t`s; `out_applied` writable; `err_buf` as for
/// [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_tasks_preempted(
    engine: *mut CircumflexEngine,
    records: *const i64,
    records_len: usize,
    count: i32,
    out_applied: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let packed = in_slice("records", records, records_len)?;
        put(out_applied, on_engine(engine, |h| super::batch::tasks_preempted(h, packed, count))?)
    })
}

/// Which waiting AMs may start at `now` (the AM gate, `circumflex.am.*`): writes their job ids in plan
/// order into `out` (up to `out_len`) and how many there are into `out_total`; a caller whose array was
/// too short grows it and calls again. Empty while the gate is off. Report each start with
/// [`circumflex_am_events`].
///
/// # Safety
/// `out` must have `out_len` writable `int32_t`s (may be NULL when `out_len` is 0); `out_total`
/// writable; `err_buf` as for [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_am_admissions(
    engine: *mut CircumflexEngine,
    now: i64,
    out: *mut i32,
    out_len: usize,
    out_total: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let slice = out_slice(out, out_len)?;
        put(out_total, on_engine(engine, |h| super::batch::am_admissions(h, now, slice))?)
    })
}

/// Applies the first `count` AM events of `records` (4 `int64_t`s each: kind 0 requested / 1 started /
/// 2 registered / 3 finished, job, AM slots (0: as requested), time ms; `records_len` values in all);
/// writes how many were applied into `out_applied`, as [`circumflex_tasks_finished`].
///
/// # Safety
/// `records` must have `records_len` readable `int64_t`s; `out_applied` writable; `err_buf` as for
/// [`circumflex_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn circumflex_am_events(
    engine: *mut CircumflexEngine,
    records: *const i64,
    records_len: usize,
    count: i32,
    out_applied: *mut usize,
    err_buf: *mut c_char,
    err_len: usize,
) -> CircumflexStatus {
    guard(err_buf, err_len, || {
        let packed = in_slice("records", records, records_len)?;
        put(out_applied, on_engine(engine, |h| super::batch::am_events(h, packed, count))?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_out_replace_nul_and_refuse_a_null_out_pointer() {
        let mut out: *mut c_char = std::ptr::null_mut();
        string_out(&mut out, "a\0b".to_string()).unwrap();
        // SAFETY: string_out wrote a CString it allocated.
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string();
        // SAFETY: out came from string_out and is freed once.
        unsafe { circumflex_string_free(out) };
        assert_eq!(text, "a\u{fffd}b");
        let err = string_out(std::ptr::null_mut(), "x".to_string()).unwrap_err();
        assert_eq!(err.kind(), super::super::ErrorKind::Argument);
    }
}
