//! CBT, D-CBT and ChIPS: class-aware management of one RED queue for TCP,
//! flow-controlled multimedia (tagged UDP) and other (untagged) UDP.
//! Source: [Claypool00] (Claypool & Chung 2000, "Dynamic-CBT and ChIPS"), §3,
//! after Parris, Jeffay & Smith 1999 (CBT).
//!
//! The queue is assembled from parts, each in its own file and tested alone
//! ([Claypool00] Fig. 3 and Fig. 4):
//!
//! | part | file | role |
//! |---|---|---|
//! | [`Class`], [`ClassMap`] | `classes.rs` | TCP / tagged UDP / untagged UDP from the packet's `ClassTag` |
//! | [`FlowCounter`] | `flow_counter.rs` | active flows per class; sweep every 300 ms (`next_deadline`/`on_tick`) |
//! | [`Aqm`], [`View`] | `aqm.rs` | the arrival stage interface (RED's is [`crate::qdisc::red::RedStage`]) |
//! | [`Cbt`] | `cbt.rs` | static UDP class thresholds in front of RED ("RED for all") |
//! | [`Dcbt`] | `dcbt.rs` | thresholds from active-flow shares; averages updated together |
//! | [`Placement`], [`Tail`] | `queue.rs` | where admitted packets go; per-class accounting |
//! | [`Chips`], [`VirtualFifo`] | `chips.rs` | tagged cut-in at RED's average; virtual FIFO accounting |
//! | [`ClassQueue`], [`build`] | `queue.rs` | the assembled [`crate::qdisc::Qdisc`] |
//! | [`ClassProbed`] | `probed.rs` | a [`ClassQueue`] whose probes add the per-class counters |
//!
//! ```text
//! classify -> count flows -> Aqm (RED | CBT | D-CBT) -> Placement (Tail | ChIPS) -> queue
//! ```
//!
//! So "D-CBT with ChIPS" is `ClassQueue<Dcbt, Chips>`, "RED with ChIPS" is
//! `ClassQueue<RedStage, Chips>`, and `ClassQueue<RedStage, Tail>` is plain
//! RED (verdict for verdict the same as [`crate::qdisc::red::Red`]).
//!
//! Probes (`Qdisc::probe`): `red_avg`; `tagged_avg`, `untagged_avg`,
//! `tagged_th`, `untagged_th` (CBT, D-CBT); `threshold_test_on` (D-CBT);
//! `flows_tcp`, `flows_tagged`, `flows_untagged` (when flows are counted);
//! `chips_on`, `tagged_share` (ChIPS).
//!
//! Docs: `docs/mechanisms/{cbt,dcbt,chips}.md`.

pub mod aqm;
// The file is named after the mechanism, like its siblings `dcbt.rs` and `chips.rs`.
#[allow(clippy::module_inception)]
pub mod cbt;
pub mod chips;
pub mod classes;
pub mod dcbt;
pub mod flow_counter;
pub mod probed;
pub mod queue;

pub use aqm::{Aqm, View};
pub use cbt::{Cbt, CbtConfig, CbtStats};
pub use chips::{Chips, ChipsConfig, ChipsStats, VirtualFifo};
pub use classes::{Class, ClassBacklog, ClassMap, PerClass};
pub use dcbt::{Dcbt, DcbtConfig, DcbtStats};
pub use flow_counter::{FlowCounter, FlowCounterConfig, FlowCounterStats, FlowCounts};
pub use probed::ClassProbed;
pub use queue::{build, AqmConfig, ClassCounters, ClassQueue, ClassQueueConfig, Placement, PlacementConfig, Tail};
