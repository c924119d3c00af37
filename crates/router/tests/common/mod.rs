//! The router in a testbed of three network namespaces joined by veth
//! pairs (`qoslab_router::testbed`):
//!
//! ```text
//! <p>-h1 [<p>-1 10.99.0.1 fd99::1] ── [<p>-a  <p>-r  <p>-b] ── [<p>-2 10.99.0.2 fd99::2] <p>-h2
//!                                       qoslab-router a=<p>-a b=<p>-b
//! ```
//!
//! Offloads are off on every end (GRO, GSO, TSO, checksums), so the router
//! sees wire-sized frames with complete checksums. Names carry a prefix
//! unique to the process and test; the namespaces (and with them the veth
//! pairs) are deleted when the [`Testbed`] is dropped, on failure too.
//! Traffic is sent and received by threads that enter a namespace with
//! `setns` (only the calling thread moves).

#![allow(dead_code)]

use std::fs::File;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The router binary the tests start: this build's, or the one `QOSLAB_TEST_ROUTER` names (to run
/// the same tests against an older build and see which of them it fails).
pub fn router_bin() -> String {
    std::env::var("QOSLAB_TEST_ROUTER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_qoslab-router").to_string())
}

/// Tests that measure time run one at a time (two shared cores).
pub static SERIAL: Mutex<()> = Mutex::new(());

static NEXT: AtomicU32 = AtomicU32::new(0);

use qoslab_router::testbed::Netns;
pub use qoslab_router::testbed::{in_ns, skip_reason};

/// Skips the calling test (returns from it) with the reason printed.
#[macro_export]
macro_rules! need_netns {
    () => {
        if let Some(why) = common::skip_reason() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

pub struct Testbed {
    pub p: String,
    pub dir: PathBuf,
    router: Option<Child>,
    // Dropped after the router is stopped (fields drop in order).
    _net: Netns,
}

impl Testbed {
    pub fn new() -> Testbed {
        let p = format!("qr{}x{}", std::process::id() % 100_000, NEXT.fetch_add(1, Ordering::SeqCst));
        let dir = std::env::temp_dir().join(format!("{p}.d"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let net = Netns::new(&p).unwrap_or_else(|e| panic!("testbed: {e}"));
        Testbed { p, dir, router: None, _net: net }
    }

    pub fn ns(&self, n: &str) -> String {
        format!("{}-{n}", self.p)
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.join("ctl.sock")
    }

    /// Writes the router's config (`[router]` filled in, `link` as given) and
    /// starts the router in the router namespace; waits for its control socket.
    pub fn start(&mut self, link: &str) -> PathBuf {
        self.start_with("", link)
    }

    /// [`Testbed::start`] with more `[router]` lines.
    pub fn start_with(&mut self, router: &str, link: &str) -> PathBuf {
        self.start_masked(router, link, false)
    }

    /// [`Testbed::start_with`]; with `blocked`, the router starts with SIGINT, SIGTERM and SIGHUP
    /// blocked (as a parent that blocks them for itself would start it).
    pub fn start_masked(&mut self, router: &str, link: &str, blocked: bool) -> PathBuf {
        let cfg = self.dir.join("router.toml");
        let text = format!(
            "[router]\na = \"{p}-a\"\nb = \"{p}-b\"\nstats = \"{d}/stats.jsonl\"\nout = \"{d}/out\"\n\
             control_socket = \"{s}\"\nstats_interval = \"200ms\"\n{router}\n[link]\ndelay = \"0s\"\n{link}",
            p = self.p,
            d = self.dir.display(),
            s = self.socket().display()
        );
        std::fs::write(&cfg, text).unwrap();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns("r"), &router_bin(), "run"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(File::create(self.dir.join("router.err")).unwrap());
        if blocked {
            use std::os::unix::process::CommandExt;
            // SAFETY: only sigset calls and pthread_sigmask (async-signal-safe) in the child.
            unsafe {
                cmd.pre_exec(|| {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                        libc::sigaddset(&mut set, s);
                    }
                    libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                    Ok(())
                });
            }
        }
        let child = cmd.spawn().expect("start qoslab-router");
        self.router = Some(child);
        let t0 = Instant::now();
        while !self.socket().exists() {
            assert!(t0.elapsed() < Duration::from_secs(5), "router did not start: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(10));
        }
        cfg
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("router.err")).unwrap_or_default()
    }

    /// A control command's JSON answer.
    pub fn ctl(&self, cmd: &str) -> serde_json::Value {
        let a = qoslab_router::control::request(&self.socket(), cmd).expect("control socket answers");
        serde_json::from_str(&a).unwrap_or_else(|e| panic!("{e}: {a}"))
    }

    /// Sends `sig` to the router.
    pub fn signal(&self, sig: i32) {
        let c = self.router.as_ref().expect("router running");
        // SAFETY: kill(2) on our own child (`ip netns exec` execs the router).
        unsafe { libc::kill(c.id() as i32, sig) };
    }

    /// Waits up to `timeout` for the router to exit by itself: its exit code and summary.json.
    pub fn wait_exit(&mut self, timeout: Duration) -> (Option<i32>, Option<serde_json::Value>) {
        let mut c = self.router.take().expect("router running");
        let t0 = Instant::now();
        let st = loop {
            if let Some(st) = c.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > timeout {
                self.router = Some(c);
                return (None, None);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let s = std::fs::read_to_string(self.dir.join("out/summary.json")).ok();
        (st.code(), s.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// SIGTERM the router, wait for it, and return summary.json.
    pub fn stop(&mut self) -> serde_json::Value {
        let mut c = self.router.take().expect("router running");
        // `ip netns exec` execs the router: the child's pid is the router's.
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let st = c.wait().unwrap();
        assert!(st.success(), "router exit {st}: {}", self.stderr());
        let s = std::fs::read_to_string(self.dir.join("out/summary.json")).expect("summary.json written");
        serde_json::from_str(&s).unwrap()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if let Some(mut c) = self.router.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a receiver saw.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub pkts: u64,
    pub bytes: u64,
    /// Arrival times (since the receiver started) of every packet, with its size.
    pub arrivals: Vec<(Duration, usize)>,
    pub by_tag: std::collections::BTreeMap<u8, u64>,
}

/// Receives UDP on `bind` until nothing arrives for `idle`.
pub fn receiver(ns: &str, bind: &str, idle: Duration) -> std::thread::JoinHandle<Received> {
    let bind: SocketAddr = bind.parse().unwrap();
    let ready = std::sync::Arc::new(std::sync::Barrier::new(2));
    let r2 = ready.clone();
    let h = in_ns(ns, move || {
        let s = UdpSocket::bind(bind).unwrap();
        s.set_read_timeout(Some(idle)).unwrap();
        r2.wait();
        let t0 = Instant::now();
        let mut out = Received::default();
        let mut buf = [0u8; 2048];
        while let Ok(n) = s.recv(&mut buf) {
            out.pkts += 1;
            out.bytes += n as u64;
            out.arrivals.push((t0.elapsed(), n));
            *out.by_tag.entry(buf[0]).or_default() += 1;
        }
        out
    });
    ready.wait();
    h
}

/// Sends `count` datagrams of `size` bytes (first byte `tag`) from `src`
/// (port 0: any) to `dst`, `gap` apart (busy-waiting on the clock).
pub fn sender(
    ns: &str,
    src: &str,
    dst: &str,
    count: u64,
    size: usize,
    tag: u8,
    gap: Duration,
) -> std::thread::JoinHandle<()> {
    sender_tos(ns, src, dst, count, size, tag, gap, 0)
}

/// [`sender`] with the IPv4 TOS byte set to `tos` (DSCP << 2 | ECN).
#[allow(clippy::too_many_arguments)]
pub fn sender_tos(
    ns: &str,
    src: &str,
    dst: &str,
    count: u64,
    size: usize,
    tag: u8,
    gap: Duration,
    tos: u8,
) -> std::thread::JoinHandle<()> {
    let src: SocketAddr = src.parse().unwrap();
    let dst: SocketAddr = dst.parse().unwrap();
    in_ns(ns, move || {
        let s = UdpSocket::bind(src).unwrap();
        if tos != 0 {
            let v: libc::c_int = tos as libc::c_int;
            // SAFETY: setsockopt with a live c_int of the size passed.
            let r = unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::IPPROTO_IP,
                    libc::IP_TOS,
                    &v as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                )
            };
            assert_eq!(r, 0, "IP_TOS");
        }
        let mut p = vec![0u8; size];
        p[0] = tag;
        let t0 = Instant::now();
        for i in 0..count {
            let due = t0 + gap * i as u32;
            while Instant::now() < due {
                let left = due - Instant::now();
                if left > Duration::from_micros(200) {
                    std::thread::sleep(left - Duration::from_micros(100));
                }
            }
            let _ = s.send_to(&p, dst);
        }
    })
}

/// Counts, by their ECN bits (0-3), the IPv4 UDP frames to `port` that
/// arrive on interface `dev` of namespace `ns` until nothing arrives for
/// `idle` (an AF_PACKET socket: the bits as they were on the wire).
pub fn capture_ecn(ns: &str, dev: &str, port: u16, idle: Duration) -> std::thread::JoinHandle<[u64; 4]> {
    let dev = dev.to_string();
    let ready = std::sync::Arc::new(std::sync::Barrier::new(2));
    let r2 = ready.clone();
    let h = in_ns(ns, move || {
        // A plain socket that `recv` reads (the router's own sockets read a ring instead).
        let s = qoslab_router::testbed::packet_socket(&dev);
        qoslab_router::testbed::set_recv_timeout(&s, idle);
        r2.wait();
        let mut counts = [0u64; 4];
        let mut buf = [0u8; 2048];
        loop {
            // SAFETY: recv into a live buffer of the size passed.
            let n = unsafe { libc::recv(s.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len(), 0) };
            if n <= 0 {
                break;
            }
            if let qoslab_router::parse::Frame::Ip(i) = qoslab_router::parse::parse(&buf[..n as usize]) {
                if i.key.dst_port == port && !i.v6 {
                    counts[i.ecn as usize] += 1;
                }
            }
        }
        counts
    });
    ready.wait();
    h
}
