//! The drift check behind `make results-check` (part of `make test`): the committed results, compared
//! with the same commands' output regenerated into a scratch folder, so that a change in the code that
//! changes a committed figure fails the tests instead of going unnoticed.
//!
//! What is compared: every file of the committed result folder, as text, except the plots (`.svg`, drawn
//! from the compared tables) and the per-job `result-*.json` files (not committed). Before comparing:
//! - the scratch folder's path is replaced by the committed one (the commands write their `--out` path
//!   into `COMMAND` and the reports);
//! - wall-clock figures, which no code change controls, are removed, each by name: the `wall_s` and
//!   `events_per_s` columns of `summary.csv`, the `wall s` and `events/s` columns of `table.txt`, the
//!   `wall_s`, `events_per_s` and `seconds` keys of JSON files, and the `Wall clock: **… s**` phrase of
//!   markdown reports.
//!
//! Files the commands write but that are not committed are ignored; a committed file the commands no
//! longer write is drift.

use std::fs;
use std::path::{Path, PathBuf};

use circumflex_core::error::{Error, Result};

/// CSV columns that hold wall-clock figures.
pub const WALL_CSV_COLUMNS: [&str; 2] = ["wall_s", "events_per_s"];
/// Table columns (headers of `table.txt`) that hold wall-clock figures.
pub const WALL_TABLE_COLUMNS: [&str; 2] = ["wall s", "events/s"];
/// JSON keys that hold wall-clock figures.
pub const WALL_JSON_KEYS: [&str; 3] = ["wall_s", "events_per_s", "seconds"];

/// One file that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drift {
    /// Path relative to the result folder.
    pub file: PathBuf,
    /// First differing line (1-based) of the normalised texts, 0 when the file is missing.
    pub line: usize,
    /// The committed line.
    pub committed: String,
    /// The regenerated line.
    pub fresh: String,
}

fn files(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, &e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, &e))?.path();
        if path.is_dir() {
            files(&path, base, out)?;
        } else if let Ok(rel) = path.strip_prefix(base) {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

/// Removes the named columns from a CSV text (by header name; fields are split on commas, which these
/// files only quote in their policy/id columns, never before a wall-clock column).
fn drop_csv_columns(text: &str) -> String {
    let mut lines = text.lines();
    let Some(header) = lines.next() else { return String::new() };
    let names: Vec<&str> = header.split(',').collect();
    let keep: Vec<bool> = names.iter().map(|n| !WALL_CSV_COLUMNS.contains(n)).collect();
    if keep.iter().all(|&k| k) {
        return text.to_string();
    }
    std::iter::once(header)
        .chain(lines)
        .map(|l| {
            l.split(',')
                .zip(keep.iter().chain(std::iter::repeat(&true)))
                .filter(|(_, &k)| k)
                .map(|(f, _)| f)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes the wall-clock columns of a `report::table` text: they are its last columns, so each line
/// keeps the text before the first one's start, as located in the header (whitespace normalised).
fn drop_table_columns(text: &str) -> String {
    let mut lines = text.lines();
    let Some(header) = lines.next() else { return String::new() };
    let Some(cut) = WALL_TABLE_COLUMNS.iter().filter_map(|c| header.find(c)).min() else {
        return text.to_string();
    };
    // The cell before the wall columns is right-aligned and ends where its header ends; cut every row
    // after the same number of whitespace-separated columns as the header keeps.
    let kept_header = &header[..cut];
    let columns = kept_header.split("  ").filter(|c| !c.trim().is_empty()).count();
    std::iter::once(kept_header.split_whitespace().collect::<Vec<_>>().join(" "))
        .chain(lines.map(|l| {
            let cells: Vec<&str> = l.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
            if cells.len() > columns {
                cells[..columns].join(" ")
            } else {
                cells.join(" ")
            }
        }))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drops the wall-clock keys of a JSON text (at any depth).
fn drop_json_keys(text: &str) -> String {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for k in WALL_JSON_KEYS {
                    map.remove(k);
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) => {
            strip(&mut v);
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_string())
        }
        Err(_) => text.to_string(),
    }
}

/// Replaces `Wall clock: **N s**` in markdown by a placeholder.
fn drop_markdown_wall(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("Wall clock: **") {
        let after = &rest[i + "Wall clock: **".len()..];
        let Some(end) = after.find("**") else { break };
        out.push_str(&rest[..i]);
        out.push_str("Wall clock: (removed)");
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The text of a result file as compared (see the module docs).
pub fn normalise(file: &Path, text: &str, fresh_root: &str, committed_root: &str) -> String {
    let text = if fresh_root.is_empty() { text.to_string() } else { text.replace(fresh_root, committed_root) };
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match file.extension().and_then(|e| e.to_str()) {
        Some("csv") => drop_csv_columns(&text),
        Some("json") => drop_json_keys(&text),
        Some("md") => drop_markdown_wall(&text),
        Some("txt") if name == "table.txt" => drop_table_columns(&text),
        _ => text,
    }
}

/// Whether a committed file takes part in the comparison.
fn compared(file: &Path) -> bool {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !(name.ends_with(".svg") || (name.starts_with("result-") && name.ends_with(".json")))
}

/// Compares the committed result folder `committed` (e.g. `results/asrpt`, written with
/// `--out results/asrpt`) with `fresh` (the same command with `--out <fresh>`).
pub fn compare(committed: &Path, fresh: &Path) -> Result<Vec<Drift>> {
    let mut list = Vec::new();
    files(committed, committed, &mut list)?;
    list.sort();
    let (c_root, f_root) = (committed.to_string_lossy().into_owned(), fresh.to_string_lossy().into_owned());
    let mut drifts = Vec::new();
    for rel in list.into_iter().filter(|f| compared(f)) {
        let want = fs::read_to_string(committed.join(&rel)).map_err(|e| Error::io(&committed.join(&rel), &e))?;
        let Ok(got) = fs::read_to_string(fresh.join(&rel)) else {
            drifts.push(Drift { file: rel, line: 0, committed: "(committed)".into(), fresh: "(not written)".into() });
            continue;
        };
        let (want, got) = (normalise(&rel, &want, "", ""), normalise(&rel, &got, &f_root, &c_root));
        if want != got {
            let (mut a, mut b) = (want.lines(), got.lines());
            let mut line = 1;
            loop {
                match (a.next(), b.next()) {
                    (Some(x), Some(y)) if x == y => line += 1,
                    (x, y) => {
                        drifts.push(Drift {
                            file: rel.clone(),
                            line,
                            committed: x.unwrap_or("(end of file)").to_string(),
                            fresh: y.unwrap_or("(end of file)").to_string(),
                        });
                        break;
                    }
                }
            }
        }
    }
    Ok(drifts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_wall_columns_are_dropped_by_name() {
        let a = "policy,mean,wall_s,events_per_s\nfair,1.0,0.5,100\n";
        let b = "policy,mean,wall_s,events_per_s\nfair,1.0,0.9,300\n";
        assert_eq!(drop_csv_columns(a), drop_csv_columns(b));
        assert_ne!(drop_csv_columns(a), drop_csv_columns("policy,mean,wall_s,events_per_s\nfair,1.1,0.5,100\n"));
    }

    #[test]
    fn table_wall_columns_are_dropped() {
        let a = "policy  mean  events  wall s  events/s\n------  ----  ------  ------  --------\nfair     1.0    1000    0.50    2.0e3\n";
        let b = "policy  mean  events  wall s  events/s\n------  ----  ------  ------  --------\nfair     1.0    1000   10.50    9.0e1\n";
        assert_eq!(drop_table_columns(a), drop_table_columns(b));
        let c = a.replace("1000", "1001");
        assert_ne!(drop_table_columns(a), drop_table_columns(&c));
    }

    #[test]
    fn json_and_markdown_wall_figures_are_dropped() {
        assert_eq!(
            drop_json_keys(r#"{"a":1,"runs":[{"wall_s":2,"b":3}]}"#),
            drop_json_keys(r#"{"a":1,"runs":[{"wall_s":9,"b":3}]}"#)
        );
        assert_ne!(drop_json_keys(r#"{"a":1}"#), drop_json_keys(r#"{"a":2}"#));
        assert_eq!(
            drop_markdown_wall("x. Wall clock: **455.3 s** on 2"),
            drop_markdown_wall("x. Wall clock: **25.3 s** on 2")
        );
    }

    #[test]
    fn compare_finds_a_changed_and_a_missing_file() {
        let root = std::env::temp_dir().join(format!("circumflex-drift-{}", std::process::id()));
        let (c, f) = (root.join("committed"), root.join("fresh"));
        for d in [&c, &f] {
            fs::create_dir_all(d).expect("scratch dir");
        }
        fs::write(c.join("COMMAND"), format!("x --out {}\n", c.display())).expect("write");
        fs::write(f.join("COMMAND"), format!("x --out {}\n", f.display())).expect("write");
        fs::write(c.join("summary.csv"), "p,v,wall_s\na,1,3\n").expect("write");
        fs::write(f.join("summary.csv"), "p,v,wall_s\na,2,3\n").expect("write");
        fs::write(c.join("plot.svg"), "<svg/>").expect("write");
        fs::write(c.join("gone.md"), "x").expect("write");
        let drifts = compare(&c, &f).expect("compare");
        let names: Vec<_> = drifts.iter().map(|d| d.file.to_string_lossy().into_owned()).collect();
        assert_eq!(names, vec!["gone.md", "summary.csv"]);
        assert_eq!((drifts[1].line, drifts[1].committed.as_str(), drifts[1].fresh.as_str()), (2, "a,1", "a,2"));
        let _ = fs::remove_dir_all(&root);
    }
}
