//! Frames in and out of a [`Datapath`] on a virtual clock, for the unit tests of the PCN domain
//! ([`crate::edge`]) and the entry ([`crate::entry`]): a UDP frame from 10.0.0.1 to 10.0.0.2,
//! offering a frame on side a, polling, and the edge messages among what left.

use crate::datapath::{Arrival, Datapath};
use crate::edge::wire::{self, Msg};
use etherparse::PacketBuilder;
use qoslab_core::units::Time;

/// A UDP frame from 10.0.0.1:`src_port` to 10.0.0.2:`dst_port` carrying `payload`.
pub fn udp(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(src_port, dst_port);
    let mut out = Vec::new();
    b.write(&mut out, payload).unwrap();
    out
}

/// `frame` read on side a at `now`.
pub fn offer(dp: &mut Datapath, now: Time, frame: &[u8]) -> Arrival {
    let slot = dp.pool.alloc().expect("pool slot");
    dp.pool.slot_mut(slot)[..frame.len()].copy_from_slice(frame);
    dp.receive(now, 0, slot, frame.len())
}

/// Polls at `now`; the frames sent, as (side, frame).
pub fn poll(dp: &mut Datapath, now: Time) -> Vec<(usize, Vec<u8>)> {
    let mut sent = Vec::new();
    dp.poll(now, &mut |side, pool, slots, ok| {
        for (s, o) in slots.iter().zip(ok.iter_mut()) {
            sent.push((side, pool.frame(*s).to_vec()));
            *o = true;
        }
    });
    sent
}

/// The edge messages among `sent` (side a only), decoded, with their destination port.
pub fn replies(sent: &[(usize, Vec<u8>)]) -> Vec<(u16, Msg)> {
    sent.iter()
        .filter(|(side, _)| *side == 0)
        .filter_map(|(_, f)| {
            let (ends, payload) = wire::udp4(f)?;
            Some((ends.dst_port, wire::decode(payload).ok()?))
        })
        .collect()
}
