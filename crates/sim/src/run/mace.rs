//! The packet path of a MACE link direction (see [`crate::mace_link`]):
//! classification on entry, the device transmit queue between the MACE
//! queue and the wire, MACE's periodic work, and its events. Part of
//! [`super::Sim`].
//!
//! A MACE direction always has a `TxDone` event at the end of each
//! transmission (the device must learn that its packet left), so the
//! idle-owed shortcut of other links never applies to it.

use super::Sim;
use crate::engine::{DirId, Event};
use crate::mace_link::event_row;
use qoslab_core::mace::Class;
use qoslab_core::qdisc::Dequeue;
use qoslab_core::units::Time;
use qoslab_core::Packet;

impl Sim {
    /// Classifies a packet entering MACE direction `d` and records the decision it caused.
    pub(super) fn mace_classify(&mut self, d: DirId, pkt: &mut Packet) {
        let now = self.now;
        let key = *self.table.key(pkt.flow);
        let dir = &mut self.net.dirs[d.index()];
        let Some(m) = dir.mace.as_mut() else { return };
        let (class, ev) = m.classify(now, &key, pkt.flow, pkt.size);
        pkt.class = class.tag();
        if let Some(ev) = ev {
            self.metrics.events.push(event_row(&dir.name, m, &ev));
        }
    }

    /// MACE's periodic work at direction `d`, if due.
    pub(super) fn mace_tick(&mut self, d: DirId) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        let Some(m) = dir.mace.as_mut() else { return };
        if m.next_deadline() > now {
            return;
        }
        for ev in m.on_tick(now) {
            self.metrics.events.push(event_row(&dir.name, m, &ev));
        }
    }

    /// Fills the device transmit queue of `d` from the MACE queue as its
    /// rule allows, and puts the device's head on the wire if it is free.
    pub(super) fn mace_pull(&mut self, d: DirId) {
        let now = self.now;
        let dir = &mut self.net.dirs[d.index()];
        let Some(m) = dir.mace.as_mut() else { return };
        while let Some(head) = dir.queue.peek() {
            if !m.device.admits(Class::of_tag(head.class)) {
                break;
            }
            match dir.queue.dequeue(now) {
                Dequeue::Packet(p) => {
                    m.device.on_pull(Class::of_tag(p.class));
                    m.device_fifo.push_back(p);
                }
                Dequeue::Empty | Dequeue::NotBefore(_) => break,
            }
        }
        if dir.tx_event || dir.busy_until > now {
            return;
        }
        let Some(pkt) = m.device_fifo.pop_front() else { return };
        m.on_wire = Some(Class::of_tag(pkt.class));
        let seq = self.events.reserve_seq();
        let done = dir.start_tx(now, &pkt);
        let at = Time(done.0.saturating_add(dir.delay.0));
        if dir.pipe.is_empty() {
            self.events.schedule_with_seq(at, seq, Event::Arrive(d));
        }
        dir.pipe.push_back(crate::net::InFlight { at, seq, pkt });
        dir.tx_event = true;
        self.events.schedule(done, Event::TxDone(d));
    }
}
