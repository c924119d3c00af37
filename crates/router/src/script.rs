//! A datapath driven by bytes: sequences of frames (IP, non-IP, malformed,
//! oversize, fragments, of any size, on either side), time steps, polls
//! with the kernel refusing some frames, and reloads between a handful of
//! configurations, with every frame accounted for after every step. The
//! `datapath` fuzz target runs it on afl's inputs; the unit test below on
//! seeded random ones.
//!
//! ```text
//! byte 0:            the starting configuration (one of [`configs`])
//! then per op (first byte % 8):
//!   0-2  a frame      side, kind (UDPv4/TCPv6/ARP/other EtherType/bad length/first fragment/
//!                     later fragment/runt), size, ports from the next bytes
//!   3    a burst      up to 64 copies of one frame
//!   4    time         advance 0..65535 µs, then poll
//!   5    poll         at the same instant
//!   6    reload       to another configuration (refused or applied: both are fine)
//!   7    the kernel   refuses every n-th frame sent from now on (0: none)
//! at the end:        time runs on (at most 10 s) until every frame has left
//! after every op:    per direction, rx = tx + tx_errors + Σ drops − drops[kernel] + in flight;
//!                    slots in use = frames in flight
//! ```

use crate::config::{load_str, ValidConfig};
use crate::datapath::Datapath;
use crate::pool::SLOT;
use etherparse::PacketBuilder;
use qoslab_core::qdisc::DropReason;
use qoslab_core::units::{Dur, Time};
use std::path::Path;
use std::sync::OnceLock;

/// The configurations a script starts with and reloads to: small pools
/// (the delay line's share and exhaustion), bursts around a full frame
/// (a reload below a queued frame), a delay, MACE with SSAC, RED with ECN,
/// CBT, the edge queue with its classifier, a policer, a field a reload
/// must refuse (`pool`), and a PCN domain whose requests go to port 9
/// (frame kind 0 with bit 3 set carries a valid flow request).
const CONFIGS: [&str; 9] = [
    "pool = 64\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\nqueue = { type = \"fifo\", limit = \"20pkts\" }\n",
    "pool = 64\nburst = \"1522B\"\n[link]\nrate = \"2Mbps\"\ndelay = \"0s\"\n\
     queue = { type = \"red\", limit = \"30pkts\", min_th = 3, max_th = 9, ecn = true }\n",
    "pool = 64\nburst = \"4000B\"\ncatch_up = \"0s\"\n[link]\nrate = \"500kbps\"\ndelay = \"3ms\"\n",
    "pool = 64\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\nqueue = { type = \"mace\", buffer = \"20pkts\" }\n\
     [link.mace]\nallocation = \"100kbps\"\nadmission = { type = \"ssac\" }\n[[link.mace.ports]]\nport = 5004\n\
     side = \"dst\"\nrate = \"64kbps\"\ndepth = \"1500B\"\nthreshold = 2\n",
    "pool = 64\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\n\
     queue = { type = \"cbt\", limit = \"30pkts\", min_th = 3, max_th = 9 }\n",
    "pool = 64\n[link]\nrate = \"1Mbps\"\ndelay = \"1ms\"\nqueue = { type = \"edge\", buffers = 20, \
     buff_size = \"2048B\", streams = [{ name = \"A1\", service = \"af\", rate = \"300kbps\" }, \
     { name = \"B1\", service = \"be\" }] }\nstages = [{ type = \"classifier\", cache = 4, default_stream = \"B1\", \
     rules = [{ dst_port = 5004, proto = \"udp\", stream = \"A1\" }] }]\n",
    "pool = 64\nburst = \"2000B\"\n[link]\nrate = \"3Mbps\"\ndelay = \"0s\"\n\
     stages = [{ type = \"policer\", rate = \"1Mbps\", depth = \"3000B\" }]\n",
    "pool = 32\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\n",
    "pool = 64\npcn_dscps = [0]\nedge_port = 9\nedge_flows = 4\n[link]\nrate = \"1Mbps\"\ndelay = \"2ms\"\n\
     stages = [{ type = \"pcn_admission\", admissible_rate = \"200kbps\" }, \
     { type = \"pcn_termination\", termination_rate = \"200kbps\", packet_size = \"200B\" }]\n\
     [pcn]\nedges = [\"a\", \"b\"]\ntermination_interval = \"5ms\"\n",
];

/// The configurations, parsed once.
pub fn configs() -> &'static [ValidConfig] {
    static C: OnceLock<Vec<ValidConfig>> = OnceLock::new();
    C.get_or_init(|| {
        CONFIGS
            .iter()
            .map(|c| {
                let text = format!("[router]\na = \"x0\"\nb = \"x1\"\nflows = 8\n{c}");
                load_str(&text, "script.toml", Path::new(".")).unwrap_or_else(|e| panic!("{c}: {e:?}"))
            })
            .collect()
    })
}

/// Reads the script's bytes one at a time (zero once they run out).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }
}

/// A frame of kind `k` (see the module doc), about `size` bytes, with ports `sp`, `dp`.
fn frame(k: u8, size: usize, sp: u16, dp: u16) -> Vec<u8> {
    let pad = |n: usize| vec![0u8; n];
    let mut f = Vec::new();
    match k % 8 {
        0 | 5 | 6 => {
            let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
                .udp(sp, dp);
            let request = crate::edge::wire::Msg {
                port: 5004,
                ..crate::edge::wire::Msg::new(crate::edge::wire::Kind::FlowRequest, sp as u32, 64_000.0)
            };
            if k.is_multiple_of(8) && k & 8 != 0 {
                let _ = b.write(&mut f, &crate::edge::wire::encode(&request));
            } else {
                let _ = b.write(&mut f, &pad(size.saturating_sub(42)));
            }
            if k % 8 == 5 {
                f[20] = 0x20; // first fragment: more fragments, offset 0
            } else if k % 8 == 6 {
                f[20..22].copy_from_slice(&[0x00, 0x20]); // a later fragment
            }
        }
        1 => {
            let b = PacketBuilder::ethernet2([2; 6], [3; 6]).ipv6([1; 16], [2; 16], 64).tcp(sp, dp, 1, 1000);
            let _ = b.write(&mut f, &pad(size.saturating_sub(74)));
        }
        2 | 3 => {
            f = vec![0xff; 12];
            f.extend_from_slice(if k % 8 == 2 { &[0x08, 0x06] } else { &[0x88, 0xb5] });
            f.extend_from_slice(&pad(size.saturating_sub(14).max(28)));
        }
        4 => {
            f = frame(0, size, sp, dp);
            f[16..18].copy_from_slice(&u16::MAX.to_be_bytes()); // total length beyond the frame
        }
        _ => f = vec![0xab; size % 14], // a runt
    }
    f
}

/// Per direction: rx = tx + tx_errors + Σ drops − drops[kernel] + in flight; and the pool.
pub fn check_conservation(dp: &Datapath) {
    let mut in_flight = 0;
    for d in 0..2 {
        let c = &dp.dirs[d].counters;
        let drops = dp.drops(d);
        let dropped: u64 = drops.iter().sum::<u64>() - drops[DropReason::Kernel as usize];
        let held = dp.in_flight(d);
        in_flight += held;
        assert_eq!(
            c.rx_pkts,
            c.tx_pkts + c.tx_errors + c.edge_consumed + c.link_lost + dropped + held,
            "direction {d}: rx {} != tx {} + refused {} + consumed {} + lost {} + dropped {dropped} ({drops:?}) + in flight {held}",
            c.rx_pkts,
            c.tx_pkts,
            c.tx_errors,
            c.edge_consumed,
            c.link_lost
        );
    }
    assert_eq!(dp.pool.in_use() as u64, in_flight, "pool slots in use != frames in flight");
}

/// Runs the script in `data` (see the module doc); panics if a frame is
/// lost to the counts, a slot leaks, or anything in the datapath panics.
pub fn run(data: &[u8]) {
    run_to_end(data);
}

/// [`run`], returning the datapath at the end (tests read its counters).
pub fn run_to_end(data: &[u8]) -> Datapath {
    let mut b = Bytes(data);
    let cfgs = configs();
    let mut now = Time::ZERO;
    let mut dp = Datapath::new(cfgs[b.u8() as usize % cfgs.len()].clone(), now).expect("checked configs build");
    let mut refuse_every = 0u64;
    let mut sent = 0u64;
    let mut poll = |dp: &mut Datapath, now: Time, refuse_every: u64| {
        dp.poll(now, &mut |_, _, slots, ok| {
            for o in ok.iter_mut().take(slots.len()) {
                sent += 1;
                *o = refuse_every == 0 || !sent.is_multiple_of(refuse_every);
            }
        })
    };
    let offer = |dp: &mut Datapath, now: Time, side: usize, f: &[u8], len: usize| {
        let Some(slot) = dp.pool.alloc() else { return };
        let n = f.len().min(SLOT);
        dp.pool.slot_mut(slot)[..n].copy_from_slice(&f[..n]);
        dp.receive(now, side, slot, len);
    };
    let mut ops = 0;
    while !b.0.is_empty() && ops < 4096 {
        ops += 1;
        let op = b.u8();
        match op % 8 {
            0..=3 => {
                let (side, kind) = ((op >> 3) as usize & 1, b.u8());
                let size = 14 + b.u16() as usize % 2100; // up to past a slot
                let f = frame(kind, size, b.u16(), if b.u8() & 1 == 0 { 5004 } else { 9 });
                // Kind 7 again: a frame the socket reports longer than it could hold.
                let len = if kind >> 4 == 0xf { SLOT + 1 + size } else { f.len() };
                let copies = if op % 8 == 3 { 1 + b.u8() as usize % 64 } else { 1 };
                for _ in 0..copies {
                    offer(&mut dp, now, side, &f, len);
                }
            }
            4 => {
                now += Dur::from_us(b.u16() as u64);
                poll(&mut dp, now, refuse_every);
            }
            5 => {
                poll(&mut dp, now, refuse_every);
            }
            6 => {
                let v = cfgs[b.u8() as usize % cfgs.len()].clone();
                let _ = dp.reconfigure(v, now);
            }
            _ => refuse_every = b.u8() as u64 % 8,
        }
        check_conservation(&dp);
    }
    // Time runs on, from one wake-up the datapath asks for to the next, until everything has
    // left (a refused send frees its slot too); at most 10 s.
    let end = now + Dur::from_secs(10);
    while !dp.is_idle() && now < end {
        let wake = poll(&mut dp, now, refuse_every);
        check_conservation(&dp);
        now = wake.filter(|w| *w > now).unwrap_or(now + Dur::from_ms(1)).min(end);
    }
    assert!(dp.is_idle(), "frames still held after 10 s: {} in flight", dp.in_flight(0) + dp.in_flight(1));
    assert_eq!(dp.pool.in_use(), 0);
    dp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_configs_all_load() {
        assert_eq!(configs().len(), CONFIGS.len());
    }

    #[test]
    fn script_reload_below_a_queued_frame_is_refused_not_a_crash() {
        // Config 2 (burst 4000 B, 500 kb/s): two 2000-byte frames leave at once, a third waits;
        // a reload to config 1 (burst 1522 B) must be refused while it is held, and all of it leave.
        let mut s = vec![2u8];
        for _ in 0..3 {
            s.extend_from_slice(&[0, 0, 0x07, 0xc2, 0, 1, 0]); // UDPv4 of 14 + 1986 = 2000 B to port 5004
        }
        s.extend_from_slice(&[4, 0, 10]); // 10 µs, poll
        s.extend_from_slice(&[6, 1]); // reload to config 1
        s.extend_from_slice(&[4, 0xff, 0xff]);
        run(&s);
    }

    #[test]
    fn script_pcn_requests_admit_and_data_is_metered_with_every_frame_conserved() {
        let mut s = vec![8u8]; // config 8: the PCN domain
        s.extend_from_slice(&[0, 0x08, 0, 60, 0, 1, 1]); // a flow request from port 1 to port 9
        for _ in 0..3 {
            s.extend_from_slice(&[4, 0x0b, 0xb8]); // 3 ms, poll: the answer after the 2 x 2 ms round trip
        }
        for _ in 0..20 {
            s.extend_from_slice(&[3, 0, 0, 200, 0, 1, 0, 20]); // 21 data frames of flow 1 to port 5004
            s.extend_from_slice(&[4, 0x0b, 0xb8]);
        }
        let dp = run_to_end(&s);
        let st = &dp.domain.as_ref().expect("config 8 has [pcn]").stats;
        assert_eq!((st.requests, st.admitted, st.replies_sent), (1, 1, 1 + st.terminated));
        assert!(dp.dirs[0].counters.tx_pkts > 0);
        assert!(dp.marks(0).iter().sum::<u64>() > 0, "200 kb/s meters mark 1.1 Mb/s of PCN traffic");
    }

    #[test]
    fn script_random_sequences_conserve_every_frame() {
        // 300 seeded scripts of 2,000 random bytes (the fuzz target runs millions).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            let bytes: Vec<u8> = (0..2000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 24) as u8
                })
                .collect();
            run(&bytes);
        }
    }
}
