//! Constant bit rate: one packet every `interval`, or every
//! `payload * 8 / rate` when a `rate` is given (the rate counts payload
//! bits; with random sizes the mean payload is used).
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rate` | bit/s of payload | > 0; exactly one of `rate`, `interval` | - |
//! | `interval` | time | > 0 | - |
//!
//! Send times are `start + floor(k * period)` for k = 0, 1, ... with the
//! period kept as an exact fraction of nanoseconds, so a flow never drifts
//! from its rate however long it runs (3 Mb/s of 1000 B: 2.666... ms,
//! exact over 10^9 packets). Packets are sent while the send time is
//! before the flow's end.

use qoslab_core::units::{Dur, Rate, Time};

/// A period of `num / den` nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub num: u128,
    pub den: u128,
}

impl Period {
    pub fn from_interval(d: Dur) -> Period {
        Period { num: d.0 as u128, den: 1 }
    }
    /// The period of `payload_bits_x1000 / 1000` bits at `rate` (payload
    /// bits in thousandths, so that a mean payload may be fractional).
    /// `None` for a zero rate.
    pub fn from_rate(payload_millibits: u128, rate: Rate) -> Option<Period> {
        (rate.0 > 0).then(|| Period { num: payload_millibits * 1_000_000, den: rate.0 as u128 })
    }
    /// `floor(k * num / den)` ns, saturating.
    #[inline]
    pub fn offset(&self, k: u64) -> u64 {
        let v = (k as u128 * self.num) / self.den;
        v.min(u64::MAX as u128) as u64
    }
    pub fn as_ns_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// A CBR source's state: the start of its grid and the next packet's index.
#[derive(Clone, Copy, Debug)]
pub struct Cbr {
    pub period: Period,
    start: Time,
    k: u64,
}

impl Cbr {
    pub fn new(period: Period) -> Cbr {
        Cbr { period, start: Time::ZERO, k: 0 }
    }
    /// The first send time of a flow starting at `start`.
    pub fn first(&mut self, start: Time) -> Time {
        self.start = start;
        self.k = 0;
        start
    }
    /// The send time after the current one.
    #[inline]
    pub fn next_send(&mut self) -> Time {
        self.k += 1;
        Time(self.start.0.saturating_add(self.period.offset(self.k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_grid_is_exact_and_never_drifts() {
        // 1000 B at 3 Mb/s: 8000/3 us.
        let p = Period::from_rate(8000 * 1000, Rate::mbps(3)).unwrap();
        let mut c = Cbr::new(p);
        assert_eq!(c.first(Time(5)), Time(5));
        assert_eq!(c.next_send(), Time(5 + 2_666_666));
        assert_eq!(c.next_send(), Time(5 + 5_333_333));
        assert_eq!(c.next_send(), Time(5 + 8_000_000));
        // Packet 10^9 is sent at exactly 10^9 * 8/3 ms.
        assert_eq!(p.offset(1_000_000_000), 2_666_666_666_666_666);
    }

    #[test]
    fn cbr_interval_and_fractional_payload() {
        let mut c = Cbr::new(Period::from_interval(Dur::from_ms(10)));
        c.first(Time(0));
        assert_eq!(c.next_send(), Time(10_000_000));
        // A mean payload of 100.5 B at 804 kb/s: 1 ms.
        let p = Period::from_rate(804_000, Rate::kbps(804)).unwrap();
        assert_eq!(p.offset(1), 1_000_000);
        assert!(Period::from_rate(1, Rate(0)).is_none());
    }
}
