//! FlowFlex Stage 3 (digest §2.6): shape shifting a chain's Stage 2 histograms back into malleable
//! schedules of the original jobs, by McNaughton's wrap-around rule.
//!
//! Pseudo-job `k` holds the jobs `S_k` that ran together in the ASAP pseudo-schedule. For every
//! constant-height piece `J` of its histogram (`σ(J)` slots for `|J|`), each job `i ∈ S_k` keeps
//! its pseudo-schedule share and receives `portion_i · (|J|σ(J) / s(k))` work (that is
//! `δ_i·|J|σ(J)/r_k`). The amounts are laid out on `σ(J)` processors one after the other, each
//! processor filled horizontally over `|J|` before wrapping to the next. A job's amount spans at most
//! `δ_i·σ(J)/r_k ≤ δ_i` processor widths, so at any instant it holds at most `δ_i` processors, and
//! the jobs together hold exactly `σ(J)`.
//!
//! Decisions where the paper is silent:
//! - McNaughton's job order is increasing job index.
//! - Only slot counts are output (processor identities do not matter to the allocation layer): the
//!   count of job `i` at offset `v ∈ [0, 1)` of `J` is `⌈y1 − v⌉ − ⌈y0 − v⌉` for its span `[y0, y1)`
//!   in processor widths, which only changes at `frac(y0)` and `frac(y1)`.
//! - Floating point: positions within `1e-9` of an integer are snapped to it, the last job ends
//!   exactly at `σ(J)`, and all jobs of `J` share one set of cut offsets (fractions within `1e-9`
//!   merged) evaluated at the same midpoints. The per-instant counts then telescope to exactly
//!   `σ(J)`, so no sliver ever holds one processor too many; a job's work moves by at most
//!   `1e-9·|J|` per cut.
//! - A pseudo-job of one job (every pseudo-job of a flow without edges, the plain MapReduce job)
//!   takes a direct path: the cuts are `{0, 1}` there, so each histogram piece gives one job piece
//!   on `min(σ(J), δ_i)` processors, computed without them (the same pieces bit for bit).

use super::chain::PseudoChain;
use super::greedy::{ChainSchedule, Piece};

/// A constant allocation of one original job: `slots` processors during `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobPiece {
    /// Job index within its flow.
    pub job: usize,
    /// Start time.
    pub start: f64,
    /// End time (`> start`).
    pub end: f64,
    /// Processors, `1 ≤ slots ≤ δ_i`.
    pub slots: u32,
}

fn snap(y: f64) -> f64 {
    let nearest = y.round();
    if (y - nearest).abs() < 1e-9 {
        nearest
    } else {
        y
    }
}

/// Stage 3 for one flow: its chain, and the chain's Stage 2 schedule, to per-job pieces sorted by
/// start time then job.
pub fn shape_shift(chain: &PseudoChain, schedule: &ChainSchedule) -> Vec<JobPiece> {
    let mut out = Vec::with_capacity(schedule.pieces.iter().map(Vec::len).sum::<usize>() * 2);
    shape_shift_into(chain, schedule.pieces.iter().map(Vec::as_slice), &mut ShapeScratch::default(), &mut out);
    out
}

/// [`shape_shift`]'s working vectors, kept across plans (issue 20); no result depends on what they held.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShapeScratch {
    bounds: Vec<f64>,
    cuts: Vec<f64>,
}

/// [`shape_shift`] of the chain's histograms (one per pseudo-job, in chain order), appended to `out`
/// (what it held before stays in place).
pub(crate) fn shape_shift_into<'a>(
    chain: &PseudoChain,
    histograms: impl Iterator<Item = &'a [Piece]>,
    scratch: &mut ShapeScratch,
    out: &mut Vec<JobPiece>,
) {
    shift_into(chain, histograms, scratch, out, true);
}

/// [`shape_shift_into`]; `one_job_path` false (the tests) takes the cuts for pseudo-jobs of one job too.
fn shift_into<'a>(
    chain: &PseudoChain,
    histograms: impl Iterator<Item = &'a [Piece]>,
    scratch: &mut ShapeScratch,
    out: &mut Vec<JobPiece>,
    one_job_path: bool,
) {
    let first = out.len();
    let ShapeScratch { bounds, cuts } = scratch;
    for (pj, histogram) in chain.pseudo_jobs.iter().zip(histograms) {
        let total = pj.work();
        if total <= 0.0 {
            continue;
        }
        if let (true, [portion]) = (one_job_path, pj.portions.as_slice()) {
            // One job (every pseudo-job of a flow without edges): its span is `[0, σ(J))`, the cuts
            // are `{0, 1}` (`σ(J)` is an integer), so the loop below gives one piece per histogram
            // piece, on `min(σ(J), δ_i)` processors (`⌈σ(J) − ½⌉ − ⌈−½⌉`), from `time_at(0)` to
            // `time_at(1) = end`: the same piece without the cuts (`one_portion_shifts_as_the_cuts`).
            let cap = portion.max_parallelism;
            out.extend(histogram.iter().filter_map(|piece| {
                let (start, end) = (piece.start, piece.end);
                let from = start + 0.0 * (end - start);
                let slots = piece.slots.min(cap);
                (slots >= 1 && end > from).then_some(JobPiece { job: portion.job, start: from, end, slots })
            }));
            continue;
        }
        for piece in histogram {
            let (start, end) = (piece.start, piece.end);
            let length = end - start;
            let height = f64::from(piece.slots);
            let time_at = |v: f64| if v >= 1.0 { end } else { start + v * length };
            // Span boundaries in processor widths: job `i` covers `[bounds[i], bounds[i + 1])`.
            bounds.clear();
            bounds.push(0.0f64);
            for (index, portion) in pj.portions.iter().enumerate() {
                let width = (portion.work * height / total).min(f64::from(portion.max_parallelism));
                let previous = bounds[index];
                bounds.push(if index + 1 == pj.portions.len() { height } else { snap(previous + width) });
            }
            // One shared set of cuts in `[0, 1]` for all jobs, so every instant sees the same
            // midpoint and the counts telescope to exactly `σ(J)`.
            cuts.clear();
            cuts.extend(bounds.iter().map(|y| y - y.floor()).chain([0.0, 1.0]));
            cuts.sort_unstable_by(f64::total_cmp); // equal under `total_cmp` means equal bits
            cuts.dedup_by(|later, kept| *later - *kept < 1e-9);
            if let Some(last) = cuts.last_mut() {
                *last = 1.0;
            }
            for (index, portion) in pj.portions.iter().enumerate() {
                let (y0, y1) = (bounds[index], bounds[index + 1]);
                let cap = f64::from(portion.max_parallelism);
                let mut current: Option<JobPiece> = None;
                for window in cuts.windows(2) {
                    let (a, b) = (window[0], window[1]);
                    let middle = 0.5 * (a + b);
                    let count = ((y1 - middle).ceil() - (y0 - middle).ceil()).clamp(0.0, cap) as u32;
                    let (from, to) = (time_at(a), time_at(b));
                    match current.as_mut() {
                        Some(open) if open.slots == count && open.end == from => open.end = to,
                        _ => {
                            out.extend(current.take().filter(|p| p.slots >= 1 && p.end > p.start));
                            current = Some(JobPiece { job: portion.job, start: from, end: to, slots: count });
                        }
                    }
                }
                out.extend(current.take().filter(|p| p.slots >= 1 && p.end > p.start));
            }
        }
    }
    // (start, job) is unique (a job's pieces are disjoint and of positive length), so the
    // unstable sort orders exactly as a stable one, without its scratch allocation.
    out[first..]
        .sort_unstable_by(|a, b| a.start.total_cmp(&b.start).then(a.job.cmp(&b.job)).then(a.end.total_cmp(&b.end)));
}

#[cfg(test)]
mod tests {
    use super::super::chain::{Portion, PseudoChain, PseudoJob};
    use super::super::flow::{Flow, FlowJob};
    use super::super::greedy::schedule_in_order;
    use super::super::greedy::tests::chain;
    use super::*;
    use crate::flex::metrics::Penalty;
    use proptest::prelude::*;

    /// The pieces as rows, times rounded to 1e-9 so the digest's decimal figures compare exactly.
    fn rows(pieces: &[JobPiece]) -> Vec<(usize, f64, f64, u32)> {
        let round = |t: f64| (t * 1e9).round() / 1e9;
        pieces.iter().map(|p| (p.job, round(p.start), round(p.end), p.slots)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The one-job path gives the cuts' pieces bit for bit: greedy histograms of flows without
        /// edges (one job: the path; several: the cuts), with edges (pseudo-jobs of one job and of
        /// several), and hand-made histograms with 0 slots, empty and unbounded pieces, jobs whose
        /// `δ_i` is below the piece's height, and an empty pseudo-job.
        #[test]
        fn one_portion_shifts_as_the_cuts(
            flows in proptest::collection::vec((proptest::collection::vec((1u32..=40, 1u32..=5), 1..4), 0u8..3), 1..8),
            slots in 5u32..=9,
            keys in proptest::collection::vec(any::<u32>(), 8),
            odd in proptest::collection::vec((0u32..=6, 0.0f64..10.0, 0.0f64..3.0, 0u32..=4, any::<bool>()), 0..6),
        ) {
            let chains: Vec<PseudoChain> = flows
                .iter()
                .map(|(jobs, kind)| {
                    let jobs: Vec<FlowJob> =
                        jobs.iter().map(|&(w, d)| FlowJob { work: f64::from(w) / 7.0, max_parallelism: d }).collect();
                    let edges: Vec<(usize, usize)> = match kind {
                        0 => Vec::new(),
                        1 => (1..jobs.len()).map(|i| (i - 1, i)).collect(),
                        _ => (1..jobs.len()).map(|i| (0, i)).collect(),
                    };
                    PseudoChain::from_flow(&Flow::new(jobs, &edges, Penalty::Zero, slots).unwrap())
                })
                .collect();
            let mut order: Vec<usize> = (0..chains.len()).collect();
            order.sort_by_key(|&c| keys[c]);
            let schedules = schedule_in_order(&chains, &order, slots).unwrap();
            let mut scratch = ShapeScratch::default();
            for (c, s) in chains.iter().zip(&schedules) {
                let (mut fast, mut cuts) = (vec![JobPiece { job: 99, start: 0.0, end: 1.0, slots: 1 }], Vec::new());
                shift_into(c, s.pieces.iter().map(Vec::as_slice), &mut scratch, &mut fast, true);
                shift_into(c, s.pieces.iter().map(Vec::as_slice), &mut scratch, &mut cuts, false);
                prop_assert_eq!(bits(&fast[1..]), bits(&cuts));
            }
            // Hand-made histograms on a one-job chain of two pseudo-jobs and an empty one.
            let one = |work: f64, cap: u32| PseudoJob {
                start: 0.0,
                end: 1.0,
                bound: u64::from(cap.max(1)),
                portions: vec![Portion { job: 3, max_parallelism: cap, work }],
            };
            for &(height, at, length, cap, unbounded) in &odd {
                let end = if unbounded { f64::INFINITY } else { at + length };
                let histogram = vec![Piece { start: at, end, slots: height }, Piece { start: end, end: end + 1.0, slots: 2 }];
                let chain = PseudoChain { pseudo_jobs: vec![one(5.0, cap), one(0.0, 2), one(2.0, 4)] };
                let histograms = [histogram.as_slice(), &[], &histogram[1..]];
                let (mut fast, mut cuts) = (Vec::new(), Vec::new());
                shift_into(&chain, histograms.iter().copied(), &mut scratch, &mut fast, true);
                shift_into(&chain, histograms.iter().copied(), &mut scratch, &mut cuts, false);
                prop_assert_eq!(bits(&fast), bits(&cuts));
            }
        }
    }

    fn bits(pieces: &[JobPiece]) -> Vec<(usize, u64, u64, u32)> {
        pieces.iter().map(|p| (p.job, p.start.to_bits(), p.end.to_bits(), p.slots)).collect()
    }

    /// Digest T3: pj1 on [0, 1.25) at 4 slots: J1 (job 0) gets 4 on [0, 0.25) and 3 on
    /// [0.25, 1.25); J2 (job 1) gets 1 on [0.25, 1.25), then 1 on [1.25, 4.25).
    #[test]
    fn t3_wrap_around() {
        let jobs = vec![FlowJob { work: 4.0, max_parallelism: 4 }, FlowJob { work: 4.0, max_parallelism: 1 }];
        let flow = Flow::new(jobs, &[], Penalty::Zero, 4).unwrap();
        let c = PseudoChain::from_flow(&flow);
        let s = schedule_in_order(std::slice::from_ref(&c), &[0], 4).unwrap();
        assert_eq!(
            rows(&shape_shift(&c, &s[0])),
            vec![(0, 0.0, 0.25, 4), (0, 0.25, 1.25, 3), (1, 0.25, 1.25, 1), (1, 1.25, 4.25, 1)]
        );
    }

    /// Digest T6: X = (6, 3), Y = (2, 1) behind chain A of T5 at P = 4. Segment [0, 2) at 3 slots:
    /// X gets 4.5 (3 slots on [0, 0.5), 2 on [0.5, 2)), Y 1.5 (1 slot on [0.5, 2)); segment
    /// [4, 4.5) at 4 slots: X 3 slots, Y 1 slot.
    #[test]
    fn t6_multi_level_histogram() {
        let jobs = vec![FlowJob { work: 6.0, max_parallelism: 3 }, FlowJob { work: 2.0, max_parallelism: 1 }];
        let b = PseudoChain::from_flow(&Flow::new(jobs, &[], Penalty::Zero, 4).unwrap());
        let chains = [chain(&[(2.0, 1), (8.0, 4)]), b];
        let s = schedule_in_order(&chains, &[0, 1], 4).unwrap();
        assert_eq!(
            rows(&shape_shift(&chains[1], &s[1])),
            vec![(0, 0.0, 0.5, 3), (0, 0.5, 2.0, 2), (1, 0.5, 2.0, 1), (0, 4.0, 4.5, 3), (1, 4.0, 4.5, 1)]
        );
    }
}
