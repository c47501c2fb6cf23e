//! SWIM TSV reader (the Facebook 2009 and 2010 synthetic days of the SWIM project).
//!
//! Each line is one job, tab-separated, no header: job id (`jobN`), submit time (s from trace start),
//! gap since the previous submit (s), map input bytes, shuffle bytes, reduce output bytes. Files of the
//! `withInputPaths` kind add an input path and two empty fields; extra columns are ignored.
//!
//! The trace has bytes only. [`SwimModel`] turns them into tasks and durations (all configurable):
//! - **reduces** = 0 when shuffle bytes are 0 (a map-only job: its output is written by the maps and
//!   spread evenly over them); else `clamp(ceil((shuffle + output) / bytes_per_reduce), 1, max_reduces)`.
//! - **maps** = `max(1, ceil(input / block))`; every map reads one block, the last the remainder. A
//!   map-only job gets at least `ceil(output / block)` maps, so no map writes more than a block: the trace
//!   has many map-only jobs with tiny input and gigabytes of output (data loaders and generators, which
//!   are configured with enough maps), and one map writing all of it would run for hours.
//! - **map time** = `map_overhead_ms + bytes read and written / map_bytes_per_s`.
//! - **reduce time** = `reduce_overhead_ms + (shuffle + output) / reduces / reduce_bytes_per_s`.
//!
//! Defaults (see [`SwimModel::default`]) describe a 2009-era MRv1 node: 64 MiB blocks (the block size the
//! SWIM replay scripts were run with), a 4 s task start-up overhead (JVM launch and setup), maps reading
//! at 16 MiB/s and reduces shuffling, sorting and writing at 8 MiB/s, 1 GiB per reduce with at most 500
//! reduces. A full-block map then takes 8 s, a 1 GiB reduce about 2 min. On the FB-2009 day this gives
//! 481,716 maps and 15,087 reduces; see `docs/simulator.md` for the cluster that makes it meaningful.
//!
//! Task durations are deterministic functions of bytes, so the trace replays identically under any seed.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sim::{SimJob, Workload};
use crate::trace::read_text;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{check_text, Time, MAX_TASKS, MAX_TASK_MS, MAX_TEXT_BYTES};

const MIB: f64 = 1024.0 * 1024.0;

/// How SWIM bytes become tasks and durations. See the module docs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwimModel {
    /// HDFS block size: input bytes per map.
    pub block_bytes: u64,
    /// Fixed start-up cost of every map task, ms.
    pub map_overhead_ms: Time,
    /// Bytes a map reads (and, map-only, writes) per second.
    pub map_bytes_per_s: f64,
    /// Shuffle plus output bytes per reduce task.
    pub bytes_per_reduce: u64,
    /// Most reduces per job.
    pub max_reduces: u32,
    /// Fixed start-up cost of every reduce task, ms.
    pub reduce_overhead_ms: Time,
    /// Bytes a reduce shuffles, sorts and writes per second.
    pub reduce_bytes_per_s: f64,
}

impl Default for SwimModel {
    fn default() -> Self {
        SwimModel {
            block_bytes: 64 << 20,
            map_overhead_ms: 4_000,
            map_bytes_per_s: 16.0 * MIB,
            bytes_per_reduce: 1 << 30,
            max_reduces: 500,
            reduce_overhead_ms: 4_000,
            reduce_bytes_per_s: 8.0 * MIB,
        }
    }
}

impl SwimModel {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        let positive = |key: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::config(key, v, "a finite number > 0"))
            }
        };
        positive("swim.block_bytes", self.block_bytes as f64)?;
        positive("swim.map_bytes_per_s", self.map_bytes_per_s)?;
        positive("swim.bytes_per_reduce", self.bytes_per_reduce as f64)?;
        positive("swim.max_reduces", self.max_reduces as f64)?;
        positive("swim.reduce_bytes_per_s", self.reduce_bytes_per_s)?;
        for (key, v) in
            [("swim.map_overhead_ms", self.map_overhead_ms), ("swim.reduce_overhead_ms", self.reduce_overhead_ms)]
        {
            if !(0..=MAX_TASK_MS).contains(&v) {
                return Err(Error::config(key, v, "0 ..= one year in ms"));
            }
        }
        Ok(())
    }

    fn task_ms(overhead: Time, bytes: f64, rate: f64) -> Time {
        (overhead + (bytes / rate * 1000.0).round() as Time).clamp(1, MAX_TASK_MS)
    }

    /// Map and reduce counts of a job with these bytes (see the module docs).
    pub fn task_counts(&self, input: u64, shuffle: u64, output: u64) -> (u64, u64) {
        let block = self.block_bytes.max(1);
        let reduces = if shuffle == 0 {
            0
        } else {
            (shuffle.saturating_add(output)).div_ceil(self.bytes_per_reduce.max(1)).clamp(1, self.max_reduces as u64)
        };
        let written_by_maps = if reduces == 0 { output } else { 0 };
        (input.div_ceil(block).max(written_by_maps.div_ceil(block)).max(1), reduces)
    }

    /// The job for one trace line: tasks and durations from its bytes. The caller bounds the task
    /// counts ([`SwimModel::task_counts`]); [`parse`] refuses lines beyond `MAX_TASKS`.
    pub fn job(&self, id: &str, submit_ms: Time, input: u64, shuffle: u64, output: u64) -> SimJob {
        let block = self.block_bytes.max(1);
        let (maps, reduces) = self.task_counts(input, shuffle, output);
        let map_output_share = if reduces == 0 { output as f64 / maps as f64 } else { 0.0 };
        let map_ms = (0..maps)
            .map(|m| {
                let read = if (m + 1).saturating_mul(block) <= input {
                    block
                } else {
                    input.saturating_sub(block.saturating_mul(m))
                };
                Self::task_ms(self.map_overhead_ms, read as f64 + map_output_share, self.map_bytes_per_s)
            })
            .collect();
        let reduce_ms = if reduces == 0 {
            Vec::new()
        } else {
            let per = (shuffle as f64 + output as f64) / reduces as f64;
            vec![Self::task_ms(self.reduce_overhead_ms, per, self.reduce_bytes_per_s); reduces as usize]
        };
        let mut job = SimJob::new(submit_ms, map_ms, reduce_ms);
        job.spec.external_id = id.to_string();
        job.spec.maps.input_bytes = Some(input);
        job.spec.reduces.input_bytes = Some(shuffle);
        job
    }
}

/// Reads a SWIM TSV file into a workload (named `swim:<file name>`).
pub fn read(path: &Path, model: &SwimModel) -> Result<Workload> {
    model.validate()?;
    let text = read_text(path)?;
    let file = path.display().to_string();
    let jobs = parse(&text, &file, model)?;
    let name = path.file_name().map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
    Workload::new(format!("swim:{name}"), jobs)
}

/// Parses SWIM text; `file` names the source in errors.
pub fn parse(text: &str, file: &str, model: &SwimModel) -> Result<Vec<SimJob>> {
    const FIELDS: [&str; 6] =
        ["job_id", "submit_s", "gap_s", "map_input_bytes", "shuffle_bytes", "reduce_output_bytes"];
    let bad = |line: usize, field: &str, message: String| Error::BadInput {
        file: file.to_string(),
        line,
        field: field.to_string(),
        message,
    };
    let mut jobs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = raw.split('\t').collect();
        if cols.len() < 6 {
            return Err(bad(
                line,
                FIELDS.get(cols.len()).copied().unwrap_or("columns"),
                format!("missing: {} of 6 tab-separated columns (truncated line?)", cols.len()),
            ));
        }
        let id = cols[0].trim();
        if id.is_empty() {
            return Err(bad(line, FIELDS[0], "empty job id".into()));
        }
        check_text(FIELDS[0], id, MAX_TEXT_BYTES).map_err(|e| bad(line, FIELDS[0], e.to_string()))?;
        let number = |k: usize| -> Result<u64> {
            let v = cols[k].trim();
            v.parse::<u64>().map_err(|_| bad(line, FIELDS[k], format!("'{v}' is not a non-negative integer")))
        };
        let submit_s = number(1)?;
        number(2)?;
        let (input, shuffle, output) = (number(3)?, number(4)?, number(5)?);
        if submit_s > (MAX_TASK_MS / 1000) as u64 {
            return Err(bad(line, FIELDS[1], format!("{submit_s} s is beyond one year")));
        }
        let (maps, reduces) = model.task_counts(input, shuffle, output);
        if maps > MAX_TASKS as u64 {
            let field = if input.div_ceil(model.block_bytes.max(1)) >= maps { FIELDS[3] } else { FIELDS[5] };
            return Err(bad(line, field, format!("{maps} maps at the model's block size; at most {MAX_TASKS}")));
        }
        if reduces > MAX_TASKS as u64 {
            return Err(bad(line, FIELDS[4], format!("{reduces} reduces; at most {MAX_TASKS}")));
        }
        jobs.push(model.job(id, submit_s as Time * 1000, input, shuffle, output));
    }
    if jobs.is_empty() {
        return Err(bad(0, "job_id", "the file has no jobs".into()));
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_become_tasks_as_documented() {
        let m = SwimModel::default();
        // 150 MiB input: 3 maps (64, 64, 22 MiB); 2 GiB + 0.5 GiB shuffle+output: 3 reduces.
        let j = m.job("job7", 5_000, 150 << 20, 2 << 30, 512 << 20);
        assert_eq!(j.spec.maps.tasks, 3);
        assert_eq!(j.map_ms, vec![8_000, 8_000, 4_000 + 1_375]);
        assert_eq!(j.spec.reduces.tasks, 3);
        let per = (2.5 * 1024.0 * MIB) / 3.0;
        assert_eq!(j.reduce_ms[0], 4_000 + (per / (8.0 * MIB) * 1000.0).round() as i64);
        // Map-only: output is written by the maps.
        let j = m.job("job8", 0, 64 << 20, 0, 64 << 20);
        assert_eq!((j.spec.maps.tasks, j.spec.reduces.tasks), (1, 0));
        assert_eq!(j.map_ms, vec![4_000 + 8_000]);
        // Map-only with 1 KiB input and 256 MiB output: 4 maps writing 64 MiB each; the first also reads.
        let j = m.job("job10", 0, 1024, 0, 256 << 20);
        assert_eq!(j.spec.maps.tasks, 4);
        assert_eq!(j.map_ms[1..], [8_000, 8_000, 8_000]);
        assert_eq!(j.map_ms[0], 8_000); // 1 KiB more rounds away
                                        // Empty input still runs one (short) map; reduces are capped.
        let j = m.job("job9", 0, 0, u64::MAX / 2, 0);
        assert_eq!((j.spec.maps.tasks, j.spec.reduces.tasks, j.map_ms[0]), (1, 500, 4_000));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let m = SwimModel::default();
        let ok = "job0\t1\t1\t100\t0\t5\njob1\t3\t2\t100\t7\t5\n";
        let jobs = parse(ok, "t.tsv", &m).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[1].spec.submit_ms, 3_000);

        let err = parse("job0\t1\t1\t100\t0\t5\njob1\t3\t2\t1x0\t7\t5\n", "t.tsv", &m).unwrap_err();
        assert_eq!(
            err,
            Error::BadInput {
                file: "t.tsv".into(),
                line: 2,
                field: "map_input_bytes".into(),
                message: "'1x0' is not a non-negative integer".into()
            }
        );
        let err = parse("job0\t1\t1\t100\t0\t5\njob1\t3\t2", "t.tsv", &m).unwrap_err().to_string();
        assert!(err.starts_with("t.tsv:2: field 'map_input_bytes'") && err.contains("truncated"), "{err}");
        let err = parse("job0\t-4\t1\t100\t0\t5\n", "t.tsv", &m).unwrap_err().to_string();
        assert!(err.contains("submit_s") && err.contains("-4"), "{err}");
        assert!(parse("\n\n", "t.tsv", &m).unwrap_err().to_string().contains("no jobs"));
    }
}
