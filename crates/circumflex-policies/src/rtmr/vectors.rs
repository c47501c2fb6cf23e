//! Slot-availability vectors of the RTMR admission test (digest §2.2, §2.3, §2.7, §2.8).
//!
//! A vector holds, for each of the cluster's `l` map (or `q` reduce) slots, the absolute time at
//! which that slot becomes free, sorted ascending. `CalT` list-schedules a job's equal tasks onto
//! the earliest-free slots; `SATU` rebuilds a finished job's vectors from its tasks' actual finish
//! times. All times are integer milliseconds; the functions never mutate their inputs.

use circumflex_core::model::Time;

/// Sorted slot-free times.
pub type SlotVec = Vec<Time>;

/// `n` slots free at time 0.
pub fn zeros(n: usize) -> SlotVec {
    vec![0; n]
}

/// Places `tasks` tasks of duration `eps` on the earliest-free slots of `v`, no task starting
/// before `not_before`. Returns the new vector and the last finish time (`None` when `tasks` is 0
/// or `v` is empty). Shared by CalT^m (`not_before` = now) and CalT^r (`not_before` = e^m).
pub fn list_schedule(v: &[Time], tasks: u32, eps: Time, not_before: Time) -> (SlotVec, Option<Time>) {
    let mut out = v.to_vec();
    if out.is_empty() || tasks == 0 {
        return (out, None);
    }
    let mut last = None;
    // Because `out` is sorted and every pick becomes >= all earlier picks' finish - eps, a rotating
    // insertion keeps it sorted: take the minimum, push its new value at its sorted position.
    for _ in 0..tasks {
        let start = out[0].max(not_before);
        let finish = start.saturating_add(eps);
        out.remove(0);
        let pos = out.partition_point(|&t| t <= finish);
        out.insert(pos, finish);
        last = Some(finish);
    }
    (out, last)
}

/// Algorithm II, `CalT^m`: returns (new map vector, map-stage finish `e^m`). With no map tasks,
/// `e^m = now` (decision, digest A15 mirror: such a job's reduces may start at once).
pub fn cal_t_map(tm: &[Time], maps: u32, eps_m: Time, now: Time) -> (SlotVec, Time) {
    let (v, e) = list_schedule(tm, maps, eps_m, now);
    (v, e.unwrap_or(now))
}

/// Algorithm III, `CalT^r`: returns (new map vector, new reduce vector, e^m, e). With no reduce
/// tasks `e = e^m` and the reduce vector is unchanged (digest A15).
pub fn cal_t(tm: &[Time], tr: &[Time], maps: u32, reduces: u32, eps_m: Time, eps_r: Time, now: Time) -> CalT {
    let (tm2, em) = cal_t_map(tm, maps, eps_m, now);
    let (tr2, e) = list_schedule(tr, reduces, eps_r, em);
    CalT { tm: tm2, tr: tr2, e_map: em, e: e.unwrap_or(em) }
}

/// Result of [`cal_t`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalT {
    /// Map slots after the job.
    pub tm: SlotVec,
    /// Reduce slots after the job.
    pub tr: SlotVec,
    /// Estimated map-stage finish.
    pub e_map: Time,
    /// Estimated job finish.
    pub e: Time,
}

/// Algorithm VI, `SATU`: overwrite the smallest entry with each actual finish time, ascending.
pub fn satu(tp: &[Time], finishes: &[Time]) -> SlotVec {
    let mut u = tp.to_vec();
    if u.is_empty() {
        return u;
    }
    let mut sorted = finishes.to_vec();
    sorted.sort_unstable();
    for f in sorted {
        u.remove(0);
        let pos = u.partition_point(|&t| t <= f);
        u.insert(pos, f);
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ex1_r_greater_than_q_fits_in_waves() {
        let c = cal_t(&zeros(4), &zeros(2), 6, 3, 10, 20, 0);
        assert_eq!(c.tm, vec![10, 10, 20, 20]);
        assert_eq!(c.e_map, 20);
        assert_eq!(c.tr, vec![40, 60]);
        assert_eq!(c.e, 60);
    }

    #[test]
    fn ex6_current_time_clamp() {
        let c = cal_t(&[10, 10, 20, 20], &[40, 60], 2, 1, 10, 20, 50);
        assert_eq!(c.tm, vec![20, 20, 60, 60]);
        assert_eq!(c.e_map, 60);
        assert_eq!(c.tr, vec![60, 80]);
        assert_eq!(c.e, 80);
    }

    #[test]
    fn ex7_satu() {
        assert_eq!(satu(&[0, 0, 5, 8], &[12, 15, 20]), vec![8, 12, 15, 20]);
        assert_eq!(satu(&[3, 30], &[40, 41, 55]), vec![41, 55]);
    }

    #[test]
    fn map_only_jobs_finish_with_their_maps() {
        let c = cal_t(&zeros(2), &zeros(1), 3, 0, 10, 20, 5);
        assert_eq!((c.e_map, c.e), (25, 25));
        assert_eq!(c.tr, vec![0]);
    }

    fn sorted_vec(n: usize) -> impl Strategy<Value = Vec<Time>> {
        prop::collection::vec(0i64..200, n).prop_map(|mut v| {
            v.sort_unstable();
            v
        })
    }

    proptest! {
        #[test]
        fn cal_t_properties(
            tm in sorted_vec(4), tr in sorted_vec(2), m in 1u32..20, r in 0u32..6,
            em in 1i64..50, er in 1i64..50, now in 0i64..100, bump in 0i64..30,
        ) {
            let c = cal_t(&tm, &tr, m, r, em, er, now);
            // P1 sorted and same length; P2 output >= input elementwise.
            prop_assert!(c.tm.windows(2).all(|w| w[0] <= w[1]) && c.tm.len() == 4);
            prop_assert!(c.tr.windows(2).all(|w| w[0] <= w[1]) && c.tr.len() == 2);
            prop_assert!(c.tm.iter().zip(&tm).all(|(a, b)| a >= b));
            prop_assert!(c.e_map >= now + em);
            // P3 bounds.
            if r > 0 { prop_assert!(c.e >= c.e_map + er); }
            let ceil = |a: i64, b: i64| (a + b - 1) / b;
            let lower = now + ceil(m as i64, 4) * em + ceil(r as i64, 2) * er;
            prop_assert!(c.e >= lower);
            // P6 monotonicity: raising predecessor entries or eps never lowers e.
            let tm_up: Vec<Time> = tm.iter().map(|t| t + bump).collect();
            let c2 = cal_t(&tm_up, &tr, m, r, em + bump, er, now);
            prop_assert!(c2.e >= c.e);
        }
    }
}
