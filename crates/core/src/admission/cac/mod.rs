//! Connection admission control for shaped TCP, after Tarasiuk, Janowski &
//! Burakowski, "Application of Admission Control and Traffic Shaping for
//! providing TCP Throughput Guarantees" ([Tarasiuk05]).
//!
//! Each admitted TCP connection is shaped at the network entry to a rate
//! R_i, which turns it into a near-CBR stream; the link then admits as it
//! would CBR, ΣR_i ≤ ρC with ρ from the M/D/1 queue. Parts:
//!
//! - [`rho`]: ρ = 2B/(2B − ln IPLR), the test ΣR_i + R_new ≤ ρC, N_max.
//! - [`erlang`]: Erlang-B blocking B(n, A) and its inverse (λ for a target).
//! - [`schemes`]: [`ShapingCac`], the paper's rate-assignment schemes #1
//!   (R = R_req), #2 (equal re-shaping at every arrival and departure) and
//!   #3 (R_new = max{R_req, (ρC − ΣR)/k}) as an [`AdmissionControl`]
//!   that also reports every rate it assigns.
//! - [`calc`]: the `qoslab cac` calculator (ρ, N_max, blocking, λ).
//!
//! The shaper that applies the rates and the fluid/TCP runs live elsewhere
//! (`qoslab_sim::fluid` is the ideal-rate cross-check).
//!
//! [`AdmissionControl`]: crate::admission::AdmissionControl

pub mod calc;
pub mod erlang;
pub mod rho;
pub mod schemes;

pub use calc::{calculate, CacAnswer, CacQuery};
pub use erlang::{erlang_b, erlang_b_arrival_rate, erlang_b_offered_load};
pub use rho::{iplr_for_rho, rho_and_n_max, rho_mdl1, CacLimit, Utilization};
pub use schemes::{RateChange, Scheme, ShapingCac, ShapingCacConfig, ShapingCacStats, Share};
