//! Tests of the fluid mode (see the parent module).
use super::*;
use qoslab_core::admission::cac::Share;

fn cfg(scheme: Scheme) -> FluidConfig {
    FluidConfig {
        duration: Dur::from_secs(1000),
        warmup: Dur::from_secs(0),
        batches: 2,
        ..FluidConfig::paper_table4(scheme)
    }
}

#[test]
fn scheme1_transfer_takes_file_over_r_req_exactly() {
    let r = run_trace(&cfg(Scheme::Requested), &[Time(5)]).unwrap();
    let t = r.transfers[0];
    assert_eq!(t.transfer_time(), Some(Dur::from_secs(10)));
    assert_eq!(t.end, Some(Time(5) + Dur::from_secs(10)));
    assert_eq!((t.rate_first, t.rate_changes), (Rate::mbps(1), 0));
}

#[test]
fn scheme1_blocks_the_75th_simultaneous_request_seeing_74() {
    let arrivals = vec![Time(1_000); 76];
    let r = run_trace(&cfg(Scheme::Requested), &arrivals).unwrap();
    assert_eq!((r.requests, r.admitted, r.blocked), (76, 74, 2));
    assert_eq!(r.mean_running_at_blocking, Some(74.0));
    assert_eq!(r.max_running, 74);
    assert!((r.mean_transfer_time_s.mean - 10.0).abs() < 1e-12);
    // 74 connections for 10 s within a 1000 s window.
    assert!((r.time_avg_running - 0.74).abs() < 1e-9, "{}", r.time_avg_running);
}

#[test]
fn scheme2_integrates_work_piecewise_when_rates_change() {
    // 1000 Mbit files on 100 Mb/s. A alone for 1 s (100 Mbit sent), then
    // A and B at 50 Mb/s each: A ends at 1 + 900/50 = 19 s, B then has
    // 100 Mbit left, alone at 100 Mb/s: ends at 20 s.
    let c = FluidConfig {
        file_size_bits: 1_000_000_000,
        scheme: Scheme::Equal { share: Share::Capacity },
        ..cfg(Scheme::Requested)
    };
    let r = run_trace(&c, &[Time(0), Time::ZERO + Dur::from_secs(1)]).unwrap();
    let (a, b) = (r.transfers[0], r.transfers[1]);
    assert_eq!(a.end, Some(Time::ZERO + Dur::from_secs(19)));
    assert_eq!(b.end, Some(Time::ZERO + Dur::from_secs(20)));
    assert_eq!(
        (a.rate_first, a.rate_min, a.rate_max, a.rate_changes),
        (Rate::mbps(100), Rate::mbps(50), Rate::mbps(100), 1)
    );
    assert_eq!((b.rate_first, b.rate_max, b.rate_changes), (Rate::mbps(50), Rate::mbps(100), 1));
    assert!(r.events > 4, "stale completions were scheduled and skipped");
}

#[test]
fn scheme3_first_transfer_gets_a_third_of_rho_c_for_life() {
    let r = run_trace(&cfg(Scheme::LoadDependent { k: 3.0 }), &[Time(0), Time(1)]).unwrap();
    let rho_c = r.rho * 100e6;
    let r0 = Rate((rho_c / 3.0).floor() as u64);
    let t0 = r.transfers[0];
    assert_eq!(t0.rate_first, r0);
    assert_eq!(t0.rate_changes, 0);
    let ns = (10_000_000u128 * NS).div_ceil(r0.0 as u128) as u64;
    assert_eq!(t0.transfer_time(), Some(Dur(ns)));
    let r1 = Rate(((rho_c - r0.as_f64()) / 3.0).floor() as u64);
    assert_eq!(r.transfers[1].rate_first, r1);
}

#[test]
fn same_seed_same_result_other_seed_other_result() {
    let mut c = cfg(Scheme::LoadDependent { k: 3.0 });
    let a = run(&c).unwrap();
    let b = run(&c).unwrap();
    assert_eq!(a, b);
    c.seed = 2;
    let d = run(&c).unwrap();
    assert_ne!(a.transfers, d.transfers);
    assert!(a.requests > 5000, "λ = 5.98/s for 1000 s");
}

#[test]
fn arrivals_after_duration_are_ignored_and_the_run_drains() {
    let c = FluidConfig { duration: Dur::from_secs(5), ..cfg(Scheme::Requested) };
    let r = run_trace(&c, &[Time(0), Time::ZERO + Dur::from_secs(5)]).unwrap();
    assert_eq!(r.requests, 1);
    assert_eq!(r.end, Time::ZERO + Dur::from_secs(10), "ended after duration: drained");
}

#[test]
fn bad_configs_name_the_field() {
    let base = cfg(Scheme::Requested);
    let cases: Vec<(FluidConfig, &str)> = vec![
        (FluidConfig { arrival_rate_per_s: 0.0, ..base }, "arrival_rate_per_s"),
        (FluidConfig { arrival_rate_per_s: f64::NAN, ..base }, "arrival_rate_per_s"),
        (FluidConfig { file_size_bits: 0, ..base }, "file_size_bits"),
        (FluidConfig { r_req: Rate(0), ..base }, "r_req"),
        (FluidConfig { warmup: Dur::from_secs(1000), ..base }, "warmup"),
        (FluidConfig { batches: 1, ..base }, "batches"),
        (FluidConfig { arrival_rate_per_s: 1e7, ..base }, "duration"),
        (FluidConfig { capacity: Rate(0), ..base }, "capacity"),
        (FluidConfig { scheme: Scheme::LoadDependent { k: 0.9 }, ..base }, "k"),
        (FluidConfig { utilization: Utilization::Mdl1 { buffer_pkts: 10, iplr: 0.0 }, ..base }, "iplr"),
    ];
    for (c, field) in cases {
        let e = run(&c).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    let e = run_trace(&base, &[Time(5), Time(3)]).unwrap_err();
    assert_eq!(e.field, "arrivals");
    assert!(e.to_string().contains("must be sorted"), "{e}");
}

#[test]
fn student_t_quantiles_and_ps_formula() {
    assert_eq!(t975(19), 2.093);
    assert!((t975(60) - 2.0003).abs() < 1e-3);
    assert!((t975(1000) - 1.9623).abs() < 1e-3);
    let half = ci95_half_width(&[1.0, 2.0, 3.0]);
    assert!((half - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-12);
    assert!(ci95_half_width(&[1.0]).is_nan());
    let t = ps_mean_transfer_time_s(Rate::mbps(100), 10_000_000, 5.98).unwrap();
    assert!((t - 0.1 / 0.402).abs() < 1e-12);
    assert_eq!(ps_mean_transfer_time_s(Rate::mbps(100), 10_000_000, 10.0), None);
}
