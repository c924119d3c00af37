//! Per-flow shaping at the network entry and the shaping CAC at flow start
//! ([Tarasiuk05 §2] and §4). Part of [`super::Sim`].
//!
//! **Where the shaper sits.** A flow of a group with `shaper = { ... }` (or
//! any flow when `admission` is `shaping_cac`) gets its own core
//! [`Shaper`] when it is admitted. Every packet its source emits goes into
//! that shaper instead of the first link's queue; the shaper releases it
//! to the first link when it conforms (`R` bit/s, bucket `depth`, bucket
//! full at admission):
//!
//! ```text
//! source -> Shaper(flow) --(conformant)--> queue of the first link -> ...
//!            |  NotBefore(t): a ShaperRelease(flow) event at t
//!            `- full buffer (only if `buffer` is set): dropped, counted as the flow's drop
//! ```
//!
//! The packet keeps its creation time, so the time spent in the shaper
//! counts in the flow's delay (and, for TCP, in its RTT). Packets held in
//! shapers count as queued in the summary's packet conservation.
//!
//! **The shaping CAC.** With `admission = { type = "shaping_cac", ... }`
//! the decision at flow start comes from a core [`ShapingCac`] (scheme #1,
//! #2 or #3) instead of the boxed admission controller; after each request
//! and each departure the rate changes it reports are applied to the flows'
//! shapers (scheme #2 re-shapes every running flow). A re-shaped flow's
//! pending release is recomputed at once from its new rate.
//!
//! | key | unit | allowed | default |
//! |---|---|---|---|
//! | `shaper.rate` | bit/s (wire) | > 0; required without `shaping_cac` | assigned by the CAC |
//! | `shaper.depth` | packets or bytes | ≥ 1 packet, ≥ the wire size (fixed sizes) | `"1pkt"` ([Tarasiuk05]: packet-by-packet spacing) |
//! | `shaper.buffer` | packets and/or bytes | ≥ 1, or absent | absent: delays, never drops |
//! | `admission.scheme` | – | 1, 2, 3 | required |
//! | `admission.capacity` | bit/s | > 0 | 100 Mb/s |
//! | `admission.buffer` | packets | ≥ 1 | 10 |
//! | `admission.iplr` | – | (0, 1) | 1e-3 |
//! | `admission.r_req` | bit/s | > 0 | the group's `reserve` (or mean wire rate) |
//! | `admission.k` | – | > 1, finite | 3 |
//! | `admission.scheme2_rate` | – | `c`, `rho_c` | `c` (C/n) |
//!
//! Interpretations:
//! - A depth in packets is that many packets of the group's (fixed) wire
//!   size, payload plus header; random sizes need a depth in bytes, and a
//!   packet larger than the depth is dropped at the shaper (`Policed`).
//! - A flow's shaper outlives the flow: what it holds at the flow's end
//!   still leaves at its last rate (the data was sent by the source).
//! - Events: each decision's `detail` carries `running=<n>`, the running
//!   connections when the request was decided (before an admission), and
//!   `rate=<R>bps` (the request) and, when admitted, `assigned=<R>bps`.

use super::Sim;
use crate::engine::{DirId, Event, FlowId};
use crate::error::SimError;
use crate::traffic::{GroupPlan, SizeModel};
use qoslab_core::admission::cac::ShapingCac;
use qoslab_core::admission::{AdmissionControl, Decision, FlowRequest};
use qoslab_core::qdisc::shaper::{Shaper, ShaperConfig};
use qoslab_core::qdisc::{Dequeue, Limit, Qdisc, Verdict};
use qoslab_core::units::{Bytes, Rate, Time};
use qoslab_core::Packet;
use qoslab_scenario::{Scenario, ShaperSpec};

/// A group's shaper settings, resolved against its packet size.
#[derive(Clone, Copy, Debug)]
struct GroupShaper {
    /// `None`: assigned by the CAC.
    rate: Option<Rate>,
    depth: Bytes,
    limit: Limit,
}

/// A flow's shaper and its pending release.
#[derive(Clone, Debug)]
struct FlowShaper {
    shaper: Shaper,
    release_at: Option<Time>,
}

/// The shaping state of a run.
#[derive(Debug, Default)]
pub(super) struct Shaping {
    groups: Vec<Option<GroupShaper>>,
    /// Indexed by flow id; `None` for unshaped (or not yet admitted) flows.
    flows: Vec<Option<FlowShaper>>,
    cac: Option<ShapingCac>,
    r_req: Option<Rate>,
}

/// A rule validation guarantees did not hold: a bug ([`SimError::Runtime`]),
/// never a second message about the scenario (validation gives that one).
fn unvalidated(what: String) -> SimError {
    SimError::Runtime(format!("{what}, which validation refuses (a bug)"))
}

/// Group `gi`'s shaper (`None`: unshaped), its depth in bytes of its sizes.
fn group_shaper(
    gi: usize,
    spec: Option<&ShaperSpec>,
    plan: &GroupPlan,
    cac_on: bool,
) -> Result<Option<GroupShaper>, SimError> {
    if spec.is_none() && !cac_on {
        return Ok(None);
    }
    let (rate, depth, buffer) = match spec {
        Some(s) => (s.rate, s.depth, s.buffer),
        None => (None, Limit::packets(1), None),
    };
    if rate.is_none() && !cac_on {
        return Err(unvalidated(format!("traffic.{gi}.shaper.rate is missing without a shaping CAC")));
    }
    let depth = match (depth.packets, depth.bytes, plan.size) {
        (Some(n), None, SizeModel::Fixed { wire }) => Bytes(n as u64 * wire as u64),
        (None, Some(b), _) => Bytes(b),
        _ => return Err(unvalidated(format!("traffic.{gi}.shaper.depth is not one value its sizes allow"))),
    };
    Ok(Some(GroupShaper { rate, depth, limit: buffer.unwrap_or(Limit::UNLIMITED) }))
}

impl Shaping {
    /// Resolves the groups' shapers and builds the CAC of a validated scenario.
    pub(super) fn build(sc: &Scenario, groups: &[GroupPlan]) -> Result<Shaping, SimError> {
        let (cac, r_req) = match qoslab_scenario::registry::cac::shaping_cac(&sc.admission)
            .map_err(|e| unvalidated(format!("admission.{}: {}", e.field_path, e.message)))?
        {
            Some((cfg, r_req)) => (
                Some(ShapingCac::new(cfg).map_err(|e| unvalidated(format!("admission.{}: {}", e.field, e.message)))?),
                r_req,
            ),
            None => (None, None),
        };
        let cac_on = cac.is_some();
        let resolved = sc
            .traffic
            .iter()
            .zip(groups)
            .enumerate()
            .map(|(gi, (g, plan))| group_shaper(gi, g.shaper.as_ref(), plan, cac_on))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Shaping { groups: resolved, flows: Vec::new(), cac, r_req })
    }

    /// Packets held in shapers.
    pub(super) fn backlog_packets(&self) -> u64 {
        self.flows.iter().flatten().map(|s| s.shaper.backlog().packets as u64).sum()
    }

    /// Shows `f` every packet held in shapers.
    pub(super) fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for s in self.flows.iter().flatten() {
            s.shaper.for_each_packet(f);
        }
    }

    /// The rate a flow requests: the CAC's `r_req`, else the group's.
    pub(super) fn requested(&self, group_rate: Rate) -> Rate {
        self.r_req.unwrap_or(group_rate)
    }
}

impl Sim {
    /// Decides a flow's admission: the shaping CAC if configured, else the
    /// scenario's controller. Returns the decision and the event detail.
    pub(super) fn decide(&mut self, now: Time, req: &FlowRequest) -> (Decision, String) {
        match self.shaping.cac.as_mut() {
            Some(cac) => {
                let running = cac.running();
                let d = cac.request(now, req);
                let mut detail = format!("{} rate={}bps running={running}", cac.kind(), req.rate.0);
                if let Some(r) = cac.rate_of(req.flow).filter(|_| d.admitted()) {
                    detail.push_str(&format!(" assigned={}bps", r.0));
                }
                (d, detail)
            }
            None => {
                let d = self.admission.request(now, req);
                let detail = format!("{} rate={}bps", self.admission.kind(), req.rate.0);
                (d, detail)
            }
        }
    }

    /// An admitted flow gets its shaper (if its group is shaped), and the
    /// CAC's rate changes are applied.
    pub(super) fn on_admitted(&mut self, f: FlowId) {
        let g = self.flows[f.index()].group;
        if let Some(gs) = self.shaping.groups.get(g.index()).copied().flatten() {
            let rate = gs.rate.or_else(|| self.shaping.cac.as_ref().and_then(|c| c.rate_of(f)));
            let Some(rate) = rate else {
                self.fault = Some(format!("flow {}: no shaping rate assigned", self.flow_name(f.index())));
                return;
            };
            let cfg = ShaperConfig { rate, depth: gs.depth, limit: gs.limit, start_full: true };
            match Shaper::new(cfg, self.now) {
                Ok(shaper) => {
                    if self.shaping.flows.len() <= f.index() {
                        self.shaping.flows.resize(f.index() + 1, None);
                    }
                    self.shaping.flows[f.index()] = Some(FlowShaper { shaper, release_at: None });
                }
                Err(e) => {
                    self.fault = Some(format!("flow {}: {e}", self.flow_name(f.index())));
                    return;
                }
            }
        }
        self.apply_rate_changes();
    }

    /// A flow departs: the CAC releases its rate (scheme #2 re-shapes the rest).
    pub(super) fn shaping_departure(&mut self, f: FlowId) {
        if let Some(cac) = self.shaping.cac.as_mut() {
            cac.on_departure(self.now, f);
            self.apply_rate_changes();
        }
    }

    /// Applies the CAC's pending rate assignments to the flows' shapers.
    fn apply_rate_changes(&mut self) {
        let Some(cac) = self.shaping.cac.as_mut() else { return };
        let changes: Vec<_> = cac.drain_rate_changes().collect();
        let now = self.now;
        for ch in changes {
            let Some(Some(fs)) = self.shaping.flows.get_mut(ch.flow.index()) else { continue };
            if fs.shaper.rate() == ch.rate {
                continue;
            }
            if let Err(e) = fs.shaper.set_rate(now, ch.rate) {
                self.fault = Some(format!("flow {}: {e}", self.flow_name(ch.flow.index())));
                return;
            }
            self.release(ch.flow);
        }
    }

    /// A packet of `f` enters the network: through its shaper if it has
    /// one, else straight into the queue of its first link `dir`.
    #[inline]
    pub(super) fn inject(&mut self, f: FlowId, dir: DirId, pkt: Packet) {
        let Some(Some(fs)) = self.shaping.flows.get_mut(f.index()) else {
            self.enqueue(dir, pkt);
            return;
        };
        let fl = &mut self.flows[f.index()];
        match fs.shaper.enqueue(self.now, pkt, &mut fl.rng) {
            Verdict::Queued | Verdict::Marked(_) => self.release(f),
            Verdict::Dropped(x) => {
                self.metrics.flows[f.index()].on_drop(x.packet.size, self.metrics.cur_bin);
            }
            Verdict::QueuedPushingOut(victims) => {
                for x in victims {
                    self.metrics.flows[f.index()].on_drop(x.packet.size, self.metrics.cur_bin);
                }
                self.release(f);
            }
        }
    }

    /// A `ShaperRelease` event: releases what conforms, if still due.
    pub(super) fn shaper_release(&mut self, f: FlowId) {
        let now = self.now;
        let Some(Some(fs)) = self.shaping.flows.get_mut(f.index()) else { return };
        if fs.release_at != Some(now) {
            return;
        }
        fs.release_at = None;
        self.release(f);
    }

    /// Sends every conformant packet of `f`'s shaper to its first link;
    /// schedules a release for the next one.
    fn release(&mut self, f: FlowId) {
        let now = self.now;
        let dir = self.flows[f.index()].first_dir;
        loop {
            let Some(Some(fs)) = self.shaping.flows.get_mut(f.index()) else { return };
            match fs.shaper.dequeue(now) {
                Dequeue::Packet(p) => self.enqueue(dir, p),
                Dequeue::Empty => {
                    fs.release_at = None;
                    return;
                }
                Dequeue::NotBefore(t) => {
                    // The bucket's wait is exact and positive; guard the clock anyway.
                    let t = if t > now { t } else { Time(now.0.saturating_add(1)) };
                    if fs.release_at != Some(t) {
                        fs.release_at = Some(t);
                        self.events.schedule(t, Event::ShaperRelease(f));
                    }
                    return;
                }
            }
        }
    }
}
