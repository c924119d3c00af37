//! [`ClassProbed`]: a [`ClassQueue`] whose probes also report its per-class
//! counters ([Claypool00] §3's three classes), so they reach the
//! simulator's `series` table like `red_avg`.
//!
//! Probe names: `<class>_arrivals`, `<class>_admitted` and
//! `<class>_drops_<reason>` for the reasons an arrival stage gives
//! (`overlimit`, `early_random`, `forced`, `class_threshold`), `<class>` one
//! of `tcp`, `tagged`, `untagged`; all cumulative since the queue was built.
//! Everything else is the [`ClassQueue`]'s own, verdict for verdict.
//!
//! The scenario registry puts every CBT, D-CBT and ChIPS queue in one
//! (`qoslab_scenario::registry::queue`); a [`ClassQueue`] on its own keeps
//! its probes to the ones its parts give (see the module doc of
//! [`crate::qdisc::cbt`]).

use super::aqm::Aqm;
use super::classes::{Class, PerClass};
use super::queue::{ClassCounters, ClassQueue, Placement};
use crate::packet::Packet;
use crate::qdisc::{Backlog, Dequeue, DropReason, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::Time;

/// Drop reasons an arrival stage of a [`ClassQueue`] can give, and the
/// per-class probe names of their counters.
const CLASS_REASONS: [DropReason; 4] =
    [DropReason::Overlimit, DropReason::EarlyRandom, DropReason::Forced, DropReason::ClassThreshold];
const CLASS_PROBES: [[&str; 6]; 3] = [
    [
        "tcp_arrivals",
        "tcp_admitted",
        "tcp_drops_overlimit",
        "tcp_drops_early_random",
        "tcp_drops_forced",
        "tcp_drops_class_threshold",
    ],
    [
        "tagged_arrivals",
        "tagged_admitted",
        "tagged_drops_overlimit",
        "tagged_drops_early_random",
        "tagged_drops_forced",
        "tagged_drops_class_threshold",
    ],
    [
        "untagged_arrivals",
        "untagged_admitted",
        "untagged_drops_overlimit",
        "untagged_drops_early_random",
        "untagged_drops_forced",
        "untagged_drops_class_threshold",
    ],
];

/// A [`ClassQueue`] whose probes also report its per-class counters.
pub struct ClassProbed<A: Aqm, P: Placement>(pub ClassQueue<A, P>);

impl<A: Aqm, P: Placement> ClassProbed<A, P> {
    pub fn class_stats(&self) -> &PerClass<ClassCounters> {
        self.0.class_stats()
    }
}

impl<A: Aqm + Send, P: Placement + Send> Qdisc for ClassProbed<A, P> {
    fn kind(&self) -> &'static str {
        self.0.kind()
    }
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.0.enqueue(now, pkt, rng)
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        self.0.dequeue(now)
    }
    fn peek(&self) -> Option<&Packet> {
        self.0.peek()
    }
    fn backlog(&self) -> Backlog {
        self.0.backlog()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.0.for_each_packet(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.0.reset()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        self.0.probe(sink);
        let st = self.0.class_stats();
        for (c, names) in Class::ALL.iter().zip(CLASS_PROBES) {
            let s = &st[*c];
            sink(names[0], s.arrivals as f64);
            sink(names[1], s.admitted as f64);
            for (r, name) in CLASS_REASONS.iter().zip(&names[2..]) {
                sink(name, s.drops_for(*r) as f64);
            }
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.0.next_deadline()
    }
    fn on_tick(&mut self, now: Time) {
        self.0.on_tick(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ClassTag, FlowId};
    use crate::qdisc::cbt::{ClassMap, FlowCounterConfig, Tail};
    use crate::qdisc::red::{RedConfig, RedStage};
    use crate::qdisc::Limit;
    use crate::units::Rate;

    #[test]
    fn probes_add_the_per_class_counters_to_the_queues_own() {
        let red = RedStage::new(RedConfig::new(Limit::packets(1), 5.0, 15.0), Rate::mbps(25)).unwrap();
        let cq = ClassQueue::new(red, Tail::new(), ClassMap::default(), FlowCounterConfig::default()).unwrap();
        let mut q = ClassProbed(cq);
        let mut rng = crate::rng::stream(1, 0);
        for id in 0..2 {
            let mut p = Packet::new(id, FlowId(1), 1000, Time(0));
            p.class = ClassTag(Class::Tagged as u8);
            q.enqueue(Time(0), p, &mut rng);
        }
        let mut seen = Vec::new();
        q.probe(&mut |name, v| seen.push((name, v)));
        let get = |n: &str| seen.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
        assert!(get("red_avg").is_some(), "the queue's own probes come first");
        assert_eq!(get("tagged_arrivals"), Some(2.0));
        assert_eq!(get("tagged_admitted"), Some(1.0));
        assert_eq!(get("tagged_drops_overlimit"), Some(1.0), "the second found the 1-packet limit");
        assert_eq!(get("tcp_arrivals"), Some(0.0));
        assert_eq!(seen.iter().filter(|(k, _)| k.starts_with("untagged_")).count(), 6);
    }
}
