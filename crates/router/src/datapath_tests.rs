//! The datapath driven on a virtual clock with built frames: the pacer's
//! rate, RED's early drops, MACE's "CL waits behind at most one BE
//! packet", reconfiguration keeping packets or refusing whole; and the
//! helpers the hostile-input tests (`hostile_tests.rs`) share.

use super::*;
use crate::config::load_str;
use etherparse::PacketBuilder;
use qoslab_core::units::{Dur, Rate};
use std::path::Path;

pub(crate) fn udp4(src_port: u16, dst_port: u16, payload: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(src_port, dst_port);
    let mut out = Vec::new();
    b.write(&mut out, &vec![0u8; payload]).unwrap();
    out
}

pub(crate) fn datapath(link: &str) -> Datapath {
    let text = format!("[router]\na = \"x0\"\nb = \"x1\"\npool = 2048\n[link]\ndelay = \"0s\"\n{link}");
    let v = load_str(&text, "t.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e:?}"));
    Datapath::new(v, Time::ZERO).unwrap()
}

/// Offers `frame` on side 0 at `now`.
pub(crate) fn offer(dp: &mut Datapath, now: Time, frame: &[u8]) -> Arrival {
    offer_on(dp, now, 0, frame)
}

/// Offers `frame` on side `side` at `now`.
pub(crate) fn offer_on(dp: &mut Datapath, now: Time, side: usize, frame: &[u8]) -> Arrival {
    let slot = dp.pool.alloc().expect("pool slot");
    dp.pool.slot_mut(slot)[..frame.len()].copy_from_slice(frame);
    dp.receive(now, side, slot, frame.len())
}

/// Polls at `now`; returns the frames sent (side, dst port).
pub(crate) fn poll(dp: &mut Datapath, now: Time) -> (Vec<(usize, u16)>, Option<Time>) {
    let mut sent = Vec::new();
    let wake = dp.poll(now, &mut |side, pool, slots, ok| {
        for (s, o) in slots.iter().zip(ok.iter_mut()) {
            let port = match crate::parse::parse(pool.frame(*s)) {
                Frame::Ip(i) => i.key.dst_port,
                Frame::NotIp | Frame::Malformed => 0,
            };
            sent.push((side, port));
            *o = true;
        }
    });
    (sent, wake)
}

#[test]
fn pacer_sends_at_the_link_rate_exactly_on_a_virtual_clock() {
    // 1 Mb/s, 1000-byte frames (8 ms each); 200 queued at t=0.
    let mut dp = datapath("rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"500pkts\" }\n");
    let f = udp4(1, 2, 1000 - 42);
    for _ in 0..200 {
        assert_eq!(offer(&mut dp, Time::ZERO, &f), Arrival::Queued);
    }
    let mut now = Time::ZERO;
    let mut sent = 0;
    let mut last = Time::ZERO;
    while sent < 200 {
        let (s, wake) = poll(&mut dp, now);
        if !s.is_empty() {
            last = now;
        }
        sent += s.len();
        assert!(s.iter().all(|(side, _)| *side == 1), "a->b leaves on side b");
        match wake {
            Some(w) => now = w,
            None => break,
        }
    }
    // The bucket starts full (3044 B), so the last byte leaves when the other
    // 200,000 - 3044 bytes have been earned at 1 Mb/s (8 us a byte): exact.
    assert_eq!(last, Time((200_000 - 3044) * 8_000));
    assert_eq!(dp.dirs[0].counters.tx_bytes, 200_000);
    assert_eq!(dp.pool.in_use(), 0, "every slot came back");
}

#[test]
fn a_wake_later_than_catch_up_loses_link_time_and_counts_it_exactly() {
    // 1 Mb/s, 1000-byte frames (8 ms each), 50 queued at t = 0; the bucket is burst 3044 B plus
    // catch_up's 20 ms (2500 B) deep. Polled on time, the last leaves at the run's ideal instant and
    // no time is lost. Woken 100 ms late once with a frame held: the bucket was full for
    // 100 ms - (5544 - 1000) B x 8 us = 63.648 ms, counted, and every later frame leaves that much
    // later (the catch-up made up the rest).
    let run = |late_at: Option<usize>| {
        let mut dp = datapath("rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"100pkts\" }\n");
        let f = udp4(1, 2, 1000 - 42);
        for _ in 0..50 {
            assert_eq!(offer(&mut dp, Time::ZERO, &f), Arrival::Queued);
        }
        let (mut now, mut sent, mut last, mut polls) = (Time::ZERO, 0, Time::ZERO, 0);
        while sent < 50 {
            let (s, wake) = poll(&mut dp, now);
            if !s.is_empty() {
                last = now;
            }
            sent += s.len();
            polls += 1;
            let Some(w) = wake else { break };
            now = if Some(polls) == late_at { w + Dur::from_ms(100) } else { w };
        }
        (last, dp.dirs[0].counters.service_lost_ns)
    };
    let (ideal, none) = run(None);
    assert_eq!((ideal, none), (Time((50_000 - 3044) * 8_000), 0));
    let (late, lost) = run(Some(10));
    assert_eq!(lost, 100_000_000 - (5544 - 1000) * 8_000);
    assert_eq!(late.0 - ideal.0, lost);
}

#[test]
fn store_and_forward_sends_a_frame_on_an_idle_wire_at_the_end_of_its_transmission() {
    // 1 Mb/s, 1000-byte frames (8 ms each). Without store-and-forward the idle pacer's tokens send
    // a frame when it arrives; with it, the frame leaves 8 ms later, as the simulator's link sends
    // it.
    let link = "rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"50pkts\" }\n";
    let f = udp4(1, 2, 1000 - 42);
    for (saf, first) in [(false, 100_000_000u64), (true, 108_000_000)] {
        let mut dp = datapath_with(&format!("store_and_forward = {saf}"), link);
        // Idle for 100 ms (the bucket full), then a frame, then three more back to back.
        let t = Time(100_000_000);
        assert_eq!(offer(&mut dp, t, &f), Arrival::Queued);
        for _ in 0..3 {
            assert_eq!(offer(&mut dp, t, &f), Arrival::Queued);
        }
        let mut now = t;
        let mut times = Vec::new();
        loop {
            let (s, wake) = poll(&mut dp, now);
            times.extend(s.iter().map(|_| now.0));
            if times.len() == 4 {
                break;
            }
            now = wake.expect("frames wait");
        }
        assert_eq!(times[0], first, "store_and_forward = {saf}");
        // Without it the idle bucket (burst and catch-up: 5544 B) sends all four at once; with it
        // they leave one transmission apart, each at the end of its own.
        assert_eq!(times[3], if saf { 132_000_000 } else { 100_000_000 });
        // Idle again: the next frame also waits its transmission.
        let t2 = Time(500_000_000);
        poll(&mut dp, t2);
        assert_eq!(offer(&mut dp, t2, &f), Arrival::Queued);
        let (s, wake) = poll(&mut dp, t2);
        if saf {
            assert!(s.is_empty());
            assert_eq!(wake, Some(Time(508_000_000)));
        } else {
            assert_eq!(s.len(), 1);
        }
    }
}

#[test]
fn a_lossy_link_loses_its_share_after_transmission_and_counts_every_frame() {
    // 10 Mb/s, loss 0.2 a->b, none b->a; 5000 frames each way, offered in time.
    let mut dp = datapath("rate = \"10Mbps\"\nloss = 0.2\nqueue = { type = \"fifo\", limit = \"5000pkts\" }\n");
    let f = udp4(1, 2, 1000 - 42);
    let mut now = Time::ZERO;
    let mut sent = [0u64; 2];
    for i in 0..5000u64 {
        now = Time(i * 1_000_000);
        for side in 0..2 {
            offer_on(&mut dp, now, side, &f);
        }
        for (s, _) in poll(&mut dp, now).0 {
            sent[1 - s] += 1;
        }
    }
    loop {
        let (s, wake) = poll(&mut dp, now);
        for (side, _) in s {
            sent[1 - side] += 1;
        }
        match wake {
            Some(w) => now = w,
            None => break,
        }
    }
    crate::script::check_conservation(&dp);
    let lost = dp.dirs[0].counters.link_lost;
    // Binomial(5000, 0.2): mean 1000, sd 28; 5 sd.
    assert!((860..=1140).contains(&lost), "{lost}");
    assert_eq!(sent[0] + lost, 5000);
    assert_eq!((dp.dirs[1].counters.link_lost, sent[1]), (0, 5000));
    // Not a queue's drop: the queue sent every frame it held.
    assert_eq!(dp.drops(0).iter().sum::<u64>(), 0);
}

/// A datapath with extra `[router]` lines.
pub(crate) fn datapath_with(router: &str, link: &str) -> Datapath {
    let pool = if router.contains("pool =") { "" } else { "pool = 2048\n" };
    let text = format!("[router]\na = \"x0\"\nb = \"x1\"\n{pool}{router}\n[link]\ndelay = \"0s\"\n{link}");
    let v = load_str(&text, "t.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e:?}"));
    Datapath::new(v, Time::ZERO).unwrap()
}

/// Polls at `now`; returns the size of each batch handed to `send`, and
/// refuses the frames whose index in their batch is in `refuse`.
fn poll_batches(dp: &mut Datapath, now: Time, refuse: &[usize]) -> Vec<usize> {
    let mut calls = Vec::new();
    dp.poll(now, &mut |side, _pool, slots, ok| {
        assert_eq!(side, 1);
        calls.push(slots.len());
        for (i, o) in ok.iter_mut().enumerate() {
            *o = !refuse.contains(&i);
        }
    });
    calls
}

#[test]
fn pacer_releases_due_frames_in_batches_of_at_most_router_batch() {
    // 100 Gb/s with a 1 MB burst: all 200 frames are due at t=0 and leave in
    // one poll, in sendmmsg batches of at most 64.
    let mut dp = datapath_with(
        "batch = 64\nburst = \"1MB\"",
        "rate = \"100Gbps\"\nqueue = { type = \"fifo\", limit = \"500pkts\" }\n",
    );
    let f = udp4(1, 2, 1000 - 42);
    for _ in 0..200 {
        offer(&mut dp, Time::ZERO, &f);
    }
    assert_eq!(poll_batches(&mut dp, Time::ZERO, &[]), vec![64, 64, 64, 8]);
    assert_eq!(dp.dirs[0].counters.tx_pkts, 200);
    assert_eq!(dp.pool.in_use(), 0);
}

#[test]
fn a_batch_holds_only_frames_whose_tokens_are_earned() {
    // 1 Mb/s, 1000-byte frames (8 ms each), a 3044-byte bucket: at t=0 three
    // frames are due (one batch of 3), then one frame every 8 ms, each
    // alone in its batch although 60 more wait in the queue.
    let mut dp = datapath_with("batch = 64", "rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"500pkts\" }\n");
    let f = udp4(1, 2, 1000 - 42);
    for _ in 0..64 {
        offer(&mut dp, Time::ZERO, &f);
    }
    assert_eq!(poll_batches(&mut dp, Time::ZERO, &[]), vec![3]);
    // 3044 - 3000 = 44 bytes left: the 4th frame is due once 956 more are earned.
    let due = Time(956 * 8_000);
    assert!(poll_batches(&mut dp, Time(due.0 - 1), &[]).is_empty(), "not due 1 ns early");
    assert_eq!(poll_batches(&mut dp, due, &[]), vec![1]);
    assert_eq!(poll_batches(&mut dp, Time(due.0 + 7_999_999), &[]), Vec::<usize>::new());
    assert_eq!(poll_batches(&mut dp, Time(due.0 + 8_000_000), &[]), vec![1]);
    // Woken 40 ms late, the pacer releases the five frames earned meanwhile (catch-up), together.
    assert_eq!(poll_batches(&mut dp, Time(due.0 + 48_000_000), &[]), vec![5]);
    assert_eq!(dp.dirs[0].counters.tx_pkts, 10);
}

#[test]
fn frames_the_kernel_refuses_in_a_batch_are_counted_and_freed() {
    let mut dp = datapath_with(
        "batch = 16\nburst = \"1MB\"",
        "rate = \"100Gbps\"\nqueue = { type = \"fifo\", limit = \"500pkts\" }\n",
    );
    let f = udp4(1, 2, 100);
    for _ in 0..40 {
        offer(&mut dp, Time::ZERO, &f);
    }
    // The second and fifth frame of each batch refused: 16, 16, 8 → 2 + 2 + 2 refused.
    assert_eq!(poll_batches(&mut dp, Time::ZERO, &[1, 4]), vec![16, 16, 8]);
    let c = &dp.dirs[0].counters;
    assert_eq!((c.tx_pkts, c.tx_errors), (34, 6));
    assert_eq!(c.classes.iter().map(|k| k.tx_pkts).sum::<u64>(), 34);
    assert_eq!(dp.pool.in_use(), 0, "every slot came back, sent or not");
}

#[test]
fn red_drops_early_below_the_buffer_limit() {
    // 100 packets at once into RED with min_th 5, max_th 15, a 1000-packet limit:
    // the average climbs past min_th and RED drops before the queue is full.
    let mut dp = datapath(
        "rate = \"1Mbps\"\nqueue = { type = \"red\", limit = \"1000pkts\", min_th = 5, max_th = 15, w_q = 0.2 }\n",
    );
    let f = udp4(1, 2, 500);
    for i in 0..400u64 {
        offer(&mut dp, Time(i * 1000), &f);
    }
    let drops = dp.drops(0);
    assert_eq!(drops[DropReason::Overlimit as usize], 0, "never reached the limit");
    assert!(drops[DropReason::EarlyRandom as usize] > 0, "{drops:?}");
    assert!(dp.dirs[0].port.queue().stats().peak_packets < 1000);
    assert_eq!(dp.pool.in_use() as u32, dp.dirs[0].port.backlog().packets);
}

pub(crate) fn mace_link(queue: &str) -> String {
    format!(
        "rate = \"1Mbps\"\nqueue = {queue}\n[link.mace]\nallocation = \"500kbps\"\nadmission = {{ type = \"ssac\" }}\n\
         [[link.mace.ports]]\nport = 5004\nside = \"dst\"\nrate = \"64kbps\"\ndepth = \"1500B\"\nthreshold = 2\n"
    )
}

#[test]
fn mace_cl_waits_behind_at_most_one_be_packet() {
    let mut dp = datapath(&mace_link("{ type = \"mace\", buffer = \"200pkts\" }"));
    let be = udp4(1000, 9, 1458); // 1500-byte frames: 12 ms each at 1 Mb/s
    let cl = udp4(2000, 5004, 158); // 200-byte frames: 1.6 ms
    let mut now = Time::ZERO;
    let step = Dur::from_us(500);
    let mut next_cl = Time::ZERO;
    while now < Time(Dur::from_secs(3).0) {
        offer(&mut dp, now, &be); // BE overload: 1500 B every 0.5 ms
        if now >= next_cl {
            offer(&mut dp, now, &cl);
            next_cl = now + Dur::from_ms(20);
        }
        poll(&mut dp, now);
        now += step;
    }
    let c = &dp.dirs[0].counters.classes;
    assert!(c[0].tx_pkts > 100, "CL was admitted and sent: {:?}", c[0]);
    let one_be = Rate::mbps(1).tx_time(Bytes(1500));
    let own = Rate::mbps(1).tx_time(Bytes(200));
    // Behind the BE frame on the wire, then its own transmission; + one poll step of lateness.
    let bound = one_be.0 + own.0 + step.0;
    assert!(c[0].delay_max_ns <= bound, "CL max delay {} ns > {bound} ns", c[0].delay_max_ns);
    assert!(c[1].delay_max_ns > 10 * bound, "BE queued behind BE: {:?}", c[1]);
    assert_eq!(c[0].ahead_max, 1, "CL waited behind exactly one packet at most: {:?}", c[0]);
    assert!(c[1].ahead_max > 10, "{:?}", c[1]);
    assert_eq!(dp.events.count(EventKind::Admit), 1);
}

#[test]
fn fifo_cl_waits_behind_many_be_packets() {
    // The same traffic through a FIFO: the bound above does not hold, so the test above can fail.
    let mut dp = datapath("rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"200pkts\" }\n");
    let be = udp4(1000, 9, 1458);
    let mut cl = udp4(2000, 5004, 158);
    cl[15] = 0x04; // DSCP 1: "tagged", class 1 (the header's TOS byte; the checksum is not checked)
    let mut now = Time::ZERO;
    for i in 0..6000u64 {
        offer(&mut dp, now, &be);
        if i % 40 == 0 {
            offer(&mut dp, now, &cl);
        }
        poll(&mut dp, now);
        now += Dur::from_us(500);
    }
    assert!(dp.dirs[0].counters.classes[1].delay_max_ns > Dur::from_ms(100).0);
    assert!(dp.dirs[0].counters.classes[1].ahead_max > 10, "CL behind many BE packets in a FIFO");
}

#[test]
fn reconfigure_keeps_queued_packets_and_refuses_whole() {
    let mut dp = datapath("rate = \"1Mbps\"\n");
    let f = udp4(1, 2, 500);
    for _ in 0..20 {
        offer(&mut dp, Time::ZERO, &f);
    }
    let text = "[router]\na = \"x0\"\nb = \"x1\"\npool = 2048\n[link]\ndelay = \"0s\"\nrate = \"2Mbps\"\n\
                queue = { type = \"red\", limit = \"100pkts\", min_th = 5, max_th = 15 }\n";
    let v = load_str(text, "new.toml", Path::new(".")).unwrap();
    dp.reconfigure(v, Time(1)).unwrap();
    assert_eq!(dp.dirs[0].port.queue().kind(), "red");
    // The bucket's first three frames went at t=0; the rest were moved over (RED may drop some).
    let held = dp.dirs[0].held_pkts();
    assert_eq!(held as usize, dp.pool.in_use());
    assert!(held > 0);
    // A pool change is refused and nothing changes.
    let bad = text.replace("pool = 2048", "pool = 64");
    let v = load_str(&bad, "bad.toml", Path::new(".")).unwrap();
    let e = dp.reconfigure(v, Time(2)).unwrap_err();
    assert_eq!(e[0].path, "router.pool");
    assert_eq!(dp.dirs[0].port.queue().kind(), "red");
    assert_eq!(dp.dirs[0].held_pkts(), held);
}

/// Offers 1 M frames, each from a random source address and port (a new
/// flow almost every time), 2 us apart, polling every 64.
pub(crate) fn flood(dp: &mut Datapath) {
    flood_n(dp, 1_000_000, Time::ZERO);
}

/// [`flood`] of `n` frames from `start`; returns when it ended.
pub(crate) fn flood_n(dp: &mut Datapath, n: u32, start: Time) -> Time {
    let mut now = start;
    let mut x: u32 = 12345;
    let mut f = udp4(1, 5004, 58);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f[26..30].copy_from_slice(&x.to_be_bytes()); // a random source address
        f[34..36].copy_from_slice(&(x >> 16).to_be_bytes()[2..]); // and source port
        offer(dp, now, &f);
        if i % 64 == 0 {
            poll(dp, now);
        }
        now += Dur::from_us(2);
    }
    now
}

#[test]
fn flood_of_distinct_flows_through_mace_keeps_tables_bounded() {
    // MACE's recognition table at its default size (1024), full from the
    // flood's start: each new flow evicts the least recent candidate.
    let link = mace_link("{ type = \"mace\", buffer = \"200pkts\" }");
    let mut dp = datapath(&link.replace("\n[link.mace]", "\n[link.mace]\ntable_capacity = 1024"));
    dp.flows = crate::flows::Flows::new(1000);
    flood(&mut dp);
    assert!(dp.flows.len() <= 1000);
    assert!(dp.flows.evictions > 990_000);
    assert!(dp.pool.in_use() <= 201, "pool {}", dp.pool.in_use());
    // Forwarding continued at the link's rate (1 Mb/s) for the flood's 2 s.
    let bits = dp.dirs[0].counters.tx_bytes * 8;
    assert!(bits >= 1_980_000, "forwarded {bits} bits in 2 s at 1 Mb/s");
}

#[test]
fn flood_of_distinct_flows_through_the_edge_classifier_keeps_tables_bounded() {
    let mut dp = datapath(
        "rate = \"10Mbps\"\nqueue = { type = \"edge\", buffers = 100, buff_size = \"1600B\", streams = [\n\
         { name = \"A1\", service = \"af\", rate = \"1Mbps\" }, { name = \"B1\", service = \"be\" } ] }\n\
         stages = [{ type = \"classifier\", cache = 1024, default_stream = \"B1\", rules = [\n\
         { dst = \"10.0.0.2/32\", dst_port = 5004, proto = \"udp\", stream = \"A1\" } ] }]\n",
    );
    dp.flows = crate::flows::Flows::new(1000);
    flood(&mut dp);
    assert!(dp.flows.len() <= 1000);
    let cache = format!("{:?}", dp.dirs[0].port.stages()[0]);
    assert!(cache.contains("capacity: 1024"), "{}", &cache[..cache.len().min(300)]);
    assert!(dp.pool.in_use() <= 101, "pool {}", dp.pool.in_use());
    // Forwarding continued at the link's rate (10 Mb/s) for the flood's 2 s.
    let bits = dp.dirs[0].counters.tx_bytes * 8;
    assert!(bits >= 19_800_000, "forwarded {bits} bits in 2 s at 10 Mb/s");
}
