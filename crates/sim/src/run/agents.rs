//! Endpoint agents: what runs at a flow's two ends beyond emitting packets
//! (TCP's sender and sink, MM_APP's receiver). Part of [`super::Sim`].
//!
//! The protocol logic is in clock-free state machines
//! ([`qoslab_core::tcp`], [`crate::traffic::mm_app`]); this file carries
//! their packets and runs their timers:
//! - a data packet delivered at the destination goes to the receiver agent
//!   (TCP sink: an ACK back, maybe delayed; MM_APP: loss and RTT tracking);
//! - the receiver's packets go back along the reverse route (the static
//!   route from the destination to the source) as real packets: queued,
//!   serialized, droppable, `size` = the group's `header` for a TCP ACK and
//!   `mm_app.feedback_size` for MM_APP feedback, with the flow's class,
//!   DSCP and ECN marks. They are counted in [`crate::metrics::ReverseStats`],
//!   apart from the flow's data;
//! - at the source they go to the sender agent (TCP: `on_ack`; MM_APP: the
//!   new scale).
//!
//! **Packet handle.** Data packets carry their sequence number in
//! `Packet::handle` (a TCP segment number, or a UDP flow's packet count);
//! a packet towards the source has the top bit set ([`REVERSE`]) and
//! carries the cumulative ACK (TCP) or the scale index (MM_APP). The next
//! bit ([`ECN_FLAG`]) is TCP's CWR on a segment and ECN-Echo on an ACK.
//!
//! **ECN** (RFC 3168 §6.1): the sink reads each segment's CE mark and CWR
//! flag ([`TcpSink::on_ecn`]) and sets ECN-Echo on its ACKs; the sender
//! reacts to it when the group sets `ecn` (the flow is ECN-capable).
//!
//! **Timers.** Each agent keeps its machines' deadlines
//! (`timer_deadline`, `ack_deadline`, MM_APP's decision time) and at most
//! one pending event per side: a deadline earlier than the pending event
//! schedules a new one; a stale event (the deadline moved) is ignored or
//! re-armed at the new deadline. An RTO restarted on every ACK thus costs
//! one event per RTO period, not one per ACK.
//!
//! An MM_APP source that changes its scale on feedback adds an `mm_scale`
//! row (detail `scale=<k>`) to the events table.
//!
//! A flow's agents stop at the flow's end (a `transfer` also ends when its
//! last byte is acknowledged: `transfer_complete` in the events table);
//! packets still in flight then are delivered and counted, and a sink
//! still acknowledges them, but the closed sender sends nothing more.

use super::Sim;
use crate::engine::{Event, FlowId};
use crate::traffic::mm_app::MmReceiver;
use crate::traffic::{FlowState, GroupPlan, ModelPlan, Source};
use qoslab_core::tcp::{TcpSender, TcpSink};
use qoslab_core::units::Time;
use qoslab_core::{Ecn, Packet};

/// `Packet::handle` bit of packets travelling from destination to source.
pub const REVERSE: u64 = 1 << 63;
/// `Packet::handle` bit of TCP's ECN flags (RFC 3168 §6.1): CWR on a data
/// segment, ECN-Echo on an ACK.
pub const ECN_FLAG: u64 = 1 << 62;
/// The rest of the handle: a sequence number, ACK or scale.
pub const SEQ_MASK: u64 = ECN_FLAG - 1;

/// A TCP connection's two ends.
#[derive(Clone, Debug)]
pub struct TcpAgent {
    pub sender: TcpSender,
    pub sink: TcpSink,
    /// Header bytes of a segment, and the size of an ACK.
    pub header: u32,
    /// Payload bytes delivered in order to the receiving application.
    pub goodput_bytes: u64,
    /// When a `transfer` finished (last byte acknowledged).
    pub completed: Option<Time>,
    /// Pending timer events (sender, sink).
    snd_event: Option<Time>,
    rcv_event: Option<Time>,
}

/// An MM_APP flow's receiver (its source is the flow's [`Source::Mm`]).
#[derive(Clone, Debug)]
pub struct MmAgent {
    pub receiver: MmReceiver,
    pub feedback_size: u32,
    rcv_event: Option<Time>,
}

/// What runs at a flow's ends.
#[derive(Clone, Debug)]
pub enum Agent {
    /// Plain UDP: nothing.
    None,
    Tcp(Box<TcpAgent>),
    Mm(Box<MmAgent>),
}

impl Agent {
    /// The agent of a new flow of group `gp` (its model was checked by `plan_groups`).
    pub fn new(gp: &GroupPlan, _now: Time) -> Agent {
        match gp.model {
            ModelPlan::Tcp { cfg, bytes, sink_delay, header } => match TcpSender::new(cfg, bytes) {
                Ok(sender) => Agent::Tcp(Box::new(TcpAgent {
                    sender,
                    sink: TcpSink::new(sink_delay),
                    header,
                    goodput_bytes: 0,
                    completed: None,
                    snd_event: None,
                    rcv_event: None,
                })),
                Err(_) => Agent::None,
            },
            ModelPlan::MmApp { feedback_size } => Agent::Mm(Box::new(MmAgent {
                receiver: MmReceiver::new(gp.mm_periods.len()),
                feedback_size,
                rcv_event: None,
            })),
            _ => Agent::None,
        }
    }
    /// The flow ended: the sender stops.
    pub fn close(&mut self) {
        if let Agent::Tcp(a) = self {
            a.sender.close();
        }
    }
    pub fn tcp(&self) -> Option<&TcpAgent> {
        match self {
            Agent::Tcp(a) => Some(a),
            _ => None,
        }
    }
}

/// Schedules `ev` at `want` unless an event at or before it is pending.
fn arm(events: &mut crate::engine::EventQueue, pending: &mut Option<Time>, want: Option<Time>, ev: Event, now: Time) {
    if let Some(w) = want {
        let w = w.max(now);
        if pending.is_none_or(|p| w < p) {
            *pending = Some(w);
            events.schedule(w, ev);
        }
    }
}

impl Sim {
    /// A flow whose agent sends (TCP) starts: the initial window goes out.
    pub(super) fn agent_start(&mut self, f: FlowId) {
        let now = self.now;
        let mut buf = std::mem::take(&mut self.seg_buf);
        buf.clear();
        if let Agent::Tcp(a) = &mut self.agents[f.index()] {
            a.sender.start(now, &mut buf);
        }
        self.send_segments(f, &buf);
        self.seg_buf = buf;
        self.arm_sender(f);
    }

    /// Sends TCP segments `segs` of flow `f` from its source.
    fn send_segments(&mut self, f: FlowId, segs: &[u64]) {
        let Agent::Tcp(a) = &self.agents[f.index()] else { return };
        let (header, now) = (a.header, self.now);
        for &seq in segs {
            let Agent::Tcp(a) = &self.agents[f.index()] else { return };
            let size = a.sender.payload(seq).saturating_add(header);
            let fl = &self.flows[f.index()];
            let mut pkt = Packet::new(self.next_packet, f, size, now);
            self.next_packet += 1;
            pkt.class = fl.class;
            pkt.dscp = fl.dscp;
            pkt.ecn = fl.ecn;
            pkt.handle = seq & SEQ_MASK;
            if a.sender.cwr_seq() == Some(seq) {
                pkt.handle |= ECN_FLAG;
            }
            pkt.ingress = super::ingress_of(fl.src);
            let dir = fl.first_dir;
            self.metrics.flows[f.index()].on_send(now, size, self.metrics.cur_bin);
            // Through the flow's entry shaper, if it has one (see `shaping`).
            self.inject(f, dir, pkt);
        }
    }

    /// Sends a packet of `size` bytes carrying `value` (and the [`ECN_FLAG`]
    /// bit if `flag`) from `f`'s destination back to its source.
    fn send_reverse(&mut self, f: FlowId, size: u32, value: u64, flag: bool) {
        let i = f.index();
        let fl = &self.flows[i];
        let Some(dir) = self.net.routes.next(self.flow_src_slot[i], fl.dst) else {
            self.fault = Some(format!("no route back from {} for flow {}", self.net.nodes[fl.dst.index()].name, i));
            return;
        };
        let mut pkt = Packet::new(self.next_packet, f, size, self.now);
        self.next_packet += 1;
        pkt.class = fl.class;
        pkt.dscp = fl.dscp;
        pkt.ecn = fl.ecn;
        pkt.handle = REVERSE | (value & SEQ_MASK) | if flag { ECN_FLAG } else { 0 };
        pkt.ingress = super::ingress_of(fl.dst);
        let r = &mut self.metrics.reverse[i];
        r.sent_pkts += 1;
        r.sent_bytes += size as u64;
        self.enqueue(dir, pkt);
    }

    /// A data packet of a flow with an agent reached its destination.
    pub(super) fn on_receiver_packet(&mut self, pkt: Packet) {
        let (f, now) = (pkt.flow, self.now);
        let seq = pkt.handle & SEQ_MASK;
        match &mut self.agents[f.index()] {
            Agent::Tcp(a) => {
                a.sink.on_ecn(pkt.ecn == Ecn::Ce, pkt.handle & ECN_FLAG != 0);
                let out = a.sink.on_segment(now, seq);
                for s in out.delivered.clone() {
                    a.goodput_bytes += a.sender.payload(s) as u64;
                }
                let (size, ece) = (a.header.max(1), a.sink.ece());
                if let Some(ack) = out.ack {
                    self.send_reverse(f, size, ack, ece);
                }
            }
            Agent::Mm(a) => a.receiver.on_packet(now, seq, pkt.created),
            Agent::None => {}
        }
        self.arm_receiver(f);
    }

    /// A packet travelling back towards its flow's source reached `node`.
    pub(super) fn arrive_reverse(&mut self, node: crate::engine::NodeId, pkt: Packet) {
        let i = pkt.flow.index();
        if self.flows[i].src != node {
            match self.net.routes.next(self.flow_src_slot[i], node) {
                Some(next) => self.enqueue(next, pkt),
                None => {
                    self.fault = Some(format!("no route back at {} for flow {i}", self.net.nodes[node.index()].name))
                }
            }
            return;
        }
        self.metrics.reverse[i].delivered_pkts += 1;
        let value = pkt.handle & SEQ_MASK;
        let ece = pkt.handle & ECN_FLAG != 0;
        let active = self.flows[i].state == FlowState::Active;
        match &mut self.agents[i] {
            Agent::Tcp(a) if active => {
                let mut buf = std::mem::take(&mut self.seg_buf);
                buf.clear();
                a.sender.on_ack_ecn(self.now, value, ece, &mut buf);
                let complete = a.sender.is_complete();
                self.send_segments(pkt.flow, &buf);
                self.seg_buf = buf;
                if complete {
                    self.complete_transfer(pkt.flow);
                } else {
                    self.arm_sender(pkt.flow);
                }
            }
            Agent::Mm(_) if active => {
                if let Source::Mm(s) = &mut self.flows[i].source {
                    if s.set_scale(value as usize) {
                        let scale = s.scale();
                        self.metrics.event(
                            self.now,
                            crate::metrics::MM_SCALE,
                            Some(pkt.flow),
                            format!("scale={scale}"),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// A `transfer`'s last byte was acknowledged: the flow ends now.
    fn complete_transfer(&mut self, f: FlowId) {
        let now = self.now;
        let Agent::Tcp(a) = &mut self.agents[f.index()] else { return };
        a.completed = Some(now);
        a.sender.close();
        let bytes = a.goodput_bytes;
        let fl = &mut self.flows[f.index()];
        let took = now.0.saturating_sub(fl.start.0) as f64 / 1e9;
        fl.end = now;
        fl.state = FlowState::Ended;
        fl.end_reason = "complete";
        let g = fl.group;
        self.metrics.event(now, crate::metrics::TRANSFER_COMPLETE, Some(f), format!("bytes={bytes} time_s={took}"));
        self.admission.on_departure(now, f);
        self.shaping_departure(f);
        self.schedule_admission_tick();
        if matches!(self.groups[g.index()].arrival, Some(crate::traffic::arrivals::Arrival::KeepAlive { .. })) {
            self.keep_alive_replace(g);
        }
    }

    fn arm_sender(&mut self, f: FlowId) {
        let now = self.now;
        if let Agent::Tcp(a) = &mut self.agents[f.index()] {
            let want = a.sender.timer_deadline();
            arm(&mut self.events, &mut a.snd_event, want, Event::SenderTimer(f), now);
        }
    }

    fn arm_receiver(&mut self, f: FlowId) {
        let now = self.now;
        match &mut self.agents[f.index()] {
            Agent::Tcp(a) => {
                let want = a.sink.ack_deadline();
                arm(&mut self.events, &mut a.rcv_event, want, Event::ReceiverTimer(f), now);
            }
            Agent::Mm(a) => {
                let want = a.receiver.deadline();
                arm(&mut self.events, &mut a.rcv_event, want, Event::ReceiverTimer(f), now);
            }
            Agent::None => {}
        }
    }

    /// `SenderTimer(f)` is due.
    pub(super) fn sender_timer(&mut self, f: FlowId) {
        let now = self.now;
        let active = self.flows[f.index()].state == FlowState::Active;
        let Agent::Tcp(a) = &mut self.agents[f.index()] else { return };
        if a.snd_event != Some(now) {
            return; // stale
        }
        a.snd_event = None;
        if !active {
            return;
        }
        let mut buf = std::mem::take(&mut self.seg_buf);
        buf.clear();
        a.sender.on_timer(now, &mut buf);
        self.send_segments(f, &buf);
        self.seg_buf = buf;
        self.arm_sender(f);
    }

    /// `ReceiverTimer(f)` is due.
    pub(super) fn receiver_timer(&mut self, f: FlowId) {
        let now = self.now;
        let active = self.flows[f.index()].state == FlowState::Active;
        match &mut self.agents[f.index()] {
            Agent::Tcp(a) => {
                if a.rcv_event != Some(now) {
                    return;
                }
                a.rcv_event = None;
                let (size, ece) = (a.header.max(1), a.sink.ece());
                if let Some(ack) = a.sink.on_timer(now) {
                    self.send_reverse(f, size, ack, ece);
                }
            }
            Agent::Mm(a) => {
                if a.rcv_event != Some(now) {
                    return;
                }
                a.rcv_event = None;
                if !active {
                    return;
                }
                let size = a.feedback_size;
                if let Some(scale) = a.receiver.on_timer(now) {
                    self.send_reverse(f, size, scale as u64, false);
                }
            }
            Agent::None => return,
        }
        self.arm_receiver(f);
    }

    /// Samples cwnd, ssthresh, SRTT and RTO of active TCP flows of `metrics.tcp_series` groups.
    pub(super) fn sample_tcp(&mut self, t: Time) {
        if !self.groups.iter().any(|g| g.tcp_series) {
            return;
        }
        for (i, fl) in self.flows.iter().enumerate() {
            if fl.state != FlowState::Active || !self.groups[fl.group.index()].tcp_series {
                continue;
            }
            let Agent::Tcp(a) = &self.agents[i] else { continue };
            let s = &a.sender;
            let values = [
                s.cwnd(),
                if s.ssthresh().is_finite() { s.ssthresh() } else { f64::NAN },
                s.srtt().map_or(f64::NAN, |d| d.0 as f64 / 1e9),
                s.armed_rto().0 as f64 / 1e9,
            ];
            for (k, v) in values.into_iter().enumerate() {
                self.metrics.tcp_samples.push(crate::metrics::TcpSample {
                    t: t.0,
                    flow: i as u32,
                    metric: k as u8,
                    value: v,
                });
            }
        }
    }
}
