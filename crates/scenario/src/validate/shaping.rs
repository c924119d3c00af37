//! Checks of per-flow shapers (`traffic.N.shaper`) and of the shaping CAC
//! (`admission = { type = "shaping_cac", ... }`); the rules are listed in
//! the table of [`super`].

use super::Checker;
use crate::model::*;

impl Checker<'_> {
    pub(super) fn shaping(&mut self, s: &Scenario) {
        let cac_on = matches!(s.admission, AdmissionSpec::ShapingCac { .. });
        for (gi, g) in s.traffic.iter().enumerate() {
            let p = |f: &str| format!("traffic.{gi}.shaper.{f}");
            let fixed_wire = match &g.size {
                SizeSpec::Fixed(b) => Some(b.0.saturating_add(g.header.0)),
                SizeSpec::Random(_) => None,
            };
            let Some(sh) = &g.shaper else {
                if cac_on && fixed_wire.is_none() {
                    self.err(
                        format!("traffic.{gi}.size"),
                        "admission \"shaping_cac\" shapes every flow with a one-packet bucket, which needs a fixed \
                         size; allowed: a fixed size, or a `shaper` with `depth` in bytes",
                    );
                }
                continue;
            };
            match sh.rate {
                Some(r) => self.positive_rate(&p("rate"), r),
                None if !cac_on => self.err(
                    p("rate"),
                    "missing; allowed: a positive rate such as \"1Mbps\" (or admission type \"shaping_cac\", which \
                     assigns it)",
                ),
                None => {}
            }
            match (sh.depth.packets, sh.depth.bytes) {
                (Some(0), None) | (None, Some(0)) => {
                    self.err(p("depth"), "must be at least 1; allowed: \"1pkt\" or a size such as \"1500B\"")
                }
                (Some(_), None) if fixed_wire.is_none() => self
                    .err(p("depth"), "a depth in packets needs a fixed packet size; allowed: bytes such as \"3000B\""),
                (None, Some(b)) if fixed_wire.is_some_and(|w| b < w) => self.err(
                    p("depth"),
                    format!(
                        "{b} B is below the group's wire size ({} B), so no packet could ever conform; allowed: at \
                         least {} B",
                        fixed_wire.unwrap_or(0),
                        fixed_wire.unwrap_or(0)
                    ),
                ),
                (Some(_), None) | (None, Some(_)) => {}
                _ => self.err(p("depth"), "allowed: one value, packets (\"1pkt\") or bytes (\"1500B\"), not both"),
            }
            if let Some(b) = sh.buffer {
                if b.packets == Some(0) || b.bytes == Some(0) {
                    self.err(p("buffer"), "must be at least 1; allowed: a limit such as \"100pkts\" or \"64kB\"");
                }
            }
        }
        if let AdmissionSpec::ShapingCac { scheme, capacity, buffer, iplr, r_req, k, .. } = &s.admission {
            if !(1..=3).contains(scheme) {
                self.err("admission.scheme", format!("{scheme}; allowed: 1, 2 or 3 [Tarasiuk05 §4]"));
            }
            self.positive_rate("admission.capacity", *capacity);
            if let Some(r) = r_req {
                self.positive_rate("admission.r_req", *r);
            }
            if *buffer < 1 {
                self.err("admission.buffer", "0 packets; allowed: at least 1 packet");
            }
            if !(iplr.is_finite() && *iplr > 0.0 && *iplr < 1.0) {
                self.err("admission.iplr", format!("{iplr}; allowed: a loss ratio in (0, 1), e.g. 1e-3"));
            }
            if !(k.is_finite() && *k > 1.0) {
                self.err("admission.k", format!("{k}; allowed: a finite number above 1 ([Tarasiuk05], eq. 5)"));
            }
        }
    }
}
