//! ChIPS, Cut-In Packet Scheduling (Claypool & Chung, [Claypool00 §3.2],
//! Fig. 4): a placement that lets tagged packets cut into the queue at the
//! position of RED's average on transient congestion, with a virtual FIFO
//! that keeps the class accounting as if nothing had cut in.
//!
//! For an admitted packet, with `q` the packets queued before it and `avg`
//! RED's average after this arrival's update:
//!
//! ```text
//! if the packet is tagged and ChIPS is on and q > avg:
//!     k = round(avg)                                  (packets ahead of it; half rounds up)
//!     if keep_flow_order: k = max(k, 1 + position of the last queued packet of its flow)
//!     insert at index k                               (0 = head)
//! else: append at the tail
//! ChIPS is on while  N_tagged / N <= max_tagged_share (active flows, this packet's included)
//! ```
//!
//! The virtual FIFO: every admitted packet's class (and size) joins the
//! tail of a FIFO of records, wherever the packet itself went; every
//! departure removes the head record, whatever packet really left. The
//! per-class occupancy the class averages read (CBT, D-CBT) is the virtual
//! FIFO's, so a tagged packet that left early still counts until a plain
//! FIFO would have sent it, and cutting in cannot lower the tagged average.
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `max_tagged_share` | fraction of active flows | (0, 1] | 0.5 [Claypool00 §5] |
//! | `keep_flow_order` | flag | | true (interpretation, see below) |
//!
//! Interpretations:
//! - Switch-off rule: tagged flows over *all* active flows, off when the
//!   share exceeds `max_tagged_share`. The paper writes "the ratio between the
//!   number of tagged flows and the other flows" but reports tagged/all
//!   (28% and 15%); we use tagged/all. `1.0` keeps ChIPS always on (the paper
//!   notes CBT does not need the switch). Counts come from the queue's
//!   active-flow counter (300 ms sweeps), shared with D-CBT when present.
//! - `q > avg` compares the instantaneous queue (packets waiting, not the
//!   one on the wire) with RED's average just updated for this arrival.
//! - Position: `round(avg)` packets stay ahead of the inserted packet, with
//!   halves rounded up (`f64::round`). In byte mode the packet goes to the
//!   packet boundary whose byte offset is nearest to `avg` (halves later).
//! - Flow order: the paper's rule alone can put a tagged packet ahead of an
//!   earlier packet of its own flow (two back-to-back packets both inserted
//!   at `round(avg)`, or one appended at the tail at `q <= avg` followed by
//!   one cut in ahead of it). Reordering a media stream adds the very jitter
//!   ChIPS exists to remove, so by default a packet never passes its own
//!   flow: it goes right behind that flow's last queued packet if that is
//!   further back. `keep_flow_order = false` gives the paper's literal rule.
//!   Other classes' packets are never moved relative to each other.
//! - Admission does not change: in packet mode RED, CBT and D-CBT make the
//!   same decisions over ChIPS as over a FIFO (only the order differs).
//! - The [Claypool00 §6.3]'s bound, "15pkts * 8Kbits / 25Mbps" of queueing at
//!   `max_th`, is 4.8 ms, not the 3 ms it states (its measured maximum
//!   jitter under ChIPS, about 5 ms, agrees with 4.8 ms).

use super::classes::{Class, ClassBacklog};
use super::queue::Placement;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::red::RedMode;
use crate::qdisc::ProbeSink;
use std::collections::VecDeque;

use super::flow_counter::FlowCounts;

/// ChIPS's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChipsConfig {
    /// ChIPS is off while tagged flows exceed this share of all active flows.
    pub max_tagged_share: f64,
    /// Never insert a packet ahead of an earlier packet of its own flow.
    pub keep_flow_order: bool,
}

impl Default for ChipsConfig {
    fn default() -> Self {
        ChipsConfig { max_tagged_share: 0.5, keep_flow_order: true }
    }
}

impl ChipsConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let s = self.max_tagged_share;
        if !(s > 0.0 && s <= 1.0) {
            return Err(ConfigError::new(
                "chips",
                "max_tagged_share",
                format!("({s}) must be in (0, 1]: a share of active flows, 1 for always on"),
            ));
        }
        Ok(())
    }
}

/// A FIFO of class records: the queue as it would be had nothing cut in.
#[derive(Clone, Debug, Default)]
pub struct VirtualFifo {
    records: VecDeque<(Class, u32)>,
    classes: ClassBacklog,
}

impl VirtualFifo {
    pub fn new() -> VirtualFifo {
        VirtualFifo::default()
    }
    /// A packet of `class` and `size` bytes joined the real queue.
    pub fn push(&mut self, class: Class, size: u32) {
        self.records.push_back((class, size));
        let b = &mut self.classes[class];
        b.packets += 1;
        b.bytes += size as u64;
    }
    /// A packet left the real queue: the head record leaves, whichever it is.
    pub fn pop(&mut self) -> Option<(Class, u32)> {
        let (class, size) = self.records.pop_front()?;
        let b = &mut self.classes[class];
        b.packets -= 1;
        b.bytes -= size as u64;
        Some((class, size))
    }
    pub fn class_backlog(&self) -> &ClassBacklog {
        &self.classes
    }
    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
    pub fn clear(&mut self) {
        self.records.clear();
        self.classes = ClassBacklog::default();
    }
}

/// What ChIPS did with tagged arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChipsStats {
    /// Tagged packets placed ahead of the tail.
    pub cut_ins: u64,
    /// Tagged packets appended because the queue was not above the average.
    pub tail_no_congestion: u64,
    /// Tagged packets appended because ChIPS was switched off.
    pub tail_switched_off: u64,
    /// Cut-ins moved back behind their own flow's last queued packet.
    pub held_behind_own_flow: u64,
}

/// ChIPS as a placement.
#[derive(Clone, Debug)]
pub struct Chips {
    config: ChipsConfig,
    vfifo: VirtualFifo,
    stats: ChipsStats,
}

impl Chips {
    pub fn new(config: ChipsConfig) -> Result<Chips, ConfigError> {
        config.validate()?;
        Ok(Chips { config, vfifo: VirtualFifo::new(), stats: ChipsStats::default() })
    }
    pub fn config(&self) -> &ChipsConfig {
        &self.config
    }
    pub fn stats(&self) -> &ChipsStats {
        &self.stats
    }
    pub fn virtual_fifo(&self) -> &VirtualFifo {
        &self.vfifo
    }
    /// Is ChIPS on for these active-flow counts?
    pub fn is_on(&self, flows: Option<&FlowCounts>) -> bool {
        flows.and_then(|f| f.share(Class::Tagged)).is_none_or(|s| s <= self.config.max_tagged_share)
    }
}

/// The index at which a packet cut in at the average `avg` goes.
pub fn cut_position(queue: &VecDeque<Packet>, avg: f64, mode: RedMode) -> usize {
    match mode {
        RedMode::Packets => {
            let k = avg.max(0.0).round();
            if k >= queue.len() as f64 {
                queue.len()
            } else {
                k as usize
            }
        }
        RedMode::Bytes => {
            let mut ahead = 0.0;
            for (i, p) in queue.iter().enumerate() {
                let next = ahead + p.size as f64;
                if next > avg {
                    return if avg - ahead < next - avg { i } else { i + 1 };
                }
                ahead = next;
            }
            queue.len()
        }
    }
}

impl Placement for Chips {
    fn kind(&self) -> &'static str {
        "chips"
    }
    fn needs_flow_counts(&self) -> bool {
        self.config.max_tagged_share < 1.0
    }

    fn position(
        &mut self,
        pkt: &Packet,
        class: Class,
        queue: &VecDeque<Packet>,
        red_avg: f64,
        mode: RedMode,
        flows: Option<&FlowCounts>,
    ) -> usize {
        let tail = queue.len();
        if class != Class::Tagged {
            return tail;
        }
        if !self.is_on(flows) {
            self.stats.tail_switched_off += 1;
            return tail;
        }
        let q = match mode {
            RedMode::Packets => queue.len() as f64,
            RedMode::Bytes => queue.iter().map(|p| p.size as u64).sum::<u64>() as f64,
        };
        if q <= red_avg {
            self.stats.tail_no_congestion += 1;
            return tail;
        }
        let mut at = cut_position(queue, red_avg, mode);
        if self.config.keep_flow_order {
            if let Some(j) = queue.range(at..).rposition(|p| p.flow == pkt.flow) {
                at += j + 1;
                self.stats.held_behind_own_flow += 1;
            }
        }
        if at < tail {
            self.stats.cut_ins += 1;
        }
        at
    }
    fn on_enqueue(&mut self, class: Class, pkt: &Packet) {
        self.vfifo.push(class, pkt.size);
    }
    fn on_dequeue(&mut self, _class: Class, _pkt: &Packet) {
        self.vfifo.pop();
    }
    fn class_backlog(&self) -> &ClassBacklog {
        self.vfifo.class_backlog()
    }
    fn reset(&mut self) {
        self.vfifo.clear();
    }
    fn probe(&self, flows: Option<&FlowCounts>, sink: ProbeSink<'_>) {
        sink("chips_on", self.is_on(flows) as u8 as f64);
        if let Some(s) = flows.and_then(|f| f.share(Class::Tagged)) {
            sink("tagged_share", s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::classes::ClassMap;
    use super::super::flow_counter::FlowCounterConfig;
    use super::super::queue::{ClassQueue, Tail};
    use super::*;
    use crate::packet::{ClassTag, FlowId};
    use crate::qdisc::red::RedConfig;
    use crate::qdisc::red::RedStage;
    use crate::qdisc::{Dequeue, Limit, Qdisc};
    use crate::units::{Rate, Time};

    fn pkt(id: u64, flow: u32, class: Class) -> Packet {
        let mut p = Packet::new(id, FlowId(flow), 1000, Time(0));
        p.class = ClassTag(class as u8);
        p
    }
    fn queue_of(n: u64) -> VecDeque<Packet> {
        (0..n).map(|i| pkt(i, 100 + i as u32, Class::Tcp)).collect()
    }
    fn chips(cfg: ChipsConfig) -> Chips {
        Chips::new(cfg).unwrap()
    }
    fn flows(tcp: u32, tagged: u32) -> FlowCounts {
        FlowCounts { tcp, tagged, untagged: 0 }
    }

    #[test]
    fn chips_inserts_tagged_at_rounded_average_when_queue_exceeds_it() {
        let mut c = chips(ChipsConfig::default());
        let q = queue_of(10);
        let f = flows(9, 1);
        let t = pkt(50, 1, Class::Tagged);
        assert_eq!(c.position(&t, Class::Tagged, &q, 4.4, RedMode::Packets, Some(&f)), 4);
        assert_eq!(c.position(&t, Class::Tagged, &q, 4.5, RedMode::Packets, Some(&f)), 5);
        assert_eq!(c.position(&t, Class::Tagged, &q, 0.2, RedMode::Packets, Some(&f)), 0);
        // Not above the average: tail.
        assert_eq!(c.position(&t, Class::Tagged, &q, 10.0, RedMode::Packets, Some(&f)), 10);
        assert_eq!(c.position(&t, Class::Tagged, &q, 12.3, RedMode::Packets, Some(&f)), 10);
        // Other classes always go to the tail.
        let u = pkt(51, 2, Class::Untagged);
        assert_eq!(c.position(&u, Class::Untagged, &q, 4.4, RedMode::Packets, Some(&f)), 10);
        assert_eq!(c.stats().cut_ins, 3);
        assert_eq!(c.stats().tail_no_congestion, 2);
    }

    #[test]
    fn chips_switches_off_above_the_tagged_share() {
        let mut c = chips(ChipsConfig::default());
        let q = queue_of(10);
        let t = pkt(50, 1, Class::Tagged);
        // 5 of 10 flows tagged: 0.5 <= 0.5, on.
        assert_eq!(c.position(&t, Class::Tagged, &q, 3.0, RedMode::Packets, Some(&flows(5, 5))), 3);
        // 6 of 11: off.
        assert_eq!(c.position(&t, Class::Tagged, &q, 3.0, RedMode::Packets, Some(&flows(5, 6))), 10);
        assert_eq!(c.stats().tail_switched_off, 1);
        let always = chips(ChipsConfig { max_tagged_share: 1.0, ..ChipsConfig::default() });
        assert!(always.is_on(Some(&flows(0, 9))));
        assert!(!always.needs_flow_counts());
    }

    #[test]
    fn chips_keeps_a_tagged_packet_behind_its_own_flow() {
        let mut q = queue_of(10);
        q[6] = pkt(6, 1, Class::Tagged); // an earlier packet of flow 1 sits at index 6
        let t = pkt(50, 1, Class::Tagged);
        let f = flows(9, 1);
        let mut kept = chips(ChipsConfig::default());
        assert_eq!(kept.position(&t, Class::Tagged, &q, 4.0, RedMode::Packets, Some(&f)), 7);
        assert_eq!(kept.stats().held_behind_own_flow, 1);
        // The paper's literal rule passes it.
        let mut literal = chips(ChipsConfig { keep_flow_order: false, ..ChipsConfig::default() });
        assert_eq!(literal.position(&t, Class::Tagged, &q, 4.0, RedMode::Packets, Some(&f)), 4);
        // A packet of the flow ahead of the cut point does not matter.
        q[6] = pkt(6, 106, Class::Tcp);
        q[2] = pkt(2, 1, Class::Tagged);
        assert_eq!(kept.position(&t, Class::Tagged, &q, 4.0, RedMode::Packets, Some(&f)), 4);
    }

    #[test]
    fn chips_literal_rule_reorders_back_to_back_packets_of_a_flow() {
        // Ten TCP packets arrive at once: the queue is far above RED's slow
        // average (w_q = 0.002, avg ~ 0.09), so tagged packets cut in at the head.
        let order = |cfg: ChipsConfig| -> Vec<u64> {
            let mut rng = crate::rng::stream(1, 0);
            let red = RedStage::new(RedConfig::new(Limit::packets(60), 5.0, 15.0), Rate::mbps(25)).unwrap();
            let mut q =
                ClassQueue::new(red, Chips::new(cfg).unwrap(), ClassMap::default(), FlowCounterConfig::default())
                    .unwrap();
            for i in 0..10 {
                q.enqueue(Time(0), pkt(i, 100 + i as u32, Class::Tcp), &mut rng);
            }
            q.enqueue(Time(0), pkt(20, 1, Class::Tagged), &mut rng);
            q.enqueue(Time(0), pkt(21, 1, Class::Tagged), &mut rng);
            q.packets().take(3).map(|p| p.id).collect()
        };
        let share = 1.0; // ChIPS always on: 1 tagged flow of 11 would be on anyway
        assert_eq!(order(ChipsConfig { keep_flow_order: false, max_tagged_share: share }), [21, 20, 0]);
        assert_eq!(order(ChipsConfig { keep_flow_order: true, max_tagged_share: share }), [20, 21, 0]);
    }

    #[test]
    fn chips_byte_mode_cuts_at_the_nearest_packet_boundary() {
        let q = queue_of(5); // boundaries at 0, 1000, 2000, ...
        assert_eq!(cut_position(&q, 2400.0, RedMode::Bytes), 2);
        assert_eq!(cut_position(&q, 2500.0, RedMode::Bytes), 3);
        assert_eq!(cut_position(&q, 9999.0, RedMode::Bytes), 5);
        assert_eq!(cut_position(&q, 0.0, RedMode::Bytes), 0);
    }

    #[test]
    fn virtual_fifo_counts_as_a_plain_fifo_would() {
        // The same arrivals and departures through ChIPS and through a FIFO:
        // the class accounting is the same at every step, the order is not.
        let red = RedConfig { max_p: 1e-12, w_q: 0.2, ..RedConfig::new(Limit::packets(60), 50.0, 60.0) };
        let stage = || RedStage::new(red, Rate::mbps(25)).unwrap();
        let map = ClassMap::default();
        let fc = FlowCounterConfig::default();
        let mut fifo = ClassQueue::new(stage(), Tail::new(), map, fc).unwrap();
        let mut cut = ClassQueue::new(stage(), chips(ChipsConfig::default()), map, fc).unwrap();
        let (mut r1, mut r2) = (crate::rng::stream(3, 0), crate::rng::stream(3, 0));
        let classes = [Class::Tcp, Class::Tcp, Class::Tcp, Class::Tagged, Class::Untagged];
        let (mut out_fifo, mut out_cut) = (Vec::new(), Vec::new());
        for i in 0..200u64 {
            let c = classes[(i * 7 % 5) as usize];
            let p = pkt(i, (i % 13) as u32 + 20 * c as u32, c);
            assert_eq!(fifo.enqueue(Time(i), p, &mut r1), cut.enqueue(Time(i), p, &mut r2));
            if i % 3 == 0 {
                if let (Dequeue::Packet(a), Dequeue::Packet(b)) = (fifo.dequeue(Time(i)), cut.dequeue(Time(i))) {
                    out_fifo.push(a.id);
                    out_cut.push(b.id);
                }
            }
            assert_eq!(fifo.class_backlog(), cut.class_backlog(), "step {i}");
        }
        assert!(cut.placement().stats().cut_ins > 0);
        assert_ne!(out_fifo, out_cut, "ChIPS should have changed the order");
    }
}
