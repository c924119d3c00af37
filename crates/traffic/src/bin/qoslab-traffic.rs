//! `qoslab-traffic gen SPEC --report FILE` and
//! `qoslab-traffic sink --listen ADDR... --out FILE`: the testbed's UDP
//! generator and sink (see the crate's doc). SIGTERM or SIGINT stops
//! either; both write their file before exiting. Exit status: 0 done, 2 a
//! bad command line or spec (each problem named), 1 a system error.

use clap::{value_parser, Arg, ArgAction, Command};
use qoslab_traffic::{clock, gen, sink, spec::GenSpec, tcp};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

enum Cmd {
    Gen {
        spec: PathBuf,
        report: PathBuf,
    },
    Sink {
        listen: Vec<SocketAddr>,
        listen_tcp: Vec<SocketAddr>,
        window: Option<tcp::Window>,
        mm: Vec<sink::MmFlow>,
        out: PathBuf,
    },
}

fn cli() -> Command {
    Command::new("qoslab-traffic")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The qoslab testbed's UDP generator and sink")
        .subcommand_required(true)
        .subcommand(
            Command::new("gen")
                .about("Send the flows of a JSON spec (docs/testbed.md) from this namespace")
                .arg(
                    Arg::new("spec")
                        .required(true)
                        .value_parser(value_parser!(PathBuf))
                        .help("the spec: t0_ns, seed, flows"),
                )
                .arg(
                    Arg::new("report")
                        .long("report")
                        .required(true)
                        .value_parser(value_parser!(PathBuf))
                        .help("where to write what was sent (JSON)"),
                ),
        )
        .subcommand(
            Command::new("sink")
                .about("Receive on the given addresses; write a 32-byte record per packet")
                .arg(
                    Arg::new("listen")
                        .long("listen")
                        .required_unless_present("listen_tcp")
                        .action(ArgAction::Append)
                        .value_parser(value_parser!(SocketAddr))
                        .help("a UDP address to listen on, e.g. 10.77.0.2:9000 (repeatable)"),
                )
                .arg(
                    Arg::new("listen_tcp")
                        .long("listen-tcp")
                        .action(ArgAction::Append)
                        .value_parser(value_parser!(SocketAddr))
                        .help("a TCP address to accept flows on (repeatable); their byte counts go to OUT.tcp.json"),
                )
                .arg(
                    Arg::new("window_clamp")
                        .long("tcp-window-clamp")
                        .requires("mss")
                        .value_parser(value_parser!(u32).range(1..=1 << 30))
                        .help(
                            "the largest window the TCP receivers advertise (bytes): the scenario's max_window x mss",
                        ),
                )
                .arg(
                    Arg::new("mss")
                        .long("tcp-mss")
                        .requires("window_clamp")
                        .value_parser(value_parser!(u32).range(88..=1460))
                        .help("the TCP flows' segment payload (bytes), with --tcp-window-clamp"),
                )
                .arg(
                    Arg::new("mm")
                        .long("mm")
                        .action(ArgAction::Append)
                        .value_parser(|s: &str| s.parse::<sink::MmFlow>())
                        .help(
                            "FLOW:SCALES:FEEDBACK_SIZE: run MM_APP's receiver for this flow and send it its scale \
                             (repeatable); the counts go to OUT.mm.json",
                        ),
                )
                .arg(
                    Arg::new("out")
                        .long("out")
                        .required(true)
                        .value_parser(value_parser!(PathBuf))
                        .help("the records file"),
                ),
        )
}

fn parse() -> Cmd {
    let m = cli().get_matches();
    match m.subcommand() {
        Some(("gen", g)) => Cmd::Gen {
            spec: g.get_one::<PathBuf>("spec").expect("required").clone(),
            report: g.get_one::<PathBuf>("report").expect("required").clone(),
        },
        Some(("sink", k)) => Cmd::Sink {
            listen: k.get_many::<SocketAddr>("listen").map_or_else(Vec::new, |v| v.copied().collect()),
            listen_tcp: k.get_many::<SocketAddr>("listen_tcp").map_or_else(Vec::new, |v| v.copied().collect()),
            window: k
                .get_one::<u32>("window_clamp")
                .zip(k.get_one::<u32>("mss"))
                .map(|(&bytes, &mss)| tcp::Window { bytes, mss }),
            mm: k.get_many::<sink::MmFlow>("mm").map_or_else(Vec::new, |v| v.copied().collect()),
            out: k.get_one::<PathBuf>("out").expect("required").clone(),
        },
        _ => unreachable!("subcommand_required"),
    }
}

fn install_signals() {
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

fn main() -> ExitCode {
    let cmd = parse();
    install_signals();
    clock::tight_timers();
    match cmd {
        Cmd::Gen { spec, report } => {
            let text = match qoslab_scenario::bounded::read_text(&spec, qoslab_scenario::bounded::MAX_FILE) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{}: cannot read: {e}", spec.display());
                    return ExitCode::from(2);
                }
            };
            let s: GenSpec = match serde_json::from_str(&text) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{}: {e}", spec.display());
                    return ExitCode::from(2);
                }
            };
            let bad = s.check();
            if !bad.is_empty() {
                bad.iter().for_each(|b| eprintln!("{}: {b}", spec.display()));
                return ExitCode::from(2);
            }
            let r = match gen::run(&s, &STOP) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{}: {e}", spec.display());
                    return ExitCode::from(1);
                }
            };
            let json = serde_json::to_string(&r).expect("a report serializes");
            if let Err(e) = std::fs::write(&report, json + "\n") {
                eprintln!("{}: cannot write: {e}", report.display());
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Cmd::Sink { listen, listen_tcp, window, mm, out } => {
            let socks = match sink::bind(&listen) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(1);
                }
            };
            let listeners = match tcp::bind(&listen_tcp, window) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(1);
                }
            };
            // The testbed waits for this line before it starts the generators.
            println!("ready");
            use std::io::Write;
            let _ = std::io::stdout().flush();
            let stop = Arc::new(AtomicBool::new(false));
            let watcher = {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !STOP.load(Ordering::SeqCst) {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    stop.store(true, Ordering::SeqCst);
                })
            };
            let tcp_thread = {
                let stop = stop.clone();
                std::thread::spawn(move || tcp::run_receivers(listeners, window, stop))
            };
            let (records, mm_counts) = sink::run(socks, stop, &mm);
            let _ = watcher.join();
            let received = tcp_thread.join().unwrap_or_default();
            if !listen_tcp.is_empty() {
                let path = out.with_extension("tcp.json");
                let json = serde_json::to_string(&received).expect("counts serialize");
                if let Err(e) = std::fs::write(&path, json + "\n") {
                    eprintln!("{}: cannot write: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            if !mm.is_empty() {
                let path = out.with_extension("mm.json");
                let json = serde_json::to_string(&mm_counts).expect("counts serialize");
                if let Err(e) = std::fs::write(&path, json + "\n") {
                    eprintln!("{}: cannot write: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            if let Err(e) = sink::write(&out, &records) {
                eprintln!("{}: cannot write: {e}", out.display());
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
    }
}
