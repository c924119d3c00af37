//! TCP and MM_APP end to end through scenarios: greedy Reno fills a
//! bottleneck, finite transfers complete, ACKs are real packets counted
//! apart from data, and the reverse path carries them.

use crate::common::*;

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
