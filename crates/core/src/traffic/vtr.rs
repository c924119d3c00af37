//! Video trace source (VTR, [Zhang07 §2.3.3]): a flow plays its group's
//! frame trace (`qoslab_scenario::vtr::FrameTrace`) from a random frame
//! on, wrapping at the end.
//!
//! - Frames are `frame` ns apart from the flow's start (a constant frame
//!   rate; the frame clock never drifts).
//! - A frame of `S` bytes is `ceil(S / payload)` packets `spacing` ns apart
//!   from the frame's time, each of `payload` bytes but the last, which
//!   carries the remainder; each adds `header` bytes on the wire. Frames of
//!   0 bytes send nothing.
//! - A frame whose packets have not all left when the next frame is due
//!   (more than `frame / spacing` packets) delays that frame's first packet
//!   to one spacing after its own last; the frame clock itself does not
//!   move, so the delay does not accumulate beyond the burst.
//! - The start frame is uniform over the trace's frames (the flow's own
//!   RNG stream), moved on to the next frame above 0 bytes.
//!
//! The trace is the group's, shared by its flows (`GroupPlan::frames`);
//! a flow holds only its place in it (24 bytes).
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `trace` | file or `{ synthetic = ... }` | see `qoslab_scenario::vtr` | - |
//! | `interval` (spacing) | time | > 0 | 1 ms |
//! | `size` (payload) | bytes | fixed, >= 1 | - (the seed: 1500 B) |

use crate::rng::Rng;
use crate::units::Time;
use rand::Rng as _;

/// A group's VTR constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtrPlan {
    /// Time between frames, ns.
    pub frame: u64,
    /// Time between a frame's packets, ns.
    pub spacing: u64,
    /// Payload of a full packet, bytes.
    pub payload: u32,
    /// Header bytes of every packet.
    pub header: u32,
}

/// A flow's place in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vtr {
    /// Time of the current frame.
    frame_at: Time,
    /// Ideal time of the packet about to be (or just) sent.
    pkt_at: Time,
    /// Index of the current frame.
    frame: u32,
    /// Bytes of the current frame not yet sent (the packet about to be sent included).
    left: u32,
}

impl Vtr {
    pub fn new() -> Vtr {
        Vtr { frame_at: Time::ZERO, pkt_at: Time::ZERO, frame: 0, left: 0 }
    }
    /// Starts at a uniform random frame, moved on to the next one above
    /// 0 bytes, whose first packet leaves at `start`; returns `start`.
    /// `frames` has a frame above 0 bytes (validation).
    pub fn first(&mut self, start: Time, frames: &[u32], rng: &mut Rng) -> Time {
        let n = frames.len() as u32;
        self.frame = if n == 0 { 0 } else { rng.random_range(0..n) };
        for _ in 0..n {
            if frames[self.frame as usize] > 0 {
                break;
            }
            self.frame = if self.frame + 1 >= n { 0 } else { self.frame + 1 };
        }
        self.left = frames.get(self.frame as usize).copied().unwrap_or(0);
        self.frame_at = start;
        self.pkt_at = start;
        start
    }
    /// Wire size of the packet due at `pkt_at`.
    #[inline]
    pub fn wire_size(&self, plan: &VtrPlan) -> u32 {
        self.left.min(plan.payload).saturating_add(plan.header)
    }
    /// Ideal time of the next packet after the one just sent.
    #[inline]
    pub fn next_send(&mut self, plan: &VtrPlan, frames: &[u32]) -> Time {
        self.left -= self.left.min(plan.payload);
        let after = Time(self.pkt_at.0.saturating_add(plan.spacing));
        if self.left > 0 {
            self.pkt_at = after;
        } else {
            self.advance_with(plan, frames, after);
        }
        self.pkt_at
    }
    /// Moves to the next frame above 0 bytes; its first packet at its frame
    /// time, or at `earliest` if the previous frame ran past it.
    fn advance_with(&mut self, plan: &VtrPlan, frames: &[u32], earliest: Time) {
        let n = frames.len() as u32;
        for _ in 0..n {
            self.frame = if self.frame + 1 >= n { 0 } else { self.frame + 1 };
            self.frame_at = Time(self.frame_at.0.saturating_add(plan.frame));
            let s = frames[self.frame as usize];
            if s > 0 {
                self.left = s;
                self.pkt_at = self.frame_at.max(earliest);
                return;
            }
        }
        // Validation: a trace has a frame above 0 bytes. Not reached.
        self.pkt_at = Time::MAX;
    }
}

impl Default for Vtr {
    fn default() -> Self {
        Vtr::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: VtrPlan = VtrPlan { frame: 40_000_000, spacing: 1_000_000, payload: 1500, header: 0 };

    /// (time ns, wire size) of the packets sent before `until`.
    fn play(v: &mut Vtr, frames: &[u32], plan: &VtrPlan, until: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        let mut t = v.pkt_at;
        while t.0 < until {
            out.push((t.0, v.wire_size(plan)));
            t = v.next_send(plan, frames);
        }
        out
    }

    #[test]
    fn a_frame_is_cut_into_full_packets_1ms_apart_and_a_remainder() {
        let frames = [4000, 0, 1500, 10];
        let mut v = Vtr { frame_at: Time::ZERO, pkt_at: Time::ZERO, frame: 0, left: 4000 };
        let ms = 1_000_000;
        assert_eq!(
            play(&mut v, &frames, &PLAN, 200 * ms),
            vec![
                (0, 1500),
                (ms, 1500),
                (2 * ms, 1000),
                // frame 1 is empty; frame 2 at 80 ms, frame 3 at 120 ms, then frame 0 again at 160 ms.
                (80 * ms, 1500),
                (120 * ms, 10),
                (160 * ms, 1500),
                (161 * ms, 1500),
                (162 * ms, 1000),
            ]
        );
    }

    #[test]
    fn a_frame_too_large_for_its_interval_delays_the_next_without_drift() {
        // 45 packets at 1 ms need 45 ms; frames are 40 ms apart.
        let frames = [45 * 1500, 1500, 1500];
        let mut v = Vtr { frame_at: Time::ZERO, pkt_at: Time::ZERO, frame: 0, left: frames[0] };
        let sent = play(&mut v, &frames, &PLAN, 121_000_000);
        assert_eq!(sent[44].0, 44_000_000);
        assert_eq!(sent[45].0, 45_000_000, "the next frame waits one spacing after the last packet");
        assert_eq!(sent[46].0, 80_000_000, "the frame clock has not moved");
        assert_eq!(sent[47].0, 120_000_000);
    }

    #[test]
    fn the_start_frame_is_random_and_never_empty() {
        let frames = [0, 0, 700, 0];
        let mut seen = std::collections::BTreeSet::new();
        for s in 0..50 {
            let mut rng = crate::rng::stream(s, 1);
            let mut v = Vtr::new();
            let t = v.first(Time(5), &frames, &mut rng);
            assert_eq!(t, Time(5));
            assert_eq!(v.wire_size(&PLAN), 700);
            seen.insert(v.frame);
        }
        assert_eq!(seen.len(), 1, "every start moves on to the one non-empty frame");
        let frames: Vec<u32> = (1..=100).collect();
        let starts: std::collections::BTreeSet<u32> = (0..200)
            .map(|s| {
                let mut v = Vtr::new();
                v.first(Time::ZERO, &frames, &mut crate::rng::stream(s, 1));
                v.frame
            })
            .collect();
        assert!(starts.len() > 70, "{}", starts.len());
    }

    #[test]
    fn a_flows_place_in_the_trace_is_small() {
        assert_eq!(std::mem::size_of::<Vtr>(), 24);
    }
}
