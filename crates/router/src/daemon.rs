//! The real-time loop: sockets in, the datapath, sockets out, against the
//! monotonic clock.
//!
//! ```text
//! loop:
//!     now = monotonic ns since start
//!     for each side: recvmmsg a batch into pool slots → datapath.on_frame (non-IP frames straight out)
//!                    (with a link `delay`: into the delay line first, offered when due; see [`crate::delay`])
//!     wake = datapath.poll(now, send_batch)    (pacers, timers; what they release leaves by sendmmsg)
//!     stats line due → write it; control socket readable → serve it
//!     SIGTERM/SIGINT → stop receiving, drain (until empty or drain_timeout), write summary.json, exit
//!     ppoll(sockets, until min(wake, next stats line, 100 ms))
//! ```
//!
//! The loop is single-threaded: the datapath's state needs no locks and
//! the run is the same loop whatever the load. Timer slack is set to 1 ns
//! so `ppoll` wakes when the pacer's next packet is due.

use crate::afpacket::MsgBatch;
use crate::config::{self, ValidConfig};
use crate::control::ControlSocket;
use crate::datapath::{Arrival, Datapath};
use crate::delay::DelayLine;
use crate::io::FrameSocket;
use crate::report;
use qoslab_core::units::{Dur, Time};
use qoslab_scenario::Diagnostic;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Why the router could not run: a configuration problem (exit 2) or a
/// system error (exit 1).
#[derive(Debug)]
pub enum RunError {
    Config(Vec<Diagnostic>),
    System(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Config(ds) => {
                let lines: Vec<String> = ds.iter().map(|d| d.to_string()).collect();
                write!(f, "{}", lines.join("\n"))
            }
            RunError::System(s) => write!(f, "{s}"),
        }
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
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Checks that both interfaces exist (the part of validation that needs the machine).
pub fn check_interfaces(v: &ValidConfig) -> Result<(), Vec<Diagnostic>> {
    let r = &v.config.router;
    let ds: Vec<Diagnostic> = [("router.a", &r.a), ("router.b", &r.b)]
        .into_iter()
        .filter(|(_, n)| crate::afpacket::ifindex(n).is_none())
        .map(|(f, n)| Diagnostic {
            origin: v.origin.clone(),
            line: None,
            path: f.into(),
            message: format!("no interface named {n:?} here; allowed: an existing interface (ip link)"),
        })
        .collect();
    if ds.is_empty() {
        Ok(())
    } else {
        Err(ds)
    }
}

/// Loads and fully validates a configuration file, interfaces included.
pub fn load(path: &Path) -> Result<ValidConfig, Vec<Diagnostic>> {
    let v = config::load_file(path)?;
    check_interfaces(&v)?;
    Ok(v)
}

fn answer(dp: &mut Datapath, now: Time, cmd: &str) -> String {
    let (verb, arg) = cmd.split_once(' ').map_or((cmd, ""), |(a, b)| (a, b.trim()));
    let errs = |ds: Vec<Diagnostic>| serde_json::json!({"ok": false, "errors": ds.iter().map(|d| d.to_string()).collect::<Vec<_>>()});
    match (verb, arg.is_empty()) {
        ("stats", true) => report::stats_json(dp, now, None).to_string(),
        ("check", false) => match load(Path::new(arg)) {
            Ok(_) => serde_json::json!({"ok": true}).to_string(),
            Err(ds) => errs(ds).to_string(),
        },
        ("reload", false) => match load(Path::new(arg)).and_then(|v| dp.reconfigure(v, now)) {
            Ok(()) => serde_json::json!({"ok": true}).to_string(),
            Err(ds) => errs(ds).to_string(),
        },
        _ => serde_json::json!({"ok": false, "error": format!(
            "unknown command {cmd:?}; allowed: stats, check PATH, reload PATH")})
        .to_string(),
    }
}

/// Runs the router until SIGTERM or SIGINT.
pub fn run(config_path: &Path) -> Result<(), RunError> {
    let v = load(config_path).map_err(RunError::Config)?;
    let r = v.config.router.clone();
    let sys = |what: &str, e: std::io::Error| RunError::System(format!("{what}: {e}"));
    let mut socks = [
        FrameSocket::open(&r.a, r.io).map_err(|e| sys(&format!("interface {} (router.a)", r.a), e))?,
        FrameSocket::open(&r.b, r.io).map_err(|e| sys(&format!("interface {} (router.b)", r.b), e))?,
    ];
    for s in &socks {
        if let crate::io::FrameSocket::Xdp(x) = s {
            eprintln!("qoslab-router: {}: AF_XDP socket on queue 0, copy mode, {} XDP", x.name, x.mode);
        }
    }
    let control = match &r.control_socket {
        Some(p) => Some(ControlSocket::bind(Path::new(p)).map_err(|e| sys(&format!("control socket {p}"), e))?),
        None => None,
    };
    let mut stats_out: Box<dyn Write> = if r.stats == "-" {
        Box::new(std::io::stdout())
    } else {
        Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&r.stats)
                .map_err(|e| sys(&format!("stats file {}", r.stats), e))?,
        )
    };
    install_signals();
    let start = Instant::now();
    let clock = || Time(start.elapsed().as_nanos() as u64);
    let mut dp = Datapath::new(v, clock()).map_err(RunError::Config)?;
    let mut prev = report::snapshot(&dp, clock());
    let mut next_stats = Time(dp.cfg.config.router.stats_interval.0);
    let mut drain_until: Option<Time> = None;
    let mut busy_ns: u64 = 0;
    let mut got: Vec<(u32, usize)> = Vec::with_capacity(1024);
    let (mut rx_msgs, mut tx_msgs) = (MsgBatch::new(r.batch as usize), MsgBatch::new(r.batch as usize));
    let mut line = DelayLine::default();
    let delay = dp.cfg.config.link.delay;

    loop {
        let now = clock();
        let t_loop = Instant::now();
        let cpu0 = dp.profile.is_some().then(thread_cpu_ns);
        if STOP.load(Ordering::SeqCst) && drain_until.is_none() {
            drain_until = Some(now + dp.cfg.config.router.drain_timeout);
        }
        let mut more = false;
        if drain_until.is_none() {
            let batch = dp.cfg.config.router.batch as usize;
            for side in 0..2 {
                got.clear();
                let n = socks[side].recv_batch(&mut rx_msgs, &mut dp.pool, batch, &mut got).unwrap_or(0);
                for &(slot, len) in &got {
                    if delay == Dur::ZERO {
                        arrive(&mut dp, &mut socks, now, side, slot, len);
                    } else {
                        line.hold(now, delay, side, slot, len);
                    }
                }
                more |= n == batch;
            }
        }
        while let Some(h) = line.pop_due(now) {
            arrive(&mut dp, &mut socks, now, h.side, h.slot, h.len);
        }
        let wake = dp.poll(now, &mut |side, pool, slots, sent| socks[side].send_batch(&mut tx_msgs, pool, slots, sent));
        if let (Some(p), Some(c0)) = (dp.profile.as_mut(), cpu0) {
            // CPU time, not wall time: a preemption of the loop (two shared
            // cores) is not the router's cost.
            p.loop_ns += thread_cpu_ns().saturating_sub(c0);
        }
        if now >= next_stats {
            let line = report::stats_json(&dp, now, Some(&prev));
            let _ = writeln!(stats_out, "{line}");
            let _ = stats_out.flush();
            prev = report::snapshot(&dp, now);
            while next_stats <= now {
                next_stats += dp.cfg.config.router.stats_interval;
            }
        }
        if let Some(c) = &control {
            c.serve(&mut |cmd| answer(&mut dp, now, cmd));
        }
        busy_ns += t_loop.elapsed().as_nanos() as u64;
        if let Some(until) = drain_until {
            if (dp.is_idle() && line.is_empty()) || now >= until {
                break;
            }
        }
        if more {
            continue; // a full batch: more may be waiting
        }
        let mut deadline = next_stats.min(now + qoslab_core::units::Dur::from_ms(100));
        if let Some(w) = wake {
            deadline = deadline.min(w);
        }
        if let Some(d) = line.next_due() {
            deadline = deadline.min(d);
        }
        if let Some(u) = drain_until {
            deadline = deadline.min(u);
        }
        wait(
            &socks,
            control.as_ref(),
            deadline.0.saturating_sub(clock().0),
            drain_until.is_none() && dp.pool.in_use() < dp.pool.capacity(),
        );
    }
    let now = clock();
    let line = report::stats_json(&dp, now, Some(&prev));
    let _ = writeln!(stats_out, "{line}");
    let _ = stats_out.flush();
    if let Some(out) = &dp.cfg.config.router.out {
        let s = report::summary_json(&dp, now, busy_ns as f64 / 1e9);
        report::write_summary(Path::new(out), &s).map_err(|e| sys(&format!("summary in {out}"), e))?;
    }
    Ok(())
}

/// A frame offered to the datapath at `now` (after the link's delay, if any);
/// a non-IP frame goes straight out of the other side.
fn arrive(dp: &mut Datapath, socks: &mut [FrameSocket; 2], now: Time, side: usize, slot: u32, len: usize) {
    if dp.on_frame(now, side, slot, len) == Arrival::Bypass {
        if !socks[1 - side].send(dp.pool.frame(slot)) {
            dp.dirs[side].counters.tx_errors += 1;
        }
        dp.pool.free(slot);
    }
}

/// This thread's CPU time (ns), user and system: what the loop itself spent.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn wait(socks: &[FrameSocket; 2], control: Option<&ControlSocket>, ns: u64, rx: bool) {
    let mut fds = [
        libc::pollfd { fd: socks[0].fd(), events: if rx { libc::POLLIN } else { 0 }, revents: 0 },
        libc::pollfd { fd: socks[1].fd(), events: if rx { libc::POLLIN } else { 0 }, revents: 0 },
        libc::pollfd { fd: control.map_or(-1, |c| c.fd()), events: libc::POLLIN, revents: 0 },
    ];
    let ts =
        libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
    // SAFETY: `fds` and `ts` are live for the call; a negative fd is ignored by ppoll.
    unsafe {
        libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null());
    }
}
