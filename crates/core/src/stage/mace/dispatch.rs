//! MACE packet scheduler, device side: when the driver may hand the
//! network device the next packet ([MACE98 §3] "Packet Scheduler" and §3.1
//! "Caveat Implementor", second caveat).
//!
//! Between the MACE queue and the wire sits the device's own transmit
//! queue. The paper's first version dispatched BE "as long as the CL queue
//! was empty", so BE packets piled up in the device queue and "CL packets
//! on a busy router receive no better service". The revised version
//! dispatches BE "only when the interface queue is empty", which "ensures
//! that in the worst case, a CL packet is delayed by at most one BE packet,
//! in addition to CL packets ahead of itself".
//!
//! [`DeviceQueue`] models that transmit queue by its occupancy only (the
//! driver holds the packets):
//!
//! ```text
//! held = packets handed to the device and not yet sent, the one on the wire included
//! admits(head class c):  held < size  and  (c = CL  or  BE rule allows)
//!     BE rule WhenRoom: always (the paper's first version)
//!     BE rule WhenIdle: held = 0 (the paper's revised version)
//! on_pull(c): held += 1          on_sent(c): held -= 1
//! ```
//!
//! With `size = 1` both rules coincide and give the paper's bound: a CL
//! packet waits behind at most the one BE packet already on the wire.
//! With a larger size, `WhenRoom` lets up to `size` BE packets sit ahead of
//! a CL arrival: the paper's failed first version (shown by the tests).
//! `WhenIdle` keeps the bound at any size, and is the default: the rule
//! the paper's router ran; `WhenRoom` is kept to show why it was abandoned.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `size` | packets, the one being sent included | ≥ 1 | 1 |
//! | `be` | rule | `WhenRoom`, `WhenIdle` | `WhenIdle` |
//!
//! This is a property of the link, not of the queue discipline: the
//! simulator's link (or the router's driver) asks [`DeviceQueue::admits`]
//! with the class of the MACE queue's head before each dequeue.

use super::Class;
use crate::error::ConfigError;

/// When a BE packet may go to the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BeDispatch {
    /// Whenever the device queue has room (the paper's first version, abandoned).
    WhenRoom,
    /// Only when the device queue is empty (the paper's revised version, the one it ran).
    #[default]
    WhenIdle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceQueueConfig {
    pub size: u32,
    pub be: BeDispatch,
}

impl Default for DeviceQueueConfig {
    fn default() -> Self {
        DeviceQueueConfig { size: 1, be: BeDispatch::default() }
    }
}

impl DeviceQueueConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.size == 0 {
            return Err(ConfigError::new(
                "mace_device_queue",
                "size",
                "(0 packets) must be at least 1 packet (the one being sent)",
            ));
        }
        Ok(())
    }
}

/// The device transmit queue's occupancy and dispatch rule.
#[derive(Clone, Debug)]
pub struct DeviceQueue {
    config: DeviceQueueConfig,
    held: [u32; 2],
}

fn ix(c: Class) -> usize {
    match c {
        Class::Cl => 0,
        Class::Be => 1,
    }
}

impl DeviceQueue {
    pub fn new(config: DeviceQueueConfig) -> Result<DeviceQueue, ConfigError> {
        config.validate()?;
        Ok(DeviceQueue { config, held: [0, 0] })
    }
    pub fn config(&self) -> &DeviceQueueConfig {
        &self.config
    }
    /// Packets in the device, the one being sent included.
    pub fn held(&self) -> u32 {
        self.held[0] + self.held[1]
    }
    pub fn held_of(&self, c: Class) -> u32 {
        self.held[ix(c)]
    }
    pub fn is_idle(&self) -> bool {
        self.held() == 0
    }
    /// May the driver move a packet of class `head` (the MACE queue's
    /// head) into the device now?
    #[inline]
    pub fn admits(&self, head: Class) -> bool {
        let room = self.held() < self.config.size;
        match head {
            Class::Cl => room,
            Class::Be => match self.config.be {
                BeDispatch::WhenRoom => room,
                BeDispatch::WhenIdle => self.is_idle(),
            },
        }
    }
    /// The driver moved a packet of class `c` into the device.
    pub fn on_pull(&mut self, c: Class) {
        self.held[ix(c)] += 1;
    }
    /// The device finished sending a packet of class `c`. Returns false,
    /// changing nothing, if the device held none of that class (a driver
    /// bug worth reporting, not a reason to panic).
    pub fn on_sent(&mut self, c: Class) -> bool {
        match self.held[ix(c)].checked_sub(1) {
            Some(n) => {
                self.held[ix(c)] = n;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, Packet};
    use crate::qdisc::mace::{MaceQueue, MaceQueueConfig};
    use crate::qdisc::{Dequeue, Queue};
    use crate::units::Time;
    use std::collections::VecDeque;

    /// A saturated link in unit time steps. At each integer step the packet
    /// on the wire finishes, the driver fills the device as the rule
    /// allows, and an idle wire starts the device's head. In mid-step two BE
    /// packets arrive (the MACE queue stays full of BE) and, every 7 steps,
    /// one CL packet; the driver then fills again. Returns the most BE
    /// packets any CL packet waited behind, the one on the wire at its
    /// arrival included.
    fn worst_be_ahead_of_cl(config: DeviceQueueConfig) -> u32 {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = Queue::new(Box::new(MaceQueue::new(MaceQueueConfig::default()).unwrap()));
        let mut dev = DeviceQueue::new(config).unwrap();
        let mut waiting: VecDeque<(u64, Class)> = VecDeque::new(); // in the device, not yet on the wire
        let mut wire: Option<(u64, Class)> = None;
        let mut started: Vec<(u64, Class, u64)> = Vec::new(); // (id, class, step it went on the wire)
        let mut cl_arrivals: Vec<(u64, u64)> = Vec::new(); // (id, step)
        let mut id = 0u64;
        let fill = |q: &mut Queue, dev: &mut DeviceQueue, waiting: &mut VecDeque<(u64, Class)>| {
            while let Some(head) = q.peek().map(|p| Class::of_tag(p.class)) {
                if !dev.admits(head) {
                    break;
                }
                let Dequeue::Packet(p) = q.dequeue(Time(0)) else { unreachable!("peeked a packet") };
                dev.on_pull(head);
                waiting.push_back((p.id, head));
            }
        };
        for step in 0..400u64 {
            if let Some((_, c)) = wire.take() {
                assert!(dev.on_sent(c));
            }
            fill(&mut q, &mut dev, &mut waiting);
            if let Some((pid, c)) = waiting.pop_front() {
                wire = Some((pid, c));
                started.push((pid, c, step));
            }
            let mut arrive = |c: Class| {
                id += 1;
                let mut p = Packet::new(id, FlowId(0), 100, Time(step));
                p.class = c.tag();
                q.enqueue(Time(step), p, &mut rng);
                id
            };
            arrive(Class::Be);
            arrive(Class::Be);
            if step % 7 == 3 {
                let cl = arrive(Class::Cl);
                cl_arrivals.push((cl, step));
            }
            fill(&mut q, &mut dev, &mut waiting);
            assert_eq!(dev.held() as usize, waiting.len() + wire.is_some() as usize);
        }
        let mut worst = 0;
        for (cl, t_arr) in cl_arrivals {
            let Some(&(_, _, t_cl)) = started.iter().find(|(i, _, _)| *i == cl) else { continue };
            let be_ahead = started.iter().filter(|(_, c, s)| *c == Class::Be && *s >= t_arr && *s < t_cl).count();
            worst = worst.max(be_ahead as u32);
        }
        worst
    }

    #[test]
    fn device_queue_of_one_bounds_cl_wait_to_one_be_packet() {
        assert_eq!(worst_be_ahead_of_cl(DeviceQueueConfig { size: 1, be: BeDispatch::WhenRoom }), 1);
    }

    #[test]
    fn device_queue_larger_than_one_lets_be_pile_up_ahead_of_cl() {
        // The paper's first version: CL waits behind a device queue full of BE.
        assert_eq!(worst_be_ahead_of_cl(DeviceQueueConfig { size: 4, be: BeDispatch::WhenRoom }), 4);
        // With 50 slots a CL packet spends about 50 steps in the device, so up
        // to 7 earlier CL packets (one per 7 steps) share it: 43..=50 BE ahead.
        let w = worst_be_ahead_of_cl(DeviceQueueConfig { size: 50, be: BeDispatch::WhenRoom });
        assert!((43..=50).contains(&w), "{w} BE packets ahead");
    }

    #[test]
    fn device_queue_be_only_when_idle_keeps_the_bound_at_any_size() {
        assert_eq!(worst_be_ahead_of_cl(DeviceQueueConfig { size: 50, be: BeDispatch::WhenIdle }), 1);
    }

    #[test]
    fn device_queue_default_is_the_papers_final_rule_be_only_when_idle() {
        // [MACE98 §3.1]: the first version (BE whenever the device has room) was
        // abandoned; the router the paper measured dispatched BE only to an idle device.
        let d = DeviceQueueConfig::default();
        assert_eq!(d.be, BeDispatch::WhenIdle);
        assert_eq!(worst_be_ahead_of_cl(DeviceQueueConfig { size: 50, ..d }), 1);
    }

    #[test]
    fn device_queue_admits_cl_while_room_and_counts_by_class() {
        let mut d = DeviceQueue::new(DeviceQueueConfig { size: 2, be: BeDispatch::WhenIdle }).unwrap();
        assert!(d.admits(Class::Be));
        d.on_pull(Class::Be);
        assert!(!d.admits(Class::Be), "BE waits for an idle device");
        assert!(d.admits(Class::Cl));
        d.on_pull(Class::Cl);
        assert!(!d.admits(Class::Cl), "full");
        assert_eq!((d.held_of(Class::Cl), d.held_of(Class::Be)), (1, 1));
        assert!(d.on_sent(Class::Be));
        assert!(!d.on_sent(Class::Be), "nothing of that class held: reported, not a panic");
        assert_eq!(d.held(), 1);
        assert!(DeviceQueue::new(DeviceQueueConfig { size: 0, be: BeDispatch::WhenRoom }).is_err());
    }
}
