//! The flow lifecycle: creating flows (keys, endpoints, RNG streams),
//! admission at start, ends, keep-alive replacement, and the arrival
//! processes' events. Part of [`super::Sim`].

use super::{Life, Sim};
use crate::engine::{DirId, Event, FlowId, GroupId};
use crate::metrics::FlowStats;
use crate::traffic::arrivals::{self, Arrival};
use crate::traffic::{self, Flow, FlowState, GroupSource, Source};
use qoslab_core::admission::{Decision, FlowRequest};
use qoslab_core::packet::{proto, FlowKey};
use qoslab_core::units::{Bytes, Time};
use std::net::IpAddr;

impl Sim {
    /// Creates flow number `created` of group `g` (not started yet).
    pub(super) fn create_flow(&mut self, g: GroupId, life: Life) -> FlowId {
        let gp = &mut self.groups[g.index()];
        let i = gp.created;
        gp.created += 1;
        let (src, dst) = gp.endpoints(i);
        let mut frng = qoslab_core::rng::stream(self.seed, traffic::flow_stream(g.0, i));
        let (start, end) = match life {
            Life::Fixed => {
                let j = traffic::jitter(&mut frng, gp.jitter);
                (arrivals::later(gp.start, j), gp.stop)
            }
            Life::Law(law) => (self.now, arrivals::later(self.now, law.sample(&mut frng)).min(gp.stop)),
            Life::Given(l) => (self.now, arrivals::later(self.now, l).min(gp.stop)),
        };
        let name = format!("{}.{i}", gp.name);
        let traced = gp.traced || self.trace_names.contains(&name);
        let slot = self.net.routes.slot(dst).unwrap_or(0);
        let first_dir = self.net.routes.next(slot, src).unwrap_or(DirId(0));
        let (sa, da) = (self.net.nodes[src.index()].addr, self.net.nodes[dst.index()].addr);
        // The ports encode the run-wide flow number n (below 64,512^2), so
        // every flow has its own key: src = 1024 + n mod 64512,
        // dst = 1024 + n div 64512.
        let n = self.flows.len() as u64;
        // A group's fixed `dst_port` (an application port MACE may list)
        // replaces the second part: keys stay distinct below 64,512 flows
        // per address pair, and a collision ends the run.
        let key = FlowKey {
            src: IpAddr::V4(sa),
            dst: IpAddr::V4(da),
            src_port: 1024 + (n % 64_512) as u16,
            dst_port: self
                .group_dst_port
                .get(g.index())
                .copied()
                .flatten()
                .unwrap_or(1024 + ((n / 64_512) % 64_512) as u16),
            proto: if matches!(gp.model, traffic::ModelPlan::Tcp { .. }) { proto::TCP } else { proto::UDP },
        };
        let agent = super::agents::Agent::new(gp, self.now);
        let src_slot = self.net.routes.slot(src).unwrap_or(0);
        let id = self.table.intern(key);
        if id.index() != self.flows.len() {
            self.fault = Some(format!(
                "flow {name}: its key {key:?} repeats an earlier flow's (a fixed dst_port allows 64512 flows per address pair)"
            ));
        }
        self.flows.push(Flow {
            group: g,
            index: i,
            src,
            dst,
            first_dir,
            start,
            end,
            state: FlowState::Pending,
            end_reason: "",
            source: Source::new(&gp.model, &gp.mm_periods),
            class: gp.class,
            dscp: gp.dscp,
            ecn: gp.ecn,
            rng: frng,
        });
        self.flow_dst.push(dst);
        self.flow_slot.push(slot);
        self.flow_first_dir.push(first_dir);
        self.flow_src_slot.push(src_slot);
        self.flow_agent.push(!matches!(agent, super::agents::Agent::None));
        self.agents.push(agent);
        self.metrics.flows.push(FlowStats::new(traced, &self.metrics.spec));
        self.metrics.reverse.push(Default::default());
        id
    }

    /// Asks admission control for `f`; an admitted flow starts sending now.
    pub(super) fn flow_start(&mut self, f: FlowId) {
        let now = self.now;
        let fl = &self.flows[f.index()];
        let g = fl.group;
        let rate = self.shaping.requested(self.groups[g.index()].request_rate);
        let req = FlowRequest { flow: f, class: fl.class, rate, depth: Bytes(0) };
        let detail = format!("{}->{}", self.net.nodes[fl.src.index()].name, self.net.nodes[fl.dst.index()].name);
        self.metrics.event(now, crate::metrics::FLOW_START, Some(f), detail);
        let (decision, detail) = self.decide(now, &req);
        self.schedule_admission_tick();
        // A flow entering a domain (its route crosses an edge router) also asks
        // the domain's ingress, whose answer may come later (PCN: after the
        // round trip to the egress); see `edges`. A flow of an `admitted`
        // group was admitted elsewhere (rerouted) and starts at once.
        if decision.admitted() && self.edges.any() && !self.groups[g.index()].admitted {
            if let Some(d) = self.edge_flow_request(f, &req) {
                self.finish_start(f, d, String::new());
            }
            return;
        }
        let detail = if self.groups[g.index()].admitted && self.edges.any() {
            format!("{detail}; admitted group: no domain admission request")
        } else {
            detail
        };
        self.finish_start(f, decision, detail);
    }

    /// Starts `f` (admitted) or refuses it, now, and records the decision.
    pub(super) fn finish_start(&mut self, f: FlowId, decision: Decision, detail: String) {
        let now = self.now;
        let g = self.flows[f.index()].group;
        self.metrics.decision(now, f, &decision, detail);
        let fl = &mut self.flows[f.index()];
        fl.start = now;
        // An answer that came after the flow's planned end (a lifetime
        // shorter than the admission round trip, PCN) ends it at once: its
        // end is never before its start, and the clock never goes back.
        fl.end = fl.end.max(now);
        if decision.admitted() {
            self.on_admitted(f);
            let fl = &mut self.flows[f.index()];
            fl.state = FlowState::Active;
            let first = fl.source.first(now, &mut fl.rng, &self.groups[g.index()]);
            debug_assert_eq!(first, now);
            let end = fl.end;
            self.events.schedule(end, Event::FlowEnd(f));
            if matches!(fl.source, Source::Agent) {
                self.agent_start(f);
            } else {
                self.emit(f);
            }
        } else {
            fl.state = FlowState::Refused;
            let end = fl.end;
            if matches!(self.groups[g.index()].arrival, Some(Arrival::KeepAlive { .. })) {
                self.events.schedule(end, Event::SlotFree(g));
            }
        }
    }

    pub(super) fn flow_end(&mut self, f: FlowId) {
        let now = self.now;
        let fl = &mut self.flows[f.index()];
        if fl.state != FlowState::Active {
            return;
        }
        fl.state = FlowState::Ended;
        self.agents[f.index()].close();
        let fl = &mut self.flows[f.index()];
        let g = fl.group;
        let gp = &self.groups[g.index()];
        let reason = if fl.end_reason == "terminated" {
            "terminated"
        } else if now >= self.end {
            "run_end"
        } else if gp.fixed_flows.is_none() && now < gp.stop {
            "lifetime"
        } else {
            "stop"
        };
        fl.end_reason = reason;
        self.metrics.event(now, crate::metrics::FLOW_END, Some(f), reason.to_string());
        self.admission.on_departure(now, f);
        self.shaping_departure(f);
        self.schedule_admission_tick();
        if matches!(self.groups[g.index()].arrival, Some(Arrival::KeepAlive { .. })) {
            self.keep_alive_replace(g);
        }
    }

    /// A keep-alive slot is free: the next flow starts now (if it may).
    pub(super) fn keep_alive_replace(&mut self, g: GroupId) {
        let gp = &self.groups[g.index()];
        let Some(Arrival::KeepAlive { lifetime, .. }) = gp.arrival else { return };
        if gp.may_start(self.now) {
            self.start_arrival_flow(g, Life::Law(lifetime));
        }
    }

    /// Creates a flow of an arrival process and asks for its admission now.
    fn start_arrival_flow(&mut self, g: GroupId, life: Life) {
        let f = self.create_flow(g, life);
        self.flow_start(f);
    }

    /// The group's arrival process fires.
    pub(super) fn group_next(&mut self, g: GroupId) {
        let now = self.now;
        let gp = &mut self.groups[g.index()];
        let next = match &mut gp.arrival {
            None => return,
            Some(Arrival::Poisson { mean_gap_ns, lifetime }) => {
                let (gap, lifetime) = (arrivals::exp_gap(&mut gp.rng, *mean_gap_ns), *lifetime);
                if gp.may_start(now) {
                    self.start_arrival_flow(g, Life::Law(lifetime));
                }
                Some(Time(now.0.saturating_add(gap)))
            }
            Some(Arrival::Batch { mean_gap_ns, batch_mean, lifetime }) => {
                let (mean_gap_ns, lifetime) = (*mean_gap_ns, *lifetime);
                let k = arrivals::batch_size(&mut gp.rng, *batch_mean);
                let gap = arrivals::exp_gap(&mut gp.rng, mean_gap_ns);
                for _ in 0..k {
                    if !self.groups[g.index()].may_start(now) {
                        break;
                    }
                    self.start_arrival_flow(g, Life::Law(lifetime));
                }
                Some(Time(now.0.saturating_add(gap)))
            }
            Some(Arrival::KeepAlive { alive, lifetime }) => {
                let (alive, lifetime) = (*alive, *lifetime);
                for _ in 0..alive {
                    if !self.groups[g.index()].may_start(now) {
                        break;
                    }
                    self.start_arrival_flow(g, Life::Law(lifetime));
                }
                None
            }
            Some(Arrival::Replay { rows, cursor }) => {
                let row = rows.get(*cursor).map(|r| r.1);
                let next = rows.get(*cursor + 1).map(|r| arrivals::later(gp.start, r.0).max(now));
                *cursor += 1;
                if let Some(life) = row {
                    if gp.may_start(now) {
                        self.start_arrival_flow(g, Life::Given(life));
                    }
                }
                next
            }
        };
        if let Some(t) = next {
            if self.groups[g.index()].may_start(t) {
                self.events.schedule(t, Event::GroupNext(g));
            }
        }
    }
}
