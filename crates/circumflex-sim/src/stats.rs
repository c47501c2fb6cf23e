//! The lab's one statistics module: mean, standard deviation (sample and population), the spread of
//! a sample, and the Student t 95% interval. Every study, report and the simulator's metrics use
//! these, so a figure's definition is written once.
//!
//! Decision: two standard deviations, named by what they divide by, because the committed reports
//! use both and must regenerate byte for byte: [`sample_sd`] (`n - 1`, the estimate over seeds or
//! rounds: ASRPT, RTMR, Adaptive ch. 3, FlowFlex, Gridmix intervals) and [`population_sd`] (`n`,
//! the spread of a fixed grid of configurations or cells: CIRCUMFLEX, Reverse-Adaptive ch. 5).
//! Empty samples give 0 (mean and both deviations) so tables stay printable; [`mean_ci95`] gives NaN
//! instead, because an interval over nothing must not look like a measurement.

use serde::Serialize;

/// Arithmetic mean; 0 for an empty sample.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Sample variance (divides by `n - 1`); 0 for fewer than two values.
pub fn sample_variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation (divides by `n - 1`); 0 for fewer than two values.
pub fn sample_sd(xs: &[f64]) -> f64 {
    sample_variance(xs).sqrt()
}

/// Population standard deviation (divides by `n`); 0 for an empty sample.
pub fn population_sd(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// Min, median and max of a sample (median of an even count: mean of the middle two; NaN when empty).
pub fn min_median_max(xs: &[f64]) -> (f64, f64, f64) {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let n = v.len();
    let med = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    (v[0], med, v[n - 1])
}

/// Summary statistics of a sample: mean, sample standard deviation, min and max.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub std: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
}

impl Spread {
    /// Statistics of `xs` (zeros for an empty sample).
    pub fn of(xs: &[f64]) -> Spread {
        if xs.is_empty() {
            return Spread::default();
        }
        Spread {
            mean: mean(xs),
            std: sample_sd(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Two-sided 95% Student t quantile for `df` degrees of freedom (the normal 1.96 past 30).
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        d if d <= TABLE.len() => TABLE[d - 1],
        _ => 1.96,
    }
}

/// Mean and the half-width of its 95% Student t confidence interval (NaN for an empty sample; the
/// half-width is NaN for fewer than two values).
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let m = mean(xs);
    if n < 2 {
        return (m, f64::NAN);
    }
    (m, t95(n - 1) * (sample_variance(xs) / n as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_deviations_differ_by_their_divisor() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert_eq!(population_sd(&xs), 2.0);
        assert!((sample_sd(&xs) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((mean(&[]), sample_sd(&[1.0]), population_sd(&[])), (0.0, 0.0, 0.0));
    }

    #[test]
    fn spread_and_median() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.mean, s.std, s.min, s.max), (2.0, 1.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[]), Spread::default());
        assert_eq!(min_median_max(&[3.0, 1.0, 2.0]), (1.0, 2.0, 3.0));
        assert_eq!(min_median_max(&[4.0, 1.0, 2.0, 3.0]), (1.0, 2.5, 4.0));
    }

    #[test]
    fn confidence_interval_uses_student_t() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-9, "{h}");
        assert!(mean_ci95(&[5.0]).1.is_nan() && mean_ci95(&[]).0.is_nan());
        assert!(t95(0).is_nan());
        assert_eq!(t95(100), 1.96);
    }
}
