//! The token bucket: one type for shapers, meters, PCN termination marking
//! and traffic sources.
//!
//! Sources: the (r, b) token bucket of RFC 2215 §3 (the TSpec of
//! integrated services); [MACE98 §3] (MACE flow-setup descriptors carry "a
//! port number and user specified token bucket parameters"); [Tarasiuk05 §2]
//! (per-connection shaper at rate R); [Zhang07 §4] (PCN termination marking:
//! "marking all packets which find no token in the token bucket", depth 256
//! packets).
//!
//! Tokens arrive at `rate` and accumulate up to `depth`; a packet of `size`
//! bytes conforms when the bucket holds at least `size` bytes of tokens, and
//! consuming it removes them:
//!
//! ```text
//! tokens(t)  = min(depth, tokens(t0) + rate * (t - t0) / 8)      bytes, rate in bit/s
//! conforms   : tokens(now) >= size
//! consume    : if conforms { tokens <- tokens - size }            (else unchanged)
//! wait(size) = earliest T >= now with tokens(T) >= size, minus now
//!            = 0                                    if conformant now
//!            = ceil((size - tokens(now)) * 8 / rate)   otherwise  (size <= depth)
//!            = never                                 if size > depth
//! ```
//!
//! **Exactness.** Tokens are kept as an integer in *scaled units* of
//! bit-nanoseconds per second: one byte is `8 * 10^9` units, and `dt`
//! nanoseconds at `rate` bit/s add exactly `rate * dt` units (u128, no
//! rounding). Because `min(D, min(D, x + r a) + r b) = min(D, x + r (a + b))`,
//! settling the bucket at many small steps gives exactly the state of one
//! big step: no drift, however long the run. [Zhang07 §4] shows why this
//! matters: the termination-marking results depend on whether the tokens
//! arriving in one CBR inter-packet interval are an exact multiple of the
//! packet size, which floating-point refill would blur.
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `rate` | bit/s | ≥ 1 | none: required (the descriptor's r) |
//! | `depth` | bytes | ≥ 1 | none: required (the descriptor's b; [Zhang07]: 256 packets) |
//!
//! Interpretations:
//! - Time never goes backwards: a `now` earlier than the last update is
//!   treated as the last update (the bucket neither refills nor rewinds).
//!   `time_to_conformance` still answers relative to the `now` it is given.
//! - `tokens(now)` reports whole bytes, rounded down; conformance compares
//!   the exact scaled amount, so a bucket holding 999.9 bytes does not pass
//!   a 1000-byte packet and reports 999.
//! - A packet larger than the depth never conforms (RFC 2215: such a packet
//!   is non-conformant); `time_to_conformance` answers `None` for it, and
//!   also when the wait would end beyond the last representable instant
//!   (`Time::MAX`, 584 years).
//! - No debt: a non-conformant packet leaves the bucket unchanged (a
//!   "consume or go negative" operation is deliberately absent).
//! - `set_rate` settles the tokens earned so far at the old rate, then
//!   changes the rate (re-shaping in [Tarasiuk05 §4]); the depth is unchanged.

use crate::error::ConfigError;
use crate::units::{Bytes, Dur, Rate, Time};

/// Scaled token units per byte: `8` bits times `10^9` ns/s.
const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// A token bucket's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucketConfig {
    /// Token arrival rate (bit/s).
    pub rate: Rate,
    /// Bucket depth (bytes): the most tokens it can hold.
    pub depth: Bytes,
}

impl TokenBucketConfig {
    /// Checks every field; called by [`TokenBucket::new`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_rate(self.rate)?;
        if self.depth.0 == 0 {
            return Err(ConfigError::new("token_bucket", "depth", "(0 B) must be at least 1 byte"));
        }
        Ok(())
    }
}

fn validate_rate(rate: Rate) -> Result<(), ConfigError> {
    if rate.0 == 0 {
        return Err(ConfigError::new("token_bucket", "rate", "(0 bit/s) must be at least 1 bit/s"));
    }
    Ok(())
}

/// A token bucket with exact integer refill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    config: TokenBucketConfig,
    /// `depth` in scaled units.
    depth_units: u128,
    /// Tokens held at `last`, in scaled units (never above `depth_units`).
    tokens: u128,
    /// When `tokens` was last settled.
    last: Time,
}

impl TokenBucket {
    /// A bucket created at `now`, full of tokens or empty.
    pub fn new(config: TokenBucketConfig, now: Time, full: bool) -> Result<TokenBucket, ConfigError> {
        config.validate()?;
        let depth_units = config.depth.0 as u128 * UNITS_PER_BYTE;
        Ok(TokenBucket { config, depth_units, tokens: if full { depth_units } else { 0 }, last: now })
    }

    pub fn config(&self) -> &TokenBucketConfig {
        &self.config
    }

    /// The instant the bucket was last settled (a `now` before it counts as it).
    pub fn last_update(&self) -> Time {
        self.last
    }

    /// Tokens at `now` in scaled units, without changing the bucket.
    #[inline]
    fn settled(&self, now: Time) -> u128 {
        let dt = now.0.saturating_sub(self.last.0) as u128;
        // rate and dt are both below 2^64, so the product fits in u128.
        let earned = self.config.rate.0 as u128 * dt;
        let room = self.depth_units - self.tokens;
        if earned >= room {
            self.depth_units
        } else {
            self.tokens + earned
        }
    }

    /// Brings the stored state forward to `now` (never backwards).
    #[inline]
    fn settle(&mut self, now: Time) {
        if now > self.last {
            self.tokens = self.settled(now);
            self.last = now;
        }
    }

    /// How long before `now` the bucket has been full since it was last
    /// settled: the tokens of that time were earned beyond `depth` and are
    /// lost at the next settle (zero if it fills at or after `now`). A pacer
    /// whose frame waited through it sent nothing while it could have: the
    /// link lost that time ([`crate::token_bucket`] module doc; the router's
    /// `service_lost_s`).
    pub fn full_for(&self, now: Time) -> Dur {
        let dt = now.0.saturating_sub(self.last.0) as u128;
        let (rate, room) = (self.config.rate.0 as u128, self.depth_units - self.tokens);
        // Not full by `now` (the router's on-time wakes): no division on that path.
        if rate * dt <= room {
            return Dur::ZERO;
        }
        // Full from `room / rate` on, in whole nanoseconds rounded up.
        Dur((dt - room.div_ceil(rate)) as u64)
    }

    /// Whole bytes of tokens held at `now` (rounded down).
    pub fn tokens(&self, now: Time) -> Bytes {
        Bytes((self.settled(now) / UNITS_PER_BYTE) as u64)
    }

    /// Would a packet of `size` bytes conform at `now`?
    #[inline]
    pub fn conforms(&self, now: Time, size: Bytes) -> bool {
        self.settled(now) >= size.0 as u128 * UNITS_PER_BYTE
    }

    /// Takes `size` bytes of tokens if the packet conforms at `now` and says
    /// so; otherwise leaves the tokens unchanged and returns `false`.
    #[inline]
    pub fn consume(&mut self, now: Time, size: Bytes) -> bool {
        self.settle(now);
        let need = size.0 as u128 * UNITS_PER_BYTE;
        if self.tokens >= need {
            self.tokens -= need;
            true
        } else {
            false
        }
    }

    /// How long after `now` a packet of `size` bytes first conforms, if no
    /// tokens are taken meanwhile: `Some(0)` if it conforms now, `None` if
    /// it never will (`size > depth`, or beyond `Time::MAX`). Exact: at
    /// `now + d` it conforms, at `now + d - 1ns` it does not.
    pub fn time_to_conformance(&self, now: Time, size: Bytes) -> Option<Dur> {
        let need = size.0 as u128 * UNITS_PER_BYTE;
        if need > self.depth_units {
            return None;
        }
        let have = self.settled(now);
        if have >= need {
            return Some(Dur::ZERO);
        }
        // Refill starts at the later of `now` and the last update.
        let start = now.max(self.last);
        let wait = (need - have).div_ceil(self.config.rate.0 as u128);
        let at = start.0 as u128 + wait;
        if at > u64::MAX as u128 {
            return None;
        }
        Some(Dur(at as u64 - now.0))
    }

    /// Changes the rate at `now`: the tokens earned up to `now` are settled
    /// at the old rate first. The new rate is validated before anything
    /// changes.
    pub fn set_rate(&mut self, now: Time, rate: Rate) -> Result<(), ConfigError> {
        validate_rate(rate)?;
        self.settle(now);
        self.config.rate = rate;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(rate: Rate, depth: u64, full: bool) -> TokenBucket {
        TokenBucket::new(TokenBucketConfig { rate, depth: Bytes(depth) }, Time::ZERO, full).unwrap()
    }

    #[test]
    fn full_for_is_the_time_past_filling_since_the_last_settle() {
        // 8 kb/s: 1 byte per ms; 100 B deep, built empty at t = 0.
        let c = TokenBucketConfig { rate: Rate(8_000), depth: Bytes(100) };
        let mut b = TokenBucket::new(c, Time(0), false).unwrap();
        let ms = |m: u64| Time(m * 1_000_000);
        assert_eq!(b.full_for(ms(99)), Dur::ZERO);
        assert_eq!(b.full_for(ms(100)), Dur::ZERO);
        assert_eq!(b.full_for(ms(130)), Dur(30_000_000));
        // Taking 40 B at 130 ms settles it: 40 ms to full again, the 30 ms before are gone.
        assert!(b.consume(ms(130), Bytes(40)));
        assert_eq!(b.full_for(ms(170)), Dur::ZERO);
        assert_eq!(b.full_for(ms(175)), Dur(5_000_000));
        // A `now` before the last settle counts as it.
        assert_eq!(b.full_for(ms(1)), Dur::ZERO);
    }

    #[test]
    fn token_bucket_one_megabit_for_one_second_gives_exactly_125000_bytes() {
        let b = bucket(Rate::mbps(1), 1_000_000, false);
        assert_eq!(b.tokens(Time(1_000_000_000)), Bytes(125_000));
        assert_eq!(b.tokens(Time(999_999_999)), Bytes(124_999), "floor, not round");
        assert!(b.conforms(Time(1_000_000_000), Bytes(125_000)));
        assert!(!b.conforms(Time(999_999_999), Bytes(125_000)));
        // 1 byte at 1 Mb/s takes exactly 8 us.
        assert_eq!(b.tokens(Time(8_000)), Bytes(1));
        assert_eq!(b.tokens(Time(7_999)), Bytes(0));
    }

    #[test]
    fn token_bucket_billion_tiny_steps_equal_one_big_step() {
        // An awkward rate, so that each 1 ns step earns a fraction of a byte
        // (999_983 / 8e9 B). A debug build takes ~30 ns per step, so it runs
        // 10^7 steps; the release build that `make test` uses runs 10^9.
        let steps: u64 = if cfg!(debug_assertions) { 10_000_000 } else { 1_000_000_000 };
        let rate = Rate(999_983);
        let mut small = bucket(rate, u64::MAX / 8, false);
        for t in 1..=steps {
            small.settle(Time(t));
        }
        let mut big = bucket(rate, u64::MAX / 8, false);
        assert!(big.consume(Time(steps), Bytes(0)));
        assert_eq!(small.tokens, big.tokens);
        assert_eq!(small.tokens, steps as u128 * 999_983);
        assert_eq!(small.tokens(Time(steps)), Bytes((steps as u128 * 999_983 / 8_000_000_000) as u64));
    }

    #[test]
    fn token_bucket_steps_with_consumption_match_the_closed_form() {
        // 1 Mb/s (125 B/ms), a 100-byte packet every ms for 10 s: each
        // conforms, and the bucket ends with exactly 25 B per ms accumulated.
        let mut b = bucket(Rate::mbps(1), 1_000_000, false);
        for k in 1..=10_000u64 {
            assert!(b.consume(Time(k * 1_000_000), Bytes(100)), "packet {k}");
        }
        assert_eq!(b.tokens(Time(10_000_000_000)), Bytes(250_000));
    }

    #[test]
    fn token_bucket_caps_at_depth() {
        let mut b = bucket(Rate::mbps(8), 1500, true); // 1 B/us
        assert_eq!(b.tokens(Time::ZERO), Bytes(1500));
        assert_eq!(b.tokens(Time(1_000_000_000_000)), Bytes(1500));
        assert!(b.consume(Time(0), Bytes(1000)));
        assert_eq!(b.tokens(Time(0)), Bytes(500));
        assert_eq!(b.tokens(Time(999_000)), Bytes(1499));
        assert_eq!(b.tokens(Time(1_000_000)), Bytes(1500));
        assert_eq!(b.tokens(Time(5_000_000)), Bytes(1500), "refill beyond the depth is lost");
        assert!(b.consume(Time(5_000_000), Bytes(1500)));
        assert_eq!(b.tokens(Time(5_000_000)), Bytes(0));
    }

    #[test]
    fn token_bucket_non_conformant_consume_leaves_tokens_unchanged() {
        let mut b = bucket(Rate::mbps(8), 1500, false);
        assert!(!b.consume(Time(999_000), Bytes(1000))); // holds 999 B
        assert_eq!(b.tokens(Time(999_000)), Bytes(999));
        assert!(b.consume(Time(1_000_000), Bytes(1000)));
        assert_eq!(b.tokens(Time(1_000_000)), Bytes(0));
    }

    #[test]
    fn token_bucket_time_to_conformance_is_the_exact_earliest_instant() {
        for (rate, depth, size, t0, spent) in [
            (Rate::mbps(1), 10_000u64, 1000u64, 0u64, 0u64),
            (Rate(999_983), 64_000, 1337, 12_345, 500),
            (Rate::gbps(10), 9000, 64, 7, 9000),
            (Rate(1), 3, 3, 0, 0),
        ] {
            let mut b = bucket(rate, depth, false);
            b.consume(Time(t0), Bytes(spent));
            let now = Time(t0 + 1);
            let d = b.time_to_conformance(now, Bytes(size)).expect("size <= depth");
            assert!(d.0 > 0, "an empty bucket is not conformant at once");
            assert!(b.conforms(now + d, Bytes(size)), "rate {rate}: conforms at now + {d}");
            assert!(!b.conforms(Time(now.0 + d.0 - 1), Bytes(size)), "rate {rate}: not 1 ns earlier");
            assert_eq!(b.time_to_conformance(now + d, Bytes(size)), Some(Dur::ZERO));
        }
        // 1000 B at 1 Mb/s from empty: exactly 8 ms.
        assert_eq!(bucket(Rate::mbps(1), 1500, false).time_to_conformance(Time(0), Bytes(1000)), Some(Dur::from_ms(8)));
    }

    #[test]
    fn token_bucket_size_above_depth_never_conforms() {
        let mut b = bucket(Rate::gbps(1), 1500, true);
        assert_eq!(b.time_to_conformance(Time(0), Bytes(1501)), None);
        assert!(!b.conforms(Time(u64::MAX), Bytes(1501)));
        assert!(!b.consume(Time(u64::MAX), Bytes(1501)));
        assert_eq!(b.tokens(Time(u64::MAX)), Bytes(1500));
        assert_eq!(b.time_to_conformance(Time(0), Bytes(1500)), Some(Dur::ZERO));
    }

    #[test]
    fn token_bucket_wait_beyond_the_end_of_time_is_never() {
        let depth = u64::MAX / UNITS_PER_BYTE as u64 + 10;
        let b = bucket(Rate(1), depth, false);
        // Filling ~2.3e9 bytes at 1 bit/s takes just over 2^64 ns: past Time::MAX.
        assert_eq!(b.time_to_conformance(Time(0), Bytes(depth)), None);
        assert!(b.time_to_conformance(Time(0), Bytes(1)).is_some());
    }

    #[test]
    fn token_bucket_set_rate_settles_at_the_old_rate_first() {
        let mut b = bucket(Rate::mbps(8), 1_000_000, false); // 1 B/us
        b.set_rate(Time(1_000_000), Rate::mbps(16)).unwrap(); // 1000 B earned at the old rate
        assert_eq!(b.tokens(Time(1_000_000)), Bytes(1000));
        assert_eq!(b.tokens(Time(2_000_000)), Bytes(3000), "then 2 B/us");
        assert_eq!(b.config().rate, Rate::mbps(16));
        let e = b.set_rate(Time(3_000_000), Rate(0)).unwrap_err();
        assert_eq!(e.to_string(), "token_bucket.rate (0 bit/s) must be at least 1 bit/s");
        assert_eq!(b.config().rate, Rate::mbps(16), "a refused rate changes nothing");
        assert_eq!(b.tokens(Time(2_000_000)), Bytes(3000));
    }

    #[test]
    fn token_bucket_time_before_last_update_counts_as_last_update() {
        let mut b = bucket(Rate::mbps(8), 10_000, false);
        assert!(b.consume(Time(2_000_000), Bytes(1500))); // 2000 earned, 500 left
        assert_eq!(b.tokens(Time(1_000_000)), Bytes(500), "no rewind");
        assert!(!b.consume(Time(1_000_000), Bytes(501)));
        assert_eq!(b.last_update(), Time(2_000_000));
        // 1000 B needs 500 more: 500 us after the last update, 1500 us after t = 1 ms.
        assert_eq!(b.time_to_conformance(Time(1_000_000), Bytes(1000)), Some(Dur::from_us(1500)));
        assert_eq!(b.time_to_conformance(Time(1_000_000), Bytes(500)), Some(Dur::ZERO));
    }

    #[test]
    fn token_bucket_extreme_values_do_not_overflow() {
        let mut b =
            TokenBucket::new(TokenBucketConfig { rate: Rate(u64::MAX), depth: Bytes(u64::MAX) }, Time(0), false)
                .unwrap();
        assert_eq!(b.tokens(Time(u64::MAX)), Bytes(u64::MAX));
        assert!(b.consume(Time(u64::MAX), Bytes(u64::MAX)));
        assert_eq!(b.tokens(Time(u64::MAX)), Bytes(0));
        assert_eq!(b.time_to_conformance(Time(u64::MAX), Bytes(1)), None);
    }

    #[test]
    fn token_bucket_config_errors_name_the_field() {
        let e = TokenBucket::new(TokenBucketConfig { rate: Rate(0), depth: Bytes(1) }, Time(0), true).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("token_bucket", "rate"));
        let e = TokenBucket::new(TokenBucketConfig { rate: Rate(1), depth: Bytes(0) }, Time(0), true).unwrap_err();
        assert_eq!(e.to_string(), "token_bucket.depth (0 B) must be at least 1 byte");
        assert!(TokenBucketConfig { rate: Rate(1), depth: Bytes(1) }.validate().is_ok());
    }
}
