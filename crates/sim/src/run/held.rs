//! What each flow still has in the network at the end of a run, counted
//! from the packets actually held, not derived from the flow's counters.
//! Part of [`super::Sim`].
//!
//! A flow's `in_flight_pkts` in the results is this count, so the identity
//! `sent = delivered + dropped + in_flight` is a check of the simulator's
//! accounting: a packet that left a queue without being counted as
//! delivered or dropped (or was counted twice) breaks it. The walk visits
//! every place a packet can be between its emission and its end:
//!
//! - the flow's entry shaper (see `shaping`);
//! - every link direction's port, through
//!   [`qoslab_core::pipeline::Port::for_each_packet`]: its queue discipline
//!   ([`qoslab_core::Qdisc::for_each_packet`]: classful children, CBT,
//!   D-CBT, ChIPS, MACE's two-level queue included) and its device
//!   transmit queue (stages hold no packets);
//! - each direction's pipe: the packet on the wire and those propagating.
//!
//! Packets a receiver sends back (TCP ACKs, MM_APP feedback; the
//! [`agents::REVERSE`](super::agents::REVERSE) bit of their handle) are
//! counted apart, for the flow's `reverse_*` columns.

use super::agents::REVERSE;
use super::Sim;
use qoslab_core::Packet;

/// Packets of each flow held in the network, indexed by flow id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// The flow's own (data) packets.
    pub forward: Vec<u64>,
    /// Packets its receiver sent back towards the source.
    pub reverse: Vec<u64>,
}

impl Held {
    fn count(&mut self, p: &Packet) {
        let side = if p.handle & REVERSE != 0 { &mut self.reverse } else { &mut self.forward };
        // A packet of a flow that does not exist is left out, so that the
        // flows' conservation identity, not a panic, reports it.
        if let Some(n) = side.get_mut(p.flow.index()) {
            *n += 1;
        }
    }
}

impl Sim {
    /// Counts, per flow, the packets held now: in entry shapers, in link
    /// queues and MACE device queues, on wires and propagating.
    pub fn held_per_flow(&self) -> Held {
        let n = self.flows.len();
        let mut held = Held { forward: vec![0; n], reverse: vec![0; n] };
        let mut count = |p: &Packet| held.count(p);
        self.shaping.for_each_packet(&mut count);
        for d in &self.net.dirs {
            d.port.for_each_packet(&mut count);
            d.pipe.iter().for_each(|x| count(&x.pkt));
        }
        held
    }
}
