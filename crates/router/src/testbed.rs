//! Three network namespaces joined by veth pairs, for the router's tests
//! and its benchmark (root only):
//!
//! ```text
//! <p>-h1 [<p>-1 10.99.0.1 fd99::1] ── [<p>-a  <p>-r  <p>-b] ── [<p>-2 10.99.0.2 fd99::2] <p>-h2
//! ```
//!
//! Offloads are off on every end (GRO, GSO, TSO, checksums: `ethtool -K`),
//! so the router sees wire-sized frames with complete checksums. The
//! namespaces (and with them the veth pairs) are deleted when the
//! [`Netns`] is dropped, on a failure too. [`in_ns`] runs a closure on a
//! thread that entered a namespace with `setns` (only that thread moves).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

/// Why namespaces cannot be used here, if they cannot. Probed once per process: tests running in
/// parallel threads would otherwise race on the one probe name (one of them failing to add it and
/// skipping, so a test that did not run passed).
pub fn skip_reason() -> Option<String> {
    static REASON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    REASON.get_or_init(probe).clone()
}

fn probe() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid != 0 {
        return Some(format!("needs root for network namespaces and AF_PACKET (euid {uid})"));
    }
    // Root is not enough in some containers: try a namespace with a veth pair in it.
    let probe = format!("qrprobe{}", std::process::id() % 100_000);
    let r = sh(&["ip", "netns", "add", &probe])
        .and_then(|_| sh(&["ip", "-n", &probe, "link", "add", "qrp0", "type", "veth", "peer", "name", "qrp1"]));
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    r.err().map(|e| format!("cannot make a network namespace with a veth pair: {e}"))
}

/// Runs a command; its stderr on failure.
pub fn sh(args: &[&str]) -> Result<(), String> {
    let o = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("{}: {e}", args[0]))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// The three namespaces `<p>-h1`, `<p>-r`, `<p>-h2`.
#[derive(Debug)]
pub struct Netns {
    pub p: String,
}

impl Netns {
    /// Builds the testbed under prefix `p` (at most 12 bytes: interface names are `<p>-a`).
    pub fn new(p: &str) -> Result<Netns, String> {
        let n = Netns { p: p.to_string() };
        for x in ["h1", "r", "h2"] {
            sh(&["ip", "netns", "add", &n.ns(x)])?;
        }
        let (h1, r, h2) = (n.ns("h1"), n.ns("r"), n.ns("h2"));
        let (i1, ia, ib, i2) = (n.dev("1"), n.dev("a"), n.dev("b"), n.dev("2"));
        sh(&["ip", "link", "add", &i1, "netns", &h1, "type", "veth", "peer", "name", &ia, "netns", &r])?;
        sh(&["ip", "link", "add", &i2, "netns", &h2, "type", "veth", "peer", "name", &ib, "netns", &r])?;
        for (ns, dev) in [(&h1, &i1), (&r, &ia), (&r, &ib), (&h2, &i2)] {
            // ethtool may be missing or refuse a feature a veth lacks; the rest still runs.
            let _ = Command::new("ip")
                .args(["netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"])
                .args(["tx", "off", "rx", "off"])
                .output();
            sh(&["ip", "-n", ns, "link", "set", dev, "up"])?;
        }
        sh(&["ip", "-n", &h1, "addr", "add", "10.99.0.1/24", "dev", &i1])?;
        sh(&["ip", "-n", &h2, "addr", "add", "10.99.0.2/24", "dev", &i2])?;
        sh(&["ip", "-n", &h1, "addr", "add", "fd99::1/64", "dev", &i1, "nodad"])?;
        sh(&["ip", "-n", &h2, "addr", "add", "fd99::2/64", "dev", &i2, "nodad"])?;
        Ok(n)
    }
    /// A namespace's full name: `h1`, `r`, `h2`.
    pub fn ns(&self, n: &str) -> String {
        format!("{}-{n}", self.p)
    }
    /// An interface's full name: `1` (h1's), `a`, `b` (the router's), `2` (h2's).
    pub fn dev(&self, n: &str) -> String {
        format!("{}-{n}", self.p)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in ["h1", "r", "h2"] {
            let _ = Command::new("ip").args(["netns", "del", &self.ns(n)]).output();
        }
    }
}

/// Runs `f` on a thread inside namespace `ns`.
pub fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    let path = Path::new("/var/run/netns").join(ns);
    std::thread::spawn(move || {
        let fd = File::open(&path).unwrap_or_else(|e| panic!("namespace {}: {e}", path.display()));
        // SAFETY: setns on a namespace fd; it moves only this thread.
        let r = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {}", path.display());
        f()
    })
}
