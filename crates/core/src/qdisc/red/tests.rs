//! `Red` (a `RedStage` over a FIFO) as a whole queue, both variants.

use super::*;
use crate::packet::FlowId;
use crate::qdisc::{DropReason, MarkReason, Queue};

fn pkt(id: u64) -> Packet {
    Packet::new(id, FlowId(0), 1000, Time(0))
}

#[test]
fn red_forced_drop_above_max_th_and_limit() {
    let mut rng = crate::rng::stream(1, 0);
    let cfg = RedConfig { w_q: 1.0, max_p: 1e-12, ..RedConfig::new(Limit::packets(20), 5.0, 15.0) };
    let mut q = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap()));
    // With w_q = 1 the average is the instantaneous queue: the 16th
    // arrival finds 15 queued and is forced out.
    let mut verdicts = Vec::new();
    for i in 0..17 {
        verdicts.push(q.enqueue(Time(i), pkt(i), &mut rng));
    }
    assert!(verdicts[..5].iter().all(|v| *v == Verdict::Queued));
    assert!(matches!(verdicts[15], Verdict::Dropped(Dropped { reason: DropReason::Forced, .. })));
    assert!(q.stats().drops_for(DropReason::Forced) >= 1);
    assert!(q.backlog().packets <= 15);
}

#[test]
fn red_overlimit_when_the_buffer_is_full() {
    let mut rng = crate::rng::stream(1, 0);
    let mut q = Queue::new(Box::new(Red::new(RedConfig::new(Limit::packets(3), 5.0, 15.0), Rate::mbps(25)).unwrap()));
    for i in 0..4 {
        q.enqueue(Time(i), pkt(i), &mut rng);
    }
    assert_eq!(q.stats().drops_for(DropReason::Overlimit), 1);
    assert_eq!(q.backlog().packets, 3);
}

#[test]
fn red_decays_average_over_idle_time() {
    let mut rng = crate::rng::stream(1, 0);
    let cfg = RedConfig { w_q: 0.5, ..RedConfig::new(Limit::packets(100), 50.0, 60.0) };
    let mut red = Red::new(cfg, Rate::mbps(25)).unwrap(); // s = 320 us
    for i in 0..4 {
        red.enqueue(Time(0), pkt(i), &mut rng);
    }
    let before = red.avg();
    for _ in 0..4 {
        red.dequeue(Time(1_000));
    }
    assert_eq!(red.dequeue(Time(2_000)), Dequeue::Empty); // idle from t = 2 us
    red.enqueue(Time(2_000 + 640_000), pkt(9), &mut rng); // m = 2
    assert!((red.avg() - before * 0.25).abs() < 1e-12, "{} vs {}", red.avg(), before * 0.25);
}

#[test]
fn red_marks_ect_packets_instead_of_early_drop() {
    let mut rng = crate::rng::stream(7, 0);
    let cfg = RedConfig { ecn: true, max_p: 1.0, w_q: 1.0, ..RedConfig::new(Limit::packets(100), 1.0, 50.0) };
    let mut q = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap()));
    let mut marked = 0;
    for i in 0..40 {
        let mut p = pkt(i);
        p.ecn = crate::packet::Ecn::Ect0;
        if let Verdict::Marked(MarkReason::EcnEarly) = q.enqueue(Time(i), p, &mut rng) {
            marked += 1;
        }
    }
    assert!(marked > 0);
    assert_eq!(q.stats().drops_for(DropReason::EarlyRandom), 0);
    assert_eq!(q.stats().marks_for(MarkReason::EcnEarly), marked);
}

#[test]
fn red_config_errors_name_the_field() {
    let bad = RedConfig::new(Limit::packets(60), 15.0, 5.0);
    let e = Red::new(bad, Rate::mbps(25)).unwrap_err();
    assert_eq!(e.to_string(), "red.max_th (5) must exceed min_th (15)");
    let bad = RedConfig { w_q: 0.0, ..RedConfig::new(Limit::packets(60), 5.0, 15.0) };
    assert_eq!(Red::new(bad, Rate::mbps(25)).unwrap_err().field, "w_q");
}

fn ns2(limit: u32, min_th: f64, max_th: f64) -> RedConfig {
    RedConfig { variant: RedVariant::Ns2, ..RedConfig::new(Limit::packets(limit), min_th, max_th) }
}

#[test]
fn ns2_red_admits_while_at_most_one_packet_waits() {
    // w_q = 1: the average is the queue the arrival finds. avg = 1 >= max_th
    // is forced in Floyd93 but passes in Ns2 (one packet waiting); with two
    // waiting Ns2 forces too.
    let mut rng = crate::rng::stream(1, 0);
    let base = RedConfig { w_q: 1.0, ..RedConfig::new(Limit::packets(10), 0.5, 1.0) };
    let mut fj = Red::new(base, Rate::mbps(25)).unwrap();
    let mut ns = Red::new(RedConfig { variant: RedVariant::Ns2, ..base }, Rate::mbps(25)).unwrap();
    for i in 0..2 {
        assert_eq!(ns.enqueue(Time(i), pkt(i), &mut rng), Verdict::Queued);
    }
    assert_eq!(fj.enqueue(Time(0), pkt(0), &mut rng), Verdict::Queued);
    assert!(matches!(
        fj.enqueue(Time(1), pkt(1), &mut rng),
        Verdict::Dropped(Dropped { reason: DropReason::Forced, .. })
    ));
    assert!(matches!(
        ns.enqueue(Time(2), pkt(2), &mut rng),
        Verdict::Dropped(Dropped { reason: DropReason::Forced, .. })
    ));
    assert_eq!(ns.count(), 0);
    assert_eq!(ns.red_stats().forced, 1);
}

#[test]
fn ns2_red_passes_the_crossing_arrival_then_spaces_drops() {
    // w_q = 1, min_th 2, max_th 1000, max_p 1: with q waiting p_b = (q - 2) / 998.
    // The first arrival finding avg >= 2 (and > 1 packet) passes and sets count = 1.
    let mut rng = crate::rng::stream(3, 0);
    let cfg = RedConfig { w_q: 1.0, max_p: 1.0, ..ns2(2000, 2.0, 1000.0) };
    let mut red = Red::new(cfg, Rate::mbps(25)).unwrap();
    for i in 0..3 {
        assert_eq!(red.enqueue(Time(i), pkt(i), &mut rng), Verdict::Queued);
    }
    assert_eq!(red.count(), 1, "the crossing arrival sets count to 1");
    assert!(red.stage().vars().old);
    // count p_b < 1 holds for a long run: p_b <= 0.1 for q <= 101, so none of
    // the next 9 arrivals (count <= 10, q <= 12) can be dropped.
    for i in 3..12 {
        assert_eq!(red.enqueue(Time(i), pkt(i), &mut rng), Verdict::Queued, "arrival {i}");
    }
    assert_eq!(red.red_stats().early, 0);
}

#[test]
fn ns2_red_idle_decay_ends_with_one_ewma_step() {
    let mut rng = crate::rng::stream(1, 0);
    let cfg = RedConfig { w_q: 0.5, ..ns2(100, 50.0, 60.0) };
    let mut red = Red::new(cfg, Rate::mbps(25)).unwrap(); // s = 320 us
    for i in 0..4 {
        red.enqueue(Time(0), pkt(i), &mut rng);
    }
    let before = red.avg();
    for _ in 0..4 {
        red.dequeue(Time(1_000));
    }
    assert_eq!(red.dequeue(Time(2_000)), Dequeue::Empty);
    // 2.5 packet times idle: m = 2, then one EWMA step with q = 0.
    red.enqueue(Time(2_000 + 800_000), pkt(9), &mut rng);
    assert!((red.avg() - before * 0.125).abs() < 1e-12, "{} vs {}", red.avg(), before * 0.125);
}
