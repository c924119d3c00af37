//! The link's propagation delay, emulated in the router (the kernel may
//! lack netem): a frame received at `t` is held in its pool slot until
//! `t + link.delay` and only then offered to the port pipeline.
//!
//! Holding the delay before the queue rather than after the pacer gives
//! the same departures: a constant delay shifts every arrival by the same
//! amount, so the queue sees the same arrival process, only later, and a
//! frame leaves at `t + delay + wait + transmission` either way (the
//! simulator's order is `wait + transmission + delay`). Both directions are
//! delayed, as a scenario link's `delay` is one way each. Frames wait in
//! arrival order (one constant delay keeps that order), and the slots they
//! hold come from the router's pool: `pool` must cover `rate × delay`
//! worth of frames plus the queues (docs/router.md, "Delay"). The line
//! counts what it holds per receiving side, so the datapath can bound each
//! direction's share of the pool.

use qoslab_core::units::{Dur, Time};
use std::collections::VecDeque;

/// Frames received but not yet due, in arrival order.
#[derive(Debug, Default)]
pub struct DelayLine {
    held: VecDeque<Held>,
    per_side: [usize; 2],
}

/// A frame waiting out the delay: due time, receiving side, pool slot, length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub due: Time,
    pub side: usize,
    pub slot: u32,
    pub len: usize,
}

impl DelayLine {
    /// Holds a frame received at `now` on `side` until `now + delay`.
    pub fn hold(&mut self, now: Time, delay: Dur, side: usize, slot: u32, len: usize) {
        self.held.push_back(Held { due: now + delay, side, slot, len });
        self.per_side[side] += 1;
    }
    /// The next frame due at or before `now`, if any.
    pub fn pop_due(&mut self, now: Time) -> Option<Held> {
        if self.held.front().is_some_and(|h| h.due <= now) {
            let h = self.held.pop_front()?;
            self.per_side[h.side] -= 1;
            Some(h)
        } else {
            None
        }
    }
    /// Frames held that arrived on `side`.
    pub fn held(&self, side: usize) -> usize {
        self.per_side[side]
    }
    /// When the next frame is due.
    pub fn next_due(&self) -> Option<Time> {
        self.held.front().map(|h| h.due)
    }
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
    pub fn len(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_line_releases_each_frame_at_its_due_time_in_order() {
        let mut d = DelayLine::default();
        let delay = Dur::from_ms(20);
        d.hold(Time(0), delay, 0, 7, 100);
        d.hold(Time(1_000_000), delay, 1, 8, 200);
        assert_eq!(d.next_due(), Some(Time(20_000_000)));
        assert_eq!((d.held(0), d.held(1)), (1, 1));
        assert_eq!(d.pop_due(Time(19_999_999)), None);
        assert_eq!(d.pop_due(Time(20_000_000)).map(|h| (h.side, h.slot, h.len)), Some((0, 7, 100)));
        assert_eq!(d.pop_due(Time(20_000_000)), None);
        assert_eq!((d.len(), d.held(0), d.held(1)), (1, 0, 1));
        assert_eq!(d.pop_due(Time(30_000_000)).map(|h| h.slot), Some(8));
        assert!(d.is_empty());
        assert_eq!(d.next_due(), None);
    }
}
