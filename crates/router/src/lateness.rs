//! How late the forwarding loop woke for the datapath's timers.
//!
//! The loop sleeps in `ppoll` until the datapath's next timer (the delay
//! line's next release, a pacer's next packet, a mechanism's timer) unless a
//! frame or a call wakes it first. When it wakes at or after that instant,
//! the time past it is the timer's lateness: the kernel's wake-up latency,
//! and on a loaded machine the time the thread waited for a core. A late
//! wake sends the packets it releases late and together, as a late generator
//! does, so the testbed's run health reports it beside the generators'
//! (`docs/testbed.md`, "Run health").
//!
//! Bounded memory: the wakes' lateness is counted in a fixed histogram of
//! 256 bins, exact below 16 ns and four bins an octave above (a bin's upper
//! edge is at most 25 % above its lower one), so a router that runs for
//! days keeps the same 2 KiB.

use serde_json::{json, Value};

/// Bins: 16 exact ones (0 – 15 ns), then four an octave for 2^4 … 2^63 ns.
const BINS: usize = 16 + 60 * 4;

/// One millisecond, in ns (the bins' unit).
const MS: u64 = 1_000_000;

/// The loop's timer wakes and how late they were.
#[derive(Clone, Debug)]
pub struct Lateness {
    /// Wakes at or after the timer the loop slept for.
    pub wakes: u64,
    /// Of them, more than 1 ms late.
    pub over_1ms: u64,
    /// The latest, ns.
    pub max_ns: u64,
    bins: [u64; BINS],
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { wakes: 0, over_1ms: 0, max_ns: 0, bins: [0; BINS] }
    }
}

/// The bin of a lateness of `ns` nanoseconds.
fn bin(ns: u64) -> usize {
    if ns < 16 {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros() as usize; // 2^e <= ns < 2^(e+1), e >= 4
    let sub = ((ns >> (e - 2)) & 3) as usize;
    16 + (e - 4) * 4 + sub
}

/// The largest lateness bin `i` holds (ns).
fn upper_edge(i: usize) -> u64 {
    if i < 16 {
        return i as u64;
    }
    let e = (i - 16) / 4 + 4;
    let sub = ((i - 16) % 4) as u128;
    // The bin holds [(4 + sub) << (e - 2), (5 + sub) << (e - 2)); the last one ends at u64::MAX.
    (((5 + sub) << (e - 2)) - 1).min(u128::from(u64::MAX)) as u64
}

impl Lateness {
    /// A wake `ns` nanoseconds after the timer it slept for.
    pub fn record(&mut self, ns: u64) {
        self.wakes += 1;
        self.over_1ms += u64::from(ns > MS);
        self.max_ns = self.max_ns.max(ns);
        self.bins[bin(ns)] += 1;
    }

    /// The `q` quantile (0 < q <= 1) of the wakes' lateness, as the upper edge of its bin
    /// (within 25 % above the true value; exact below 16 ns), never above the largest
    /// lateness seen; 0 without wakes.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.wakes == 0 {
            return 0;
        }
        let rank = ((q * self.wakes as f64).ceil() as u64).clamp(1, self.wakes);
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return upper_edge(i).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The stats lines' `wake` object.
    pub fn to_json(&self) -> Value {
        json!({
            "wakes": self.wakes,
            "late_over_1ms": self.over_1ms,
            "late_p99_ns": self.quantile_ns(0.99),
            "late_max_ns": self.max_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lateness_falls_in_a_bin_whose_edge_is_at_most_a_quarter_above_it() {
        let mut ns = 0u64;
        while ns < u64::MAX / 3 {
            let i = bin(ns);
            assert!(i < BINS, "{ns} ns: bin {i}");
            let hi = upper_edge(i);
            assert!(hi >= ns, "{ns} ns: bin {i} ends at {hi}");
            assert!(hi as f64 <= ns as f64 * 1.25 + 1.0, "{ns} ns: bin {i} ends at {hi}");
            if i > 0 {
                assert!(upper_edge(i - 1) < ns, "{ns} ns also fits bin {}", i - 1);
            }
            ns += ns / 8 + 1; // below u64::MAX / 3, so no overflow
        }
        assert_eq!(bin(u64::MAX), BINS - 1);
    }

    #[test]
    fn the_quantiles_count_the_wakes_and_never_pass_the_largest() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile_ns(0.99), 0);
        for _ in 0..990 {
            l.record(10_000); // 10 us
        }
        for _ in 0..10 {
            l.record(5 * MS);
        }
        assert_eq!((l.wakes, l.over_1ms, l.max_ns), (1000, 10, 5 * MS));
        let p99 = l.quantile_ns(0.99);
        assert!((10_000..=12_500).contains(&p99), "p99 {p99}");
        assert_eq!(l.quantile_ns(0.995), 5 * MS, "the bin's edge is cut at the largest");
        l.record(MS); // exactly 1 ms is not over it
        assert_eq!(l.over_1ms, 10);
        let j = l.to_json();
        assert_eq!(j["wakes"], 1001);
        assert_eq!(j["late_over_1ms"], 10);
        assert_eq!(j["late_max_ns"], 5 * MS);
    }
}
