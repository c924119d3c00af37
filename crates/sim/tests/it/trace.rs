//! pcapng traces of link directions, read back with the pcap-file reader:
//! one record per packet put on the wire plus one per drop (with its
//! reason as a comment), nanosecond timestamps, headers parsed by etherparse.

use crate::common::*;
use pcap_file::pcapng::{Block, PcapNgReader};
use qoslab_scenario::load::load_str;

fn scenario(extra: &str) -> String {
    format!(
        r#"name = "traced"
duration = "2s"
[topology]
preset = "dumbbell"
sources = 2
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "2Mbps", delay = "10ms", queue = {{ type = "red", limit = "30pkts", min_th = 5, max_th = 15 }} }}
[[traffic]]
name = "cbr"
model = "cbr"
rate = "1.5Mbps"
flows = 2
src = "src*"
dst = "sink*"
size = "500B"
{extra}
"#
    )
}

#[test]
fn trace_holds_every_transmission_and_every_drop_of_the_direction() {
    let sc = load_str(&scenario("[trace]\npcap = [\"r0->sink0\"]"), "t.toml", &[], None).unwrap();
    let out = run(&sc, 1);
    assert_eq!(out.traces.len(), 1);
    let (name, bytes) = &out.traces[0];
    assert_eq!(name, "r0->sink0");
    let q = queue_row(&out, "r0->sink0");
    let departures = u64s(&out.queues, "departures")[q];
    let drops = u64s(&out.queues, "drops")[q];
    assert!(drops > 0, "3 Mb/s into 2 Mb/s drops");
    let mut reader = PcapNgReader::new(&bytes[..]).unwrap();
    let (mut sent, mut dropped, mut last) = (0u64, 0u64, std::time::Duration::ZERO);
    while let Some(block) = reader.next_block() {
        if let Block::EnhancedPacket(p) = block.unwrap() {
            assert!(p.timestamp >= last, "records in time order");
            last = p.timestamp;
            assert_eq!(p.original_len, 500 + 14);
            let parsed = etherparse::LaxSlicedPacket::from_ethernet(&p.data).unwrap(); // headers only: a truncated capture
            assert!(matches!(parsed.transport, Some(etherparse::TransportSlice::Udp(_))));
            if p.options.is_empty() {
                sent += 1;
            } else {
                dropped += 1;
            }
        }
    }
    assert_eq!((sent, dropped), (departures, drops));
    assert!(last.as_nanos() > 1_900_000_000 && last.as_nanos() <= 2_000_000_000, "{last:?}");
}

#[test]
fn an_untraced_run_has_no_trace_and_a_bad_direction_is_named() {
    let sc = load_str(&scenario(""), "t.toml", &[], None).unwrap();
    assert!(run(&sc, 1).traces.is_empty());
    let e = load_str(&scenario("[trace]\npcap = [\"r0->nowhere\"]"), "t.toml", &[], None).unwrap_err().to_string();
    assert!(e.contains("trace.pcap.0") && e.contains("r0->sink0"), "{e}");
}
