//! The real-time loop: sockets in, the datapath, sockets out, against the
//! monotonic clock; and the control thread beside it.
//!
//! ```text
//! forwarding thread, loop:
//!     now = monotonic ns since start
//!     for each side: a batch from the receive ring into pool slots → datapath.receive   (no free slot: pool_exhausted)
//!     wake = datapath.poll(now, send_batch)    (delay line, pacers, timers; what they release leaves by sendmmsg)
//!     stats line due → kernel drops read, interfaces checked, line written
//!     calls from the control thread → answered (stats; reload: checked against the live state, swapped in)
//!     SIGTERM/SIGINT → read what already waits in the receive rings (until a pass finds none), then
//!         stop receiving, drain (until empty or drain_timeout), write summary.json, exit 0
//!     an interface gone → stop at once, write summary.json, exit 1 naming it
//!     ppoll(sockets, the mailbox's eventfd, until min(wake, next stats line, 100 ms))
//!     woke at or after `wake` → how late, into the stats' `wake` histogram (crate::lateness)
//! control thread (crate::control): the control socket and SIGHUP (reload the run's configuration file)
//! ```
//!
//! The forwarding loop is single-threaded: the datapath's state needs no
//! locks, and it never reads a file or waits for a client (the control
//! thread does both). Timer slack is set to 1 ns so `ppoll` wakes when the
//! pacer's next packet is due. Signals are taken by the forwarding thread
//! (the control thread blocks them).

use crate::afpacket::MsgBatch;
use crate::config::{self, ValidConfig};
use crate::control::{self, Caller, ControlSocket, Mailbox, Request};
use crate::datapath::Datapath;
use crate::io::FrameSocket;
use crate::report;
use qoslab_core::qdisc::DropReason;
use qoslab_core::units::{Dur, Time};
use qoslab_scenario::Diagnostic;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Instant;

static STOP: AtomicBool = AtomicBool::new(false);
/// The write end of the SIGHUP self-pipe (-1: none).
static HUP: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGHUP {
        let fd = HUP.load(Ordering::SeqCst);
        if fd >= 0 {
            let b = 1u8;
            // SAFETY: write(2) is async-signal-safe; a full pipe drops the byte (a reload is pending anyway).
            unsafe { libc::write(fd, &b as *const u8 as *const libc::c_void, 1) };
        }
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
}

/// Why the router could not run, or stopped: a configuration problem
/// (exit 2) or a system error (exit 1).
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

/// SIGTERM and SIGINT stop the router; SIGHUP writes to `hup` (the control
/// thread reloads the configuration). The three are unblocked in this thread:
/// a parent may have started the router with them blocked (a blocked mask is
/// inherited), and a daemon that ignores SIGTERM cannot be stopped cleanly.
fn install_signals(hup: i32) {
    HUP.store(hup, Ordering::SeqCst);
    // SAFETY: the handler only stores to an atomic or writes to a pipe (async-signal-safe);
    // the sigset calls work on local sets.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaction(s, &sa, std::ptr::null_mut());
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
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

fn errors(ds: &[Diagnostic]) -> String {
    serde_json::json!({"ok": false, "errors": ds.iter().map(|d| d.to_string()).collect::<Vec<_>>()}).to_string()
}

fn ok() -> String {
    serde_json::json!({"ok": true}).to_string()
}

/// Reads, checks and builds `path`, then asks the forwarding thread to swap it in.
fn reload(path: &Path, caller: &Caller, start: Instant) -> String {
    let now = Time(start.elapsed().as_nanos() as u64);
    let built = load(path).and_then(|v| Ok((v.port(0, now)?, v.port(1, now)?, v)));
    match built {
        Ok((p0, p1, v)) => caller.call(Request::Reload(Box::new(v), Box::new([p0, p1]))),
        Err(ds) => errors(&ds),
    }
}

/// The control thread's answer to one command line.
fn answer(cmd: &str, caller: &Caller, start: Instant) -> String {
    let (verb, arg) = cmd.split_once(' ').map_or((cmd, ""), |(a, b)| (a, b.trim()));
    match (verb, arg.is_empty()) {
        ("stats", true) => caller.call(Request::Stats),
        ("check", false) => match load(Path::new(arg)) {
            Ok(_) => ok(),
            Err(ds) => errors(&ds),
        },
        ("reload", false) => reload(Path::new(arg), caller, start),
        _ => serde_json::json!({"ok": false, "error": format!(
            "unknown command {cmd:?}; allowed: stats, check PATH, reload PATH")})
        .to_string(),
    }
}

/// The control thread: serves the control socket (if any) and SIGHUP
/// (a byte on `hup`: reloads `config`) until `quit`.
fn control_thread(
    sock: Option<ControlSocket>,
    hup: OwnedFd,
    config: PathBuf,
    caller: Caller,
    start: Instant,
    quit: Arc<AtomicBool>,
) {
    while !quit.load(Ordering::SeqCst) {
        let mut fds = [
            libc::pollfd { fd: sock.as_ref().map_or(-1, |s| s.fd()), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: hup.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: `fds` is live for the call; a negative fd is ignored.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, 100) };
        if fds[1].revents & libc::POLLIN != 0 {
            let mut buf = [0u8; 64];
            // SAFETY: reads into a live buffer (the pipe is non-blocking).
            while unsafe { libc::read(hup.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) } > 0 {}
            let a = reload(&config, &caller, start);
            match serde_json::from_str::<serde_json::Value>(&a) {
                Ok(v) if v["ok"] == true => eprintln!("qoslab-router: SIGHUP: reloaded {}", config.display()),
                _ => eprintln!(
                    "qoslab-router: SIGHUP: {} refused, the running configuration stays: {a}",
                    config.display()
                ),
            }
        }
        if let Some(s) = &sock {
            if fds[0].revents & libc::POLLIN != 0 {
                s.serve(&mut |cmd| answer(cmd, &caller, start));
            }
        }
    }
}

/// A non-blocking, close-on-exec pipe: (read, write).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Spawns `f` with SIGTERM, SIGINT and SIGHUP blocked in the new thread (they go to the caller's).
fn spawn_unsignalled(f: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    // SAFETY: sigset operations on a local set; pthread_sigmask swaps this thread's mask,
    // which the new thread inherits, then restores it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let h = std::thread::spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        h
    }
}

/// Side `side`'s interface, if it is gone (deleted, or replaced by another of its name).
fn lost(socks: &[FrameSocket; 2], side: usize) -> Option<String> {
    let (name, index) = socks[side].interface();
    (crate::afpacket::ifindex(name) != Some(index))
        .then(|| format!("interface {name} (router.{}) is gone", ["a", "b"][side]))
}

/// Reads the sockets' kernel drop counts into the datapath.
fn read_kernel_drops(dp: &mut Datapath, socks: &mut [FrameSocket; 2]) {
    for (d, s) in socks.iter_mut().enumerate() {
        dp.dirs[d].router_drops[DropReason::Kernel as usize] = s.kernel_drops();
    }
}

/// Runs the router until SIGTERM or SIGINT (Ok), or an interface is lost (Err).
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
    let (mailbox, caller) = control::mailbox().map_err(|e| sys("eventfd", e))?;
    let (hup_r, hup_w) = pipe().map_err(|e| sys("pipe", e))?;
    install_signals(hup_w.as_raw_fd());
    let start = Instant::now();
    let quit = Arc::new(AtomicBool::new(false));
    let ctl = {
        let (quit, path) = (quit.clone(), config_path.to_path_buf());
        spawn_unsignalled(move || control_thread(control, hup_r, path, caller, start, quit))
    };
    let result = forward(v, &mut socks, mailbox, &mut stats_out, start);
    quit.store(true, Ordering::SeqCst);
    // Within a client's deadline (the mailbox is gone, so a pending call is answered
    // "stopping" at once); then the socket file is gone.
    let _ = ctl.join();
    HUP.store(-1, Ordering::SeqCst);
    drop(hup_w);
    result
}

/// The forwarding loop (see the module doc).
fn forward(
    v: ValidConfig,
    socks: &mut [FrameSocket; 2],
    mailbox: Mailbox,
    stats_out: &mut Box<dyn Write>,
    start: Instant,
) -> Result<(), RunError> {
    let sys = |what: &str, e: std::io::Error| RunError::System(format!("{what}: {e}"));
    let clock = || Time(start.elapsed().as_nanos() as u64);
    let batch = v.config.router.batch as usize;
    let mut dp = Datapath::new(v, clock()).map_err(RunError::Config)?;
    let mut prev = report::snapshot(&dp, clock());
    let mut next_stats = Time(dp.cfg.config.router.stats_interval.0);
    let mut drain_until: Option<Time> = None;
    // After the signal, reception goes on until a pass over both sockets finds nothing: a
    // frame that reached an interface before the signal is forwarded (or its drop counted),
    // not left unread in the ring when the sockets close.
    let mut door_closed = false;
    let mut busy_ns: u64 = 0;
    let mut got: Vec<(u32, usize)> = Vec::with_capacity(1024);
    let mut tx_msgs = MsgBatch::new(batch);
    let mut ready = Ready::default();
    let mut gone: Option<String> = None;
    // The datapath's timer the last wait slept for (None: the wait ended for another deadline,
    // or the loop went on without waiting).
    let mut armed: Option<Time> = None;

    loop {
        let now = clock();
        if let Some(w) = armed.take() {
            if now >= w {
                dp.wake.record(now.0 - w.0);
            }
        }
        let t_loop = Instant::now();
        let cpu0 = dp.profile.is_some().then(thread_cpu_ns);
        if STOP.load(Ordering::SeqCst) && drain_until.is_none() {
            drain_until = Some(now + dp.cfg.config.router.drain_timeout);
        }
        let mut more = false;
        if !door_closed {
            // Frames read in this pass, or left waiting for a free slot.
            let mut read = 0;
            for (side, sock) in socks.iter_mut().enumerate() {
                if dp.pool.in_use() == dp.pool.capacity() {
                    if readable(sock) {
                        dp.dirs[side].counters.pool_exhausted += 1;
                        read += 1;
                    }
                    continue;
                }
                got.clear();
                match sock.recv_batch(&mut dp.pool, batch, &mut got) {
                    Ok(n) => {
                        more |= n == batch;
                        read += n;
                    }
                    Err(_) => ready.err[side] = true,
                }
                for &(slot, len) in &got {
                    dp.receive(now, side, slot, len);
                }
            }
            door_closed = drain_until.is_some() && read == 0;
        }
        let wake = dp.poll(now, &mut |side, pool, slots, sent| socks[side].send_batch(&mut tx_msgs, pool, slots, sent));
        if let (Some(p), Some(c0)) = (dp.profile.as_mut(), cpu0) {
            // CPU time, not wall time: a preemption of the loop (two shared
            // cores) is not the router's cost.
            p.loop_ns += thread_cpu_ns().saturating_sub(c0);
        }
        for side in 0..2 {
            if ready.err[side] {
                let _ = socks[side].take_error();
                gone = gone.or_else(|| lost(socks, side));
            }
        }
        if now >= next_stats {
            read_kernel_drops(&mut dp, socks);
            gone = gone.or_else(|| lost(socks, 0)).or_else(|| lost(socks, 1));
            let line = report::stats_json(&dp, now, Some(&prev));
            let _ = writeln!(stats_out, "{line}");
            let _ = stats_out.flush();
            prev = report::snapshot(&dp, now);
            while next_stats <= now {
                next_stats += dp.cfg.config.router.stats_interval;
            }
        }
        if ready.mail {
            mailbox.clear();
        }
        while let Some(call) = mailbox.next() {
            let a = match call.request {
                Request::Stats => {
                    read_kernel_drops(&mut dp, socks);
                    report::stats_json(&dp, now, None).to_string()
                }
                Request::Reload(v, ports) => match dp.reconfigure_with(*v, *ports, now) {
                    Ok(()) => ok(),
                    Err(ds) => errors(&ds),
                },
            };
            let _ = call.answer.try_send(a);
        }
        busy_ns += t_loop.elapsed().as_nanos() as u64;
        if gone.is_some() {
            break;
        }
        if let Some(until) = drain_until {
            if (door_closed && dp.is_idle()) || now >= until {
                break;
            }
        }
        if more {
            ready = Ready::default();
            continue; // a full batch: more may be waiting
        }
        let mut deadline = next_stats.min(now + Dur::from_ms(100));
        if let Some(w) = wake {
            deadline = deadline.min(w);
        }
        if let Some(u) = drain_until {
            deadline = deadline.min(u);
        }
        armed = wake.filter(|&w| w <= deadline);
        ready = wait(
            socks,
            &mailbox,
            deadline.0.saturating_sub(clock().0),
            !door_closed && dp.pool.in_use() < dp.pool.capacity(),
        );
    }
    let now = clock();
    read_kernel_drops(&mut dp, socks);
    let line = report::stats_json(&dp, now, Some(&prev));
    let _ = writeln!(stats_out, "{line}");
    let _ = stats_out.flush();
    if let Some(out) = &dp.cfg.config.router.out {
        let mut s = report::summary_json(&dp, now, busy_ns as f64 / 1e9);
        s["stop"] = serde_json::Value::from(gone.clone().unwrap_or_else(|| "signal".into()));
        report::write_summary(Path::new(out), &s).map_err(|e| sys(&format!("summary in {out}"), e))?;
    }
    match gone {
        Some(why) => Err(RunError::System(format!("{why}: stopped (summary written)"))),
        None => Ok(()),
    }
}

/// This thread's CPU time (ns), user and system: what the loop itself spent.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What `ppoll` found: a call posted, a socket in error.
#[derive(Clone, Copy, Debug, Default)]
struct Ready {
    mail: bool,
    err: [bool; 2],
}

/// Are frames waiting on `sock` (a poll that does not wait)?
fn readable(sock: &FrameSocket) -> bool {
    let mut p = libc::pollfd { fd: sock.fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one live pollfd, no wait.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & libc::POLLIN != 0 }
}

fn wait(socks: &[FrameSocket; 2], mailbox: &Mailbox, ns: u64, rx: bool) -> Ready {
    let ev = if rx { libc::POLLIN } else { 0 };
    let mut fds = [
        libc::pollfd { fd: socks[0].fd(), events: ev, revents: 0 },
        libc::pollfd { fd: socks[1].fd(), events: ev, revents: 0 },
        libc::pollfd { fd: mailbox.fd(), events: libc::POLLIN, revents: 0 },
    ];
    let ts =
        libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
    // SAFETY: `fds` and `ts` are live for the call.
    unsafe {
        libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null());
    }
    let bad = libc::POLLERR | libc::POLLHUP | libc::POLLNVAL;
    Ready { mail: fds[2].revents & libc::POLLIN != 0, err: [fds[0].revents & bad != 0, fds[1].revents & bad != 0] }
}
