//! Self-contained SVG charts for reports: line charts (CDFs, curves against a parameter) and
//! grouped bar charts with error bars. No dependency: the charts are simple, and writing SVG
//! directly keeps the output byte-for-byte deterministic, so committed plots diff cleanly.

use std::fmt::Write;

/// Colour cycle (colour-blind-safe-ish, matplotlib's tab10 order).
pub const COLOURS: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// Escapes text for SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One named series of points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points `(x, y)`, drawn in order.
    pub points: Vec<(f64, f64)>,
}

/// Axis ticks: about `n` round values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 1000.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else if (v * 10.0).fract().abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn plot_w(&self) -> f64 {
        self.w - self.left - self.right
    }
    fn plot_h(&self) -> f64 {
        self.h - self.top - self.bottom
    }
}

fn header(f: &Frame, title: &str, x_label: &str, y_label: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#,
        w = f.w,
        h = f.h
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#, f.w / 2.0, esc(title));
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        f.left + f.plot_w() / 2.0,
        f.h - 10.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        f.top + f.plot_h() / 2.0,
        esc(y_label)
    );
    s
}

/// Horizontal grid lines with labels at each y tick.
fn y_grid(s: &mut String, f: &Frame, ticks: Vec<f64>, sy: impl Fn(f64) -> f64) {
    for t in ticks {
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            f.left,
            f.left + f.plot_w(),
            f.left - 6.0,
            sy(t) + 4.0,
            fmt_tick(t),
            y = sy(t)
        );
    }
}

/// The plot area's border.
fn frame(s: &mut String, f: &Frame) {
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        f.left,
        f.top,
        f.plot_w(),
        f.plot_h()
    );
}

fn legend(s: &mut String, f: &Frame, names: &[&str]) {
    for (i, name) in names.iter().enumerate() {
        let y = f.top + 10.0 + 18.0 * i as f64;
        let x = f.w - f.right + 12.0;
        let c = COLOURS[i % COLOURS.len()];
        let _ = writeln!(s, r#"<rect x="{x}" y="{}" width="14" height="10" fill="{c}"/>"#, y - 9.0);
        let _ = writeln!(s, r#"<text x="{}" y="{y}">{}</text>"#, x + 20.0, esc(name));
    }
}

/// A line chart. `y_range` fixes the y axis (e.g. `(0, 1)` for CDFs); otherwise it spans the data.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series], y_range: Option<(f64, f64)>) -> String {
    let f = Frame { w: 760.0, h: 460.0, left: 70.0, right: 190.0, top: 40.0, bottom: 50.0 };
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if let Some((a, b)) = y_range {
        (y0, y1) = (a, b);
    } else if y1 - y0 < 1e-12 {
        y1 = y0 + 1.0;
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    let sx = |x: f64| f.left + (x - x0) / (x1 - x0) * f.plot_w();
    let sy = |y: f64| f.top + f.plot_h() - (y - y0) / (y1 - y0) * f.plot_h();
    let mut s = header(&f, title, x_label, y_label);
    for t in ticks(x0, x1, 8) {
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            f.top,
            f.top + f.plot_h(),
            f.top + f.plot_h() + 16.0,
            fmt_tick(t),
            x = sx(t)
        );
    }
    y_grid(&mut s, &f, ticks(y0, y1, 6), sy);
    frame(&mut s, &f);
    for (i, ser) in series.iter().enumerate() {
        let path: Vec<String> = ser
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y.clamp(y0, y1))))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
            COLOURS[i % COLOURS.len()],
            path.join(" ")
        );
    }
    legend(&mut s, &f, &series.iter().map(|x| x.name.as_str()).collect::<Vec<_>>());
    s.push_str("</svg>\n");
    s
}

/// A grouped bar chart: for each group (x category) one bar per series, with optional error bars
/// `(low, high)`. `values[series][group]`. A dashed reference line at `reference` if given.
pub fn grouped_bars(
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[String],
    values: &[Vec<f64>],
    errors: Option<&[Vec<(f64, f64)>]>,
    reference: Option<f64>,
) -> String {
    let f = Frame { w: 860.0, h: 460.0, left: 70.0, right: 170.0, top: 40.0, bottom: 70.0 };
    let mut y1: f64 = reference.unwrap_or(0.0);
    for (k, row) in values.iter().enumerate() {
        for (g, v) in row.iter().enumerate() {
            let hi = errors.and_then(|e| e.get(k)).and_then(|r| r.get(g)).map_or(*v, |e| e.1.max(*v));
            if hi.is_finite() {
                y1 = y1.max(hi);
            }
        }
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.08 };
    let sy = |y: f64| f.top + f.plot_h() - (y / y1) * f.plot_h();
    let mut s = header(&f, title, "", y_label);
    y_grid(&mut s, &f, ticks(0.0, y1, 6), sy);
    let gw = f.plot_w() / groups.len().max(1) as f64;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    for (g, name) in groups.iter().enumerate() {
        let gx = f.left + gw * g as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            gx + gw / 2.0,
            f.top + f.plot_h() + 18.0,
            esc(name)
        );
        for (k, row) in values.iter().enumerate() {
            let Some(&v) = row.get(g) else { continue };
            if !v.is_finite() {
                continue;
            }
            let x = gx + gw * 0.1 + bw * k as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                sy(v),
                bw * 0.95,
                (f.top + f.plot_h() - sy(v)).max(0.0),
                COLOURS[k % COLOURS.len()]
            );
            if let Some(&(lo, hi)) = errors.and_then(|e| e.get(k)).and_then(|r| r.get(g)) {
                let cx = x + bw * 0.475;
                let _ = writeln!(
                    s,
                    r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#000"/>"##,
                    sy(lo),
                    sy(hi)
                );
            }
        }
    }
    if let Some(r) = reference {
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#000" stroke-dasharray="5,4"/>"##,
            f.left,
            f.left + f.plot_w(),
            y = sy(r)
        );
    }
    frame(&mut s, &f);
    legend(&mut s, &f, &series.iter().map(String::as_str).collect::<Vec<_>>());
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let t = ticks(0.0, 1.0, 5);
        let want = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        assert_eq!(t.len(), want.len());
        assert!(t.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9), "{t:?}");
        let t = ticks(3.0, 97.0, 8);
        assert!(t.first().unwrap() >= &3.0 && t.last().unwrap() <= &97.0 && t.len() >= 4, "{t:?}");
    }

    #[test]
    fn charts_are_well_formed_and_deterministic() {
        let series = vec![Series { name: "a<b".into(), points: vec![(0.0, 0.0), (1.0, 1.0)] }];
        let svg = line_chart("t", "x", "y", &series, Some((0.0, 1.0)));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a&lt;b") && svg.contains("<polyline"));
        assert_eq!(svg, line_chart("t", "x", "y", &series, Some((0.0, 1.0))));
        let bars = grouped_bars(
            "t",
            "y",
            &["g1".into(), "g2".into()],
            &["s1".into()],
            &[vec![1.0, 2.0]],
            Some(&[vec![(0.5, 1.5), (1.5, 2.5)]]),
            Some(1.0),
        );
        assert_eq!(bars.matches("<rect x=").count(), 2 + 1 + 1, "two bars, the frame, one legend swatch");
        assert!(bars.contains("stroke-dasharray"));
    }
}
