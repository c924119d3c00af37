//! Video frame traces for the `vtr` traffic model [Zhang07 §2.3.3]: the
//! file format and its loader ([`parse_frame_trace`], [`read_frame_trace`]),
//! and the synthetic MPEG-4-like generator ([`synthetic`]). Validation
//! reads a trace as the simulator does, so `qoslab validate` reports a bad
//! row where `qoslab run` would. See `docs/mechanisms/vtr.md`.
//!
//! **File format** (the paper's `<FrameArrivalTime, FrameSize>` records):
//! one frame a row, `time_s size_bytes`, the two fields separated by
//! whitespace or by one comma (with optional spaces around it); blank lines
//! and lines starting with `#` are skipped. `time_s` is the frame's time in
//! seconds (a decimal number >= 0), `size_bytes` its size in bytes (a whole
//! number 0 to 16777216; 0 is a frame that sends nothing). The frame rate is
//! constant: every gap between consecutive times must lie within a tenth
//! of the median gap (printed times are rounded; a missing or doubled frame
//! is refused at its row), and the frame interval is the mean gap,
//! `(last time - first time) / (rows - 1)`, rounded to whole ns. At least
//! two rows, and at least one frame above 0 bytes.
//!
//! **Generator** ([`synthetic`]): groups of pictures of 12 frames,
//! `IBBPBBPBBPBB` (N = 12, M = 3, the structure of the TKN MPEG-4 traces
//! the paper used; Fitzek & Reisslein, IEEE Network 15(6), 2001), at the
//! given frame interval (default 40 ms, 25 frames/s, theirs). A frame's
//! size is `w_type × a_scene × X`: type weights I : P : B = 4 : 2 : 1, `X`
//! lognormal of mean 1 with coefficient of variation 0.25 (I) or 0.4 (P, B)
//! (lognormal frame sizes per type: Krunz & Tripathi, 1997), and a scene
//! activity `a_scene`, lognormal of mean 1 and CV 0.5, drawn anew at scene
//! changes, scenes lasting an exponential time of mean 5 s (at least one
//! frame). The sizes are then scaled so that the whole trace's mean rate
//! is `mean_rate` (769 kb/s by default, [Zhang07 §2.3.3]) and rounded to
//! whole bytes (each at least 1 B). The weights, CVs and scene law are
//! qoslab's choices (the paper gives only the mean rate); they give a
//! peak-to-mean frame ratio and a second-scale variability like those of
//! real MPEG-4 video, which is what a measurement-based controller sees.

use crate::error::Diagnostic;
use crate::model::SyntheticTrace;
use qoslab_core::units::Dur;
use rand_distr::{Distribution, Exp, LogNormal};
use std::path::Path;

/// What a frame-trace file holds, for messages.
pub const TRACE_ALLOWED: &str =
    "rows \"time_s size_bytes\" (whitespace or a comma between; # comments), at a constant frame rate";
/// The largest frame a trace may hold, in bytes (16 MiB).
pub const MAX_FRAME: u64 = 1 << 24;
/// The most frames a trace may hold (ten hours at 100 frames/s).
pub const MAX_FRAMES: u32 = 3_600_000;
/// RNG stream of the synthetic generator (apart from every run's streams:
/// the generator is seeded by its own `seed`, not the run's).
pub const SYNTHETIC_STREAM: u64 = 0x5654_5200; // "VTR"

/// A frame trace: the constant time between frames and each frame's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameTrace {
    /// Time between frames (whole ns, > 0).
    pub interval: Dur,
    /// Frame sizes in bytes, in play order; at least one above 0.
    pub sizes: Vec<u32>,
}

impl FrameTrace {
    /// Total bytes of the trace.
    pub fn total_bytes(&self) -> u64 {
        self.sizes.iter().map(|&s| s as u64).sum()
    }
    /// Mean rate of the frame bytes in bit/s.
    pub fn mean_bps(&self) -> f64 {
        self.total_bytes() as f64 * 8e9 / (self.sizes.len() as f64 * self.interval.0 as f64)
    }
    /// Mean wire rate in bit/s when frames are cut into `payload`-byte packets
    /// and each carries `header` bytes more.
    pub fn mean_wire_bps(&self, payload: u64, header: u64) -> f64 {
        let packets: u64 = self.sizes.iter().map(|&s| (s as u64).div_ceil(payload.max(1))).sum();
        (self.total_bytes() + packets * header) as f64 * 8e9 / (self.sizes.len() as f64 * self.interval.0 as f64)
    }
    /// The trace as text in the file format (times with nine decimals: exact ns).
    pub fn to_text(&self, comment: &str) -> String {
        let mut out = String::with_capacity(self.sizes.len() * 20 + comment.len() + 40);
        for line in comment.lines() {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("# time_s size_bytes\n");
        for (k, s) in self.sizes.iter().enumerate() {
            let t = k as u128 * self.interval.0 as u128;
            out.push_str(&format!("{}.{:09} {s}\n", t / 1_000_000_000, t % 1_000_000_000));
        }
        out
    }
}

/// Reads and parses a frame-trace file, streamed a line at a time
/// ([`crate::files`]); `field` is the scenario path of the `trace` setting.
/// A file that cannot be read is a problem of the scenario's field (at
/// `origin:line`); a problem inside the file is at the file's own line.
pub fn read_frame_trace(path: &Path, origin: &str, line: Option<usize>, field: &str) -> Result<FrameTrace, Diagnostic> {
    let shown = path.display().to_string();
    let mut p = TraceParser::new(&shown, field);
    // Comment and blank lines besides the frames: as many again.
    crate::files::stream(path, 2 * MAX_FRAMES as usize, field, TRACE_ALLOWED, |n, l| p.line(n, l)).map_err(
        |e| match e {
            crate::files::DataError::Unreadable(e) => Diagnostic {
                origin: origin.to_string(),
                line,
                path: field.to_string(),
                message: format!("cannot read frame trace {shown}: {e}; allowed: a file of {TRACE_ALLOWED}"),
            },
            crate::files::DataError::Bad(d) => d,
        },
    )?;
    p.finish()
}

/// Parses a frame trace's text (format in the module doc). Problems are at
/// `origin:line`, path `field`; the first one found is returned.
pub fn parse_frame_trace(text: &str, origin: &str, field: &str) -> Result<FrameTrace, Diagnostic> {
    let mut p = TraceParser::new(origin, field);
    for (i, raw) in text.lines().enumerate() {
        p.line(i + 1, raw)?;
    }
    p.finish()
}

/// A frame trace read a line at a time.
struct TraceParser<'a> {
    origin: &'a str,
    field: &'a str,
    /// (line, time in ns, size)
    rows: Vec<(usize, f64, u32)>,
    /// The last line seen.
    last_line: usize,
}

impl<'a> TraceParser<'a> {
    fn new(origin: &'a str, field: &'a str) -> Self {
        TraceParser { origin, field, rows: Vec::new(), last_line: 0 }
    }

    fn err(&self, line: usize, message: String) -> Diagnostic {
        Diagnostic { origin: self.origin.to_string(), line: Some(line), path: self.field.to_string(), message }
    }

    fn line(&mut self, n: usize, raw: &str) -> Result<(), Diagnostic> {
        self.last_line = n;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let cells: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        if cells.len() != 2 {
            return Err(
                self.err(n, format!("{line:?} has {} fields; allowed: two, \"time_s size_bytes\"", cells.len()))
            );
        }
        if cells.iter().any(|c| c.is_empty()) {
            return Err(self.err(n, format!("{line:?} has an empty field; allowed: two, \"time_s size_bytes\"")));
        }
        let t: f64 = cells[0].parse().map_err(|_| {
            self.err(n, format!("time_s {:?} is not a number; allowed: seconds such as 0.04", cells[0]))
        })?;
        if !(t.is_finite() && (0.0..1.8e10).contains(&t)) {
            return Err(self.err(n, format!("time_s {} is out of range; allowed: seconds >= 0", cells[0])));
        }
        let size: u64 = cells[1].parse().map_err(|_| {
            self.err(n, format!("size_bytes {:?} is not a whole number; allowed: bytes 0 to {MAX_FRAME}", cells[1]))
        })?;
        if size > MAX_FRAME {
            return Err(self.err(n, format!("size_bytes {size} is too large; allowed: bytes 0 to {MAX_FRAME}")));
        }
        if let Some(&(_, prev, _)) = self.rows.last() {
            if t * 1e9 <= prev {
                return Err(self.err(
                    n,
                    format!("time_s {} is not after the previous frame's; allowed: increasing times", cells[0]),
                ));
            }
        }
        if self.rows.len() as u32 >= MAX_FRAMES {
            return Err(self.err(n, format!("more than {MAX_FRAMES} frames; allowed: at most {MAX_FRAMES}")));
        }
        self.rows.push((n, t * 1e9, size as u32));
        Ok(())
    }

    fn finish(self) -> Result<FrameTrace, Diagnostic> {
        let rows = &self.rows;
        let last_line = self.last_line.max(1);
        let err = |line: usize, message: String| self.err(line, message);
        if rows.len() < 2 {
            return Err(err(last_line, format!("{} frame rows; allowed: at least two, {TRACE_ALLOWED}", rows.len())));
        }
        if rows.iter().all(|r| r.2 == 0) {
            return Err(err(
                last_line,
                "every frame is 0 bytes; allowed: at least one frame above 0 bytes".to_string(),
            ));
        }
        // Constant frame rate: every gap within a tenth of the median gap
        // (printed times are rounded, so gaps differ by a unit of the last
        // digit; a missing or doubled frame is a gap twice or half as long).
        let mut gaps: Vec<f64> = rows.windows(2).map(|w| w[1].1 - w[0].1).collect();
        gaps.sort_by(f64::total_cmp);
        let median = gaps[gaps.len() / 2];
        for w in rows.windows(2) {
            let gap = w[1].1 - w[0].1;
            if (gap - median).abs() > median / 10.0 {
                return Err(err(
                    w[1].0,
                    format!(
                        "time_s {:.6} is {:.6} s after the previous frame, off the constant frame rate (frames \
                     {:.6} s apart); allowed: {TRACE_ALLOWED}",
                        w[1].1 / 1e9,
                        gap / 1e9,
                        median / 1e9
                    ),
                ));
            }
        }
        // The frame interval: the mean gap over the whole trace.
        let interval = (rows[rows.len() - 1].1 - rows[0].1) / (rows.len() - 1) as f64;
        Ok(FrameTrace { interval: Dur((interval.round() as u64).max(1)), sizes: rows.iter().map(|r| r.2).collect() })
    }
}

/// The settings' problems (field name below the synthetic table, message).
pub fn check_synthetic(s: &SyntheticTrace) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if !(2..=MAX_FRAMES).contains(&s.frames) {
        out.push(("frames", format!("{} frames; allowed: 2 to {MAX_FRAMES}", s.frames)));
    }
    if s.frame_interval.0 == 0 {
        out.push(("frame_interval", "0s; allowed: a duration above 0".to_string()));
    }
    let mean_frame = s.mean_rate.0 as f64 * s.frame_interval.0 as f64 / 8e9;
    if s.frame_interval.0 > 0 && !(1.0..=MAX_FRAME as f64 / 8.0).contains(&mean_frame) {
        out.push((
            "mean_rate",
            format!(
                "{} gives a mean frame of {mean_frame:.3} bytes at {}; allowed: a mean frame of 1 to {} bytes",
                s.mean_rate,
                s.frame_interval,
                MAX_FRAME / 8
            ),
        ));
    }
    out
}

/// Group of pictures: frame types in order (0 = I, 1 = P, 2 = B).
const GOP: [usize; 12] = [0, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2];
/// Mean size weights of I, P, B frames.
const TYPE_WEIGHT: [f64; 3] = [4.0, 2.0, 1.0];
/// Coefficient of variation of a frame's size within its type and scene.
const TYPE_CV: [f64; 3] = [0.25, 0.4, 0.4];
/// Scene activity: lognormal, mean 1, this CV.
const SCENE_CV: f64 = 0.5;
/// Mean scene length in seconds.
const SCENE_MEAN_S: f64 = 5.0;

/// The synthetic MPEG-4-like trace of `s` (model in the module doc).
/// Deterministic: the same settings give the same trace. `s` must pass
/// [`check_synthetic`].
pub fn synthetic(s: &SyntheticTrace) -> FrameTrace {
    let mut rng = qoslab_core::rng::stream(s.seed, SYNTHETIC_STREAM);
    let n = s.frames as usize;
    let frame_s = s.frame_interval.0 as f64 / 1e9;
    let lognormal = |cv: f64| LogNormal::from_mean_cv(1.0, cv).expect("a positive mean and CV");
    let types = TYPE_CV.map(lognormal);
    let scene_law = lognormal(SCENE_CV);
    let scene_len = Exp::new(frame_s / SCENE_MEAN_S).expect("a positive rate");
    let mut raw = Vec::with_capacity(n);
    let (mut left, mut activity) = (0usize, 1.0);
    for k in 0..n {
        if left == 0 {
            left = (scene_len.sample(&mut rng).round() as usize).max(1);
            activity = scene_law.sample(&mut rng);
        }
        left -= 1;
        let t = GOP[k % GOP.len()];
        raw.push(TYPE_WEIGHT[t] * activity * types[t].sample(&mut rng));
    }
    let target = s.mean_rate.0 as f64 * frame_s * n as f64 / 8.0;
    let scale = target / raw.iter().sum::<f64>();
    let sizes = raw.iter().map(|x| ((x * scale).round() as u64).clamp(1, MAX_FRAME) as u32).collect();
    FrameTrace { interval: s.frame_interval, sizes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::Rate;

    const F: &str = "traffic.0.trace";

    #[test]
    fn a_trace_reads_whitespace_and_comma_rows_and_skips_comments() {
        let t = parse_frame_trace("# a trace\n\n0.00 1000\n0.04, 0\n0.08 ,3000\n0.12\t20\n", "t.txt", F).unwrap();
        assert_eq!(t.sizes, vec![1000, 0, 3000, 20]);
        assert_eq!(t.interval, Dur::from_ms(40));
        assert_eq!(t.total_bytes(), 4020);
        // 4020 B in 4 frames of 40 ms: 201 kb/s.
        assert!((t.mean_bps() - 201_000.0).abs() < 1e-6);
        // 1500 B packets with a 28 B header: 1 + 0 + 2 + 1 packets.
        assert!((t.mean_wire_bps(1500, 28) - (4020.0 + 4.0 * 28.0) * 8.0 / 0.16).abs() < 1e-6);
    }

    #[test]
    fn a_rounded_frame_rate_is_constant_within_a_tenth_of_a_frame() {
        // 29.97 frames/s printed with three decimals.
        let text: String = (0..100).map(|k| format!("{:.3} 500\n", k as f64 / 29.97)).collect();
        let t = parse_frame_trace(&text, "t.txt", F).unwrap();
        // The interval is the span over the rows: off by at most a printed
        // unit (1 ms) over 99 intervals.
        assert!((t.interval.0 as f64 - 1e9 / 29.97).abs() < 1e6 / 99.0, "{}", t.interval);
    }

    #[test]
    fn each_kind_of_bad_row_is_named_at_its_file_and_line() {
        let bad = |text: &str| parse_frame_trace(text, "t.txt", F).unwrap_err().to_string();
        assert_eq!(
            bad("0 10\n0.04 10 7\n"),
            "t.txt:2: traffic.0.trace: \"0.04 10 7\" has 3 fields; allowed: two, \"time_s size_bytes\""
        );
        assert_eq!(
            bad("0 10\n0.04\n"),
            "t.txt:2: traffic.0.trace: \"0.04\" has 1 fields; allowed: two, \"time_s size_bytes\""
        );
        assert!(bad("# c\n0 10\nx 10\n").starts_with("t.txt:3: traffic.0.trace: time_s \"x\" is not a number"));
        assert!(
            bad("0 10\n0.04 1.5\n").starts_with("t.txt:2: traffic.0.trace: size_bytes \"1.5\" is not a whole number")
        );
        assert!(bad("0 10\n0.04 -3\n").starts_with("t.txt:2: traffic.0.trace: size_bytes \"-3\" is not a whole number"));
        assert!(bad("0 10\n0.04 99999999\n").starts_with("t.txt:2: traffic.0.trace: size_bytes 99999999 is too large"));
        assert!(bad("-1 10\n0.04 10\n").starts_with("t.txt:1: traffic.0.trace: time_s -1 is out of range"));
        assert!(bad("0 10\n0.04 10\n0.04 10\n").starts_with("t.txt:3: traffic.0.trace: time_s 0.04 is not after"));
        // A missing frame: 0, 0.04, 0.12, 0.16; the gap of 0.08 s is twice the median.
        assert!(bad("0 10\n0.04 10\n0.12 10\n0.16 10\n").starts_with(
            "t.txt:3: traffic.0.trace: time_s 0.120000 is 0.080000 s after the previous frame, off the constant frame rate"
        ));
        assert!(bad("# only\n0 10\n").starts_with("t.txt:2: traffic.0.trace: 1 frame rows; allowed: at least two"));
        assert!(bad("0 0\n0.04 0\n").contains("every frame is 0 bytes"));
        assert_eq!(
            bad("0 1\n0.04,\n"),
            "t.txt:2: traffic.0.trace: \"0.04,\" has an empty field; allowed: two, \"time_s size_bytes\""
        );
    }

    #[test]
    fn an_unreadable_trace_is_a_problem_of_the_scenario_field() {
        let e = read_frame_trace(Path::new("/nonexistent/t.txt"), "s.toml", Some(9), F).unwrap_err();
        assert!(
            e.to_string().starts_with("s.toml:9: traffic.0.trace: cannot read frame trace /nonexistent/t.txt"),
            "{e}"
        );
    }

    #[test]
    fn a_written_trace_reads_back_the_same() {
        let t = synthetic(&SyntheticTrace { frames: 500, ..Default::default() });
        let back = parse_frame_trace(&t.to_text("synthetic, seed 1"), "t.txt", F).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn the_synthetic_trace_is_deterministic_with_the_mean_rate_and_a_gop_structure() {
        let s = SyntheticTrace::default();
        let a = synthetic(&s);
        assert_eq!(a, synthetic(&s));
        assert_ne!(a.sizes, synthetic(&SyntheticTrace { seed: 2, ..s.clone() }).sizes);
        assert_eq!(a.sizes.len(), 180_000);
        assert_eq!(a.interval, Dur::from_ms(40));
        // The whole trace's mean: 769 kb/s within 0.01 % (rounding to whole bytes).
        assert!((a.mean_bps() / 769_000.0 - 1.0).abs() < 1e-4, "{}", a.mean_bps());
        // I frames are the largest on average: about 4 / 1.5 of the mean frame, B frames 1 / 1.5.
        let mean_of = |pos: usize| {
            let v: Vec<f64> = a.sizes.iter().skip(pos).step_by(12).map(|&x| x as f64).collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let mean = a.total_bytes() as f64 / a.sizes.len() as f64;
        assert!((mean_of(0) / mean - 4.0 / 1.5).abs() < 0.15, "I {}", mean_of(0) / mean);
        assert!((mean_of(3) / mean - 2.0 / 1.5).abs() < 0.1, "P {}", mean_of(3) / mean);
        assert!((mean_of(1) / mean - 1.0 / 1.5).abs() < 0.05, "B {}", mean_of(1) / mean);
        // One-minute windows (the mean call) vary: scenes make the rate bursty.
        let per_min: Vec<f64> =
            a.sizes.chunks(1500).map(|c| c.iter().map(|&x| x as f64).sum::<f64>() * 8.0 / 60.0).collect();
        let (lo, hi) = per_min.iter().fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(lo < 0.8 * 769_000.0 && hi > 1.2 * 769_000.0, "{lo} {hi}");
    }

    #[test]
    fn synthetic_settings_are_checked() {
        let bad = SyntheticTrace { frames: 1, frame_interval: Dur::ZERO, ..Default::default() };
        let e = check_synthetic(&bad);
        assert_eq!(e.iter().map(|x| x.0).collect::<Vec<_>>(), ["frames", "frame_interval"]);
        let tiny = SyntheticTrace { mean_rate: Rate(100), ..Default::default() };
        assert_eq!(check_synthetic(&tiny)[0].0, "mean_rate");
        assert!(check_synthetic(&SyntheticTrace::default()).is_empty());
    }
}
