//! Every JNI export of the library: the native half of `io.circumflex.nativeapi.NativeEngine`.
//!
//! This is the ONE module that owns JNI exports. Every export has the same shape: its whole body
//! is `env.with_env(|env| ...)` (which runs the closure under `catch_unwind`) resolved with
//! [`ThrowCircumflex`], the one error policy. It maps [`FfiError`]s to named Java exceptions
//! through [`ErrorKind::java_class`], turns panics into `io.circumflex.CircumflexInternalException`
//! carrying the panic message, location and native backtrace, never overwrites a Java exception
//! that is already pending, and returns a dummy default (`0`, `false`, `null`) that the JVM
//! ignores because an exception is pending.
//!
//! Contract for all exports (the Java declarations repeat it):
//! - **Handles** are opaque `long`s from `nativeCreate`; see `ffi` for how a stale or made-up
//!   handle is detected. `nativeClose` frees a handle exactly once.
//! - **Times** are milliseconds on the host's clock (`now`), **durations** milliseconds.
//! - **Ids** (`job`, `node`) are the `int`s returned by `nativeSubmitJob` / `nativeAddNode`.
//!   **Phase** codes: 0 map, 1 reduce. **Locality** codes: 0 node-local, 1 rack-local, 2 any.
//! - **Threads**: any JVM thread may call any export; calls on one handle are serialized by the
//!   engine's mutex. The library never starts threads and never calls back into Java, so no
//!   attachment or global references are needed.
//! - **Hot path**: `nativeNodeUpdate` crosses only primitives and a caller-owned `int[]`; it does
//!   not allocate after the first call on a handle (the packing buffer is kept on the handle).
//!   JSON is used only for rare, rich calls (configuration, job submission, plan and status).
//!   A heartbeat's task starts and ends cross in one call each (`nativeTasksStarted`,
//!   `nativeTasksFinished`, caller-owned `int[]`/`long[]` read into buffers kept on the handle), a
//!   submission with its initial state in one (`nativeSubmitJobWith`), and MRv1's plan order as
//!   job ids into a caller-owned `int[]` (`nativePlanOrder`); see `ffi::batch`. Preemption, from the
//!   host's timer: the engine's decisions into a caller-owned `int[]` (`nativePreemptions`) and the
//!   kills carried out from a caller-owned `long[]` (`nativeTasksPreempted`), one crossing each.
//! - **Logging**: Rust log records go into the bounded buffer of [`super::logbuf`] (see there
//!   why it is polled rather than a callback); `nativeInit` sets the level and the shims drain it
//!   with `nativeDrainLogs` into log4j. Panic reports still go to stderr as well.

use std::sync::PoisonError;

use ::jni::errors::ErrorPolicy;
use ::jni::objects::{JClass, JIntArray, JLongArray, JPrimitiveArray, JString, TypeArray};
use ::jni::strings::JNIString;
use ::jni::sys::{jboolean, jint, jlong};
use ::jni::{Env, EnvUnowned};

use super::{
    close_handle, create_handle, install_panic_hook, ops, panic_message, with_handle, FfiError, CHOICE_STRIDE,
};

/// The error policy of every export: named Java exception for errors, internal exception for
/// panics, pending exceptions left untouched, default value returned.
pub struct ThrowCircumflex;

impl<T: Default> ErrorPolicy<T, FfiError> for ThrowCircumflex {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: FfiError,
    ) -> ::jni::errors::Result<T> {
        throw(env, &err);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> ::jni::errors::Result<T> {
        throw(env, &FfiError::Panic(panic_message(payload.as_ref())));
        Ok(T::default())
    }
}

/// Throws the Java exception for `err`, unless one is already pending (it is the root cause).
fn throw(env: &mut Env<'_>, err: &FfiError) {
    if env.exception_check() {
        return;
    }
    let class = JNIString::from(err.kind().java_class());
    let message = JNIString::from(err.to_string());
    // throw_new reports Err(JavaException) after a successful throw; only a missing class
    // (shim jar and library out of step) leaves no exception, and then find_class has already
    // thrown NoClassDefFoundError.
    if env.throw_new(&class, &message).is_err() && !env.exception_check() {
        log::error!("could not throw {} for: {err}", err.kind().java_class());
    }
}

/// Reads a non-null Java string argument.
fn string_arg(env: &Env<'_>, name: &str, s: &JString<'_>) -> Result<String, FfiError> {
    if s.is_null() {
        return Err(FfiError::Argument(format!("{name} is null")));
    }
    Ok(s.try_to_string(env)?)
}

/// `static native String nativeInit(String logLevel)`: installs the panic hook and the log buffer
/// (`logLevel` in `env_logger` syntax, e.g. `info` or `circumflex=debug`; empty = `warn`; a bad
/// one throws `CircumflexConfigException`) and returns the library version. Call before
/// `nativeCreate`; a later call only changes the log level.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeInit<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    log_level: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, FfiError> {
        let level = if log_level.is_null() { String::new() } else { log_level.try_to_string(env)? };
        Ok(env.new_string(super::init(&level)?)?)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native long nativeCreate(String configJson)`: builds an engine from a JSON object of
/// every `circumflex.*` key (string values). Returns the handle (never 0); the caller owns it
/// and must pass it to `nativeClose` once. Throws `CircumflexConfigException` naming the key,
/// the value and what is allowed.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeCreate<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    config_json: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, FfiError> {
        install_panic_hook();
        let json = string_arg(env, "configJson", &config_json)?;
        let config = super::parse_string_map(&json, super::JSON_CONFIG)?;
        Ok(create_handle(&config)? as jlong)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeClose(long handle)`: frees the engine. A second close of the same
/// handle throws `CircumflexUnknownIdException` (NativeEngine's owner flag prevents it).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeClose<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), FfiError> { close_handle(handle) }).resolve::<ThrowCircumflex>()
}

/// `static native int nativeAddNode(long handle, String name, String rack, int mapSlots,
/// int reduceSlots)`: registers a node and returns its id. Shared pools (YARN) pass all slots as
/// `mapSlots` and 0.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeAddNode<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    name: JString<'local>,
    rack: JString<'local>,
    map_slots: jint,
    reduce_slots: jint,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        let name = string_arg(env, "name", &name)?;
        let rack = string_arg(env, "rack", &rack)?;
        with_handle(handle, |h| ops::add_node(h, &name, &rack, map_slots, reduce_slots))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeRemoveNode(long handle, int node, long now)`: marks a node lost.
/// Report its running tasks with `nativeTaskFinished(success = false)`.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeRemoveNode<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    node: jint,
    now: jlong,
) {
    env.with_env(|_env| -> Result<(), FfiError> { with_handle(handle, |h| ops::remove_node(h, node, now)) })
        .resolve::<ThrowCircumflex>()
}

/// `static native void nativeSetNodeAccelerated(long handle, int node, boolean accelerated)`: puts a
/// node in or out of the accelerated pool (the YARN shim's node-label match).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSetNodeAccelerated<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    node: jint,
    accelerated: jboolean,
) {
    env.with_env(|_env| -> Result<(), FfiError> {
        with_handle(handle, |h| ops::set_node_accelerated(h, node, accelerated))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeSetNodeCapacity(long handle, int node, int mapSlots, int reduceSlots)`.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSetNodeCapacity<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    node: jint,
    map_slots: jint,
    reduce_slots: jint,
) {
    env.with_env(|_env| -> Result<(), FfiError> {
        with_handle(handle, |h| ops::set_node_capacity(h, node, map_slots, reduce_slots))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeSubmitJob(long handle, String jobConfJson, long now)`: submits a job
/// from a JSON object of its configuration keys (strings; see `config::job_spec_from_conf`) at
/// `now`. Returns the job id. Throws `CircumflexInvalidJobException` naming a malformed key, or
/// `CircumflexRejectedException` carrying the policy's reason.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSubmitJob<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job_conf_json: JString<'local>,
    now: jlong,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        let json = string_arg(env, "jobConfJson", &job_conf_json)?;
        with_handle(handle, |h| ops::submit_job(h, &json, now))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeSetPending(long handle, int job, int phase, int pending)`: the
/// number of tasks of the phase waiting for a slot (YARN: outstanding container asks).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSetPending<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    phase: jint,
    pending: jint,
) {
    env.with_env(|_env| -> Result<(), FfiError> { with_handle(handle, |h| ops::set_pending(h, job, phase, pending)) })
        .resolve::<ThrowCircumflex>()
}

/// `static native void nativeSetReducesReady(long handle, int job, boolean ready)`: the host's
/// word on whether the job's reduces may run (overrides the slow-start estimate).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSetReducesReady<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    ready: jboolean,
) {
    env.with_env(|_env| -> Result<(), FfiError> { with_handle(handle, |h| ops::set_reduces_ready(h, job, ready)) })
        .resolve::<ThrowCircumflex>()
}

/// `static native void nativeTaskStarted(long handle, int job, int phase, int node, int locality,
/// long now)`: a task (container) was launched from a choice.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTaskStarted<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    phase: jint,
    node: jint,
    locality: jint,
    now: jlong,
) {
    env.with_env(|_env| -> Result<(), FfiError> {
        with_handle(handle, |h| ops::task_started(h, job, phase, node, locality, now))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeTaskFinished(long handle, int job, int phase, int node,
/// long durationMs, boolean success, long now)`: a task ended; a failed one goes back to pending.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTaskFinished<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    phase: jint,
    node: jint,
    duration_ms: jlong,
    success: jboolean,
    now: jlong,
) {
    env.with_env(|_env| -> Result<(), FfiError> {
        with_handle(handle, |h| ops::task_finished(h, job, phase, node, duration_ms, success, now))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeFinishJob(long handle, int job, long now)`: the job left (finished,
/// killed or failed). Idempotent for finished jobs.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeFinishJob<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    now: jlong,
) {
    env.with_env(|_env| -> Result<(), FfiError> { with_handle(handle, |h| ops::finish_job(h, job, now)) })
        .resolve::<ThrowCircumflex>()
}

/// `static native boolean nativeTick(long handle, long now)`: re-plans if an epoch passed or state
/// changed; returns whether it planned. Call from a timer, never from a heartbeat.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTick<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    now: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<jboolean, FfiError> { with_handle(handle, |h| ops::tick(h, now)) })
        .resolve::<ThrowCircumflex>()
}

/// `static native int nativeNodeUpdate(long handle, int node, int freeMap, int freeReduce,
/// long now, int[] out)`: answers a heartbeat. Writes choices into the caller-owned `out`, 4 ints
/// each (job, phase, count, locality), in the order the host should try them, and returns the
/// number of choices written (as many whole choices as fit). Shared pools pass all free slots as
/// `freeMap`. Never re-plans.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeNodeUpdate<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    node: jint,
    free_map: jint,
    free_reduce: jint,
    now: jlong,
    out: JIntArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        if out.is_null() {
            return Err(FfiError::Argument("out is null".to_string()));
        }
        let capacity = out.len(env)?;
        if capacity < CHOICE_STRIDE {
            return Err(FfiError::Argument(format!("out has length {capacity}: expected at least {CHOICE_STRIDE}")));
        }
        with_handle(handle, |h| {
            let mut buffer = h.scratch.lock().unwrap_or_else(PoisonError::into_inner);
            if buffer.len() < capacity {
                buffer.resize(capacity, 0);
            }
            let written = ops::node_update(h, node, free_map, free_reduce, now, &mut buffer[..capacity])?;
            out.set_region(env, 0, &buffer[..written * CHOICE_STRIDE])?;
            super::to_jint("choices written", written)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native String nativePlanJson(long handle)`: the current plan as JSON (for UIs and
/// tests; not for the hot path).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativePlanJson<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, FfiError> {
        let json = with_handle(handle, ops::plan_json)?;
        Ok(env.new_string(json)?)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native String nativeStatusJson(long handle, long now)`: policy, counters, nodes and
/// every job's state as JSON (for UIs and tests).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeStatusJson<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    now: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, FfiError> {
        let json = with_handle(handle, |h| ops::status_json(h, now))?;
        Ok(env.new_string(json)?)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeReconfigure(long handle, String configJson, long now)`: replaces the
/// policy and its parameters (operator refresh) from a JSON object of every `circumflex.*` key and
/// re-plans. Throws `CircumflexConfigException` naming the bad key, value and what is allowed; the
/// running policy then stays.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeReconfigure<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    config_json: JString<'local>,
    now: jlong,
) {
    env.with_env(|env| -> Result<(), FfiError> {
        let json = string_arg(env, "configJson", &config_json)?;
        with_handle(handle, |h| ops::reconfigure(h, &json, now))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeCounters(long handle, long[] out)`: writes the engine's counters (plans,
/// last and total plan nanoseconds, node updates, admitted, rejected, finished, deadline misses,
/// active jobs, preemptions decided, preempted tasks, preempted work ms, preemptions in flight;
/// `ffi::COUNTER_NAMES`) into the caller-owned `out` and returns how many it wrote.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeCounters<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JLongArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        if out.is_null() {
            return Err(FfiError::Argument("out is null".to_string()));
        }
        let capacity = out.len(env)?;
        let mut values = [0i64; super::COUNTER_NAMES.len()];
        let written = with_handle(handle, |h| ops::counters(h, &mut values))?.min(capacity);
        out.set_region(env, 0, &values[..written])?;
        super::to_jint("counters written", written)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native String nativeDrainLogs()`: takes every buffered native log record, encoded as
/// `LEVEL US target US message RS` per record (US = U+001F, RS = U+001E; see `ffi::logbuf`).
/// Empty when there is nothing to report.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeDrainLogs<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, FfiError> { Ok(env.new_string(super::drain_logs())?) })
        .resolve::<ThrowCircumflex>()
}

/// `static native String nativeStatusHtml(long handle, long now)`: the status as an HTML fragment
/// for the daemons' scheduler pages (`ffi::page`; text from jobs is escaped).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeStatusHtml<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    now: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, FfiError> {
        let html = with_handle(handle, |h| ops::status_html(h, now))?;
        Ok(env.new_string(html)?)
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeEmpty(long handle, int node, int freeMap, int freeReduce, long now,
/// int[] out)` of `io.circumflex.bench.JniBench`: does nothing and returns 0. The JNI
/// micro-benchmark's baseline (`make jni-bench`): the same signature as `nativeNodeUpdate`, so the
/// difference between the two is the engine's work plus the panic guard, not the JNI transition.
/// Only with the `bench-export` feature: the library the jars ship exports no benchmark symbol.
#[cfg(feature = "bench-export")]
#[no_mangle]
pub extern "system" fn Java_io_circumflex_bench_JniBench_nativeEmpty<'local>(
    _env: EnvUnowned<'local>,
    _class: JClass<'local>,
    _handle: jlong,
    _node: jint,
    _free_map: jint,
    _free_reduce: jint,
    _now: jlong,
    _out: JIntArray<'local>,
) -> jint {
    0
}

// ----- batches and primitive-only answers (`ffi::batch`) ---------------------------------------

/// Reads the first `count * stride` values of a host array into `buffer` (grown once, then reused:
/// no allocation per call) and returns them. A null array is an argument error; a short one yields
/// fewer values, which the `ffi::batch` operation then refuses by name.
fn read_records<'b, T: TypeArray + Copy + Default>(
    env: &Env<'_>,
    array: &JPrimitiveArray<'_, T>,
    count: jint,
    stride: usize,
    buffer: &'b mut Vec<T>,
) -> Result<&'b [T], FfiError> {
    if array.is_null() {
        return Err(FfiError::Argument("records is null".to_string()));
    }
    let len = array.len(env)?;
    let wanted = usize::try_from(count).unwrap_or(0).saturating_mul(stride).min(len);
    if buffer.len() < wanted {
        buffer.resize(wanted, T::default());
    }
    array.get_region(env, 0, &mut buffer[..wanted])?;
    Ok(&buffer[..wanted])
}

/// `static native int nativeTasksStarted(long handle, int[] records, int count, long now)`: the
/// first `count` records of the caller-owned `records` (4 ints each: job, phase, node, locality)
/// started at `now`, in one crossing per heartbeat. Returns how many were applied; records naming a
/// job or node the engine no longer knows are skipped. A malformed record is an
/// `IllegalArgumentException` naming it, and then nothing is applied.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTasksStarted<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    records: JIntArray<'local>,
    count: jint,
    now: jlong,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        with_handle(handle, |h| {
            let mut buffer = h.scratch.lock().unwrap_or_else(PoisonError::into_inner);
            let packed = read_records(env, &records, count, super::batch::STARTED_STRIDE, &mut buffer)?;
            Ok(super::batch::tasks_started(h, packed, count, now)? as jint)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeTasksFinished(long handle, long[] records, int count)`: the first
/// `count` records of the caller-owned `records` (6 longs each: job, phase, node, duration ms,
/// success 0 or 1, finish time ms) ended, in one crossing per heartbeat. Returns how many were
/// applied; records naming a job or node the engine no longer knows are skipped. A malformed record
/// is an `IllegalArgumentException` naming it, and then nothing is applied.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTasksFinished<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    records: JLongArray<'local>,
    count: jint,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        with_handle(handle, |h| {
            let mut buffer = h.scratch_long.lock().unwrap_or_else(PoisonError::into_inner);
            let packed = read_records(env, &records, count, super::batch::FINISHED_STRIDE, &mut buffer)?;
            Ok(super::batch::tasks_finished(h, packed, count)? as jint)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native void nativeSetPendingPhases(long handle, int job, int pendingMap, int
/// pendingReduce)`: both phases' pending task counts in one crossing (YARN's `allocate`).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSetPendingPhases<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job: jint,
    pending_map: jint,
    pending_reduce: jint,
) {
    env.with_env(|_env| -> Result<(), FfiError> {
        with_handle(handle, |h| super::batch::set_pending_phases(h, job, pending_map, pending_reduce))
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeSubmitJobWith(long handle, String jobConfJson, long now, boolean
/// reducesReady, int pendingMap, int pendingReduce)`: `nativeSubmitJob` plus the job's reduce
/// readiness and pending counts, in one crossing. Returns the job id; throws as `nativeSubmitJob`.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeSubmitJobWith<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    job_conf_json: JString<'local>,
    now: jlong,
    reduces_ready: jboolean,
    pending_map: jint,
    pending_reduce: jint,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        let json = string_arg(env, "jobConfJson", &job_conf_json)?;
        with_handle(handle, |h| {
            super::batch::submit_job_with(h, &json, now, reduces_ready, pending_map, pending_reduce)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativePlanOrder(long handle, int[] out)`: writes the current plan's job ids in
/// priority order into the caller-owned `out` (as many as fit) and returns how many the plan has; a
/// caller whose array was too short grows it and calls again. MRv1's `getJobs` reads the order so.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativePlanOrder<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JIntArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> { ids_out(env, handle, &out, super::batch::plan_order) })
        .resolve::<ThrowCircumflex>()
}

/// `static native int nativePreemptions(long handle, long now, int[] out)`: asks the engine for
/// preemption decisions at `now` (from the host's timer, after `nativeTick`; never from a heartbeat)
/// and writes as many whole decisions as fit into the caller-owned `out`, 4 ints each (victim job,
/// phase, count, beneficiary job); returns how many it wrote. Decisions that did not fit are kept and
/// written first by the next call: a caller whose array came back full calls again. The host takes
/// `count` of the victim's youngest running tasks of that phase and, after the grace period, kills
/// those still running and reports them with `nativeTasksPreempted` (`docs/preemption.md`).
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativePreemptions<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    now: jlong,
    out: JIntArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        if out.is_null() {
            return Err(FfiError::Argument("out is null".to_string()));
        }
        let capacity = out.len(env)?;
        if capacity < super::batch::PREEMPTION_STRIDE {
            return Err(FfiError::Argument(format!(
                "out has length {capacity}: expected at least {}",
                super::batch::PREEMPTION_STRIDE
            )));
        }
        with_handle(handle, |h| {
            let mut buffer = h.scratch.lock().unwrap_or_else(PoisonError::into_inner);
            if buffer.len() < capacity {
                buffer.resize(capacity, 0);
            }
            let written = super::batch::preemptions(h, now, &mut buffer[..capacity])?;
            out.set_region(env, 0, &buffer[..written * super::batch::PREEMPTION_STRIDE])?;
            super::to_jint("decisions written", written)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeTasksPreempted(long handle, long[] records, int count)`: the first
/// `count` records of the caller-owned `records` (5 longs each: job, phase, node, ran ms, kill time
/// ms) are tasks the host killed for a preemption, reported instead of their end: each is re-queued
/// (not a failure), its work counted as lost and its slot earmarked for the decision's beneficiary.
/// Returns how many were applied; records naming a job or node the engine no longer knows are
/// skipped. A malformed record is an `IllegalArgumentException` naming it, and then nothing is applied.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeTasksPreempted<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    records: JLongArray<'local>,
    count: jint,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        with_handle(handle, |h| {
            let mut buffer = h.scratch_long.lock().unwrap_or_else(PoisonError::into_inner);
            let packed = read_records(env, &records, count, super::batch::PREEMPTED_STRIDE, &mut buffer)?;
            Ok(super::batch::tasks_preempted(h, packed, count)? as jint)
        })
    })
    .resolve::<ThrowCircumflex>()
}

/// `static native int nativeAmAdmissions(long handle, long now, int[] out)`: which waiting AMs may
/// start at `now` (the AM gate, `circumflex.am.*`): writes their job ids in plan order into the
/// caller-owned `out` (as many as fit) and returns how many there are; a caller whose array was too
/// short grows it and calls again. Once per heartbeat batch while an AM waits; empty while the gate
/// is off. The host places what fits and reports each start with `nativeAmEvents`.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeAmAdmissions<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    now: jlong,
    out: JIntArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        ids_out(env, handle, &out, |h, buffer| super::batch::am_admissions(h, now, buffer))
    })
    .resolve::<ThrowCircumflex>()
}

/// The calls that write engine job ids into a caller-owned `int[]` and return how many there are (a
/// caller whose array was too short grows it and calls again): `fill` writes into the handle's scratch
/// buffer, sized to the array, and the ids that fit are copied out.
fn ids_out(
    env: &mut Env<'_>,
    handle: jlong,
    out: &JIntArray<'_>,
    fill: impl FnOnce(&super::EngineHandle, &mut [i32]) -> Result<usize, FfiError>,
) -> Result<jint, FfiError> {
    if out.is_null() {
        return Err(FfiError::Argument("out is null".to_string()));
    }
    let capacity = out.len(env)?;
    with_handle(handle, |h| {
        let mut buffer = h.scratch.lock().unwrap_or_else(PoisonError::into_inner);
        if buffer.len() < capacity {
            buffer.resize(capacity, 0);
        }
        let total = fill(h, &mut buffer[..capacity])?;
        out.set_region(env, 0, &buffer[..total.min(capacity)])?;
        Ok(i32::try_from(total).unwrap_or(i32::MAX))
    })
}

/// `static native int nativeAmEvents(long handle, long[] records, int count)`: the first `count`
/// records of the caller-owned `records` (4 longs each: kind 0 requested / 1 started / 2 registered
/// / 3 finished, job, AM slots (0: as requested), time ms) are AM events, applied in order. Returns
/// how many were applied; records naming a job the engine no longer knows are skipped. A malformed
/// record is an `IllegalArgumentException` naming it, and then nothing is applied.
#[no_mangle]
pub extern "system" fn Java_io_circumflex_nativeapi_NativeEngine_nativeAmEvents<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    records: JLongArray<'local>,
    count: jint,
) -> jint {
    env.with_env(|env| -> Result<jint, FfiError> {
        with_handle(handle, |h| {
            let mut buffer = h.scratch_long.lock().unwrap_or_else(PoisonError::into_inner);
            let packed = read_records(env, &records, count, super::batch::AM_EVENT_STRIDE, &mut buffer)?;
            Ok(super::batch::am_events(h, packed, count)? as jint)
        })
    })
    .resolve::<ThrowCircumflex>()
}
