//! The per-link MACE driver (seed 000 §3, Fig. 3): what the simulator adds
//! to a link direction whose queue is `{ type = "mace" }`.
//!
//! The core parts stay in `qoslab_core::mace`; this file wires them to a
//! link direction:
//!
//! ```text
//! packet enters the direction:  (class, event) = mace.classify_and_learn(now, key, flow, wire bytes)
//!                               pkt.class = class.tag()  → MaceQueue (the direction's queue)
//! device pull (wire free, a packet arrived, a transmission ended):
//!     while the queue's head class c has device.admits(c): dequeue → device FIFO, device.on_pull(c)
//!     wire free and device FIFO not empty → transmit its head
//! end of transmission:          device.on_sent(class of the packet sent)
//! at mace.next_deadline():      mace.on_tick(now) → events
//! ```
//!
//! The device transmit queue ([`DeviceQueue`]) holds `device_queue`
//! packets, the one on the wire included. With 1 (the default) the link
//! asks the queue only when the wire is free, as every other link does;
//! with more, it pulls ahead while the wire is busy, and under the
//! `when_room` BE rule BE packets pile up ahead of later CL arrivals (the
//! paper's failed first version, §3.1).
//!
//! Every [`MaceEvent`] becomes an events-table row ([`event_row`]):
//!
//! | event | `kind` | `rule` | `estimate` | `threshold` | `detail` |
//! |---|---|---|---|---|---|
//! | decision, admitted | `admit` | the admission rule | its left side (bit/s, or table size) | its right side | link, request rate, attempt |
//! | decision, refused | `reject` | as above | as above | as above | as above |
//! | admitted flow stale | `stale` | `stale_timeout` | silent time (s) | timeout (s) | link, admitted at, last seen |
//! | candidate expired | `recognition` | `candidate_expired` | packets counted | refusals | link, key, last seen |
//! | measurement sample | `sample` | `measured_load` | sample rate (bit/s) | allocation μ (bit/s) | link, bits, cumulative `cl_arrived cl_dropped be_arrived be_dropped` packets |
//!
//! Parameters (scenario `mace` table of a link, see [`MaceSpec`]):
//!
//! | field | unit | allowed | default |
//! |---|---|---|---|
//! | `ports` | descriptors, inline | ≥ 1, each port once per side, rate > 0, depth ≥ 1 B, threshold ≥ 1 | — |
//! | `descriptors` | descriptor file, relative to the scenario file | a readable `[[port]]` file with ≥ 1 port | — |
//! | `admission` | `mbac { v, sample, window, restart_window }` or `ssac` | v in (0, 1], sample > 0, window ≥ 1 | v 0.95, 5 s, 20, true |
//! | `allocation` | bit/s | > 0 | — |
//! | `stale_timeout` | time | > 0 | 30 s |
//! | `device_queue` | packets | ≥ 1 | 1 |
//! | `be_dispatch` | `when_room`, `when_idle` | | `when_room` |
//! | `table_capacity` | flows | ≥ 1 | 1024 |
//!
//! Exactly one of `ports` and `descriptors` gives the descriptors. The
//! file is the core's flow-setup format ([`Descriptors::parse`],
//! `docs/mechanisms/mace_descriptors.md`); its problems are reported at
//! the file's own `file:line`, the field path inside it (`port[1].rate`).
//!
//! Interpretations: a descriptor file that lists no port is refused like
//! an empty inline `ports` (a MACE link without CL ports is a mistake in a
//! scenario, though the core accepts it); the measurement of an SSAC link still samples (its
//! rows show the CL load), though SSAC ignores the samples; the stale
//! timeout applies to the classifier and to the recognition table alike;
//! the classifier matches on addresses and ports (the paper's descriptor).

use crate::metrics::EventRow;
use qoslab_core::admission::LoadSample;
use qoslab_core::mace::{Class, Descriptors, DeviceQueue, MaceEvent};
use qoslab_core::packet::{FlowId, FlowKey};
use qoslab_core::units::{Rate, Time};
use qoslab_core::Packet;
use qoslab_scenario::registry::mace::{self, AnyMace, MaceParts};
pub use qoslab_scenario::registry::mace::{spec_descriptors, MaceSpecError};
use qoslab_scenario::MaceSpec;
use std::collections::VecDeque;
use std::path::Path;

/// MACE at one link direction: the core composition, the device transmit
/// queue and the packets in it.
#[derive(Debug)]
pub struct MaceLink {
    mace: AnyMace,
    pub device: DeviceQueue,
    /// Packets pulled into the device and not yet on the wire.
    pub device_fifo: VecDeque<Packet>,
    /// Class of the packet on the wire, if any.
    pub on_wire: Option<Class>,
    /// Packets that entered the direction, per class (`[CL, BE]`, as classified on entry).
    pub arrived: [u64; 2],
    /// Packets the MACE queue dropped or pushed out, per class (`[CL, BE]`).
    pub dropped: [u64; 2],
    allocation: Rate,
}

fn ix(c: Class) -> usize {
    match c {
        Class::Cl => 0,
        Class::Be => 1,
    }
}

impl MaceLink {
    /// Builds the driver from a link's `mace` table, measurement starting
    /// at `start`; a descriptor file is looked up in `base_dir` (see
    /// [`spec_descriptors`]). Every problem found is returned.
    pub fn from_spec(spec: &MaceSpec, start: Time, base_dir: Option<&Path>) -> Result<MaceLink, Vec<MaceSpecError>> {
        let descriptors = mace::spec_descriptors(spec, base_dir)?;
        MaceLink::with_descriptors(spec, descriptors, start).map_err(|e| vec![e])
    }

    /// Builds the driver from a link's `mace` table with its descriptors resolved.
    pub fn with_descriptors(spec: &MaceSpec, descriptors: Descriptors, start: Time) -> Result<MaceLink, MaceSpecError> {
        let MaceParts { mace, device } = mace::build_mace(spec, descriptors, start)?;
        Ok(MaceLink {
            mace,
            device,
            device_fifo: VecDeque::new(),
            on_wire: None,
            arrived: [0; 2],
            dropped: [0; 2],
            allocation: spec.allocation,
        })
    }

    /// Classifies (and learns from) a packet entering the direction.
    #[inline]
    pub fn classify(&mut self, now: Time, key: &FlowKey, flow: FlowId, size: u32) -> (Class, Option<MaceEvent>) {
        let out = match &mut self.mace {
            AnyMace::Mbac(m) => m.classify_and_learn(now, key, flow, size),
            AnyMace::Ssac(m) => m.classify_and_learn(now, key, flow, size),
        };
        self.arrived[ix(out.0)] += 1;
        out
    }

    /// The MACE queue dropped (or pushed out) `pkt`.
    pub fn on_drop(&mut self, pkt: &Packet) {
        self.dropped[ix(Class::of_tag(pkt.class))] += 1;
    }

    /// Loss ratio of a class at this direction (dropped / arrived), NaN without arrivals.
    pub fn loss(&self, c: Class) -> f64 {
        let a = self.arrived[ix(c)];
        if a == 0 {
            f64::NAN
        } else {
            self.dropped[ix(c)] as f64 / a as f64
        }
    }

    /// When [`MaceLink::on_tick`] is next needed.
    pub fn next_deadline(&self) -> Time {
        match &self.mace {
            AnyMace::Mbac(m) => m.next_deadline(),
            AnyMace::Ssac(m) => m.next_deadline(),
        }
    }

    /// The periodic work due at `now`.
    pub fn on_tick(&mut self, now: Time) -> Vec<MaceEvent> {
        match &mut self.mace {
            AnyMace::Mbac(m) => m.on_tick(now),
            AnyMace::Ssac(m) => m.on_tick(now),
        }
    }

    /// Flows in the classifier (currently CL).
    pub fn admitted_flows(&self) -> usize {
        match &self.mace {
            AnyMace::Mbac(m) => m.classifier().len(),
            AnyMace::Ssac(m) => m.classifier().len(),
        }
    }

    /// The admission controller's state after the latest sample, as
    /// `key=value` text for sample rows: MBAC `nu_hat_bps=ν̂ v_mu_bps=v·μ`,
    /// SSAC `reserved_bps=Σr`.
    fn admission_state(&self) -> String {
        match &self.mace {
            AnyMace::Mbac(m) => {
                let a = m.admission();
                format!("nu_hat_bps={} v_mu_bps={}", a.estimate(), a.config().v * a.config().mu.0 as f64)
            }
            AnyMace::Ssac(m) => format!("reserved_bps={}", m.admission().reserved().0),
        }
    }

    /// The CL allocation μ.
    pub fn allocation(&self) -> Rate {
        self.allocation
    }
}

/// The events-table row of a MACE event at link direction `link` of MACE `m`.
pub fn event_row(link: &str, m: &MaceLink, ev: &MaceEvent) -> EventRow {
    let secs = |t: Time| t.0 as f64 / 1e9;
    match ev {
        MaceEvent::Decision { at, request, attempt, decision, .. } => {
            let r = decision.reason();
            EventRow {
                t: *at,
                kind: if decision.admitted() { "admit" } else { "reject" },
                flow: Some(request.flow),
                rule: r.rule.to_string(),
                estimate: r.estimate,
                threshold: r.threshold,
                detail: format!("link={link} rate_bps={} attempt={attempt}", request.rate.0),
            }
        }
        MaceEvent::Stale { at, flow } => EventRow {
            t: *at,
            kind: "stale",
            flow: Some(flow.flow),
            rule: "stale_timeout".into(),
            estimate: secs(*at) - secs(flow.last_seen),
            threshold: f64::NAN,
            detail: format!(
                "link={link} admitted_at_s={} last_seen_s={}",
                secs(flow.admitted_at),
                secs(flow.last_seen)
            ),
        },
        MaceEvent::CandidateExpired { at, candidate } => EventRow {
            t: *at,
            kind: "recognition",
            flow: None,
            rule: "candidate_expired".into(),
            estimate: candidate.count as f64,
            threshold: candidate.refusals as f64,
            detail: format!("link={link} key={:?} last_seen_s={}", candidate.key, secs(candidate.last_seen)),
        },
        MaceEvent::Sample(s) => sample_row(link, m, s),
    }
}

/// A sample row; its detail also carries the link's cumulative per-class
/// packet counters (`cl_arrived cl_dropped be_arrived be_dropped`, pushed-out
/// BE packets among the BE drops), so class loss rates after a warm-up come
/// from two sample rows.
fn sample_row(link: &str, m: &MaceLink, s: &LoadSample) -> EventRow {
    EventRow {
        t: s.at,
        kind: "sample",
        flow: None,
        rule: "measured_load".into(),
        estimate: s.rate_bps(),
        threshold: m.allocation.0 as f64,
        detail: format!(
            "link={link} bits={} cl_arrived={} cl_dropped={} be_arrived={} be_dropped={} {}",
            s.bits,
            m.arrived[0],
            m.dropped[0],
            m.arrived[1],
            m.dropped[1],
            m.admission_state()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::{Bytes, Dur};
    use qoslab_scenario::{MaceAdmissionSpec, MaceBeDispatch, MacePortSide, MacePortSpec};

    fn spec(admission: MaceAdmissionSpec) -> MaceSpec {
        MaceSpec {
            ports: Some(vec![MacePortSpec {
                port: 5004,
                side: MacePortSide::Dst,
                rate: Rate(77_200),
                depth: Bytes(386),
                threshold: 100,
            }]),
            descriptors: None,
            admission,
            allocation: Rate(3_900_000),
            stale_timeout: Dur::from_secs(30),
            device_queue: 1,
            be_dispatch: MaceBeDispatch::WhenRoom,
            table_capacity: 1024,
        }
    }
    fn mbac(v: f64, window: u32) -> MaceAdmissionSpec {
        MaceAdmissionSpec::Mbac { v, sample: Dur::from_secs(5), window, restart_window: true }
    }

    #[test]
    fn mace_link_sample_rows_carry_the_rate_and_the_allocation() {
        let mut m = MaceLink::from_spec(&spec(mbac(0.95, 20)), Time::ZERO, None).unwrap();
        assert_eq!(m.next_deadline(), Time(Dur::from_secs(5).0));
        let evs = m.on_tick(Time(Dur::from_secs(5).0));
        let row = event_row("r1->sink0", &m, &evs[0]);
        assert_eq!((row.kind, row.estimate, row.threshold), ("sample", 0.0, 3_900_000.0));
        assert_eq!(
            row.detail,
            "link=r1->sink0 bits=0 cl_arrived=0 cl_dropped=0 be_arrived=0 be_dropped=0 nu_hat_bps=0 v_mu_bps=3705000"
        );
        let mut m = MaceLink::from_spec(&spec(MaceAdmissionSpec::Ssac), Time::ZERO, None).unwrap();
        let evs = m.on_tick(Time(Dur::from_secs(5).0));
        assert!(event_row("l", &m, &evs[0]).detail.ends_with("be_dropped=0 reserved_bps=0"));
    }
}
