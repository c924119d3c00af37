//! Pre-Congestion Notification (PCN): the interior meters and the domain
//! edge behaviours of the controlled-load architecture that seed
//! [Zhang07] (draft-zhang-pcn-performance-evaluation)
//! evaluates (draft-briscoe-tsvwg-cl-architecture).
//!
//! - [`admission_meter`]: [`VirtualQueueMeter`], the interior node's
//!   admission marking (a virtual queue at the configured-admissible-rate,
//!   "ramp" or "step" marking; [Zhang07 §3.1.1], §3.4.1). Stage kind `pcn_admission`.
//! - [`termination_meter`]: [`ExcessMeter`], the interior node's termination
//!   marking (a token bucket at the configured-termination-rate; [Zhang07 §4.1]).
//!   Stage kind `pcn_termination`.
//! - [`egress`]: [`PcnEgress`], per ingress-egress aggregate (IEA): the
//!   congestion-level estimate (CLE, [Zhang07 §3.1.2]) and the
//!   sustainable-aggregate-rate measurement with the §4.1 state machine.
//! - [`ingress`]: [`PcnIngress`], per IEA: admission against the egress's
//!   CLE [Zhang07 §2.2] and flow termination down to the sustainable rate
//!   ([Zhang07 §4.1], §4.3.1).
//! - [`edge`]: [`PcnEdge`], one node's ingress and egress parts as one
//!   [`crate::edge::EdgeBehaviour`] (a node of a parking lot is the
//!   egress of one IEA and the ingress of the next).
//!
//! **Marks.** Admission marks are `ThresholdMarked`, termination marks are
//! `ExcessMarked` (the RFC 6660 names); they are distinct, and the excess
//! mark takes precedence: [`mark_threshold`] never overwrites an excess
//! mark, [`mark_excess`] overwrites a threshold mark. The final mark of a
//! packet therefore does not depend on the order of the two meters in a
//! port (see `docs/decisions.md`, "PCN").
//!
//! **Later meters.** The RFC 5670 threshold and excess-traffic meters are
//! meant to be added as further stage types beside these two (one file
//! each, the same marking helpers); [`MarkingCurve`] is an enum so that
//! more curves can be added without a flag.

pub mod admission_meter;
pub mod termination_meter;

pub use admission_meter::{MarkingCurve, VirtualQueue, VirtualQueueConfig, VirtualQueueMeter, VirtualQueueStats};
pub use termination_meter::{ExcessMeter, ExcessMeterConfig, ExcessMeterStats};

use crate::packet::{Packet, PcnMark};

/// Scaled units per byte of the virtual queue, as in the token bucket:
/// bit·ns/s, so that draining at `rate` bit/s for `dt` ns removes exactly
/// `rate · dt` units and a threshold of `d` ns at `rate` is `rate · d` units.
pub(crate) const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// Is the packet PCN traffic (any of the three PCN encodings)?
#[inline]
pub fn is_pcn(pkt: &Packet) -> bool {
    pkt.pcn != PcnMark::NotPcn
}

/// Sets the admission (threshold) mark on a not-marked PCN packet. A packet
/// already threshold- or excess-marked keeps its mark (excess wins).
/// Returns whether the mark was set here.
#[inline]
pub fn mark_threshold(pkt: &mut Packet) -> bool {
    if pkt.pcn == PcnMark::NotMarked {
        pkt.pcn = PcnMark::ThresholdMarked;
        true
    } else {
        false
    }
}

/// Sets the termination (excess-traffic) mark on a PCN packet not yet
/// excess-marked, overwriting a threshold mark. Returns whether it was set here.
#[inline]
pub fn mark_excess(pkt: &mut Packet) -> bool {
    match pkt.pcn {
        PcnMark::NotMarked | PcnMark::ThresholdMarked => {
            pkt.pcn = PcnMark::ExcessMarked;
            true
        }
        PcnMark::NotPcn | PcnMark::ExcessMarked => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::units::Time;

    fn pkt(mark: PcnMark) -> Packet {
        let mut p = Packet::new(0, FlowId(0), 100, Time::ZERO);
        p.pcn = mark;
        p
    }

    #[test]
    fn excess_mark_takes_precedence_over_threshold_mark_in_either_order() {
        use PcnMark::*;
        for first_threshold in [true, false] {
            let mut p = pkt(NotMarked);
            if first_threshold {
                assert!(mark_threshold(&mut p));
                assert!(mark_excess(&mut p));
            } else {
                assert!(mark_excess(&mut p));
                assert!(!mark_threshold(&mut p));
            }
            assert_eq!(p.pcn, ExcessMarked);
        }
    }

    #[test]
    fn non_pcn_packets_are_never_marked() {
        let mut p = pkt(PcnMark::NotPcn);
        assert!(!mark_threshold(&mut p));
        assert!(!mark_excess(&mut p));
        assert_eq!(p.pcn, PcnMark::NotPcn);
        assert!(!is_pcn(&p));
    }
}
