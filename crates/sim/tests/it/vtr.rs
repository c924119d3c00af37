//! VTR traffic [Zhang07 §2.3.3] in the simulator: frames cut into 1500 B
//! packets 1 ms apart, a frame every frame interval, the trace's mean rate,
//! and bad traces refused at their file's line.

use crate::common::*;
use pcap_file::pcapng::{Block, PcapNgReader};
use qoslab_scenario::load::load_str;

fn fat(traffic: &str, duration: &str, extra: &str) -> String {
    let topo = explicit(
        &[("src0", "host"), ("r0", "router"), ("sink0", "host")],
        &[("src0", "r0", "1Gbps", "1ms"), ("r0", "sink0", "1Gbps", "1ms")],
    );
    format!("name = \"t\"\nduration = \"{duration}\"\n{topo}\n{extra}\n{traffic}")
}

/// A trace file in the temporary folder (unique per test).
fn trace_file(name: &str, text: &str) -> String {
    let file = format!("qoslab_vtr_{}_{name}.txt", std::process::id());
    std::fs::write(std::env::temp_dir().join(&file), text).unwrap();
    file
}

#[test]
fn a_vtr_flow_sends_each_frame_as_1500_byte_packets_1ms_apart() {
    // Frames of 4000, 0, 1500 and 100 B, 40 ms apart; one flow from a random frame.
    let file = trace_file("frames", "# t\n0 4000\n0.04 0\n0.08 1500\n0.12 100\n");
    let traffic = format!(
        "[[traffic]]\nname = \"v\"\nmodel = \"vtr\"\ntrace = \"{file}\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"1500B\"\n"
    );
    let sc =
        load_str(&fat(&traffic, "2s", "[trace]\npcap = [\"r0->sink0\"]"), "t.toml", &[], Some(&std::env::temp_dir()))
            .unwrap();
    let out = run(&sc, 3);
    let bytes = out.traces[0].to_bytes().unwrap();
    let mut reader = PcapNgReader::new(&bytes[..]).unwrap();
    let mut pkts: Vec<(u64, u32)> = Vec::new();
    while let Some(block) = reader.next_block() {
        if let Block::EnhancedPacket(p) = block.unwrap() {
            // Stamped at the end of the transmission: 8 ns a byte at 1 Gb/s.
            let len = p.original_len - 14;
            pkts.push((p.timestamp.as_nanos() as u64 - 8 * len as u64, len));
        }
    }
    // Whatever the start frame, the trace repeats every 160 ms: 4000 B as
    // 1500 + 1500 + 1000 at +0, +1, +2 ms of its frame, 1500 B alone, 100 B alone.
    let first_big =
        pkts.iter().position(|p| p.1 == 1500 && pkts.iter().any(|q| q.0 == p.0 + 2_000_000 && q.1 == 1000)).unwrap();
    let t0 = pkts[first_big].0;
    let cycle: Vec<(u64, u32)> =
        pkts.iter().filter(|p| p.0 >= t0 && p.0 < t0 + 160_000_000).map(|p| (p.0 - t0, p.1)).collect();
    let ms = 1_000_000;
    assert_eq!(cycle, vec![(0, 1500), (ms, 1500), (2 * ms, 1000), (80 * ms, 1500), (120 * ms, 100)]);
    // 5600 B every 160 ms: 280 kb/s, what the flow asked admission for.
    let kinds = strs(&out.events, "kind");
    let admit = kinds.iter().position(|k| k == "admit").unwrap();
    assert!((f64s(&out.events, "estimate")[admit] - 280_000.0).abs() < 1e-6);
    std::fs::remove_file(std::env::temp_dir().join(&file)).unwrap();
}

#[test]
fn vtr_flows_of_the_synthetic_trace_average_769_kbps() {
    // 20 flows at random places in the trace for 300 s: 6000 flow-seconds,
    // 1200 scenes of mean 5 s with activity CV 0.5 plus frame noise: the
    // mean's standard error is about 1.5 %; 5 % is more than 3 of them.
    let traffic = "[[traffic]]\nname = \"v\"\nmodel = \"vtr\"\ntrace = { synthetic = { seed = 1 } }\nflows = 20\n\
                   src = \"src0\"\ndst = \"sink0\"\nsize = \"1500B\"\n";
    let sc = load_str(&fat(traffic, "300s", ""), "t.toml", &[], None).unwrap();
    let out = run(&sc, 1);
    let bytes: u64 = u64s(&out.flows, "sent_bytes").iter().sum();
    let rate = bytes as f64 * 8.0 / 300.0 / 20.0;
    assert!((rate / 769_000.0 - 1.0).abs() < 0.05, "{rate}");
    // Every packet is at most 1500 B, and most are full.
    let pkts: u64 = u64s(&out.flows, "sent_pkts").iter().sum();
    assert!(bytes <= pkts * 1500 && bytes as f64 > 0.6 * pkts as f64 * 1500.0, "{bytes} in {pkts}");
    // Determinism: the same seed gives the same packets; another seed other starts.
    assert_eq!(u64s(&run(&sc, 1).flows, "sent_bytes"), u64s(&out.flows, "sent_bytes"));
    assert_ne!(u64s(&run(&sc, 2).flows, "sent_bytes"), u64s(&out.flows, "sent_bytes"));
}

#[test]
fn a_bad_trace_row_is_refused_at_its_file_and_line() {
    let file = trace_file("bad", "0 1000\n0.04 12x\n");
    let traffic = format!(
        "[[traffic]]\nname = \"v\"\nmodel = \"vtr\"\ntrace = \"{file}\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"1500B\"\n"
    );
    let ds = refused(&fat(&traffic, "2s", ""));
    let msg = ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    assert!(msg.contains(&format!("{file}:2: traffic.0.trace: size_bytes \"12x\" is not a whole number")), "{msg}");
    let missing = traffic.replace(&file, "no_such_trace.txt");
    let msg = refused(&fat(&missing, "2s", "")).iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    assert!(msg.contains("traffic.0.trace: no file \"no_such_trace.txt\""), "{msg}");
    let random = "[[traffic]]\nname = \"v\"\nmodel = \"vtr\"\ntrace = { synthetic = { frames = 1 } }\nsrc = \"src0\"\n\
                  dst = \"sink0\"\nsize = { base = \"100B\", exp_mean = \"100B\" }\n";
    let msg = refused(&fat(random, "2s", "")).iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    assert!(msg.contains("traffic.0.trace.synthetic.frames: 1 frames; allowed: 2 to"), "{msg}");
    assert!(msg.contains("traffic.0.size: is random; allowed: a fixed packet size for vtr"), "{msg}");
    std::fs::remove_file(std::env::temp_dir().join(&file)).unwrap();
}
