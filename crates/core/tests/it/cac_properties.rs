//! Properties of the TCP-CAC module: the admission invariants of the three
//! rate-assignment schemes under random arrival/departure sequences, and
//! Erlang-B's monotonicity and inverse.

use proptest::prelude::*;
use qoslab_core::admission::cac::{
    erlang_b, erlang_b_offered_load, rho_and_n_max, CacLimit, Scheme, ShapingCac, ShapingCacConfig, Share, Utilization,
};
use qoslab_core::admission::{AdmissionControl, FlowRequest};
use qoslab_core::{Bytes, ClassTag, FlowId, Rate, Time};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    /// A request asking for this many kbit/s.
    Arrive(u64),
    /// The departure of the i-th running flow (modulo the count).
    Depart(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![3 => (100u64..20_000).prop_map(Op::Arrive), 2 => any::<usize>().prop_map(Op::Depart)],
        1..300,
    )
}

fn scheme() -> impl Strategy<Value = Scheme> {
    prop_oneof![
        Just(Scheme::Requested),
        Just(Scheme::Equal { share: Share::Capacity }),
        Just(Scheme::Equal { share: Share::RhoCapacity }),
        (1.01f64..10.0).prop_map(|k| Scheme::LoadDependent { k }),
    ]
}

fn utilization() -> impl Strategy<Value = Utilization> {
    prop_oneof![
        (1u64..200, 1e-9f64..0.5).prop_map(|(b, iplr)| Utilization::Mdl1 { buffer_pkts: b, iplr }),
        (0.05f64..=1.0).prop_map(Utilization::Rho),
    ]
}

/// Drives a controller through `ops`, checking the invariants after every step.
fn drive(cfg: ShapingCacConfig, ops: &[Op], homogeneous: bool) -> Result<(), TestCaseError> {
    let mut cac = ShapingCac::new(cfg).unwrap();
    let limit = CacLimit::new(cfg.capacity, cfg.utilization).unwrap();
    let mut running: BTreeMap<FlowId, (Rate, Rate)> = BTreeMap::new(); // flow → (requested, rate)
    let mut next = 0u32;
    for (step, op) in ops.iter().enumerate() {
        let now = Time(step as u64);
        match op {
            Op::Arrive(kbps) => {
                let r_req = if homogeneous { Rate::mbps(1) } else { Rate::kbps(*kbps) };
                let flow = FlowId(next);
                next += 1;
                let before = (cac.running(), cac.sum_rates(), cac.sum_requested());
                let (preview, preview_rate) = cac.evaluate(r_req);
                let d = cac.request(now, &FlowRequest { flow, class: ClassTag(0), rate: r_req, depth: Bytes(0) });
                prop_assert_eq!(&d, &preview);
                let r = d.reason();
                // The decision is exactly its own stated rule.
                prop_assert_eq!(d.admitted(), r.estimate <= r.threshold, "{:?}", r);
                prop_assert!((r.threshold - limit.rho_c()).abs() < 1e-6);
                if d.admitted() {
                    running.insert(flow, (r_req, preview_rate));
                } else {
                    // A refusal changes nothing.
                    prop_assert_eq!(before, (cac.running(), cac.sum_rates(), cac.sum_requested()));
                    prop_assert!(cac.rate_of(flow).is_none());
                }
            }
            Op::Depart(i) => {
                if running.is_empty() {
                    cac.on_departure(now, FlowId(u32::MAX));
                    continue;
                }
                let flow = *running.keys().nth(i % running.len()).unwrap();
                running.remove(&flow);
                cac.on_departure(now, flow);
            }
        }
        // Apply the reported changes as a shaper bank would; they must reproduce the controller's view.
        for ch in cac.drain_rate_changes() {
            prop_assert_eq!(ch.at, now);
            let entry = running.get_mut(&ch.flow).expect("a change for a running flow");
            if !matches!(cfg.scheme, Scheme::Equal { .. }) {
                // #1 and #3: the one assignment of a new flow, equal to its preview, never changed later.
                prop_assert_eq!(entry.1, ch.rate);
            }
            entry.1 = ch.rate;
        }
        let view: Vec<(FlowId, Rate)> = cac.rates().collect();
        let mine: Vec<(FlowId, Rate)> = running.iter().map(|(f, (_, r))| (*f, *r)).collect();
        prop_assert_eq!(view, mine);
        let sum_req: u64 = running.values().map(|(q, _)| q.0).sum();
        let sum: u64 = running.values().map(|(_, r)| r.0).sum();
        prop_assert_eq!(cac.sum_rates(), Rate(sum));
        prop_assert_eq!(cac.sum_requested(), Rate(sum_req));
        match cfg.scheme {
            Scheme::Requested => {
                prop_assert!(running.values().all(|(q, r)| q == r));
                prop_assert!(limit.fits(sum));
            }
            Scheme::LoadDependent { .. } => {
                prop_assert!(running.values().all(|(q, r)| r >= q), "never below R_req");
                prop_assert!(limit.fits(sum), "sum R_i <= rho*C");
            }
            Scheme::Equal { share } => {
                prop_assert!(limit.fits(sum_req), "the requested rates fit");
                let total = match share {
                    Share::Capacity => cfg.capacity.0,
                    Share::RhoCapacity => limit.rho_c_floor().0,
                };
                prop_assert!(sum <= total);
                // Rounding loses under one bit/s per flow.
                prop_assert!(total - sum <= running.len() as u64 || running.is_empty());
                if share == Share::RhoCapacity {
                    prop_assert!(running.values().all(|(q, r)| r >= q), "rho*C shares keep R_req");
                }
                if homogeneous {
                    let n = running.len() as u64;
                    prop_assert!(running.values().all(|(_, r)| r.0 == total / n));
                }
            }
        }
        if homogeneous {
            prop_assert!(running.len() as u64 <= limit.n_max(Rate::mbps(1)).unwrap());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_scheme_keeps_its_invariants_under_random_traffic(
        scheme in scheme(), util in utilization(), cap_mbps in 1u64..1000, ops in ops()
    ) {
        let cfg = ShapingCacConfig { capacity: Rate::mbps(cap_mbps), utilization: util, scheme };
        drive(cfg, &ops, false)?;
    }

    #[test]
    fn homogeneous_flows_never_exceed_n_max(scheme in scheme(), util in utilization(), ops in ops()) {
        let cfg = ShapingCacConfig { capacity: Rate::mbps(100), utilization: util, scheme };
        drive(cfg, &ops, true)?;
    }

    #[test]
    fn scheme3_blocks_exactly_when_less_than_r_req_is_left(k in 1.01f64..10.0, n_arrivals in 1usize..200) {
        let cfg = ShapingCacConfig::paper(Scheme::LoadDependent { k });
        let mut cac = ShapingCac::new(cfg).unwrap();
        let rho_c = cac.limit().rho_c();
        for i in 0..n_arrivals {
            let spare = rho_c - cac.sum_rates().as_f64();
            let flow = FlowId(i as u32);
            let d = cac.request(Time(0), &FlowRequest { flow, class: ClassTag(0), rate: Rate::mbps(1), depth: Bytes(0) });
            prop_assert_eq!(d.admitted(), spare >= 1e6);
            if d.admitted() {
                let expect = (1_000_000u64).max((spare / k).floor() as u64);
                prop_assert_eq!(cac.rate_of(flow), Some(Rate(expect)));
            }
        }
    }

    #[test]
    fn n_max_is_the_largest_count_that_fits(b in 1u64..500, iplr in 1e-12f64..0.9, cap in 1u64..10_000_000_000, r in 1u64..1_000_000_000) {
        let (rho, n) = rho_and_n_max(Rate(cap), b, iplr, Rate(r)).unwrap();
        prop_assert!(rho > 0.0 && rho < 1.0);
        let lim = CacLimit::new(Rate(cap), Utilization::Mdl1 { buffer_pkts: b, iplr }).unwrap();
        prop_assert!(lim.fits(n * r));
        prop_assert!(!lim.fits((n + 1) * r));
    }

    #[test]
    fn erlang_b_rises_with_load_and_falls_with_servers(n in 1u64..3000, a in 0.0f64..5000.0, da in 0.01f64..50.0) {
        let b = erlang_b(n, a).unwrap();
        prop_assert!((0.0..=1.0).contains(&b));
        let b_more = erlang_b(n, a + da).unwrap();
        // Strictly increasing while representable (B underflows to 0 for A << n).
        prop_assert!(b_more > b || (b_more < 1e-290 && b_more >= b), "B({}, {}) = {} vs {}", n, a + da, b_more, b);
        prop_assert!(erlang_b(n + 1, a).unwrap() <= b);
    }

    #[test]
    fn inverse_of_erlang_b_recovers_the_load(n in 1u64..3000, frac in 0.05f64..3.0) {
        let a = frac * n as f64;
        let p = erlang_b(n, a).unwrap();
        prop_assume!(p > 1e-250 && p < 1.0 - 1e-12);
        let back = erlang_b_offered_load(n, p).unwrap();
        prop_assert!((back / a - 1.0).abs() < 1e-9, "n={} a={} p={} back={}", n, a, p, back);
        let again = erlang_b(n, back).unwrap();
        prop_assert!((again / p - 1.0).abs() < 1e-6, "forward of inverse: {} vs {}", again, p);
    }
}
