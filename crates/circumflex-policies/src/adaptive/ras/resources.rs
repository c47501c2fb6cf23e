//! Multi-resource demands and capacities of RAS (thesis §4.2.1, Table 4.2): CPU, disk I/O and
//! memory, each as a fraction of one TaskTracker's capacity (1.0 = the whole node).
//!
//! A job's profile gives one demand per sub-phase: map, reduce while shuffling, reduce while
//! reducing. Decisions (digest gap 15): the thesis's shuffle I/O is "per map placed, bounded by
//! parallelCopies"; a reducer's shuffle I/O is taken at that bound (`per map × parallel copies`),
//! which is what the offline profiling measures, so a placed reducer has a fixed demand. Shuffle
//! memory is not given ("–"); we use the job's map memory (a shuffle buffer is about a sort
//! buffer), because the reduce-phase memory (up to 60%) would let reducers alone fill nodes, which
//! the thesis says rarely happens.

/// Number of resources modelled.
pub const RESOURCES: usize = 3;
/// Resource names, in [`Demand`] order.
pub const RESOURCE_NAMES: [&str; RESOURCES] = ["cpu", "io", "memory"];

/// Demand (or capacity) per resource: `[cpu, io, memory]` as fractions of one node.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand(pub [f64; RESOURCES]);

impl Demand {
    /// A whole node: 1.0 of every resource.
    pub const NODE: Demand = Demand([1.0; RESOURCES]);
    /// No demand.
    pub const ZERO: Demand = Demand([0.0; RESOURCES]);

    /// `[cpu, io, memory]`.
    pub fn new(cpu: f64, io: f64, memory: f64) -> Demand {
        Demand([cpu, io, memory])
    }

    /// Component-wise sum.
    pub fn plus(self, other: Demand) -> Demand {
        let mut d = self;
        for (a, b) in d.0.iter_mut().zip(other.0) {
            *a += b;
        }
        d
    }

    /// Component-wise difference.
    pub fn minus(self, other: Demand) -> Demand {
        let mut d = self;
        for (a, b) in d.0.iter_mut().zip(other.0) {
            *a -= b;
        }
        d
    }

    /// Component-wise product with a count.
    pub fn times(self, n: f64) -> Demand {
        Demand(self.0.map(|x| x * n))
    }

    /// Whether `self + extra` stays within `capacity` on every resource. A tiny tolerance absorbs
    /// float rounding of sums such as `0.1 × 10`.
    pub fn fits(self, extra: Demand, capacity: Demand) -> bool {
        (0..RESOURCES).all(|r| self.0[r] + extra.0[r] <= capacity.0[r] + 1e-9)
    }

    /// The largest ratio `self[r] / capacity[r]` (how overcommitted the busiest resource is).
    pub fn max_ratio(self, capacity: Demand) -> f64 {
        (0..RESOURCES)
            .map(|r| {
                if capacity.0[r] > 0.0 {
                    self.0[r] / capacity.0[r]
                } else if self.0[r] > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max)
    }
}

/// A job's resource profile per sub-phase (Table 4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// One map task.
    pub map: Demand,
    /// One reduce task while shuffling (fixed: see the module docs).
    pub shuffle: Demand,
    /// One reduce task in its reduce (and final sort) sub-phase.
    pub reduce: Demand,
}

impl Profile {
    /// Builds a profile from Table 4.2's form: shuffle I/O given per map placed, bounded by
    /// `parallel_copies` (Hadoop `mapreduce.reduce.shuffle.parallelcopies`, default 5).
    pub fn from_table(map: Demand, shuffle_io_per_map: f64, reduce: Demand, parallel_copies: u32) -> Profile {
        let shuffle = Demand::new(0.0, shuffle_io_per_map * f64::from(parallel_copies), map.0[2]);
        Profile { map, shuffle, reduce }
    }

    /// A profile that makes a node hold `per_node` tasks of any type: the fallback for jobs that
    /// declare no profile (digest gap 20).
    pub fn uniform(per_node: u32) -> Profile {
        let share = 1.0 / f64::from(per_node.max(1));
        let d = Demand::new(share, share, share);
        Profile { map: d, shuffle: d, reduce: d }
    }

    /// Checks every value is finite, non-negative and at most one node.
    pub fn validate(&self) -> Result<(), circumflex_core::error::Error> {
        for (phase, d) in [("map", self.map), ("shuffle", self.shuffle), ("reduce", self.reduce)] {
            for (r, v) in d.0.iter().enumerate() {
                if !(v.is_finite() && (0.0..=1.0).contains(v)) {
                    return Err(circumflex_core::error::Error::job(
                        &format!("profile.{phase}.{}", RESOURCE_NAMES[r]),
                        v,
                        "a fraction of one node in [0, 1]",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The three Gridmix applications of thesis chapter 4 (Table 4.2), with parallelCopies = 5.
pub mod gridmix {
    use super::{Demand, Profile};

    /// Sort: map 30% CPU, 45% I/O, 25% memory; shuffle 0.15% I/O per map; reduce 20/50/60%.
    pub fn sort() -> Profile {
        Profile::from_table(Demand::new(0.30, 0.45, 0.25), 0.0015, Demand::new(0.20, 0.50, 0.60), 5)
    }

    /// Combine: map 25/10/10%; shuffle 0.015% I/O per map; reduce 10/10/25%.
    pub fn combine() -> Profile {
        Profile::from_table(Demand::new(0.25, 0.10, 0.10), 0.00015, Demand::new(0.10, 0.10, 0.25), 5)
    }

    /// Select: map 15/20/10%; shuffle 0.015% I/O per map; reduce 10/10/25%.
    pub fn select() -> Profile {
        Profile::from_table(Demand::new(0.15, 0.20, 0.10), 0.00015, Demand::new(0.10, 0.10, 0.25), 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_checks_every_resource() {
        let used = Demand::new(0.6, 0.2, 0.5);
        assert!(used.fits(Demand::new(0.4, 0.8, 0.5), Demand::NODE));
        assert!(!used.fits(Demand::new(0.41, 0.0, 0.0), Demand::NODE));
        assert!(!used.fits(Demand::new(0.0, 0.0, 0.51), Demand::NODE));
        assert!(Demand::new(0.1, 0.1, 0.1).times(10.0).fits(Demand::ZERO, Demand::NODE));
        assert!((used.max_ratio(Demand::NODE) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn table_profiles_are_valid_and_sort_is_io_bound() {
        for p in [gridmix::sort(), gridmix::combine(), gridmix::select()] {
            p.validate().unwrap();
        }
        // Two Sort maps fill 90% of a node's I/O; a third does not fit.
        let s = gridmix::sort().map;
        assert!(s.times(2.0).fits(Demand::ZERO, Demand::NODE));
        assert!(!s.times(3.0).fits(Demand::ZERO, Demand::NODE));
        assert!((gridmix::sort().shuffle.0[1] - 0.0075).abs() < 1e-12);
        let bad = Profile { map: Demand::new(1.5, 0.0, 0.0), ..Profile::uniform(2) };
        assert!(bad.validate().unwrap_err().to_string().contains("profile.map.cpu"));
    }
}
