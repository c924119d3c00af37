//! The configuration loader on any text: every input is either a valid
//! configuration (whose ports then build) or a list of diagnostics, each
//! with a field path or a message; never a panic.

use std::path::Path;

fn main() {
    qoslab_router_fuzz::fuzz(|data| {
        let text = String::from_utf8_lossy(data);
        match qoslab_router::config::load_str(&text, "fuzz.toml", Path::new("/nonexistent")) {
            Ok(v) => {
                for d in 0..2 {
                    v.port(d, qoslab_core::units::Time::ZERO).expect("a valid config's ports build");
                }
            }
            Err(ds) => assert!(!ds.is_empty() && ds.iter().all(|d| !d.message.is_empty())),
        }
    });
}
