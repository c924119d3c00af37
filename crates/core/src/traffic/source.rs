//! A flow's emission rules without the network: its source state machine
//! ([`Source`], over the models of the sibling modules), its packet size
//! law ([`SizeModel`]), the per-flow RNG streams, and the send-time shifts
//! ([`emission_time`]). The simulator and the testbed's generator run them.

use super::cbr::{Cbr, Period};
use super::mm_app;
use super::on_off::Packetization;
use super::on_off::{OnOff, PeriodLaw};
use super::poisson::Poisson;
use super::vtr::{Vtr, VtrPlan};
use crate::rng::Rng;
use crate::units::{Dur, Time};
use rand::Rng as _;
use rand_distr::Exp1;

/// RNG stream of flow `i` of group `g`.
pub fn flow_stream(g: u32, i: u32) -> u64 {
    (1 << 61) | ((g as u64) << 32) | i as u64
}
/// RNG stream of group `g`'s arrival process.
pub fn group_stream(g: u32) -> u64 {
    (1 << 60) | g as u64
}
/// RNG stream of group `g`'s source draws (`src_choice = "random"`).
pub fn src_stream(g: u32) -> u64 {
    (1 << 60) | (1 << 40) | g as u64
}

/// How a flow's packet sizes are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeModel {
    Fixed { wire: u32 },
    Random { base: u64, exp_mean: f64, header: u64 },
}

impl SizeModel {
    /// Wire size of the next packet.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u32 {
        match *self {
            SizeModel::Fixed { wire } => wire,
            SizeModel::Random { base, exp_mean, header } => {
                let e: f64 = rng.sample(Exp1);
                let off = (e * exp_mean).round().min(u32::MAX as f64) as u64;
                base.saturating_add(off).saturating_add(header).min(u32::MAX as u64) as u32
            }
        }
    }
    /// Mean payload in bytes (nominal: `base + exp_mean`).
    pub fn mean_payload(&self, header: u64) -> f64 {
        match *self {
            SizeModel::Fixed { wire } => wire as f64 - header as f64,
            SizeModel::Random { base, exp_mean, .. } => base as f64 + exp_mean,
        }
    }
}

/// A group's model with its rates turned into periods.
#[derive(Clone, Copy, Debug)]
pub enum ModelPlan {
    Cbr(Period),
    Poisson(f64),
    OnOff {
        period: Period,
        on: PeriodLaw,
        off: PeriodLaw,
        packetization: Packetization,
    },
    /// A TCP sender (greedy when `bytes` is `None`) and its sink.
    Tcp {
        cfg: crate::tcp::TcpConfig,
        bytes: Option<u64>,
        sink_delay: Option<Dur>,
        header: u32,
    },
    /// MM_APP (its scales' periods are the group's `mm_periods`).
    MmApp {
        feedback_size: u32,
    },
    /// A video trace (its frames are the group's [`GroupPlan::frames`]).
    Vtr(VtrPlan),
}

impl ModelPlan {
    /// The spacing of the model's packet grid in ns (what `randomize` is a
    /// fraction of), if it has one.
    pub fn spacing_ns(&self, mm_periods: &[Period]) -> Option<u64> {
        match self {
            ModelPlan::Vtr(p) => Some(p.spacing),
            m => Source::new(m, mm_periods).spacing_ns(),
        }
    }
    /// Does a flow of this model need an agent at its ends (TCP, MM_APP)?
    pub fn has_agent(&self) -> bool {
        matches!(self, ModelPlan::Tcp { .. } | ModelPlan::MmApp { .. })
    }
}

/// A flow's source state (ON/OFF boxed: it is the largest, and per-flow
/// state is kept small so that thousands of flows stay in cache).
#[derive(Clone, Debug)]
pub enum Source {
    Cbr(Cbr),
    Poisson(Poisson),
    OnOff(Box<OnOff>),
    /// MM_APP: CBR at the scale the receiver feeds back.
    Mm(Box<mm_app::MmSource>),
    /// A video trace: its place in the group's frames.
    Vtr(Vtr),
    /// No scheduled emissions: a TCP flow's agent sends.
    Agent,
}

impl Source {
    /// The source of a flow of model `m` (`mm_periods`: the MM_APP scales' periods).
    pub fn new(m: &ModelPlan, mm_periods: &[Period]) -> Source {
        match *m {
            ModelPlan::Cbr(p) => Source::Cbr(Cbr::new(p)),
            ModelPlan::Poisson(g) => Source::Poisson(Poisson::new(g)),
            ModelPlan::OnOff { period, on, off, packetization } => {
                Source::OnOff(Box::new(OnOff::new(period, on, off, packetization)))
            }
            ModelPlan::MmApp { .. } if !mm_periods.is_empty() => {
                Source::Mm(Box::new(mm_app::MmSource::new(mm_periods.to_vec())))
            }
            ModelPlan::Vtr(_) => Source::Vtr(Vtr::new()),
            ModelPlan::MmApp { .. } | ModelPlan::Tcp { .. } => Source::Agent,
        }
    }
    /// [`GroupSource::first`] for a source that needs nothing of its group (every
    /// model but VTR, whose frames are its group's: `None`). The testbed's
    /// generator (`crates/traffic`) runs these sources without a network.
    pub fn first_alone(&mut self, start: Time, rng: &mut Rng) -> Option<Time> {
        Some(match self {
            Source::Vtr(_) => return None,
            Source::Cbr(s) => s.first(start),
            Source::Poisson(s) => s.first(start),
            Source::OnOff(s) => s.first(start, rng),
            Source::Mm(s) => s.first(start),
            Source::Agent => start,
        })
    }
    /// The spacing of the source's packet grid (CBR, and ON/OFF while ON), in ns.
    pub fn spacing_ns(&self) -> Option<u64> {
        match self {
            Source::Cbr(s) => Some(s.spacing_ns()),
            Source::OnOff(s) => Some(s.spacing_ns()),
            // A VTR flow's spacing is its group's ([`ModelPlan::spacing_ns`]).
            Source::Poisson(_) | Source::Mm(_) | Source::Vtr(_) | Source::Agent => None,
        }
    }
    /// [`GroupSource::next`] for a source that needs nothing of its group (`None`
    /// for VTR, as [`Source::first_alone`]).
    #[inline]
    pub fn next_alone(&mut self, now: Time, rng: &mut Rng) -> Option<Time> {
        Some(match self {
            Source::Vtr(_) => return None,
            Source::Cbr(s) => s.next_send(),
            Source::Poisson(s) => s.next_send(now, rng),
            Source::OnOff(s) => s.next_send(rng),
            Source::Mm(s) => s.next_send(),
            Source::Agent => Time::MAX,
        })
    }
}

/// `mean_ns` times one Exp(1) draw, rounded to whole ns, at least 1: an
/// exponential gap or lifetime as the simulator's arrival processes draw it
/// (a flow's exponential lifetime is the first draw of its stream, so the
/// testbed's generator takes the same draw before the flow's source's).
pub fn exp_ns(rng: &mut Rng, mean_ns: f64) -> u64 {
    let e: f64 = rng.sample(Exp1);
    (e * mean_ns).round().clamp(1.0, u64::MAX as f64 / 4.0) as u64
}

/// Uniform draw in `[0, d]` ns.
pub fn jitter(rng: &mut Rng, d: Dur) -> Dur {
    if d.0 == 0 {
        Dur::ZERO
    } else {
        Dur(rng.random_range(0..=d.0))
    }
}

/// When a packet whose source said `next` is emitted, the flow's previous
/// packet having been emitted at `prev`: randomized packet times
/// [Zhang07 §2.3.4] delay it by a uniform draw in `[0, randomize_ns)`,
/// then host timing jitter by one in `[0, send_jitter_max_ns]`,
/// each drawn from the flow's stream only when non-zero. Within a grid both
/// keep the order of a flow's packets (each is below its spacing; validation
/// refuses the two together); an ON/OFF source's next ON period can start
/// sooner after the last packet of the one before (an OFF period shorter
/// than that packet's delay), and then the packet goes at `prev`, right
/// after it, never before it. The simulator and the testbed's generator both
/// call this, so they send the same schedule.
#[inline]
pub fn emission_time(next: Time, prev: Time, randomize_ns: u64, send_jitter_max_ns: u64, rng: &mut Rng) -> Time {
    let mut at = next;
    if randomize_ns > 0 {
        at = Time(at.0.saturating_add(rng.random_range(0..randomize_ns)));
    }
    if send_jitter_max_ns > 0 {
        at = Time(at.0.saturating_add(rng.random_range(0..=send_jitter_max_ns)));
    }
    at.max(prev)
}
