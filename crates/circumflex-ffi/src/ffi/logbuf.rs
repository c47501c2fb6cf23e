//! The native log buffer: how Rust `log` records reach the daemon's own logger (log4j).
//!
//! **Decision: a polled buffer, not a JNI callback.** Records go into one bounded, process-wide
//! queue; the Java shim drains it (`nativeDrainLogs`) from its own timer thread and after calls
//! that log (refresh, admission), and hands each record to its logger under
//! `circumflex.native.<target>` at the record's level. Comet calls into Java from native code
//! instead, which needs the `JavaVM` stored at init, thread attachment and global references. Here
//! the library's contract stays "never calls back into Java, never starts threads": a log call
//! inside the engine mutex cannot re-enter the scheduler through a Java appender, and a record
//! logged on a thread the JVM does not know (none today) still arrives. The price is latency (up
//! to one drain interval, 250 ms in the shims) and a bound: when nobody drains, the oldest records
//! are dropped and counted, and the next drain reports the count as a warning of its own.
//!
//! The level filter uses `env_logger`'s directive syntax (`warn`, `info,circumflex::ffi=debug`);
//! records the filter refuses cost one atomic load (`log::max_level`).

use std::collections::VecDeque;
use std::sync::{Mutex, OnceLock, PoisonError, RwLock};

/// Most records kept between drains; older ones are dropped (and counted) first.
pub const CAPACITY: usize = 4096;

/// Separates the fields of one record in [`encode`]'s output.
pub const FIELD_SEPARATOR: char = '\u{1f}';
/// Ends each record in [`encode`]'s output.
pub const RECORD_SEPARATOR: char = '\u{1e}';

/// One buffered record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// `log::Level` as its name: `ERROR`, `WARN`, `INFO`, `DEBUG`, `TRACE`.
    pub level: log::Level,
    /// The record's target (the Rust module path unless set).
    pub target: String,
    /// The formatted message.
    pub message: String,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<LogLine>,
    dropped: u64,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue { lines: VecDeque::new(), dropped: 0 });
static INSTALLED: OnceLock<bool> = OnceLock::new();
/// The level filter; replaced by every [`install`], so a refresh can change the level.
static FILTER: RwLock<Option<env_filter::Filter>> = RwLock::new(None);
static LOGGER: BufferLogger = BufferLogger;

struct BufferLogger;

impl log::Log for BufferLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        FILTER.read().unwrap_or_else(PoisonError::into_inner).as_ref().is_some_and(|f| f.enabled(metadata))
    }

    fn log(&self, record: &log::Record<'_>) {
        let matches = FILTER.read().unwrap_or_else(PoisonError::into_inner).as_ref().is_some_and(|f| f.matches(record));
        if matches {
            push(LogLine {
                level: record.level(),
                target: record.target().to_string(),
                message: record.args().to_string(),
            });
        }
    }

    fn flush(&self) {}
}

fn push(line: LogLine) {
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    if queue.lines.len() >= CAPACITY {
        queue.lines.pop_front();
        queue.dropped += 1;
    }
    queue.lines.push_back(line);
}

/// Installs the buffer as the process's logger with `filter` (directive syntax; empty = `warn`).
/// A later call replaces the filter (the level can change at run time). Returns false when the
/// host had installed another logger first, which then stays. A filter that does not parse is an
/// error naming it, and the previous filter stays.
pub fn install(filter: &str) -> Result<bool, circumflex_core::error::Error> {
    let spec = if filter.trim().is_empty() { "warn" } else { filter.trim() };
    let mut builder = env_filter::Builder::new();
    builder.try_parse(spec).map_err(|e| {
        circumflex_core::error::Error::config("log level", spec, format!("env_logger directives such as `info` ({e})"))
    })?;
    let filter = builder.build();
    let max = filter.filter();
    *FILTER.write().unwrap_or_else(PoisonError::into_inner) = Some(filter);
    let installed = *INSTALLED.get_or_init(|| log::set_logger(&LOGGER).is_ok());
    if installed {
        log::set_max_level(max);
    }
    Ok(installed)
}

/// Takes every buffered record, oldest first. When records were dropped since the last drain, a
/// `WARN` record saying how many comes first.
pub fn drain() -> Vec<LogLine> {
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out = Vec::with_capacity(queue.lines.len() + 1);
    if queue.dropped > 0 {
        out.push(LogLine {
            level: log::Level::Warn,
            target: module_path!().to_string(),
            message: format!(
                "{} native log records dropped: the buffer holds {CAPACITY} between drains",
                queue.dropped
            ),
        });
        queue.dropped = 0;
    }
    out.extend(queue.lines.drain(..));
    out
}

/// Encodes records for the host: `LEVEL<US>target<US>message<RS>` per record (US = U+001F, RS =
/// U+001E, which never occur in log text the library writes; stray ones in messages are replaced by
/// spaces so a record can never split).
pub fn encode(lines: &[LogLine]) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.target.len() + l.message.len() + 8).sum());
    for line in lines {
        out.push_str(line.level.as_str());
        out.push(FIELD_SEPARATOR);
        out.push_str(&clean(&line.target));
        out.push(FIELD_SEPARATOR);
        out.push_str(&clean(&line.message));
        out.push(RECORD_SEPARATOR);
    }
    out
}

fn clean(s: &str) -> String {
    s.replace([FIELD_SEPARATOR, RECORD_SEPARATOR], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_keeps_records_whole_even_with_separators_in_messages() {
        let lines = [
            LogLine { level: log::Level::Info, target: "a".into(), message: "x\u{1e}y\u{1f}z".into() },
            LogLine { level: log::Level::Error, target: "b::c".into(), message: "multi\nline".into() },
        ];
        let encoded = encode(&lines);
        let records: Vec<&str> = encoded.split(RECORD_SEPARATOR).filter(|r| !r.is_empty()).collect();
        assert_eq!(records, ["INFO\u{1f}a\u{1f}x y z", "ERROR\u{1f}b::c\u{1f}multi\nline"]);
    }

    #[test]
    fn a_bad_filter_is_a_config_error_naming_it() {
        let err = install("info,=,,bogus=notalevel").unwrap_err();
        assert!(err.to_string().contains("notalevel"), "{err}");
    }

    #[test]
    fn the_buffer_is_bounded_and_reports_what_it_dropped() {
        // Direct pushes: the global logger may belong to another test in this process.
        let _ = drain();
        for i in 0..CAPACITY + 5 {
            push(LogLine { level: log::Level::Info, target: "t".into(), message: format!("m{i}") });
        }
        let lines = drain();
        let ours: Vec<&LogLine> = lines.iter().filter(|l| l.target == "t").collect();
        assert!(ours.len() <= CAPACITY);
        assert_eq!(ours.last().map(|l| l.message.as_str()), Some(format!("m{}", CAPACITY + 4).as_str()));
        assert!(lines[0].message.contains("dropped"), "{:?}", lines[0]);
        assert!(drain().iter().all(|l| l.target != "t"), "a drain empties the buffer");
    }
}
