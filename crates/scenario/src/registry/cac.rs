//! The shaping CAC of an `admission` table ([Tarasiuk05 §4]): the core
//! configuration both worlds build it from (the simulator's entry shapers,
//! `crates/sim/src/run/shaping.rs`, and qoslab-router's `[admission]`,
//! `crates/router/src/entry.rs`).

use super::BuildError;
use crate::{AdmissionSpec, Scheme2Rate};
use qoslab_core::admission::cac::{Scheme, ShapingCacConfig, Share, Utilization};
use qoslab_core::units::Rate;

/// The shaping CAC an admission table asks for, with the rate every flow
/// requests when the table sets one (`r_req`; `None`: each flow's own);
/// `None` for `admit_all`. A scheme other than 1-3, or settings the core
/// refuses, is an error at the field.
pub fn shaping_cac(spec: &AdmissionSpec) -> Result<Option<(ShapingCacConfig, Option<Rate>)>, BuildError> {
    let AdmissionSpec::ShapingCac { scheme, capacity, buffer, iplr, r_req, k, scheme2_rate } = spec else {
        return Ok(None);
    };
    let scheme = match scheme {
        1 => Scheme::Requested,
        2 => Scheme::Equal {
            share: match scheme2_rate {
                Scheme2Rate::C => Share::Capacity,
                Scheme2Rate::RhoC => Share::RhoCapacity,
            },
        },
        3 => Scheme::LoadDependent { k: *k },
        n => return Err(BuildError::new("scheme", format!("({n}) is not a scheme; allowed: 1, 2 or 3"))),
    };
    let cfg = ShapingCacConfig {
        capacity: *capacity,
        utilization: Utilization::Mdl1 { buffer_pkts: *buffer, iplr: *iplr },
        scheme,
    };
    cfg.validate().map_err(|e| BuildError::new(e.field.to_string(), e.message.to_string()))?;
    Ok(Some((cfg, *r_req)))
}
