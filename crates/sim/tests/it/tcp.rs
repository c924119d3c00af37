//! TCP and MM_APP end to end through scenarios: greedy Reno fills a
//! bottleneck, finite transfers complete, ACKs are real packets counted
//! apart from data, and the reverse path carries them.

use crate::common::*;
use qoslab_core::units::Dur;

fn dumbbell(bottleneck: &str, queue: &str, extra: &str) -> String {
    format!(
        "name = \"tcp\"\nduration = \"20s\"\n[topology]\npreset = \"dumbbell\"\nsources = 10\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
         bottleneck = {{ rate = \"{bottleneck}\", delay = \"20ms\", queue = {queue} }}\n{extra}"
    )
}

#[test]
fn one_greedy_reno_flow_fills_the_bottleneck_and_acks_come_back() {
    let text = dumbbell(
        "2Mbps",
        "{ type = \"fifo\", limit = \"30pkts\" }",
        "[[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"1000B\"\nheader = \"40B\"\n\
         tcp = { max_window = 100 }\n",
    );
    let out = run(&scenario(&text), 1);
    let f = &out.flows;
    assert_eq!(strs(f, "proto"), vec!["tcp"]);
    let goodput = f64s(f, "goodput_bps")[0];
    // 2 Mb/s of 1040 B packets carry 1000 B of payload each.
    assert!(goodput > 0.9 * 2e6 * 1000.0 / 1040.0, "goodput {goodput}");
    let acks = u64s(f, "reverse_sent_pkts")[0];
    let delivered = u64s(f, "delivered_pkts")[0];
    assert_eq!(acks, delivered, "one ACK per delivered segment");
    let back = u64s(f, "reverse_delivered_pkts")[0];
    // At the end a few ACKs are still on the 22 ms way back (about 240 ACKs/s).
    assert_eq!(u64s(f, "reverse_dropped_pkts")[0], 0);
    assert!(back <= acks && acks - back <= 10, "acks {acks} back {back}");
    assert!(u64s(f, "fast_retransmits")[0] >= 1, "a 30-packet buffer overflows at window 100");
}

#[test]
fn a_window_in_bytes_is_the_same_window_in_whole_segments() {
    // A window binds here (2 Mb/s x 42 ms is 10 segments of 1040 B): the
    // same run with 6 segments and with 6,999 bytes (6 whole 1000 B
    // segments) must be identical, and 7 segments must differ.
    let flows = |w: &str| {
        let text = dumbbell(
            "2Mbps",
            "{ type = \"fifo\", limit = \"30pkts\" }",
            &format!(
                "[[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"1000B\"\n\
                 header = \"40B\"\ntcp = {{ max_window = {w} }}\n"
            ),
        );
        let out = run(&scenario(&text), 1);
        (u64s(&out.flows, "delivered_pkts")[0], f64s(&out.flows, "goodput_bps")[0])
    };
    let six = flows("6");
    assert_eq!(flows("\"6999B\""), six);
    assert_eq!(flows("\"6pkts\""), six);
    assert!(flows("7").0 > six.0, "a larger window must deliver more while the window binds");
}

#[test]
fn a_transfer_completes_and_records_its_time() {
    let text = dumbbell(
        "10Mbps",
        "{ type = \"fifo\", limit = \"100pkts\" }",
        "[[traffic]]\nname = \"file\"\nmodel = \"transfer\"\nbytes = \"100500B\"\nsrc = \"src0\"\ndst = \"sink0\"\n\
         size = \"1000B\"\nheader = \"40B\"\n",
    );
    let out = run(&scenario(&text), 1);
    let f = &out.flows;
    let c = f64s(f, "completion_s")[0];
    // 101 segments in slow start from 1 (1, 2, 4, ... capped at 20): about 9 RTTs of ~46 ms.
    assert!(c > 0.3 && c < 1.0, "completion {c}");
    assert_eq!(u64s(f, "goodput_bytes")[0], 100_500);
    assert_eq!(u64s(f, "sent_pkts")[0], 101);
    let kinds = strs(&out.events, "kind");
    assert!(kinds.iter().any(|k| k == "transfer_complete"));
    assert!((f64s(f, "end_s")[0] - c).abs() < 1e-9);
}

/// `flows` greedy Reno flows, each over its own lossy access link (loss
/// `p` on data only), through non-binding links: RTT = 2 x 50 ms.
fn lossy_paths(p: f64, flows: u32, secs: u32, variant: &str) -> String {
    format!(
        "name = \"mathis\"\nduration = \"{secs}s\"\n[topology]\npreset = \"dumbbell\"\nsources = {flows}\nsinks = {flows}\nrouters = 2\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\", loss = {p} }}\n\
         bottleneck = {{ rate = \"1Gbps\", delay = \"48ms\" }}\n\
         egress = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
         [[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nflows = {flows}\nsrc = \"src*\"\ndst = \"sink*\"\nsize = \"1000B\"\nheader = \"40B\"\n\
         start_jitter = \"1s\"\n\
         tcp = {{ variant = \"{variant}\", max_window = 10000, granularity = \"10ms\", min_rto = \"200ms\" }}\n"
    )
}

/// Mathis et al. 1997: segments/s = sqrt(3 / (2 p)) / RTT.
fn mathis(p: f64, rtt: f64) -> f64 {
    (1.5 / p).sqrt() / rtt
}

/// Padhye et al. 1998, eq. (30) with b = 1 (an ACK per segment) and no window limit.
fn padhye(p: f64, rtt: f64, t0: f64) -> f64 {
    1.0 / (rtt * (2.0 * p / 3.0).sqrt() + t0 * (3.0 * (3.0 * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p))
}

/// Mean sending rate (segments/s, retransmissions included: Padhye's B(p)) of the flows
/// after a 10 s warm-up (the first `metrics.bin`, which holds the initial slow start), and
/// their timeouts.
fn send_rate(out: &qoslab_sim::RunOutput) -> (f64, u64) {
    let names = strs(&out.flows, "name");
    let end = f64s(&out.flows, "end_s")[0];
    let rate = names
        .iter()
        .map(|n| series(out, n, "sent_pkts").iter().filter(|(t, _)| *t >= 10.0).map(|(_, v)| v).sum::<f64>())
        .sum::<f64>()
        / names.len() as f64
        / (end - 10.0);
    (rate, u64s(&out.flows, "timeouts").iter().sum())
}

/// Nominal RTT of `lossy_paths`: 2 x 50 ms of propagation, a segment serialized at
/// 100 Mb/s twice and 1 Gb/s once, an ACK likewise.
const LOSSY_RTT: f64 =
    0.100 + (2.0 * 1040.0 * 8.0 / 100e6 + 1040.0 * 8.0 / 1e9) + (2.0 * 40.0 * 8.0 / 100e6 + 320.0 / 1e9);

#[test]
fn reno_under_bernoulli_loss_follows_mathis_then_padhye() {
    // T0 = min_rto: the RTT is constant, so RTO = max(200 ms, RTT + max(G, 4 RTTVAR)) = 200 ms.
    let t0 = 0.2;
    for p in [0.001, 0.005, 0.01, 0.02, 0.05] {
        let (rate, timeouts) = send_rate(&run(&scenario(&lossy_paths(p, 8, 100, "reno")), 1));
        let (m, pd) = (mathis(p, LOSSY_RTT), padhye(p, LOSSY_RTT, t0));
        println!(
            "reno p {p}: {rate:.1} seg/s, Mathis {m:.1} ({:+.1}%), Padhye {pd:.1} ({:+.1}%), {timeouts} timeouts",
            (rate / m - 1.0) * 100.0,
            (rate / pd - 1.0) * 100.0
        );
        // Padhye holds everywhere; Mathis (no timeouts) only while timeouts are rare.
        assert!((rate / pd - 1.0).abs() <= 0.2, "p {p}: {rate} vs Padhye {pd}");
        if p <= 0.01 {
            assert!((rate / m - 1.0).abs() <= 0.2, "p {p}: {rate} vs Mathis {m}");
        } else {
            assert!(rate < m, "p {p}: above Mathis, which ignores timeouts");
        }
    }
}

#[test]
fn newreno_under_bernoulli_loss_follows_padhye_with_fewer_timeouts() {
    for p in [0.01, 0.05] {
        let (reno, reno_to) = send_rate(&run(&scenario(&lossy_paths(p, 8, 60, "reno")), 2));
        let (newreno, newreno_to) = send_rate(&run(&scenario(&lossy_paths(p, 8, 60, "newreno")), 2));
        let pd = padhye(p, LOSSY_RTT, 0.2);
        println!("p {p}: newreno {newreno:.1} ({newreno_to} timeouts), reno {reno:.1} ({reno_to}), Padhye {pd:.1}");
        assert!((newreno / pd - 1.0).abs() <= 0.2, "p {p}: {newreno} vs {pd}");
        assert!(newreno_to < reno_to && newreno > reno, "NewReno recovers from several losses per window");
    }
}

#[test]
fn ten_greedy_flows_share_a_drop_tail_bottleneck_fully_and_fairly() {
    // 10 Mb/s, RTT ~ 44 ms: BDP ~ 53 segments; a 50-packet drop-tail buffer.
    let text = dumbbell(
        "10Mbps",
        "{ type = \"fifo\", limit = \"50pkts\" }",
        "[[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nflows = 10\nsrc = \"src*\"\ndst = \"sink0\"\nsize = \"1000B\"\n\
         header = \"40B\"\nstart_jitter = \"1s\"\ntcp = { max_window = 200 }\n",
    )
    .replace("duration = \"20s\"", "duration = \"60s\"");
    let out = run(&scenario(&text), 1);
    let util = out.summary["bottleneck"]["utilization"].as_f64().unwrap();
    let thr = f64s(&out.flows, "goodput_bps");
    let jain = qoslab_core::stats::jain_index(&thr);
    println!("utilization {util:.4}, Jain {jain:.4}, goodput {thr:?}");
    assert!(util >= 0.95, "utilization {util}");
    assert!(jain >= 0.9, "Jain {jain}");
    // Conservation with ACKs in the network: data and ACKs both add up.
    let f = &out.flows;
    let pk = &out.summary["packets"];
    let in_net = pk["queued_end"].as_u64().unwrap()
        + pk["on_wire_end"].as_u64().unwrap()
        + pk["propagating_end"].as_u64().unwrap();
    let data_in_flight: u64 = u64s(f, "in_flight_pkts").iter().sum();
    let rev = |c: &str| u64s(f, c).iter().sum::<u64>();
    let acks_in_flight = rev("reverse_in_flight_pkts");
    assert!(acks_in_flight > 0, "ACKs are on their way back at the end");
    assert_eq!(in_net, data_in_flight + acks_in_flight);
    assert_eq!(rev("reverse_sent_pkts"), rev("reverse_delivered_pkts") + rev("reverse_dropped_pkts") + acks_in_flight);
}

fn mm_path(loss: f64, duration: &str) -> String {
    dumbbell(
        "25Mbps",
        "{ type = \"fifo\", limit = \"60pkts\" }",
        "[[traffic]]\nname = \"mm\"\nmodel = \"mm_app\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"1000B\"\nheader = \"28B\"\n",
    )
    .replace("duration = \"20s\"", &format!("duration = \"{duration}\""))
    .replace("delay = \"1ms\" }", &format!("delay = \"1ms\", loss = {loss} }}"))
}

/// `(t_s, scale)` of the `mm_scale` events of flow 0.
fn scales(out: &qoslab_sim::RunOutput) -> Vec<(f64, u32)> {
    let (t, kind, detail) = (f64s(&out.events, "t_s"), strs(&out.events, "kind"), strs(&out.events, "detail"));
    (0..t.len())
        .filter(|i| kind[*i] == "mm_scale")
        .map(|i| (t[i], detail[i].trim_start_matches("scale=").parse().unwrap()))
        .collect()
}

#[test]
fn mm_app_climbs_to_the_top_scale_in_about_four_rtts_on_a_clean_path() {
    let out = run(&scenario(&mm_path(0.0, "2s")), 1);
    let s = scales(&out);
    // RTT: 2 x 22 ms plus serialization, ~45 ms; the receiver's first decision when the
    // first packet arrives (~22 ms), each decision reaching the source half an RTT later.
    let rtt = 0.045;
    assert_eq!(s.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 2, 3, 4], "{s:?}");
    let top = s[3].0;
    println!("scales {s:?}");
    assert!(top > 3.0 * rtt && top < 5.0 * rtt, "scale 4 at {top} s");
    // Then 1100 kb/s of payload: 1,100,000 / 8000 = 137.5 packets/s.
    let bins = series(&out, "mm.0", "sent_pkts");
    assert!(!bins.is_empty());
    let sent = u64s(&out.flows, "sent_pkts")[0] as f64;
    assert!(sent > 0.9 * 137.5 * 2.0 && sent < 137.5 * 2.0, "{sent}");
    // One feedback packet per RTT estimate, at most one on its way at the end.
    let (fb, back) = (u64s(&out.flows, "reverse_sent_pkts")[0], u64s(&out.flows, "reverse_delivered_pkts")[0]);
    println!("sent {sent}, feedback {fb}");
    // Decisions every ~42.8 ms (twice the one-way delay) from ~21 ms on: about 47 in 2 s.
    assert!(fb - back <= 1 && (43..=49).contains(&fb), "{fb} feedback packets, {back} back");
}

#[test]
fn mm_app_halves_its_scale_on_loss() {
    let out = run(&scenario(&mm_path(0.1, "30s")), 1);
    let s = scales(&out);
    let mut halvings = 0;
    let mut prev = 0;
    for &(_, k) in &s {
        assert!(k == prev + 1 || k == prev / 2, "{prev} -> {k}: only +1 or halving");
        if k < prev {
            halvings += 1;
        }
        prev = k;
    }
    assert!(halvings >= 10, "{halvings} halvings in {s:?}");
    // About 10 % of its packets are lost, seen as gaps by the receiver.
    let (sent, dropped) = (u64s(&out.flows, "sent_pkts")[0], u64s(&out.flows, "dropped_pkts")[0]);
    let p = dropped as f64 / sent as f64;
    assert!((0.08..0.12).contains(&p), "{p}");
    // The average rate is well below the top scale's.
    let rate = f64s(&out.flows, "throughput_bps")[0];
    println!("halvings {halvings} of {} changes, loss {p:.4}, throughput {rate:.0} b/s", s.len());
    assert!(rate < 0.8 * 1_100_000.0 * 1028.0 / 1000.0, "{rate}");
}

#[test]
fn transfers_complete_under_heavy_loss_deterministically_and_delayed_acks_halve_the_acks() {
    let text = |variant: &str, delayed: bool| {
        lossy_paths(0.05, 4, 60, variant)
            .replace("model = \"ftp\"", "model = \"transfer\"\nbytes = \"200000B\"")
            .replace("min_rto = \"200ms\"", &format!("min_rto = \"200ms\", delayed_ack = {delayed}"))
            .replace("[[traffic]]", "[metrics]\ntcp_series = [\"ftp\"]\n[[traffic]]")
    };
    for variant in ["reno", "newreno"] {
        for delayed in [false, true] {
            let sc = scenario(&text(variant, delayed));
            let out = run(&sc, 3);
            let f = &out.flows;
            let c = f64s(f, "completion_s");
            assert!(c.iter().all(|c| c.is_finite()), "{variant} delayed {delayed}: {c:?}");
            assert!(u64s(f, "goodput_bytes").iter().all(|b| *b == 200_000));
            // Every segment reached the sink at least once; ACKs: one per segment, or about one per two.
            let (acks, segs) = (u64s(f, "reverse_sent_pkts"), u64s(f, "delivered_pkts"));
            for (a, s) in acks.iter().zip(&segs) {
                if delayed {
                    assert!(*a * 10 < *s * 8 && *a * 2 >= *s, "{a} ACKs for {s} segments");
                } else {
                    assert_eq!(a, s);
                }
            }
            assert_eq!(strs(&out.events, "kind").iter().filter(|k| *k == "transfer_complete").count(), 4);
            // cwnd series while the transfers run, none after.
            let cw = series(&out, "ftp.0", "cwnd_pkts");
            let done = f64s(f, "end_s")[0];
            assert!(!cw.is_empty() && cw.iter().all(|(t, v)| *t <= done && *v >= 1.0), "{cw:?} done at {done}");
            let again = run(&sc, 3);
            assert!(same_table(&out.flows, &again.flows) && same_table(&out.series, &again.series));
        }
    }
}

/// The `rto_s` series is the RTO the timer is armed with: backed off and
/// capped at `max_rto` (it once showed 192 s with a 60 s cap).
#[test]
fn rto_series_is_backed_off_and_capped_at_max_rto() {
    let text = lossy_paths(0.6, 1, 60, "reno")
        .replace("min_rto = \"200ms\"", "min_rto = \"200ms\", max_rto = \"2s\"")
        .replace("[[traffic]]", "[metrics]\ntcp_series = [\"ftp\"]\n[[traffic]]");
    let out = run(&scenario(&text), 1);
    assert!(u64s(&out.flows, "timeouts")[0] >= 5, "60 % loss times out again and again");
    let rto: Vec<f64> = series(&out, "ftp.0", "rto_s").into_iter().map(|(_, v)| v).collect();
    let max = rto.iter().copied().fold(0.0, f64::max);
    assert!(max <= 2.0, "rto_s {max} s above max_rto 2 s");
    assert_eq!(max, 2.0, "the back-off reaches the cap");
}

/// The RTO end to end after a known RTT sequence: one segment at a time
/// (window 1) over loss-free `lossy_paths`, so every RTT sample is exactly
/// the path's round trip R. By RFC 6298 after n samples: SRTT = R, RTTVAR
/// = floor-divided (3/4)^(n-1) R/2, RTO = SRTT + max(G, 4 RTTVAR) rounded
/// up to a multiple of G, clamped to [min_rto, max_rto]. The `rto_s`
/// series (the armed timer) must show exactly that: an RTO twice too long,
/// or the back-off left on, fails here.
#[test]
fn rto_after_a_known_rtt_sequence_is_pinned_end_to_end() {
    // R: 2 x 50 ms propagation, the 1040 B segment serialized at 100 Mb/s twice and 1 Gb/s once
    // (83.2 us, 83.2 us, 8.32 us), the 40 B ACK likewise (3.2 us, 3.2 us, 0.32 us).
    const R: u64 = 100_000_000 + 2 * 83_200 + 8_320 + 2 * 3_200 + 320;
    let expected = |n: u64, g: u64, min: u64| {
        let mut var = R / 2;
        for _ in 1..n {
            var = 3 * var / 4;
        }
        let mut rto = R + g.max(4 * var);
        if g > 0 {
            rto = rto.div_ceil(g) * g;
        }
        rto.max(min)
    };
    for (g, min) in [("0s", "0s"), ("100ms", "200ms")] {
        let text = lossy_paths(0.0, 1, 4, "reno")
            .replace("start_jitter = \"1s\"", "start_jitter = \"0s\"")
            .replace(
                "max_window = 10000, granularity = \"10ms\", min_rto = \"200ms\"",
                &format!("max_window = 1, granularity = \"{g}\", min_rto = \"{min}\""),
            )
            .replace("[[traffic]]", "[metrics]\ntcp_series = [\"ftp\"]\n[[traffic]]");
        let out = run(&scenario(&text), 1);
        assert_eq!(u64s(&out.flows, "retransmits")[0], 0);
        let srtt = series(&out, "ftp.0", "srtt_s");
        let rto = series(&out, "ftp.0", "rto_s");
        assert!(rto.len() >= 3, "{rto:?}");
        let (g_ns, min_ns) = (Dur::parse(g).unwrap().0, Dur::parse(min).unwrap().0);
        for ((t, s), (t2, r)) in srtt.iter().zip(&rto) {
            assert_eq!(t, t2);
            // Segment k is sent at k R and acknowledged at (k + 1) R: floor(t / R) samples by t.
            let n = (t * 1e9).round() as u64 / R;
            if n == 0 {
                assert!(s.is_nan() && *r == 3.0, "before any sample: initial_rto, got {r} at {t}");
                continue;
            }
            assert!((s - R as f64 / 1e9).abs() < 1e-12, "SRTT {s} at {t}");
            let want = expected(n, g_ns, min_ns) as f64 / 1e9;
            assert!((r - want).abs() < 1e-12, "G {g}: RTO {r} s at {t} s after {n} samples, RFC 6298 gives {want}");
        }
        if g == "100ms" {
            // R + G = 200.2 ms rounded up to 300 ms once RTTVAR has decayed.
            assert_eq!(rto.last().unwrap().1, 0.3);
        }
    }
}

/// ECN end to end (RFC 3168): RED marks an ECN-capable flow's packets
/// instead of dropping them; the sink reads CE and echoes it, and the
/// sender halves its window. Without the sink's CE read (or the sender's
/// reaction) nothing would slow the flows down before the hard limit:
/// `ecn_reductions` would be 0 and the queue would overflow.
#[test]
fn ecn_capable_reno_reacts_to_ce_marks_and_counts_them() {
    let text = |ecn: bool| {
        dumbbell(
            "10Mbps",
            "{ type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15, max_p = 0.1, ecn = true }",
            &format!(
                "[[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nflows = 5\nsrc = \"src*\"\ndst = \"sink0\"\nsize = \"1000B\"\n\
                 header = \"40B\"\necn = {ecn}\ntcp = {{ max_window = 100 }}\n"
            ),
        )
    };
    let out = run(&scenario(&text(true)), 1);
    let f = &out.flows;
    let ce: u64 = u64s(f, "ce_marked_pkts").iter().sum();
    let cuts: u64 = u64s(f, "ecn_reductions").iter().sum();
    let q = queue_row(&out, "r0->sink0");
    let overlimit = u64s(&out.queues, "drops_overlimit")[q];
    println!(
        "ECN: {ce} CE marks, {cuts} window cuts, {overlimit} overlimit drops, drops {:?}",
        u64s(f, "dropped_pkts")
    );
    assert!(ce > 20, "RED marks ECN-capable packets: {ce}");
    assert!(u64s(f, "ecn_reductions").iter().all(|c| *c > 0), "every flow reacts");
    // At most one cut per window: far fewer cuts than marks.
    assert!(cuts < ce, "{cuts} cuts for {ce} marks");
    // Not ECN-capable: RED drops instead, nothing is marked, no ECN cut.
    let plain = run(&scenario(&text(false)), 1);
    assert_eq!(u64s(&plain.flows, "ce_marked_pkts").iter().sum::<u64>(), 0);
    assert_eq!(u64s(&plain.flows, "ecn_reductions").iter().sum::<u64>(), 0);
    let (d_ecn, d_plain): (u64, u64) =
        (u64s(f, "dropped_pkts").iter().sum(), u64s(&plain.flows, "dropped_pkts").iter().sum());
    println!("drops with ECN {d_ecn} (overlimit {overlimit}), without {d_plain}");
    assert!(d_ecn * 3 < d_plain * 2, "marks replace drops: {d_ecn} vs {d_plain}");
}

/// Limited transmit (RFC 3042) on small windows under random loss: with
/// only 3 segments in flight a loss rarely brings three duplicate ACKs, so
/// plain Reno times out; sending a new segment on each of the first two
/// duplicate ACKs turns many of those timeouts into fast retransmits.
#[test]
fn limited_transmit_turns_small_window_timeouts_into_fast_retransmits() {
    let run_lt = |lt: bool| {
        let text = lossy_paths(0.02, 4, 60, "reno")
            .replace("max_window = 10000", &format!("max_window = 3, limited_transmit = {lt}"));
        let out = run(&scenario(&text), 1);
        let t: u64 = u64s(&out.flows, "timeouts").iter().sum();
        let fr: u64 = u64s(&out.flows, "fast_retransmits").iter().sum();
        let lts: u64 = u64s(&out.flows, "limited_transmits").iter().sum();
        (t, fr, lts)
    };
    let (t0, fr0, lt0) = run_lt(false);
    let (t1, fr1, lt1) = run_lt(true);
    println!("without: {t0} timeouts, {fr0} fast retransmits; with: {t1} timeouts, {fr1} fast retransmits, {lt1} LT segments");
    assert_eq!(lt0, 0);
    assert!(lt1 > 0);
    assert!(t1 * 5 < t0 * 4, "limited transmit should cut timeouts by a fifth or more: {t0} -> {t1}");
    assert!(fr1 > fr0, "{fr0} -> {fr1}");
}
