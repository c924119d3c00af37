//! Edge-router QoS ([Guerin99], "QoS in edge devices"):
//! the three mechanisms of its QoS component, each usable alone.
//!
//! - [`classifier`]: an exact-match LRU flow cache in front of the
//!   [`rules`] database (prefix, range, exact and wildcard matches, searched
//!   with per-field bitsets), as the port stage [`ClassifierStage`] that
//!   sets a packet's stream id, class and DSCP (§II, Fig. 3);
//! - [`scfq`]: self-clocked fair queueing with the paper's virtual time,
//!   service tags and MSB wrap-around, as a [`crate::classful::Scheduler`]
//!   over any number of child queues (§III; Golestani 1994);
//! - [`buffer`]: rate guarantees by buffer management, per-stream
//!   allocations and shared buffers under the "holes" rule, as the FIFO
//!   queue discipline [`BufferManaged`] (§III.A; Guérin et al. 1998).
//!
//! The paper's port: classifier stage → a classful queue whose classifier
//! maps the class to the EF or AF/BE child (each a `BufferManaged`) and
//! whose scheduler is [`Scfq`].

pub mod buffer;
pub mod classifier;
pub mod rules;
pub mod scfq;

pub use buffer::{BufferConfig, BufferManaged, StreamShare};
pub use classifier::{
    CacheKey, ClassifierConfig, ClassifierStage, Eviction, FlowCache, PortRange, Rule, RuleAction, RuleDatabase,
};
pub use scfq::Scfq;
