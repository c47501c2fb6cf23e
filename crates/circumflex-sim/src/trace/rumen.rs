//! Rumen job-trace reader (Hadoop's `rumentrace` output: concatenated pretty-printed JSON objects, one per
//! job, not an array).
//!
//! What is read (unknown fields are ignored, since 1.x and 3.x traces differ; missing values are -1):
//! - `jobID`, `user`, `jobName`, `priority` (`VERY_HIGH` .. `VERY_LOW` → 2 .. -2);
//! - `submitTime` (epoch ms): arrival = submitTime − the smallest submitTime in the file;
//! - `mapTasks[]` and `reduceTasks[]`: one simulated task per entry. A task's duration is
//!   `finishTime − startTime` of its last `SUCCESS` attempt; failing that, the task's own `startTime` and
//!   `finishTime`. `otherTasks` (setup, cleanup) are not simulated.
//!
//! Decisions where the format is silent: a task whose duration is unknown (no successful attempt, -1
//! times) takes the mean of the known durations of its job's phase; if no task of a phase has a known
//! duration the trace is rejected, naming that phase's field. Zero-length tasks run for 1 ms. Jobs are
//! replayed whatever their `outcome`, as they loaded the cluster. Gzipped traces are refused with a hint
//! (decompress first) rather than adding a decompressor for one reader.

use std::path::Path;

use serde_json::{Map, Value};

use crate::sim::{SimJob, Workload};
use crate::trace::read_text;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::Time;

/// Reads a Rumen trace file into a workload (named `rumen:<file name>`).
pub fn read(path: &Path) -> Result<Workload> {
    let text = read_text(path)?;
    let file = path.display().to_string();
    let jobs = parse(&text, &file)?;
    let name = path.file_name().map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
    Workload::new(format!("rumen:{name}"), jobs)
}

/// One job object and where it sits in the file.
struct Located<'t> {
    obj: &'t Map<String, Value>,
    /// The object's source text.
    text: &'t str,
    /// 1-based line where the object starts.
    line: usize,
}

impl Located<'_> {
    /// Line of the first occurrence of `"key"` in the object (its start line if not found).
    fn line_of(&self, key: &str) -> usize {
        let needle = format!("\"{key}\"");
        self.text.find(&needle).map_or(self.line, |at| self.line + self.text[..at].matches('\n').count())
    }

    fn bad(&self, file: &str, field: &str, message: String) -> Error {
        Error::BadInput { file: file.to_string(), line: self.line_of(field), field: field.to_string(), message }
    }

    /// An integer field; absent, null or -1 (Rumen's "missing") give `None`.
    fn int(&self, file: &str, obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_i64() {
                Some(-1) => Ok(None),
                Some(x) => Ok(Some(x)),
                None => Err(self.bad(file, key, format!("{path}: expected an integer, found {v}"))),
            },
        }
    }

    /// A text field (absent or not a string: empty), refused when too long or holding control
    /// characters.
    fn string(&self, file: &str, obj: &Map<String, Value>, key: &str) -> Result<String> {
        let text = obj.get(key).and_then(Value::as_str).unwrap_or_default();
        circumflex_core::model::check_text(key, text, circumflex_core::model::MAX_TEXT_BYTES)
            .map_err(|e| self.bad(file, key, e.to_string()))?;
        Ok(text.to_string())
    }
}

/// Parses Rumen text; `file` names the source in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<SimJob>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut raw: Vec<(Value, usize, usize)> = Vec::new();
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(v)) => raw.push((v, start, stream.byte_offset())),
            Some(Err(e)) => {
                return Err(Error::BadInput {
                    file: file.to_string(),
                    line: e.line(),
                    field: "json".into(),
                    message: format!("{e} (truncated or corrupt trace?)"),
                })
            }
        }
    }
    let mut jobs = Vec::with_capacity(raw.len());
    let mut submits = Vec::with_capacity(raw.len());
    for (k, (value, start, end)) in raw.iter().enumerate() {
        let (lead, line) = object_start(text, *start, *end);
        let Some(obj) = value.as_object() else {
            return Err(Error::BadInput {
                file: file.to_string(),
                line,
                field: "job".into(),
                message: format!("job {k}: expected a JSON object, found {}", kind(value)),
            });
        };
        let at = Located { obj, text: &text[start + lead..*end], line };
        let (job, submit) = job(&at, file, k)?;
        jobs.push(job);
        submits.push(submit);
    }
    if jobs.is_empty() {
        return Err(Error::BadInput {
            file: file.into(),
            line: 0,
            field: "job".into(),
            message: "the file has no jobs".into(),
        });
    }
    let first = submits.iter().copied().min().unwrap_or(0);
    for (k, (job, submit)) in jobs.iter_mut().zip(submits).enumerate() {
        let arrival = submit - first;
        if arrival > MAX_SPAN_MS {
            return Err(Error::BadInput {
                file: file.into(),
                line: raw_line(text, &raw, k),
                field: "submitTime".into(),
                message: format!(
                    "{submit} is {arrival} ms after the first job's {first}; a trace spans at most one year"
                ),
            });
        }
        job.spec.submit_ms = arrival;
    }
    Ok(jobs)
}

/// Longest span of submit times accepted in one trace (one year, as for SWIM): arrivals beyond it
/// are corrupt times, and would push simulated clocks toward overflow.
const MAX_SPAN_MS: Time = circumflex_core::model::MAX_TASK_MS;

/// Where the object at bytes `start..end` really starts: the whitespace to skip before it (so the
/// line is the object's own) and its 1-based line.
fn object_start(text: &str, start: usize, end: usize) -> (usize, usize) {
    let lead = text[start..end].len() - text[start..end].trim_start().len();
    (lead, 1 + text[..start + lead].matches('\n').count())
}

/// 1-based line where the `k`-th object of the stream starts.
fn raw_line(text: &str, raw: &[(Value, usize, usize)], k: usize) -> usize {
    raw.get(k).map_or(0, |(_, start, end)| object_start(text, *start, *end).1)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One job; returns it with its absolute submit time.
fn job(at: &Located<'_>, file: &str, k: usize) -> Result<(SimJob, Time)> {
    let obj = at.obj;
    let id = at.string(file, obj, "jobID")?;
    let label = if id.is_empty() { format!("job {k}") } else { id.clone() };
    let submit = at
        .int(file, obj, "submitTime", &label)?
        .filter(|&t| t >= 0)
        .ok_or_else(|| at.bad(file, "submitTime", format!("{label}: missing (-1 or absent); arrivals need it")))?;
    let map_ms = phase(at, file, &label, "mapTasks")?;
    let reduce_ms = phase(at, file, &label, "reduceTasks")?;
    if map_ms.is_empty() && reduce_ms.is_empty() {
        return Err(at.bad(file, "mapTasks", format!("{label}: no map or reduce tasks")));
    }
    let mut job = SimJob::new(0, map_ms, reduce_ms);
    job.spec.external_id = id;
    job.spec.user = at.string(file, obj, "user")?;
    job.spec.name = at.string(file, obj, "jobName")?;
    job.spec.priority = match at.string(file, obj, "priority")?.as_str() {
        "VERY_HIGH" => 2,
        "HIGH" => 1,
        "LOW" => -1,
        "VERY_LOW" => -2,
        _ => 0,
    };
    Ok((job, submit))
}

/// `finishTime - startTime` of a task or attempt object: `None` when either is unknown (-1, absent)
/// or the finish precedes the start. Any other negative time is an error: subtracting hostile
/// values must neither overflow nor invent a duration.
fn span(at: &Located<'_>, file: &str, obj: &Map<String, Value>, path: &str) -> Result<Option<Time>> {
    let s = at.int(file, obj, "startTime", path)?;
    let f = at.int(file, obj, "finishTime", path)?;
    for (key, v) in [("startTime", s), ("finishTime", f)] {
        if let Some(v) = v.filter(|&v| v < 0) {
            return Err(at.bad(file, key, format!("{path}: {v} is not a time (>= 0, or -1 for unknown)")));
        }
    }
    Ok(match (s, f) {
        (Some(s), Some(f)) if f >= s => Some(f - s),
        _ => None,
    })
}

/// Durations of one phase's task list (`mapTasks` or `reduceTasks`).
fn phase(at: &Located<'_>, file: &str, label: &str, key: &str) -> Result<Vec<Time>> {
    let tasks = match at.obj.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(v) => return Err(at.bad(file, key, format!("{label}: expected an array, found {}", kind(v)))),
    };
    if tasks.len() > circumflex_core::model::MAX_TASKS as usize {
        let n = tasks.len();
        return Err(at.bad(file, key, format!("{label}: {n} tasks; at most {}", circumflex_core::model::MAX_TASKS)));
    }
    let mut known: Vec<Option<Time>> = Vec::with_capacity(tasks.len());
    for (t, task) in tasks.iter().enumerate() {
        let path = format!("{label}.{key}[{t}]");
        let Some(task) = task.as_object() else {
            return Err(at.bad(file, key, format!("{path}: expected an object, found {}", kind(task))));
        };
        let mut duration = None;
        if let Some(attempts) = task.get("attempts").and_then(Value::as_array) {
            for (a, attempt) in attempts.iter().enumerate() {
                let Some(attempt) = attempt.as_object() else { continue };
                if attempt.get("result").and_then(Value::as_str) != Some("SUCCESS") {
                    continue;
                }
                let apath = format!("{path}.attempts[{a}]");
                if let Some(d) = span(at, file, attempt, &apath)? {
                    duration = Some(d);
                }
            }
        }
        if duration.is_none() {
            duration = span(at, file, task, &path)?;
        }
        known.push(duration.map(|d| d.clamp(1, circumflex_core::model::MAX_TASK_MS)));
    }
    let have: Vec<Time> = known.iter().flatten().copied().collect();
    if have.len() < known.len() {
        if have.is_empty() {
            return Err(at.bad(
                file,
                key,
                format!("{label}: no task has a known duration (no SUCCESS attempt with start and finish times)"),
            ));
        }
        let mean = (have.iter().sum::<i64>() as f64 / have.len() as f64).round() as Time;
        return Ok(known.into_iter().map(|d| d.unwrap_or(mean)).collect());
    }
    Ok(have)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/data/rumen-small.json");

    #[test]
    fn reads_the_fixture() {
        let jobs = parse(FIXTURE, "rumen-small.json").unwrap();
        assert_eq!(jobs.len(), 2);
        let a = &jobs[0];
        assert_eq!(a.spec.external_id, "job_201311210000_0001");
        assert_eq!(a.spec.submit_ms, 0);
        // Map 0: successful attempt 1 000 ms; map 1: the failed attempt is ignored, success 2 500 ms;
        // map 2: no attempts, task times give 1 500 ms.
        assert_eq!(a.map_ms, vec![1_000, 2_500, 1_500]);
        assert_eq!(a.reduce_ms, vec![4_000]);
        assert_eq!(a.spec.priority, 1);
        let b = &jobs[1];
        assert_eq!(b.spec.submit_ms, 5_000);
        // Map 1 has no usable times: it takes the mean of the known one.
        assert_eq!(b.map_ms, vec![3_000, 3_000]);
        assert!(b.reduce_ms.is_empty());
    }

    #[test]
    fn truncated_trace_names_line() {
        let cut = &FIXTURE[..FIXTURE.len() - 40];
        let err = parse(cut, "cut.json").unwrap_err();
        let Error::BadInput { file, line, field, message } = &err else { panic!("{err:?}") };
        assert_eq!((file.as_str(), field.as_str()), ("cut.json", "json"));
        assert!(*line > 30 && message.contains("EOF"), "{err}");
    }

    #[test]
    fn bad_fields_name_field_and_line() {
        let text = "{\n  \"jobID\": \"j1\",\n  \"submitTime\": \"soon\",\n  \"mapTasks\": []\n}\n";
        let err = parse(text, "t.json").unwrap_err();
        assert_eq!(
            err,
            Error::BadInput {
                file: "t.json".into(),
                line: 3,
                field: "submitTime".into(),
                message: "j1: expected an integer, found \"soon\"".into()
            }
        );
        let text = "{\"jobID\": \"j1\", \"submitTime\": 5, \"mapTasks\": [{\"startTime\": 1, \"finishTime\": 3}]}\n\n{\n \"jobID\": \"j2\",\n \"submitTime\": -1}";
        let err = parse(text, "t.json").unwrap_err();
        assert!(matches!(&err, Error::BadInput { line: 5, field, .. } if field == "submitTime"), "{err:?}");
        let text = "{\"jobID\": \"j1\", \"submitTime\": 5, \"mapTasks\": [{\"attempts\": []}]}";
        let err = parse(text, "t.json").unwrap_err().to_string();
        assert!(err.contains("mapTasks") && err.contains("no task has a known duration"), "{err}");
        assert!(parse("[1, 2]", "t.json").unwrap_err().to_string().contains("expected a JSON object"));
    }
}
