//! The simulator's side of the core mechanisms' events: the events-table
//! rows of mechanism events ([`event_row`], [`RowSink`]).
//!
//! A link direction's port (its stages, queue discipline and device queue)
//! is assembled by the registry of `qoslab-scenario`
//! (`qoslab_scenario::registry::build_port`), the one place for the
//! simulator and the router alike.

use crate::metrics::{EventRow, Events};
use qoslab_core::pipeline::{EventSink, MechEvent};
use std::fmt::Write as _;

/// The events-table row of a mechanism event at port `link`: the shared
/// columns as they are, the mechanism's fields as `link=<port> name=value ...`
/// in `detail`.
pub fn event_row(link: &str, ev: &MechEvent) -> EventRow {
    let mut detail = format!("link={link}");
    for (name, value) in &ev.fields {
        let _ = write!(detail, " {name}={value}");
    }
    EventRow {
        t: ev.at,
        kind: ev.kind.as_str(),
        flow: ev.flow,
        rule: ev.rule.to_string(),
        estimate: ev.estimate,
        threshold: ev.threshold,
        detail,
    }
}

/// An [`EventSink`] that writes events-table rows for port `link`.
pub struct RowSink<'a> {
    pub link: &'a str,
    pub rows: &'a mut Events,
}

impl EventSink for RowSink<'_> {
    fn emit(&mut self, ev: MechEvent) {
        self.rows.push(event_row(self.link, &ev));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::{Bytes, Dur, Rate, Time};
    use qoslab_scenario::registry::mace;
    use qoslab_scenario::{MaceAdmissionSpec, MaceBeDispatch, MacePortSide, MacePortSpec, MaceSpec};

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
            be_dispatch: MaceBeDispatch::WhenIdle,
            table_capacity: 1024,
        }
    }
    fn mbac(v: f64, window: u32) -> MaceAdmissionSpec {
        MaceAdmissionSpec::Mbac { v, sample: Dur::from_secs(5), window, restart_window: true }
    }

    #[test]
    fn mace_sample_rows_carry_the_rate_and_the_allocation() {
        let mut m = mace::from_spec(&spec(mbac(0.95, 20)), Time::ZERO, None).unwrap();
        assert_eq!(m.stage.next_deadline(), Some(Time(Dur::from_secs(5).0)));
        let mut evs = Vec::new();
        m.stage.on_tick(Time(Dur::from_secs(5).0), &mut evs);
        let row = event_row("r1->sink0", &evs[0]);
        assert_eq!((row.kind, row.estimate, row.threshold), ("sample", 0.0, 3_900_000.0));
        assert_eq!(
            row.detail,
            "link=r1->sink0 bits=0 cl_arrived=0 cl_dropped=0 be_arrived=0 be_dropped=0 nu_hat_bps=0 v_mu_bps=3705000"
        );
        let mut m = mace::from_spec(&spec(MaceAdmissionSpec::Ssac), Time::ZERO, None).unwrap();
        let mut evs = Vec::new();
        m.stage.on_tick(Time(Dur::from_secs(5).0), &mut evs);
        assert!(event_row("l", &evs[0]).detail.ends_with("be_dropped=0 reserved_bps=0"));
    }
}
