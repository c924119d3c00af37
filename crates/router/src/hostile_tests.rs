//! The datapath under hostile traffic and operator mistakes, on a
//! virtual clock: a flow-table flood that recycles an admitted flow's id,
//! non-IP and malformed frames, oversize frames, reloads (a burst below a
//! queued frame, an identical file), and a delay line overloaded in one
//! direction. Each test names the item it covers.

use super::tests::{datapath, datapath_with, mace_link, offer, offer_on, poll, udp4};
use super::*;
use crate::config::load_str;
use qoslab_core::units::Dur;
use std::path::Path;

fn count_reason(dp: &Datapath, d: usize, r: DropReason) -> u64 {
    dp.drops(d)[r as usize]
}

#[test]
fn flood_that_recycles_an_admitted_flows_id_does_not_admit_a_second_flow() {
    // Item 1. SSAC with room for one 64 kb/s flow on port 5004 (100 kb/s allocated).
    let link = mace_link("{ type = \"mace\", buffer = \"200pkts\" }")
        .replace("allocation = \"500kbps\"", "allocation = \"100kbps\"")
        .replace("rate = \"1Mbps\"", "rate = \"100Mbps\"");
    let mut dp = datapath_with("flows = 65536\npool = 4096", &link);
    let a = udp4(7000, 5004, 158);
    let mut now = Time::ZERO;
    for _ in 0..3 {
        offer(&mut dp, now, &a);
        poll(&mut dp, now);
        now += Dur::from_ms(20);
    }
    assert_eq!(dp.events.count(EventKind::Admit), 1, "flow A admitted");
    let a_key = match parse::parse(&a) {
        Frame::Ip(i) => i.key,
        _ => unreachable!(),
    };
    let a_id = dp.flows.get(&a_key).expect("A is known");
    // 65,535 frames from spoofed sources at 20 kpps fill the table; A, the least recent, goes.
    let mut x: u32 = 12345;
    let mut f = udp4(1, 9, 58);
    for i in 0..65_535u32 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f[26..30].copy_from_slice(&x.to_be_bytes());
        f[34..36].copy_from_slice(&(x >> 16).to_be_bytes()[2..]);
        offer(&mut dp, now, &f);
        if i % 64 == 0 {
            poll(&mut dp, now);
        }
        now += Dur::from_us(50);
    }
    // Flow B to port 5004 is the next new flow: it gets A's recycled id.
    let b = udp4(7001, 5004, 158);
    for _ in 0..3 {
        offer(&mut dp, now, &b);
        poll(&mut dp, now);
        now += Dur::from_ms(20);
    }
    let b_key = match parse::parse(&b) {
        Frame::Ip(i) => i.key,
        _ => unreachable!(),
    };
    assert_eq!(dp.flows.get(&b_key), Some(a_id), "the flood made B inherit A's flow id");
    let decisions: Vec<_> =
        dp.events.recent.iter().filter(|e| matches!(e.kind, EventKind::Admit | EventKind::Reject)).collect();
    assert_eq!(dp.events.count(EventKind::Admit), 1, "B admitted too: {decisions:?}");
    assert!(dp.events.count(EventKind::Reject) >= 1, "{decisions:?}");
    assert!(decisions.iter().all(|e| e.rule != "already_admitted"), "{decisions:?}");
}

/// 5,000 frames of 1,000 B offered at 16 Mb/s (one every 500 µs) on a
/// 1 Mb/s link with a 20-packet FIFO, polled at each arrival, then drained;
/// returns the frames sent.
fn offer_5000(dp: &mut Datapath, frame: &[u8]) -> u64 {
    let mut now = Time::ZERO;
    for _ in 0..5000 {
        offer(dp, now, frame);
        poll(dp, now);
        now += Dur::from_us(500);
    }
    let sent_during = dp.dirs[0].counters.tx_pkts;
    // 2.5 s at 1 Mb/s is 2.5 Mb: 312 frames of 8 kb, plus the pacer's first burst (3 frames).
    assert!(sent_during <= 312 + 3, "{sent_during} frames left within 2.5 s at 1 Mb/s");
    for _ in 0..100 {
        now += Dur::from_ms(10);
        poll(dp, now);
    }
    crate::script::check_conservation(dp);
    dp.dirs[0].counters.tx_pkts
}

#[test]
fn non_ip_frames_are_queued_and_paced_as_best_effort() {
    // Item 2: a local-experimental EtherType (0x88b5) at 16 Mb/s into 1 Mb/s.
    let mut dp = datapath("rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"20pkts\" }\n");
    let mut f = vec![0xff; 12];
    f.extend_from_slice(&[0x88, 0xb5]);
    f.resize(1000, 0);
    let sent = offer_5000(&mut dp, &f);
    assert!((300..=340).contains(&sent), "{sent} of 5000 sent");
    assert_eq!(dp.dirs[0].counters.not_ip_pkts, 5000);
    assert_eq!(count_reason(&dp, 0, DropReason::Overlimit), 5000 - sent, "the rest met a full queue");
    assert_eq!(dp.flows.len(), 1, "every non-IP frame is one flow");
}

#[test]
fn malformed_ip_is_dropped_and_counted_as_malformed() {
    // Item 2: IPv4 whose total length runs past the frame.
    let mut dp = datapath("rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"20pkts\" }\n");
    let mut f = udp4(1, 2, 958);
    f[16..18].copy_from_slice(&1200u16.to_be_bytes());
    assert_eq!(offer_5000(&mut dp, &f), 0);
    assert_eq!(count_reason(&dp, 0, DropReason::Malformed), 5000);
    assert_eq!(dp.totals(0).0, 5000, "counted as arrivals of the direction");
}

#[test]
fn frames_longer_than_a_slot_or_the_burst_are_dropped_as_oversize() {
    // Item 8: a socket reports a frame's full length; longer than a slot, it was truncated.
    let mut dp = datapath_with("burst = \"1600B\"", "rate = \"1Mbps\"\n");
    let f = udp4(1, 2, 958);
    let slot = dp.pool.alloc().unwrap();
    dp.pool.slot_mut(slot)[..f.len()].copy_from_slice(&f);
    assert_eq!(dp.receive(Time::ZERO, 0, slot, 3000), Arrival::Dropped);
    assert_eq!(offer(&mut dp, Time::ZERO, &udp4(1, 2, 2000 - 42)), Arrival::Dropped, "above the burst");
    assert_eq!(offer(&mut dp, Time::ZERO, &udp4(1, 2, 1500 - 42)), Arrival::Queued);
    assert_eq!(count_reason(&dp, 0, DropReason::Oversize), 2);
    assert_eq!(dp.pool.in_use(), 1);
}

fn text(router: &str, link: &str) -> ValidConfig {
    let pool = if router.contains("pool =") { "" } else { "pool = 2048\n" };
    let t = format!("[router]\na = \"x0\"\nb = \"x1\"\n{pool}{router}\n[link]\ndelay = \"0s\"\n{link}");
    load_str(&t, "new.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn reload_below_a_queued_frame_is_refused_and_the_router_runs_on() {
    // Item 4: a burst lower than a frame the pacer holds would make it unsendable.
    let link = "rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"20pkts\" }\n";
    let mut dp = datapath_with("burst = \"4000B\"", link);
    let big = udp4(1, 2, 2000 - 42);
    for _ in 0..3 {
        offer(&mut dp, Time::ZERO, &big);
    }
    assert_eq!(poll(&mut dp, Time::ZERO).0.len(), 2, "two leave, the third waits for its tokens");
    let e = dp.reconfigure(text("burst = \"1600B\"", link), Time(1)).unwrap_err();
    assert_eq!(e[0].path, "router.burst");
    assert!(e[0].message.contains("below a frame the router holds now (2000B)"), "{}", e[0].message);
    assert_eq!(dp.cfg.config.router.burst, Bytes(4000), "the old configuration runs on");
    let mut now = Time(1);
    while dp.dirs[0].counters.tx_pkts < 3 {
        now += Dur::from_ms(1);
        poll(&mut dp, now);
    }
    assert!(now < Time(Dur::from_ms(20).0), "the held frame left at the link's rate");
    // Once nothing that large is held, the same reload applies.
    dp.reconfigure(text("burst = \"1600B\"", link), now).unwrap();
    assert_eq!(dp.cfg.config.router.burst, Bytes(1600));
}

/// Frames sent in `secs` of 1000-byte frames always waiting, polled every 10 ms (a loop woken late).
fn sent_polling_late(dp: &mut Datapath, now: &mut Time, secs: u64) -> u64 {
    let before = dp.dirs[0].counters.tx_pkts;
    for _ in 0..secs * 100 {
        *now += Dur::from_ms(10);
        poll(dp, *now);
    }
    dp.dirs[0].counters.tx_pkts - before
}

#[test]
fn reload_of_the_same_file_keeps_the_pacers_catch_up() {
    // Item 5: at 10 Mb/s, 10 ms between wake-ups earn 12,500 B; the burst alone keeps 3044 B.
    let link = "rate = \"10Mbps\"\nqueue = { type = \"fifo\", limit = \"4000pkts\" }\n";
    let mut dp = datapath_with("pool = 4096", link);
    let f = udp4(1, 2, 1000 - 42);
    for _ in 0..4000 {
        offer(&mut dp, Time::ZERO, &f);
    }
    let mut now = Time::ZERO;
    poll(&mut dp, now);
    let before = sent_polling_late(&mut dp, &mut now, 1);
    dp.reconfigure(text("pool = 4096", link), now).unwrap();
    let after = sent_polling_late(&mut dp, &mut now, 1);
    // 10 Mb/s of 8 kb frames: 1250 a second, before and after alike.
    assert!((1248..=1252).contains(&before), "{before}");
    assert!(after.abs_diff(before) <= 2, "before the reload {before} frames/s, after {after}");
}

#[test]
fn reload_keeps_every_counter_monotone() {
    let link = "rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"10pkts\" }\n";
    let mut dp = datapath(link);
    let f = udp4(1, 2, 958);
    for _ in 0..50 {
        offer(&mut dp, Time::ZERO, &f);
    }
    poll(&mut dp, Time::ZERO);
    let (drops, totals) = (dp.drops(0), dp.totals(0));
    dp.reconfigure(
        text("", "rate = \"1Mbps\"\nqueue = { type = \"red\", limit = \"100pkts\", min_th = 5, max_th = 15 }\n"),
        Time(1),
    )
    .unwrap();
    assert!(dp.drops(0).iter().zip(drops).all(|(n, o)| *n >= o), "{:?} then {:?}", drops, dp.drops(0));
    assert_eq!(dp.totals(0).0, totals.0, "moved packets are not new arrivals");
    crate::script::check_conservation(&dp);
}

#[test]
fn a_delay_line_overloaded_one_way_leaves_the_other_direction_its_share() {
    // Item 7: 1 s of delay, a 2,048-frame pool; a -> b offered 16 Mb/s into 1 Mb/s,
    // b -> a 640 frames/s of 100 B (512 kb/s) that fit the link.
    let mut dp = datapath_with("pool = 2048", "rate = \"1Mbps\"\n");
    dp.cfg.config.link.delay = Dur::from_secs(1);
    let (heavy, light) = (udp4(1, 2, 1000 - 42), udp4(3, 4, 100 - 42));
    let mut now = Time::ZERO;
    let mut next_light = Time::ZERO;
    let mut light_sent_from_2s = 0;
    for _ in 0..10_000 {
        // One heavy frame every 500 µs for 5 s.
        if dp.pool.in_use() < dp.pool.capacity() {
            offer_on(&mut dp, now, 0, &heavy);
        }
        if now >= next_light {
            assert!(dp.pool.in_use() < dp.pool.capacity(), "no slot for b -> a at {now}");
            offer_on(&mut dp, now, 1, &light);
            next_light += Dur::from_ns(1_000_000_000 / 640);
        }
        let before = dp.dirs[1].counters.tx_pkts;
        poll(&mut dp, now);
        if now >= Time(Dur::from_secs(2).0) {
            light_sent_from_2s += dp.dirs[1].counters.tx_pkts - before;
        }
        now += Dur::from_us(500);
    }
    // 3 s at 640 frames/s.
    assert!(light_sent_from_2s >= 1900, "b -> a sent {light_sent_from_2s} frames in 3 s");
    assert!(count_reason(&dp, 0, DropReason::DelayLine) > 0, "a -> b met its share");
    assert_eq!(count_reason(&dp, 1, DropReason::DelayLine), 0);
    assert!(dp.line.held(0) + dp.dirs[0].held_pkts() as usize <= dp.delay_share());
    crate::script::check_conservation(&dp);
}
