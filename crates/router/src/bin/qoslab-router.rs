//! `qoslab-router`: the userspace router (see `docs/router.md`).
//!
//! ```text
//! qoslab-router run CONFIG          forward until SIGTERM/SIGINT (root: AF_PACKET)
//! qoslab-router check CONFIG        validate CONFIG (and its interfaces) without running
//! qoslab-router ctl SOCKET COMMAND  send a control command (stats | check PATH | reload PATH)
//! ```
//!
//! Exit status: 0 done, 2 a bad configuration or command line (every
//! problem printed as `file:line: field: problem; allowed: ...`), 1 a
//! system error (a socket that cannot be opened).

use qoslab_router::{config, control, daemon};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: qoslab-router run CONFIG | check CONFIG | ctl SOCKET COMMAND...";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["run", cfg] => match daemon::run(Path::new(cfg)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e @ daemon::RunError::Config(_)) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
            Err(e) => {
                eprintln!("qoslab-router: {e}");
                ExitCode::from(1)
            }
        },
        ["check", cfg] => match config::load_file(Path::new(cfg)).and_then(|v| daemon::check_interfaces(&v)) {
            Ok(()) => {
                println!("{cfg}: ok");
                ExitCode::SUCCESS
            }
            Err(ds) => {
                ds.iter().for_each(|d| eprintln!("{d}"));
                ExitCode::from(2)
            }
        },
        ["ctl", sock, cmd @ ..] if !cmd.is_empty() => match control::request(Path::new(sock), &cmd.join(" ")) {
            Ok(answer) => {
                println!("{answer}");
                let ok = serde_json::from_str::<serde_json::Value>(&answer)
                    .map(|v| v.get("ok") != Some(&serde_json::Value::Bool(false)))
                    .unwrap_or(false);
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(2)
                }
            }
            Err(e) => {
                eprintln!("qoslab-router: control socket {sock}: {e}");
                ExitCode::from(1)
            }
        },
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
