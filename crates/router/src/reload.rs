//! Reconfiguration of a running datapath (`reload`, SIGHUP): checked
//! against the configuration it replaces and against the live state, then
//! applied at once, or refused whole with nothing changed.
//!
//! ```text
//! refused:  a field that sizes the datapath changed (a, b, pool, flows, batch, io, stats, out,
//!           control_socket, seed), or the PCN domain's (`[pcn]`, edge_port, edge_flows, and with
//!           `[pcn]` pcn_dscps and the link's delay: its messages wait it out), or the entry's
//!           (`[admission]`, `[shaping]`), or burst below a frame held now (the pacer could never send it)
//! applied:  the new ports replace the old; the old ones' packets are offered to the new ones in the
//!           order the old ones give them up (a shaper's held packets too, on the old port's own
//!           clock), what a new port refuses is dropped and counted there; the old ports' counts are
//!           carried, so every counter stays monotone; the packet on the wire stays on the wire;
//!           the pacer keeps its tokens (up to the new depth) and takes the new rate, burst and
//!           catch-up
//! ```

use crate::config::ValidConfig;
use crate::datapath::{enqueue, key_of, pacer_of, Datapath};
use qoslab_core::pipeline::Port;
use qoslab_core::qdisc::{Dequeue, DropReason, MarkReason, Verdict};
use qoslab_core::units::Time;
use qoslab_scenario::Diagnostic;

impl Datapath {
    /// Replaces the configuration with `new` at `now`, building its ports
    /// (see [`Datapath::reconfigure_with`]).
    pub fn reconfigure(&mut self, new: ValidConfig, now: Time) -> Result<(), Vec<Diagnostic>> {
        let ports = [new.port(0, now)?, new.port(1, now)?];
        self.reconfigure_with(new, ports, now)
    }

    /// Replaces the configuration with `new`, whose two ports were built
    /// (off the forwarding path) as `ports`. Every check happens before
    /// anything changes: on an error nothing did.
    pub fn reconfigure_with(&mut self, new: ValidConfig, ports: [Port; 2], now: Time) -> Result<(), Vec<Diagnostic>> {
        let refuse = |path: &str, message: String| Diagnostic {
            origin: new.origin.clone(),
            line: None,
            path: path.to_string(),
            message,
        };
        let (o, n) = (&self.cfg.config.router, &new.config.router);
        // The PCN domain keeps its flows across a reload, so what it was built from stays.
        let same_domain = o.edge_port == n.edge_port
            && o.edge_flows == n.edge_flows
            && self.cfg.config.pcn == new.config.pcn
            && (self.cfg.config.pcn.is_none()
                || (o.pcn_dscps == n.pcn_dscps && self.cfg.config.link.delay == new.config.link.delay));
        // The entry's connections and the CAC's state stay too.
        let same_entry = self.cfg.config.admission == new.config.admission
            && self.cfg.config.shaping == new.config.shaping
            && (self.entry.is_none() || (o.edge_port == n.edge_port && o.edge_flows == n.edge_flows));
        let fixed: [(&str, bool); 12] = [
            ("edge_port/edge_flows/[pcn] (with [pcn] also pcn_dscps and link.delay)", same_domain),
            ("[admission]/[shaping] (with them also edge_port and edge_flows)", same_entry),
            ("a", o.a == n.a),
            ("b", o.b == n.b),
            ("pool", o.pool == n.pool),
            ("flows", o.flows == n.flows),
            ("batch", o.batch == n.batch),
            ("io", o.io == n.io),
            ("stats", o.stats == n.stats),
            ("out", o.out == n.out),
            ("control_socket", o.control_socket == n.control_socket),
            ("seed", o.seed == n.seed),
        ];
        let mut errors: Vec<Diagnostic> = fixed
            .iter()
            .filter(|(_, same)| !same)
            .map(|(f, _)| {
                refuse(
                    &format!("router.{f}"),
                    "cannot change while the router runs; allowed: the [link] table, burst, catch_up, \
                     stats_interval, drain_timeout, profile, class_tag, tagged_dscp_mask, pcn_dscps (restart \
                     the router for the rest)"
                        .into(),
                )
            })
            .collect();
        let largest = self.dirs.iter().map(|d| d.largest_held()).max().unwrap_or(0);
        if (largest as u64) > n.burst.0 {
            errors.push(refuse(
                "router.burst",
                format!(
                    "({}) is below a frame the router holds now ({largest}B), which the pacer could then never \
                     send; allowed: at least {largest}B now (or reload once the queues hold no larger frame)",
                    n.burst
                ),
            ));
        }
        let pacer = pacer_of(&new, now).map_err(|e| vec![refuse("link.rate", e.to_string())]);
        let pacer = match pacer {
            Ok(p) if errors.is_empty() => p,
            Ok(_) => return Err(errors),
            Err(mut e) => {
                errors.append(&mut e);
                return Err(errors);
            }
        };
        for (d, port) in ports.into_iter().enumerate() {
            let old = std::mem::replace(&mut self.dirs[d].port, port);
            let dir = &mut self.dirs[d];
            // The tokens earned so far stay (up to the new depth): a reload is not an idle period.
            let keep = dir.pacer.tokens(now);
            dir.pacer = pacer.clone();
            dir.trim_to(now, keep);
            dir.burst = n.burst;
            self.requeue(d, old, now);
        }
        self.profile = n.profile.then(|| self.profile.unwrap_or_default());
        self.cfg = new;
        Ok(())
    }

    /// Offers the packets of direction `d`'s replaced port `old` to its new
    /// port, and carries `old`'s counts.
    fn requeue(&mut self, d: usize, mut old: Port, now: Time) {
        let mut moved = (0u64, 0u64);
        let mut at = now;
        // The packet on the wire stays the direction's (its pacer holds it): the old port's
        // device is free, or a device policy such as MACE's would hold BE back behind it.
        old.on_sent(at);
        loop {
            match old.dequeue(at) {
                Dequeue::Packet(p) => {
                    moved.0 += 1;
                    moved.1 += p.size as u64;
                    let key = key_of(self.pool.frame(p.handle as u32));
                    match enqueue(&mut self.dirs[d].port, now, p, &key, &mut self.rng, &mut self.events) {
                        Verdict::Dropped(x) => self.pool.free(x.packet.handle as u32),
                        Verdict::QueuedPushingOut(v) => v.iter().for_each(|x| self.pool.free(x.packet.handle as u32)),
                        Verdict::Queued | Verdict::Marked(_) => {}
                    }
                    old.on_sent(at);
                }
                Dequeue::Empty if old.backlog().packets == 0 => break,
                // A shaper holds its head back: the old port runs on its own clock until it lets go.
                Dequeue::NotBefore(t) if t > at => at = t,
                // A device policy that holds packets back although the device is free, or a
                // discipline that would never let go (none does either): the rest are dropped and
                // counted rather than lost.
                Dequeue::Empty | Dequeue::NotBefore(_) => {
                    let mut rest = Vec::new();
                    old.for_each_packet(&mut |p| rest.push((p.handle as u32, p.size)));
                    for (slot, size) in rest {
                        self.dirs[d].count_drop(DropReason::Overlimit, size as usize);
                        self.pool.free(slot);
                    }
                    break;
                }
            }
        }
        let (q, st) = (old.queue().stats(), old.stage_stats());
        let c = &mut self.dirs[d].carried;
        // The moved packets arrive again (and leave) at the new port: counted there, not twice.
        c.arrivals += q.arrivals + st.total_drops() - moved.0;
        c.arrival_bytes += q.arrival_bytes + st.drop_bytes.iter().sum::<u64>() - moved.1;
        c.departures += q.departures - moved.0;
        c.departure_bytes += q.departure_bytes - moved.1;
        for r in DropReason::ALL {
            c.drops[r as usize] += q.drops_for(r) + st.drops_for(r);
        }
        for r in MarkReason::ALL {
            c.marks[r as usize] += q.marks_for(r) + st.marks_for(r);
        }
    }
}
