//! Running a scenario: build the network, routes, traffic and metrics,
//! run the event loop to the scenario's `duration`, and build the results.
//!
//! The loop pops events in `(time, seq)` order and processes every event
//! at or before `duration`; it calls `opts.progress` every 2^16 events with
//! the fraction of simulated time done (a `false` answer stops the run with
//! `SimError::Interrupted`). `loop_wall_s` in the summary times the loop
//! alone. A packet's life:
//!
//! ```text
//! Emit(flow) -> enqueue at the first hop's queue -> (link idle) dequeue, serialize
//! TxDone(dir) -> propagation pipe -> Arrive(dir) at the next node
//!   -> destination: delivered (metrics) | router: enqueue at the next hop
//! ```
//!
//! Two shortcuts save events without changing any result (tested against
//! the long way in `tests/it/fast_paths.rs`; docs/performance.md, "Fewer
//! events on the access links"):
//!
//! - **Pass-through.** A packet offered to a free transmitter behind a
//!   drop-tail FIFO with no device queue goes on the wire at once, after
//!   the port's stages, counted by the queue as enqueued and dequeued at
//!   that instant (`Port::try_pass`, `Port::offer_free`).
//! - **Delivery at the last send.** A packet of a flow without agents
//!   sent on its last hop, to its destination host, over a link without
//!   loss, is counted delivered when it goes on the wire, with its arrival
//!   time, if nothing that link sent before is still on its way and it
//!   arrives within the run and the current bin: no `Arrive` event (see
//!   `start_tx`). The `events` of the summary count the events run.
//!
//! Flows with **agents** (TCP, MM_APP; see [`agents`]) also carry packets
//! back: a packet delivered at its destination goes to the flow's receiver
//! agent, which may send packets (ACKs, feedback) along the reverse route
//! to the source, where they go to the sender agent. A link's `loss`
//! drops a packet at its arrival at the far end with that probability.
//!
//! Errors: everything the simulator needs of the scenario is checked
//! before the loop starts (`SimError::Config`), including that every
//! flow's destination is reachable (`traffic.N.dst`). Nothing in the loop
//! panics on input; an internal inconsistency ends the run with
//! `SimError::Runtime`.

pub mod agents;
mod edges;
mod flows;
mod held;
mod shaping;

use crate::engine::{DirId, Event, EventQueue, FlowId, GroupId, NodeId};
use crate::error::SimError;
use crate::mechanisms::RowSink;
use crate::metrics::{Metrics, SeriesSel};
use crate::net::Network;
use crate::output::RunOutput;
use crate::traffic::arrivals::{self, Arrival};
use crate::traffic::{self, Flow, FlowState, GroupPlan, GroupSource};
use crate::RunOptions;
pub use held::Held;
use qoslab_core::admission::{AdmissionControl, AdmitAll};
use qoslab_core::packet::FlowTable;
use qoslab_core::qdisc::{Dequeue, Verdict};
use qoslab_core::units::Time;
use qoslab_core::Packet;
use qoslab_scenario::{expand, AdmissionSpec, ValidScenario};
use std::time::Instant;

/// Cache lines of a link direction worth prefetching (transmitter, pipe,
/// the queue wrapper's counters).
const DIR_LINES: usize = std::mem::size_of::<crate::net::Dir>().div_ceil(64);

/// Progress is reported every this many events.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Runs `scenario` with `opts.seed`.
pub fn run(scenario: &ValidScenario, mut opts: RunOptions) -> Result<RunOutput, SimError> {
    let mut sim = Sim::build(scenario, &opts)?;
    let t0 = Instant::now();
    sim.run_loop(&mut opts.progress)?;
    let loop_wall_s = t0.elapsed().as_secs_f64();
    Ok(crate::metrics::tables::build(sim, scenario, opts.seed, loop_wall_s))
}

impl Sim {
    /// The flows and their measurements; the rest of the state (the
    /// network, the event set, the agents) is freed here, before the
    /// series table, the largest, is built.
    pub(crate) fn into_measurements(self) -> (crate::metrics::Metrics, Vec<Flow>, Vec<String>) {
        let group_names = self.group_names();
        let Sim { metrics, flows, .. } = self;
        release_freed_memory();
        (metrics, flows, group_names)
    }

    /// The traffic groups' names, by group index (for [`Flow::name`]).
    pub fn group_names(&self) -> Vec<String> {
        self.groups.iter().map(|g| g.name.clone()).collect()
    }

    /// Flow `i`'s name, `<group>.<index>`.
    pub fn flow_name(&self, i: usize) -> String {
        let f = &self.flows[i];
        format!("{}.{}", self.groups[f.group.index()].name, f.index)
    }
}

/// Hands the allocator's freed pages back to the kernel. The network and
/// the event set are many small allocations that glibc keeps after they
/// are freed; the series columns that follow are large ones it maps anew,
/// so without this the peak would be their sum (4,000 sources × 600 s:
/// 64 MB against 44 MB, docs/performance.md).
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel; it
    // touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Which directions' queues the series table samples (see
/// [`crate::metrics`]): only directions leaving a router; those
/// `metrics.series` names if it is given; else the preset's bottleneck
/// links (their forward direction) and the queues with their own rule to
/// drop or mark at once, every other router queue once it drops or marks.
fn series_selection(net: &Network, series: &[String]) -> Vec<SeriesSel> {
    net.dirs
        .iter()
        .map(|d| {
            if net.nodes[d.from.index()].kind != qoslab_scenario::NodeKind::Router {
                return SeriesSel::Never;
            }
            if !series.is_empty() {
                let named = series.iter().any(|p| qoslab_scenario::glob_match(p, &d.name));
                return if named { SeriesSel::Always } else { SeriesSel::Never };
            }
            let link = &net.links[d.link.index()];
            let bottleneck = link.path.starts_with("topology.bottleneck") && d.from == link.a;
            let own_rule = d.port.queue().kind() != "fifo" || !d.port.stages().is_empty();
            if bottleneck || own_rule {
                SeriesSel::Always
            } else {
                SeriesSel::OnDropOrMark
            }
        })
        .collect()
}

/// The simulator's state (read by the table builders).
pub struct Sim {
    pub now: Time,
    pub end: Time,
    pub events: EventQueue,
    pub net: Network,
    pub groups: Vec<GroupPlan>,
    pub flows: Vec<Flow>,
    /// Hot per-flow routing data: destination node and its route slot.
    flow_dst: Vec<NodeId>,
    flow_slot: Vec<u32>,
    flow_first_dir: Vec<DirId>,
    /// Per direction: does it lead to a host?
    dir_to_host: Vec<bool>,
    /// Per direction: does it lead to a host without loss? A packet it
    /// sends to that host is counted delivered when it goes on the wire
    /// (see [`Sim::start_tx`]).
    dir_delivers: Vec<bool>,
    /// Per flow: the route slot of its source (for packets sent back), and its agent.
    flow_src_slot: Vec<u32>,
    /// Per flow: was it created with an agent (`agents` is not `None`)? A
    /// byte a flow, read for every delivery at a last send.
    flow_agent: Vec<bool>,
    pub agents: Vec<agents::Agent>,
    /// Scratch for the segments an agent sends.
    seg_buf: Vec<u64>,
    pub table: FlowTable,
    admission: Box<dyn AdmissionControl + Send>,
    admission_tick: Option<Time>,
    /// Per-flow entry shapers and the shaping CAC (see `shaping`).
    shaping: shaping::Shaping,
    pub metrics: Metrics,
    next_packet: u64,
    pub event_count: u64,
    sample_every: u64,
    fault: Option<String>,
    pub origin: String,
    pub seed: u64,
    trace_names: Vec<String>,
    /// Per traffic group: its fixed destination port, if any.
    group_dst_port: Vec<Option<u16>>,
    /// The nodes routes were computed to (edge nodes are added to them).
    route_dsts: Vec<NodeId>,
    /// Domain edge behaviours (see `edges`).
    edges: edges::Edges,
    /// Packet traces of chosen directions (see [`crate::trace`]).
    pub tracer: crate::trace::Tracer,
}

/// How a new flow's start and end are set.
#[derive(Clone, Copy, Debug)]
enum Life {
    /// A fixed flow: the group's start plus jitter, to the group's stop.
    Fixed,
    /// Starts now; lifetime drawn from the flow's stream.
    Law(arrivals::Lifetime),
    /// Starts now; lifetime given (replay).
    Given(qoslab_core::units::Dur),
}

impl Sim {
    /// Builds everything and schedules the initial events.
    pub fn build(sc: &ValidScenario, opts: &RunOptions) -> Result<Sim, SimError> {
        let origin = sc.name.clone();
        let m = &sc.metrics;
        let ex = expand::expand(&sc.topology);
        let mut net = Network::build(&ex, opts.seed, &origin, &opts.base_dir)?;
        let groups = traffic::plan_groups(sc, &ex, opts.seed, &opts.base_dir)?;
        // Routes to every destination traffic may use; every pairing reachable.
        // Flows with agents also need routes back to their sources.
        let dsts: Vec<NodeId> = groups
            .iter()
            .flat_map(|g| g.dsts.iter().copied().chain(g.srcs.iter().copied().filter(|_| g.model.has_agent())))
            .collect();
        net.route_to(&dsts);
        check_routes(&net, &groups)?;
        let admission: Box<dyn AdmissionControl + Send> = match sc.admission {
            // The shaping CAC decides in `shaping` (it also assigns shaper rates).
            AdmissionSpec::AdmitAll | AdmissionSpec::ShapingCac { .. } => Box::new(AdmitAll::default()),
        };
        let shaping = shaping::Shaping::build(sc, &groups)?;
        let tracer = crate::trace::Tracer::new(&sc.trace.pcap, &net)?;
        let n_dirs = net.dirs.len();
        let series_sel = series_selection(&net, &m.series);
        let dir_to_host: Vec<bool> =
            net.dirs.iter().map(|d| net.nodes[d.to.index()].kind == qoslab_scenario::NodeKind::Host).collect();
        let dir_delivers = net.dirs.iter().zip(&dir_to_host).map(|(d, &h)| h && d.loss.is_none()).collect();
        let mut sim = Sim {
            now: Time::ZERO,
            end: Time(sc.duration.0),
            // The heap holds one ~0.26 ms window's events (later ones wait in
            // the ring): it grows to what the network needs.
            events: EventQueue::with_capacity(1024),
            net,
            groups,
            flows: Vec::new(),
            flow_dst: Vec::new(),
            flow_slot: Vec::new(),
            flow_first_dir: Vec::new(),
            dir_to_host,
            dir_delivers,
            flow_src_slot: Vec::new(),
            flow_agent: Vec::new(),
            agents: Vec::new(),
            seg_buf: Vec::new(),
            table: FlowTable::new(),
            admission,
            admission_tick: None,
            shaping,
            metrics: Metrics::new(m, series_sel, Time(sc.duration.0)),
            next_packet: 0,
            event_count: 0,
            sample_every: m.series_interval.0,
            fault: None,
            origin,
            seed: opts.seed,
            trace_names: m.trace_flows.clone(),
            group_dst_port: sc.traffic.iter().map(|t| t.dst_port).collect(),
            route_dsts: dsts,
            edges: edges::Edges::default(),
            tracer,
        };
        if let Some(p) = &sc.pcn {
            sim.set_pcn_edges(p, &ex)?;
        }
        sim.schedule_groups();
        for d in 0..n_dirs {
            sim.schedule_qdisc_tick(DirId(d as u32));
        }
        sim.events.schedule(Time(sim.sample_every.min(sim.end.0)), Event::Sample);
        Ok(sim)
    }

    /// Schedules each group's first event: fixed flows' starts, or the
    /// arrival process's first arrival (a replay at its first row).
    fn schedule_groups(&mut self) {
        for gi in 0..self.groups.len() {
            let g = &self.groups[gi];
            let start = g.start;
            match g.fixed_flows {
                Some(n) => {
                    for _ in 0..n {
                        let f = self.create_flow(GroupId(gi as u32), Life::Fixed);
                        let fl = &self.flows[f.index()];
                        if fl.start < fl.end {
                            self.events.schedule(fl.start, Event::FlowStart(f));
                        } else {
                            self.flows[f.index()].state = FlowState::NeverStarted;
                        }
                    }
                }
                None => {
                    // A replay starts at its first row; other processes at the start.
                    let first = match &self.groups[gi].arrival {
                        Some(Arrival::Replay { rows, .. }) => rows.first().map(|r| arrivals::later(start, r.0)),
                        _ => Some(start),
                    };
                    if let Some(t) = first.filter(|t| *t < self.groups[gi].stop) {
                        self.events.schedule(t, Event::GroupNext(GroupId(gi as u32)));
                    }
                }
            }
        }
    }

    /// Runs events up to the end (or until interrupted).
    pub fn run_loop(&mut self, progress: &mut Option<&mut dyn FnMut(f64) -> bool>) -> Result<(), SimError> {
        let end = self.end;
        while let Some((t, ev)) = self.events.pop() {
            if t > end {
                break;
            }
            self.now = t;
            self.prefetch_next();
            self.metrics.advance_bin(t);
            self.event_count += 1;
            if self.event_count.is_multiple_of(PROGRESS_EVERY) {
                self.events.check().map_err(SimError::Runtime)?;
                if let Some(p) = progress.as_mut() {
                    if !p(t.0 as f64 / end.0 as f64) {
                        return Err(SimError::Interrupted);
                    }
                }
            }
            match ev {
                Event::Emit(f) => self.emit(f),
                Event::TxDone(d) => self.tx_done(d),
                Event::Arrive(d) => self.arrive(d),
                Event::Retry(d) => {
                    let dir = &mut self.net.dirs[d.index()];
                    if dir.retry_at == t {
                        dir.retry_at = Time::MAX;
                        self.settle(d);
                        if self.net.dirs[d.index()].is_free(t) {
                            self.try_send(d);
                        }
                    }
                }
                Event::FlowStart(f) => self.flow_start(f),
                Event::ShaperRelease(f) => self.shaper_release(f),
                Event::FlowEnd(f) => self.flow_end(f),
                Event::GroupNext(g) => self.group_next(g),
                Event::SlotFree(g) => self.keep_alive_replace(g),
                Event::QdiscTick(d) => {
                    let dir = &mut self.net.dirs[d.index()];
                    if dir.tick_at == t {
                        dir.tick_at = Time::MAX;
                        self.settle(d);
                        let dir = &mut self.net.dirs[d.index()];
                        let mut sink = RowSink { link: &dir.name, rows: &mut self.metrics.events };
                        dir.port.on_tick(t, &mut sink);
                        self.schedule_qdisc_tick(d);
                        if self.net.dirs[d.index()].is_free(t) {
                            self.try_send(d);
                        }
                    }
                }
                Event::AdmissionTick => {
                    if self.admission_tick == Some(t) {
                        self.admission_tick = None;
                        self.admission.on_tick(t);
                        self.schedule_admission_tick();
                    }
                }
                Event::SenderTimer(f) => self.sender_timer(f),
                Event::ReceiverTimer(f) => self.receiver_timer(f),
                Event::EdgeMessage(slot) => self.edge_deliver(slot),
                Event::EdgeTimer(n) => self.edge_timer(n),
                Event::Sample => {
                    self.metrics.sample(&self.net, t);
                    self.sample_tcp(t);
                    if t < end {
                        let next = Time(t.0.saturating_add(self.sample_every).min(end.0));
                        self.events.schedule(next, Event::Sample);
                    }
                }
            }
            if let Some(msg) = self.fault.take() {
                return Err(SimError::Runtime(msg));
            }
        }
        self.events.check().map_err(SimError::Runtime)?;
        self.now = end;
        Ok(())
    }

    /// Prefetches the state the next event will touch (see [`crate::engine::prefetch`]).
    #[inline(always)]
    fn prefetch_next(&self) {
        use crate::engine::prefetch;
        match self.events.peek() {
            Some(Event::Emit(f)) => {
                let i = f.index();
                if let (Some(fl), Some(m), Some(d)) =
                    (self.flows.get(i), self.metrics.flows.get(i), self.flow_first_dir.get(i))
                {
                    prefetch(fl, 3);
                    prefetch(m, 1);
                    if let Some(dir) = self.net.dirs.get(d.index()) {
                        prefetch(dir, DIR_LINES);
                    }
                }
            }
            Some(Event::Arrive(d)) => {
                if let Some(dir) = self.net.dirs.get(d.index()) {
                    prefetch(dir, DIR_LINES);
                    // Towards a host: a delivery, which updates the flow's
                    // statistics (a link into a host is usually busy, so its
                    // pipe is in cache already).
                    if self.dir_to_host[d.index()] {
                        if let Some(m) = dir.pipe.front().and_then(|h| self.metrics.flows.get(h.pkt.flow.index())) {
                            prefetch(m, 4);
                        }
                    }
                }
            }
            Some(Event::TxDone(d)) => {
                if let Some(dir) = self.net.dirs.get(d.index()) {
                    prefetch(dir, DIR_LINES);
                }
            }
            _ => {}
        }
    }

    /// The source of `f` sends a packet now and schedules the next.
    #[inline]
    fn emit(&mut self, f: FlowId) {
        let fl = &mut self.flows[f.index()];
        // A flow ended early (a PCN ingress terminated it) still has its
        // next emission pending: it sends nothing more.
        if fl.state != FlowState::Active {
            return;
        }
        let gp = &self.groups[fl.group.index()];
        let size = fl.source.wire_size(&mut fl.rng, gp);
        let mut pkt = Packet::new(self.next_packet, f, size, self.now);
        self.next_packet += 1;
        // The flow's sequence number (MM_APP's receiver finds losses by its gaps).
        pkt.handle = self.metrics.flows[f.index()].sent_pkts & agents::SEQ_MASK;
        pkt.class = fl.class;
        pkt.dscp = fl.dscp;
        pkt.ecn = fl.ecn;
        // Entering the network at its own node: its ingress is the source itself.
        pkt.ingress = ingress_of(fl.src);
        let dir = fl.first_dir;
        let next = fl.source.next(self.now, &mut fl.rng, gp);
        // Randomized packet times and host jitter leave the ideal grid
        // untouched: only the emission moves, by less than the spacing and
        // never before this packet (`emission_time`).
        let at = crate::traffic::emission_time(next, self.now, gp.randomize_ns, gp.send_jitter_max_ns, &mut fl.rng);
        let end = fl.end;
        self.metrics.flows[f.index()].on_send(self.now, size, self.metrics.cur_bin);
        self.inject(f, dir, pkt);
        if at < end {
            self.events.schedule(at, Event::Emit(f));
        }
    }

    /// Makes the `dequeue` owed to an idle queue at the instant its
    /// transmitter went idle (see `net`), before the queue is touched again.
    #[inline]
    fn settle(&mut self, d: DirId) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        if dir.idle_owed && dir.busy_until <= now {
            dir.idle_owed = false;
            let at = dir.busy_until;
            match dir.port.dequeue(at) {
                Dequeue::Empty => {}
                // Only a discipline that holds packets it did not report
                // in its backlog gets here: send now, wait as asked.
                Dequeue::Packet(p) => self.start_tx(d, p),
                Dequeue::NotBefore(t) => self.retry_at(d, t),
            }
        }
    }

    /// Offers `pkt` to the port of `d`; starts the transmitter if idle.
    #[inline]
    fn enqueue(&mut self, d: DirId, mut pkt: Packet) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        // A free transmitter behind a drop-tail FIFO with no device queue
        // (`Port::passes`): the dequeue owed to the idle queue cannot be
        // seen (it finds the FIFO empty and moves only the queue's clock,
        // over a time the queue held nothing), and a packet the stages let
        // through the empty FIFO goes on the wire now, with the counts of
        // the usual enqueue then dequeue (`Port::try_pass`,
        // `Port::offer_free`). A FIFO has no deadline of its own.
        let free_fifo = dir.is_free(now) && dir.port.passes();
        if free_fifo {
            dir.idle_owed = false;
            if dir.port.try_pass(now, &mut pkt) {
                self.metrics.on_dir_arrival(d.index());
                self.start_tx(d, pkt);
                return;
            }
        } else {
            self.settle(d);
        }
        self.metrics.on_dir_arrival(d.index());
        let dir = &mut self.net.dirs[d.index()];
        let verdict = if dir.port.stages().is_empty() {
            // No stage reads the flow key or reports events: the queue alone.
            dir.port.enqueue_queue(now, pkt, &mut dir.rng)
        } else {
            let key = self.table.key(pkt.flow);
            let mut sink = RowSink { link: &dir.name, rows: &mut self.metrics.events };
            if free_fifo {
                match dir.port.offer_free(now, pkt, key, &mut dir.rng, &mut sink) {
                    Ok(p) => {
                        self.start_tx(d, p);
                        self.schedule_qdisc_tick(d);
                        return;
                    }
                    Err(v) => v,
                }
            } else {
                dir.port.enqueue(now, pkt, key, &mut dir.rng, &mut sink)
            }
        };
        match verdict {
            Verdict::Queued | Verdict::Marked(_) => {}
            Verdict::Dropped(x) => {
                if self.tracer.any() {
                    self.tracer.record(d, now, &x.packet, Some(x.reason));
                }
                self.count_drop(&x.packet)
            }
            Verdict::QueuedPushingOut(victims) => {
                for x in victims {
                    if self.tracer.any() {
                        self.tracer.record(d, now, &x.packet, Some(x.reason));
                    }
                    self.count_drop(&x.packet);
                }
            }
        }
        let dir = &mut self.net.dirs[d.index()];
        if dir.port.wants_tx_done() {
            // A device queue takes what it may now, even while the wire is busy.
            dir.port.refill(now);
            if dir.is_free(now) {
                self.try_send(d);
            }
        } else if dir.is_free(now) {
            self.try_send(d);
        } else if !dir.tx_event {
            // Busy: the transmitter must dequeue when this transmission ends.
            dir.tx_event = true;
            dir.idle_owed = false;
            let at = dir.busy_until;
            self.events.schedule(at, Event::TxDone(d));
        }
        self.schedule_qdisc_tick(d);
    }

    /// The transmitter of `d` is free: dequeue and start sending if it may.
    #[inline]
    fn try_send(&mut self, d: DirId) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        match dir.port.dequeue(now) {
            Dequeue::Packet(p) => self.start_tx(d, p),
            Dequeue::Empty => {}
            Dequeue::NotBefore(t) => self.retry_at(d, t),
        }
    }

    /// Puts `pkt` on the wire of `d` now, into the pipe towards the far end.
    #[inline]
    fn start_tx(&mut self, d: DirId, pkt: Packet) {
        let now = self.now;
        if self.tracer.any() {
            self.tracer.record(d, now, &pkt, None);
        }
        let seq = self.events.reserve_seq();
        let dir = &mut self.net.dirs[d.index()];
        let done = dir.start_tx(now, &pkt);
        let at = Time(done.0.saturating_add(dir.delay.0));
        let f = pkt.flow.index();
        // The last hop of a flow without agents, to its destination, on a
        // link that loses nothing: its arrival there, at `at`, only adds
        // the packet to the flow's delivery counts, which nothing reads
        // before the run ends. So it is counted now, with its arrival
        // time, and needs no `Arrive` event, if nothing the link sent
        // before is still on its way (the flow's deliveries are then
        // counted in the order they arrive), and it arrives within the run
        // and within the current bin (its counts are binned by that time).
        if self.dir_delivers[d.index()]
            && dir.pipe.is_empty()
            && at <= self.end
            && at.0 < self.metrics.next_bin_edge
            && pkt.handle & agents::REVERSE == 0
            && self.flow_dst[f] == dir.to
            && !self.flow_agent[f]
        {
            let hist = self.metrics.spec.flow_histograms;
            self.metrics.flows[f].on_deliver(at, &pkt, self.metrics.cur_bin, hist);
        } else {
            if dir.pipe.is_empty() {
                self.events.schedule_with_seq(at, seq, Event::Arrive(d));
            }
            qoslab_core::qdisc::fifo::push_back_lean(&mut dir.pipe, crate::net::InFlight { at, seq, pkt });
        }
        // A port with a device queue must hear of every end of transmission.
        if dir.port.wants_tx_done() || dir.port.queue_backlog().packets > 0 {
            dir.tx_event = true;
            self.events.schedule(done, Event::TxDone(d));
        } else {
            dir.idle_owed = true;
        }
    }

    /// The queue of `d` holds packets that may not leave before `t`.
    fn retry_at(&mut self, d: DirId, t: Time) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        // A shaper answering with a time not after now would stall the
        // clock: try again one nanosecond later.
        let t = if t > now { t } else { Time(now.0.saturating_add(1)) };
        if t < dir.retry_at {
            dir.retry_at = t;
            self.events.schedule(t, Event::Retry(d));
        }
    }

    /// A transmission ended with packets waiting: send the next.
    #[inline]
    fn tx_done(&mut self, d: DirId) {
        let dir = &mut self.net.dirs[d.index()];
        if !dir.tx_event || dir.busy_until != self.now {
            self.fault = Some(format!("{}: unexpected end of transmission", dir.name));
            return;
        }
        dir.tx_event = false;
        if !dir.port.on_sent(self.now) {
            self.fault = Some(format!("{}: device queue sent a packet it did not hold", dir.name));
            return;
        }
        self.try_send(d);
    }

    #[inline]
    fn arrive(&mut self, d: DirId) {
        let dir = &mut self.net.dirs[d.index()];
        let Some(head) = dir.pipe.pop_front() else {
            self.fault = Some(format!("{}: arrival with an empty pipe", dir.name));
            return;
        };
        if let Some(next) = dir.pipe.front() {
            self.events.schedule_with_seq(next.at, next.seq, Event::Arrive(d));
        }
        let (node, from) = (dir.to, dir.from);
        let mut pkt = head.pkt;
        // The interface it arrives on at `node` is the one from `from`.
        pkt.ingress = ingress_of(from);
        if dir.loss.as_mut().is_some_and(|l| qoslab_core::rng::bernoulli(&mut l.rng, l.p)) {
            self.count_drop(&pkt);
            return;
        }
        let f = pkt.flow.index();
        if pkt.handle & agents::REVERSE != 0 {
            self.arrive_reverse(node, pkt);
            return;
        }
        if self.flow_dst[f] == node {
            self.metrics.flows[f].on_deliver(self.now, &pkt, self.metrics.cur_bin, self.metrics.spec.flow_histograms);
            if !matches!(self.agents[f], agents::Agent::None) {
                self.on_receiver_packet(pkt);
            }
            return;
        }
        match self.net.routes.next(self.flow_slot[f], node) {
            Some(next) if self.edges.any() && self.edges.at(node) => {
                let from_host = self.net.nodes[from.index()].kind == qoslab_scenario::NodeKind::Host;
                if self.edge_packet(node, from_host, self.dir_to_host[next.index()], &mut pkt) {
                    self.enqueue(next, pkt);
                }
            }
            Some(next) => self.enqueue(next, pkt),
            None => {
                self.fault = Some(format!("no route at {} for flow {}", self.net.nodes[node.index()].name, f));
            }
        }
    }

    /// A port or a lossy link dropped `pkt`: count it for its flow.
    fn count_drop(&mut self, pkt: &Packet) {
        let f = pkt.flow.index();
        if pkt.handle & agents::REVERSE != 0 {
            self.metrics.reverse[f].dropped_pkts += 1;
        } else {
            self.metrics.flows[f].on_drop(pkt.size, self.metrics.cur_bin);
        }
    }

    fn schedule_admission_tick(&mut self) {
        if let Some(t) = self.admission.next_deadline() {
            let t = t.max(self.now);
            if self.admission_tick.is_none_or(|x| t < x) {
                self.admission_tick = Some(t);
                self.events.schedule(t, Event::AdmissionTick);
            }
        }
    }

    #[inline]
    fn schedule_qdisc_tick(&mut self, d: DirId) {
        let dir = &mut self.net.dirs[d.index()];
        if let Some(t) = dir.port.next_deadline() {
            let t = t.max(self.now);
            if t < dir.tick_at {
                dir.tick_at = t;
                self.events.schedule(t, Event::QdiscTick(d));
            }
        }
    }

    /// Packets held in the network: queued (in link queues and entry shapers), on a wire, propagating.
    pub fn packets_in_network(&self) -> (u64, u64, u64) {
        let mut q = self.shaping.backlog_packets();
        let mut w = 0;
        let mut p = 0;
        for d in &self.net.dirs {
            q += d.port.backlog().packets as u64;
            let on_wire = d.on_wire(self.now) as u64;
            w += on_wire;
            p += d.pipe.len() as u64 - on_wire;
        }
        (q, w, p)
    }
}

/// Every flow's endpoints differ and are joined by a route: validation
/// refuses scenarios where they are not, so a failure here is a bug.
/// A packet's `ingress` at a node: the index of the node it came from
/// (a classifier rule's `ingress` names that node). Node indices beyond
/// 65,535 share the last value.
#[inline]
fn ingress_of(n: NodeId) -> u16 {
    u16::try_from(n.index()).unwrap_or(u16::MAX)
}

fn check_routes(net: &Network, groups: &[GroupPlan]) -> Result<(), SimError> {
    for g in groups {
        for (s, d) in g.possible_pairs(1 << 20) {
            if s == d || net.routes.slot(d).and_then(|slot| net.routes.next(slot, s)).is_none() {
                let (sn, dn) = (&net.nodes[s.index()].name, &net.nodes[d.index()].name);
                return Err(SimError::Runtime(format!(
                    "group {}: a flow from {sn} to {dn} has no route, which validation refuses (a bug)",
                    g.name
                )));
            }
        }
    }
    Ok(())
}
