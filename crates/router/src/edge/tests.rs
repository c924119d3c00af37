//! The PCN domain on a virtual clock, through the datapath: requests and
//! answers as frames, admission by the egress's CLE after the link's round
//! trip, termination down to the sustainable rate with notices to the
//! sources, and the hostile cases (packets never admitted, a request
//! flood, a flow-table flood that recycles the router's flow ids).

use super::wire::{self, Kind, Msg};
use crate::config::load_str;
use crate::datapath::{Arrival, Datapath};
use crate::parse::{self, Frame};
use crate::script::check_conservation;
use crate::test_frames::{offer, poll, replies, udp};
use qoslab_core::packet::Ecn;
use qoslab_core::qdisc::DropReason;
use qoslab_core::units::{Dur, Time};
use std::path::Path;

const DATA_PORT: u16 = 9000;

fn domain_dp(stages: &str, router: &str) -> Datapath {
    let text = format!(
        "[router]\na = \"x0\"\nb = \"x1\"\npool = 4096\npcn_dscps = [0]\n{router}\n[link]\nrate = \"10Mbps\"\n\
         delay = \"10ms\"\nqueue = {{ type = \"fifo\", limit = \"1000pkts\" }}\nstages = [{stages}]\n\
         [pcn]\nedges = [\"a\", \"b\"]\n"
    );
    let v = load_str(&text, "t.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e:?}"));
    Datapath::new(v, Time::ZERO).unwrap()
}

/// A flow request from the data flow's own port `src_port`, numbered `token`.
fn request(src_port: u16, token: u32) -> Vec<u8> {
    let m = Msg { port: DATA_PORT, ..Msg::new(Kind::FlowRequest, token, 800_000.0) };
    udp(src_port, 7400, &wire::encode(&m))
}

/// A 1000-byte data frame of the flow from `src_port`.
fn data(src_port: u16) -> Vec<u8> {
    udp(src_port, DATA_PORT, &[0u8; 1000 - 42])
}

/// The frame with DSCP 8 (not PCN traffic here), its IPv4 checksum redone.
fn dscp8(mut f: Vec<u8>) -> Vec<u8> {
    f[15] = 8 << 2;
    f[24..26].copy_from_slice(&[0, 0]);
    let sum: u32 = f[14..34].chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    let sum = (sum & 0xffff) + (sum >> 16);
    let sum = (sum & 0xffff) + (sum >> 16);
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f
}

fn ms(t: u64) -> Time {
    Time(Dur::from_ms(t).0)
}

/// Polls every millisecond in [from, to) ms; returns everything sent.
fn run(dp: &mut Datapath, from: u64, to: u64) -> Vec<(usize, Vec<u8>)> {
    (from..to).flat_map(|t| poll(dp, ms(t))).collect()
}

#[test]
fn a_request_is_answered_after_the_links_round_trip_and_its_packets_enter_not_marked() {
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "");
    assert_eq!(offer(&mut dp, ms(0), &request(20_001, 5)), Arrival::Consumed);
    // Ingress → egress (10 ms), egress → ingress (10 ms): no answer before 20 ms.
    assert!(replies(&run(&mut dp, 0, 20)).is_empty());
    let r = replies(&run(&mut dp, 20, 21));
    assert_eq!(r.len(), 1);
    let (port, m) = r[0];
    assert_eq!((port, m.kind, m.flag, m.flow), (20_001, Kind::FlowAnswer, true, 5));
    assert_eq!(m.value, 0.0, "a fresh aggregate's CLE");
    // Its data (sent ECN not-ECT) crosses the link as PCN not-marked: ECT(0).
    assert_eq!(offer(&mut dp, ms(21), &data(20_001)), Arrival::Delayed);
    let out: Vec<_> = run(&mut dp, 21, 40).into_iter().filter(|(s, _)| *s == 1).collect();
    assert_eq!(out.len(), 1);
    match parse::parse(&out[0].1) {
        Frame::Ip(i) => assert_eq!((i.ecn, i.key.dst_port), (Ecn::Ect0, DATA_PORT)),
        f => panic!("{f:?}"),
    }
    let st = &dp.domain.as_ref().unwrap().stats;
    assert_eq!((st.requests, st.admitted, st.admission_requests, st.congestion_levels), (1, 1, 1, 1));
    assert_eq!(dp.dirs[0].counters.edge_consumed, 1);
    check_conservation(&dp);
}

#[test]
fn pcn_packets_of_flows_never_admitted_or_still_pending_are_policed_and_counted() {
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "");
    assert_eq!(offer(&mut dp, ms(0), &data(20_002)), Arrival::Dropped);
    offer(&mut dp, ms(0), &request(20_003, 1));
    assert_eq!(offer(&mut dp, ms(1), &data(20_003)), Arrival::Dropped, "pending: not admitted yet");
    // A packet of another DSCP is not PCN traffic: it crosses untouched.
    let other = dscp8(data(20_002));
    assert_eq!(offer(&mut dp, ms(1), &other), Arrival::Delayed);
    assert_eq!(dp.drops(0)[DropReason::Policed as usize], 2);
    assert_eq!(dp.domain.as_ref().unwrap().stats.policed, 2);
    run(&mut dp, 1, 40);
    check_conservation(&dp);
}

#[test]
fn a_malformed_request_is_dropped_as_malformed_and_never_answered() {
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "");
    let mut bad = request(20_001, 5);
    let n = bad.len();
    bad[n - 32] = b'X'; // the magic
    assert_eq!(offer(&mut dp, ms(0), &bad), Arrival::Dropped);
    assert_eq!(offer(&mut dp, ms(0), &udp(20_001, 7400, b"hello")), Arrival::Dropped);
    assert!(replies(&run(&mut dp, 0, 50)).is_empty());
    assert_eq!(dp.drops(0)[DropReason::Malformed as usize], 2);
    assert_eq!(dp.domain.as_ref().unwrap().stats.requests, 0);
    check_conservation(&dp);
}

/// Admits `n` flows from ports 20000.. (answers by 21 ms); returns the time after.
fn admit(dp: &mut Datapath, n: u16) -> u64 {
    for i in 0..n {
        offer(dp, ms(0), &request(20_000 + i, i as u32));
    }
    let r = replies(&run(dp, 0, 21));
    assert_eq!(r.len(), n as usize);
    assert!(r.iter().all(|(_, m)| m.kind == Kind::FlowAnswer && m.flag));
    21
}

/// Each of flows 0..n sends a 1000-byte frame every 10 ms in [from, to) ms.
fn send(dp: &mut Datapath, n: u16, from: u64, to: u64) -> Vec<(usize, Vec<u8>)> {
    let mut sent = Vec::new();
    for t in from..to {
        if (t - from).is_multiple_of(10) {
            for i in 0..n {
                offer(dp, ms(t), &data(20_000 + i));
            }
        }
        sent.extend(poll(dp, ms(t)));
    }
    sent
}

#[test]
fn interior_admission_marks_raise_the_cle_and_a_later_request_is_refused() {
    // 5 flows of 0.8 Mb/s (4 Mb/s) against an admissible rate of 2 Mb/s: the
    // virtual queue marks; the per-packet CLE (weight 0.01) passes 0.5.
    let mut dp = domain_dp("{ type = \"pcn_admission\", admissible_rate = \"2Mbps\" }", "");
    let t = admit(&mut dp, 5);
    send(&mut dp, 5, t, 1000);
    let cle = dp.domain.as_mut().unwrap().cle(ms(1000));
    assert!(cle > 0.5, "CLE {cle}");
    offer(&mut dp, ms(1000), &request(20_100, 99));
    let r = replies(&send(&mut dp, 5, 1000, 1030));
    let answer: Vec<_> = r.iter().filter(|(p, _)| *p == 20_100).collect();
    assert_eq!(answer.len(), 1);
    assert_eq!((answer[0].1.kind, answer[0].1.flag, answer[0].1.flow), (Kind::FlowAnswer, false, 99));
    assert!(answer[0].1.value > 0.5);
    let st = &dp.domain.as_ref().unwrap().stats;
    assert_eq!((st.admitted, st.refused), (5, 1));
    assert_eq!(dp.domain.as_ref().unwrap().flows(), 5, "a refused flow leaves no state");
    assert!(dp.marks(0).iter().sum::<u64>() > 0);
    check_conservation(&dp);
}

#[test]
fn a_rate_drop_terminates_flows_down_to_the_sustainable_rate_and_tells_their_sources() {
    // 10 flows of 0.8 Mb/s (8 Mb/s) through a termination meter at 4 Mb/s:
    // the egress measures about 4 Mb/s not excess-marked, the ingress cuts
    // flows until what remains is at most that (rounding up: 5 flows).
    let mut dp = domain_dp("{ type = \"pcn_termination\", termination_rate = \"4Mbps\", packet_size = \"1000B\" }", "");
    let t = admit(&mut dp, 10);
    let sent = send(&mut dp, 10, t, 2000);
    let notices: Vec<_> = replies(&sent).into_iter().filter(|(_, m)| m.kind == Kind::Terminate).collect();
    let st = dp.domain.as_ref().unwrap().stats.clone();
    assert!((5..=6).contains(&st.terminated), "terminated {}", st.terminated);
    assert_eq!(notices.len() as u64, st.terminated, "one notice per terminated flow");
    for (port, m) in &notices {
        assert_eq!(*port, 20_000 + m.flow as u16, "the notice goes to the flow's own socket");
    }
    assert!(st.sustainable_rates >= 1);
    // The terminated flows' later packets are dropped at the ingress.
    let before = dp.drops(0)[DropReason::Terminated as usize];
    assert!(before > 0);
    let last = send(&mut dp, 10, 2000, 2500);
    let per_flow = |sent: &[(usize, Vec<u8>)], port: u16| {
        sent.iter()
            .filter(|(s, f)| *s == 1 && matches!(parse::parse(f), Frame::Ip(i) if i.key.src_port == port))
            .count()
    };
    for (port, _) in &notices {
        assert_eq!(per_flow(&last, *port), 0, "flow on {port} sends nothing across");
    }
    assert!(dp.drops(0)[DropReason::Terminated as usize] > before);
    check_conservation(&dp);
}

#[test]
fn a_request_flood_fills_the_table_and_is_refused_without_touching_admitted_flows() {
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "edge_flows = 4");
    admit(&mut dp, 4);
    for i in 0..100u16 {
        offer(&mut dp, ms(21), &request(30_000 + i, 1000 + i as u32));
    }
    let r = replies(&run(&mut dp, 21, 22));
    assert_eq!(r.len(), 100);
    assert!(r.iter().all(|(_, m)| m.kind == Kind::FlowAnswer && !m.flag));
    let st = &dp.domain.as_ref().unwrap().stats;
    assert_eq!((st.refused_table_full, st.admitted), (100, 4));
    assert_eq!(offer(&mut dp, ms(22), &data(20_000)), Arrival::Delayed, "admitted flows still enter");
    check_conservation(&dp);
}

#[test]
fn a_flood_that_recycles_the_routers_flow_ids_admits_nothing() {
    // The router's LRU table holds 16 flows; admitted flow 0 is evicted by
    // spoofed frames and a never-admitted flow then takes its router id.
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "flows = 16");
    admit(&mut dp, 1);
    offer(&mut dp, ms(21), &data(20_000));
    for i in 0..64u16 {
        // Not PCN: passes the ingress, fills the router's table.
        let f = dscp8(udp(40_000 + i, 5, &[0u8; 20]));
        offer(&mut dp, ms(21), &f);
    }
    run(&mut dp, 21, 60);
    let policed = dp.drops(0)[DropReason::Policed as usize];
    assert_eq!(offer(&mut dp, ms(60), &data(20_500)), Arrival::Dropped, "the newcomer is policed");
    assert_eq!(dp.drops(0)[DropReason::Policed as usize], policed + 1);
    assert_eq!(offer(&mut dp, ms(60), &data(20_000)), Arrival::Delayed, "flow 0 still admitted");
    assert!(dp.flows.evictions > 0);
    check_conservation(&dp);
}

#[test]
fn flows_silent_for_the_idle_time_leave_the_table() {
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "");
    admit(&mut dp, 3);
    assert_eq!(dp.domain.as_ref().unwrap().core_flows(), 3);
    poll(&mut dp, ms(21 + 10_000 + 1));
    poll(&mut dp, ms(2 * (21 + 10_000 + 1)));
    let dm = dp.domain.as_ref().unwrap();
    assert_eq!((dm.flows(), dm.stats.expired), (0, 3));
    assert_eq!(dm.core_flows(), 0, "the core ingress forgets expired flows too: its state stays bounded");
    assert_eq!(offer(&mut dp, ms(30_000), &data(20_000)), Arrival::Dropped, "policed once forgotten");
}

#[test]
fn config_refuses_other_edges_missing_pcn_dscps_and_a_bad_pcn_field() {
    let base = "[router]\na = \"x0\"\nb = \"x1\"\n[link]\nrate = \"10Mbps\"\ndelay = \"0s\"\n";
    let msg = |t: &str| {
        load_str(t, "t.toml", Path::new(".")).unwrap_err().iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
    };
    let m = msg(&format!("{base}[pcn]\nedges = [\"i0\"]\n"));
    assert!(m.contains("pcn.edges") && m.contains("router.pcn_dscps"), "{m}");
    let m = msg(&format!("{base}[pcn]\nedges = [\"a\", \"b\"]\ncle_threshold = 2.0\n")
        .replace("[link]", "pcn_dscps = [0]\n[link]"));
    assert!(m.contains("pcn.cle_threshold"), "{m}");
    let m = msg(&base.replace("[link]", "edge_port = 0\nedge_flows = 0\n[link]"));
    assert!(m.contains("router.edge_port") && m.contains("router.edge_flows"), "{m}");
}

#[test]
fn a_message_whose_value_is_not_finite_is_dropped_and_counted_not_a_panic() {
    use qoslab_core::edge::{AggregateId, EdgeActions, EdgeMessage, EdgeNode, Signal};
    let mut dp = domain_dp("{ type = \"pcn_admission\" }", "");
    let dm = dp.domain.as_mut().unwrap();
    let mut out = EdgeActions::default();
    out.messages.push(EdgeMessage {
        from: EdgeNode(1),
        to: EdgeNode(0),
        aggregate: AggregateId(0),
        signal: Signal::SustainableRate { bps: f64::NAN },
    });
    dm.carry_out(ms(0), out, &mut dp.events);
    poll(&mut dp, ms(10));
    assert_eq!(dp.domain.as_ref().unwrap().stats.messages_dropped, 1);
}
