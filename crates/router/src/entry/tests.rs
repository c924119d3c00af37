//! The entry shapers and the shaping CAC on a virtual clock, through the
//! datapath: requests and ends as frames, [Tarasiuk05]'s admission limit,
//! packet-by-packet spacing at the assigned rate, scheme #2's re-shaping,
//! fixed-rate shapers, and the hostile cases (flows that never asked, an
//! end from another socket, a table flood).

use crate::config::load_str;
use crate::datapath::{Arrival, Datapath};
use crate::edge::wire::{self, Kind, Msg};
use crate::parse::{self, Frame};
use crate::script::check_conservation;
use crate::test_frames::{offer, poll, replies, udp};
use qoslab_core::packet::{proto, FlowKey};
use qoslab_core::qdisc::DropReason;
use qoslab_core::units::{Dur, Rate, Time};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

const DATA_PORT: u16 = 9000;

fn dp_with(tables: &str, router: &str) -> Datapath {
    let text = format!(
        "[router]\na = \"x0\"\nb = \"x1\"\npool = 4096\n{router}\n[link]\nrate = \"10Mbps\"\n\
         delay = \"0s\"\nqueue = {{ type = \"fifo\", limit = \"1000pkts\" }}\n{tables}\n"
    );
    let v = load_str(&text, "t.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e:?}"));
    Datapath::new(v, Time::ZERO).unwrap()
}

fn cac(scheme: u8) -> String {
    format!(
        "[admission]\ntype = \"shaping_cac\"\nscheme = {scheme}\ncapacity = \"10Mbps\"\nbuffer = 10\n\
         iplr = 1e-3\nr_req = \"1Mbps\"\n"
    )
}

fn message(kind: Kind, src_port: u16, token: u32, tcp: bool) -> Vec<u8> {
    let m = Msg { port: DATA_PORT, tcp, ..Msg::new(kind, token, 500_000.0) };
    udp(src_port, 7400, &wire::encode(&m))
}

/// A 1000-byte UDP data frame of the connection from `src_port`.
fn data(src_port: u16) -> Vec<u8> {
    udp(src_port, DATA_PORT, &[0u8; 1000 - 42])
}

fn key(src_port: u16, p: u8) -> FlowKey {
    FlowKey {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        src_port,
        dst_port: DATA_PORT,
        proto: p,
    }
}

fn us(t: u64) -> Time {
    Time(Dur::from_us(t).0)
}

#[test]
fn scheme_1_admits_up_to_rho_c_over_r_req_and_answers_each_socket_with_its_rate() {
    // rho = 2B / (2B - ln IPLR) = 20 / 26.91 = 0.743: rho C = 7.43 Mb/s holds 7 flows of 1 Mb/s.
    let mut dp = dp_with(&cac(1), "");
    for (i, sp) in (20_001..=20_009u16).enumerate() {
        assert_eq!(
            offer(&mut dp, us(i as u64), &message(Kind::FlowRequest, sp, 100 + i as u32, false)),
            Arrival::Consumed
        );
    }
    let a = replies(&poll(&mut dp, us(10)));
    assert_eq!(a.len(), 9);
    for (i, (port, m)) in a.iter().enumerate() {
        assert_eq!((*port, m.kind, m.flow), (20_001 + i as u16, Kind::FlowAnswer, 100 + i as u32));
        let admitted = i < 7;
        assert_eq!((m.flag, m.value), (admitted, if admitted { 1e6 } else { 0.0 }), "request {i}");
    }
    let st = &dp.entry.as_ref().unwrap().stats;
    assert_eq!((st.requests, st.admitted, st.refused), (9, 7, 2));
    // A refused connection's data is policed; an admitted one's is shaped and sent.
    assert_eq!(offer(&mut dp, us(20), &data(20_008)), Arrival::Dropped);
    assert_eq!(offer(&mut dp, us(20), &data(20_001)), Arrival::Queued);
    let out = poll(&mut dp, us(21));
    assert_eq!(out.iter().filter(|(s, _)| *s == 1).count(), 1);
    assert_eq!(dp.drops(0)[DropReason::Policed as usize], 1);
    // A flow end frees a place: the next request is admitted.
    assert_eq!(offer(&mut dp, us(30), &message(Kind::FlowEnd, 20_001, 100, false)), Arrival::Consumed);
    assert_eq!(offer(&mut dp, us(31), &message(Kind::FlowRequest, 20_010, 7, false)), Arrival::Consumed);
    let a = replies(&poll(&mut dp, us(32)));
    assert_eq!(a.len(), 1);
    assert!(a[0].1.flag, "admitted after the end");
    assert_eq!(dp.dirs[0].counters.edge_consumed, 11);
    check_conservation(&dp);
}

#[test]
fn an_admitted_connection_leaves_packet_by_packet_at_its_assigned_rate() {
    let mut dp = dp_with(&format!("{}[shaping]\ndepth = \"1000B\"\n", cac(1)), "");
    offer(&mut dp, us(0), &message(Kind::FlowRequest, 20_001, 1, false));
    poll(&mut dp, us(0));
    // Ten 1000-byte frames at once: a 1 Mb/s shaper one packet deep spaces them 8 ms apart.
    for _ in 0..10 {
        assert_eq!(offer(&mut dp, us(100), &data(20_001)), Arrival::Queued);
    }
    let mut departures = Vec::new();
    for t in (100..90_000).step_by(50) {
        for (side, _) in poll(&mut dp, us(t)) {
            if side == 1 {
                departures.push(t);
            }
        }
    }
    assert_eq!(departures.len(), 10, "{departures:?}");
    for (k, t) in departures.iter().enumerate() {
        // The first at once (the bucket starts full), then one per 8 ms, within the 50 us polls
        // and the 10 Mb/s link's 0.8 ms transmission.
        let want = 100 + 8_000 * k as u64;
        assert!(*t >= want && *t <= want + 900, "packet {k} left at {t} us, due {want} us");
    }
    check_conservation(&dp);
}

#[test]
fn scheme_2_reshapes_the_running_connections_at_each_arrival_and_departure() {
    let mut dp = dp_with(&cac(2), "");
    offer(&mut dp, us(0), &message(Kind::FlowRequest, 20_001, 1, true));
    let a = replies(&poll(&mut dp, us(1)));
    assert_eq!(a[0].1.value, 10e6, "alone: C/1");
    offer(&mut dp, us(2), &message(Kind::FlowRequest, 20_002, 2, true));
    let a = replies(&poll(&mut dp, us(3)));
    assert_eq!(a[0].1.value, 5e6, "C/2");
    let en = dp.entry.as_ref().unwrap();
    assert_eq!(en.rate_of(&key(20_001, proto::TCP)), Some(Rate(5_000_000)), "the first re-shaped");
    offer(&mut dp, us(4), &message(Kind::FlowEnd, 20_002, 2, true));
    poll(&mut dp, us(5));
    let en = dp.entry.as_ref().unwrap();
    assert_eq!(en.rate_of(&key(20_001, proto::TCP)), Some(Rate(10_000_000)), "back to C/1");
    assert_eq!((en.stats.ends, en.stats.rate_changes, en.running()), (1, 2, 1));
    // The TCP bit made them TCP connections: the UDP 5-tuple has no shaper.
    assert_eq!(en.rate_of(&key(20_001, proto::UDP)), None);
}

#[test]
fn fixed_shapers_shape_their_connections_and_leave_the_rest_alone() {
    let tables = "[shaping]\ndepth = \"1000B\"\nflows = [{ src = \"10.0.0.1\", dst = \"10.0.0.2\", proto = \"udp\", \
                  src_port = 20001, dst_port = 9000, rate = \"2Mbps\" }]\n";
    let mut dp = dp_with(tables, "");
    for _ in 0..3 {
        offer(&mut dp, us(0), &data(20_001));
        offer(&mut dp, us(0), &data(20_002));
    }
    let mut left = [Vec::new(), Vec::new()];
    for t in (0..20_000).step_by(50) {
        for (side, f) in poll(&mut dp, us(t)) {
            if let (1, Frame::Ip(i)) = (side, parse::parse(&f)) {
                left[(i.key.src_port - 20_001) as usize].push(t);
            }
        }
    }
    // 2 Mb/s: 4 ms per 1000-byte frame; the unshaped connection only waits for the 10 Mb/s link.
    assert_eq!(left[0].len(), 3);
    assert!(left[0][2] >= 8_000, "{:?}", left[0]);
    assert!(left[1][2] < 5_000, "{:?}", left[1]);
    assert_eq!(dp.entry.as_ref().unwrap().stats.policed, 0);
    check_conservation(&dp);
}

#[test]
fn an_end_from_another_socket_releases_nothing_and_a_full_table_refuses() {
    let mut dp = dp_with(&cac(1), "edge_flows = 2");
    for sp in [20_001, 20_002, 20_003] {
        offer(&mut dp, us(0), &message(Kind::FlowRequest, sp, sp as u32, false));
    }
    let a = replies(&poll(&mut dp, us(1)));
    assert_eq!(a.iter().map(|(_, m)| m.flag).collect::<Vec<_>>(), [true, true, false]);
    // An end naming connection 20001's destination, sent from port 20003: not 20001's.
    offer(&mut dp, us(2), &message(Kind::FlowEnd, 20_003, 20_001, false));
    poll(&mut dp, us(3));
    let en = dp.entry.as_ref().unwrap();
    assert_eq!((en.running(), en.stats.ends_unknown, en.stats.refused_table_full), (2, 1, 1));
    // Anything else sent to the port is malformed; a frame that is not TCP/UDP is not policed.
    let answer = udp(20_001, 7400, &wire::encode(&Msg::new(Kind::FlowAnswer, 1, 0.0)));
    assert_eq!(offer(&mut dp, us(4), &answer), Arrival::Dropped);
    assert_eq!(dp.drops(0)[DropReason::Malformed as usize], 1);
    let arp = [vec![0xffu8; 6], vec![2, 0, 0, 0, 0, 1], vec![0x08, 0x06], vec![0u8; 46]].concat();
    assert_ne!(offer(&mut dp, us(5), &arp), Arrival::Dropped);
    poll(&mut dp, us(6));
    check_conservation(&dp);
}

#[test]
fn a_silent_connection_is_released_after_the_idle_time() {
    let mut dp = dp_with(&cac(1), "");
    offer(&mut dp, us(0), &message(Kind::FlowRequest, 20_001, 1, false));
    poll(&mut dp, us(1));
    assert_eq!(dp.entry.as_ref().unwrap().running(), 1);
    poll(&mut dp, Time(Dur::from_secs(11).0));
    let en = dp.entry.as_ref().unwrap();
    assert_eq!((en.running(), en.stats.expired, en.connections()), (0, 1, 0));
}

#[test]
fn the_config_refuses_a_bad_cac_a_cac_beside_pcn_and_bad_fixed_shapers() {
    let msgs = |text: String| {
        load_str(&text, "t.toml", Path::new("."))
            .unwrap_err()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let base = "[router]\na = \"x0\"\nb = \"x1\"\npcn_dscps = [0]\n[link]\nrate = \"10Mbps\"\ndelay = \"0s\"\n";
    let m = msgs(format!("{base}{}", cac(4)));
    assert!(m.contains("admission.scheme: (4) is not a scheme; allowed: 1, 2 or 3"), "{m}");
    let m = msgs(format!("{base}{}[pcn]\nedges = [\"a\", \"b\"]\n", cac(1)));
    assert!(m.contains("admission: a shaping CAC beside [pcn]"), "{m}");
    let m = msgs(format!(
        "{base}[shaping]\ndepth = \"10B\"\nflows = [{{ src = \"10.0.0.1\", dst = \"10.0.0.2\", proto = \"udp\", \
         src_port = 0, dst_port = 9000, rate = \"0bps\" }}]\n"
    ));
    for f in ["shaping.depth:", "shaping.flows.0:", "shaping.flows.0.rate:"] {
        assert!(m.contains(f), "{f} missing in {m}");
    }
    let m = msgs(format!("{base}[shaping]\nflows = [{{ src = \"host1\" }}]\n"));
    assert!(m.contains("shaping.flows"), "{m}");
}
