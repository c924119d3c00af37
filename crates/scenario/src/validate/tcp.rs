//! Rules of the TCP (`ftp`, `transfer`) and MM_APP (`mm_app`) models, the
//! `transport` they imply, link `loss`, and `metrics.tcp_series`:
//!
//! | where | rule |
//! |---|---|
//! | `transport` | `ftp`, `transfer`: `tcp` or absent; other models: `udp` or absent |
//! | `tcp.max_window`, `tcp.rwnd` | >= 1 segment (a byte window: at least one MSS) |
//! | `tcp.init_window` | >= 1 segment |
//! | `tcp.initial_rto`, `tcp.ack_delay` | > 0 |
//! | `tcp.max_rto` | > 0 and >= `tcp.min_rto` |
//! | `tcp.granularity` | > 0 with `tcp.stack = "ns2"` (RTTs counted in ticks) |
//! | `tcp.stack` | `"ns2"` only with `tcp.variant = "reno"` |
//! | `size` (TCP) | a fixed payload (the MSS) |
//! | `bytes` (`transfer`) | >= 1 B |
//! | `mm_app.scales` | 1 to 32 rates, each > 0, increasing |
//! | `mm_app.feedback_size` | 1 B to 65535 B |
//! | link `loss`, `reverse_loss` | 0 <= p < 1 |
//! | `metrics.tcp_series` | names of `ftp` / `transfer` groups |

use super::*;
use crate::tcp_model::Window;
use crate::tcp_model::MAX_SCALES;
use crate::TcpSpec;

impl Checker<'_> {
    /// The model-specific rules of group `gi` (TCP, MM_APP, `transport`).
    pub(super) fn agent_model(&mut self, gi: usize, g: &TrafficGroup) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        let is_tcp = matches!(g.model, TrafficModel::Ftp { .. } | TrafficModel::Transfer { .. });
        match (g.transport, is_tcp) {
            (Some(Transport::Udp), true) => self.err(
                p("transport"),
                "\"udp\" cannot carry the ftp and transfer models; allowed: \"tcp\" or leave transport out",
            ),
            (Some(Transport::Tcp), false) => self.err(
                p("transport"),
                "\"tcp\" is only for the ftp and transfer models; allowed: \"udp\" or leave transport out",
            ),
            _ => {}
        }
        match &g.model {
            TrafficModel::Ftp { tcp } => self.tcp(gi, tcp, g),
            TrafficModel::Transfer { bytes, tcp } => {
                if bytes.0 == 0 {
                    self.err(p("bytes"), "0B is empty; allowed: at least 1 byte");
                }
                self.tcp(gi, tcp, g);
            }
            TrafficModel::MmApp { mm_app } => {
                let n = mm_app.scales.len();
                if n == 0 || n > MAX_SCALES {
                    self.err(p("mm_app.scales"), format!("{n} scales; allowed: 1 to {MAX_SCALES} rates"));
                }
                for (k, r) in mm_app.scales.iter().enumerate() {
                    self.positive_rate(&p(&format!("mm_app.scales.{k}")), *r);
                    if k > 0 && *r <= mm_app.scales[k - 1] {
                        self.err(
                            p(&format!("mm_app.scales.{k}")),
                            format!(
                                "{r} is not above the scale before it ({}); allowed: rates in increasing order, \
                                 lowest first (the source moves up a scale when the path has room)",
                                mm_app.scales[k - 1]
                            ),
                        );
                        break;
                    }
                }
                let fb = mm_app.feedback_size.0;
                if fb == 0 || fb > MAX_PACKET {
                    self.err(
                        p("mm_app.feedback_size"),
                        format!("{fb}B; allowed: 1 to {MAX_PACKET} bytes (a packet on the wire)"),
                    );
                }
            }
            _ => {}
        }
    }

    fn tcp(&mut self, gi: usize, t: &TcpSpec, g: &TrafficGroup) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        let mss = match &g.size {
            SizeSpec::Fixed(b) => u32::try_from(b.0).ok(),
            SizeSpec::Random(_) => None,
        };
        let windows = [("tcp.max_window", Some(t.max_window)), ("tcp.rwnd", t.rwnd)];
        for (field, w) in windows {
            match (w, mss) {
                (Some(Window::Segments(0)), _) => self.err(p(field), "0 segments; allowed: at least 1 segment"),
                (Some(Window::Bytes(b)), Some(m)) if b < u64::from(m) => self.err(
                    p(field),
                    format!("{b}B is less than one segment ({m}B, the group's size); allowed: at least one segment"),
                ),
                _ => {}
            }
        }
        if t.init_window == 0 {
            self.err(p("tcp.init_window"), "0 segments; allowed: at least 1 segment");
        }
        self.positive_dur(&p("tcp.initial_rto"), t.initial_rto);
        if t.delayed_ack {
            self.positive_dur(&p("tcp.ack_delay"), t.ack_delay);
        }
        if t.max_rto.0 == 0 {
            self.err(
                p("tcp.max_rto"),
                format!("{} must be greater than 0; allowed: a positive duration >= min_rto", t.max_rto),
            );
        } else if t.max_rto < t.min_rto {
            self.err(
                p("tcp.max_rto"),
                format!("{} is below min_rto ({}); allowed: a positive duration >= min_rto", t.max_rto, t.min_rto),
            );
        }
        if t.stack == crate::tcp_model::TcpStackSpec::Ns2 && t.variant != crate::tcp_model::TcpVariantSpec::Reno {
            self.err(
                p("tcp.stack"),
                "\"ns2\" models ns-2.35's Agent/TCP/Reno only; allowed: stack = \"ns2\" with variant = \"reno\", \
                 or stack = \"rfc\"",
            );
        }
        if t.stack == crate::tcp_model::TcpStackSpec::Ns2 && t.granularity.0 == 0 {
            self.err(
                p("tcp.granularity"),
                format!(
                    "{} with stack = \"ns2\", which counts RTTs in ticks of it; allowed: a positive duration \
                     such as \"100ms\"",
                    t.granularity
                ),
            );
        }
        if matches!(g.size, SizeSpec::Random(_)) {
            self.err(p("size"), "TCP segments need a fixed payload (the MSS); allowed: a size such as \"1000B\"");
        }
    }

    /// Link `loss` and `reverse_loss` are probabilities below 1.
    pub(super) fn loss(&mut self, path: &str, l: &LinkSpec) {
        for (field, p) in [("loss", l.loss), ("reverse_loss", l.reverse_loss)] {
            if !(0.0..1.0).contains(&p) {
                self.err(
                    format!("{path}.{field}"),
                    format!("{p} is not a probability below 1; allowed: 0 <= {field} < 1"),
                );
            }
        }
    }

    /// `metrics.tcp_series` names TCP groups.
    pub(super) fn tcp_series(&mut self, s: &Scenario) {
        let tcp_groups: Vec<&str> = s
            .traffic
            .iter()
            .filter(|g| matches!(g.model, TrafficModel::Ftp { .. } | TrafficModel::Transfer { .. }))
            .map(|g| g.name.as_str())
            .collect();
        for (i, name) in s.metrics.tcp_series.iter().enumerate() {
            if !tcp_groups.contains(&name.as_str()) {
                self.err(
                    format!("metrics.tcp_series.{i}"),
                    format!("{name:?} is not a TCP group; allowed: {}", names_list(&tcp_groups)),
                );
            }
        }
    }
}
