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

/// A raw AF_PACKET socket for every EtherType, bound to `dev` (in the calling thread's namespace),
/// for the tests' and the benchmark's senders and captures.
pub fn packet_socket(dev: &str) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    let idx = crate::afpacket::ifindex(dev).unwrap_or_else(|| panic!("no interface {dev}"));
    // SAFETY: plain socket/bind calls; the fd is owned right away.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = idx;
        let r = libc::bind(
            fd.as_raw_fd(),
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        );
        assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
        fd
    }
}

/// Sets an integer socket option (a test helper: failures are ignored, as the option's effect is
/// what the caller checks).
pub fn set_int_opt(fd: &impl AsRawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: setsockopt with a live c_int of the size passed.
    unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, &value as *const libc::c_int as *const libc::c_void, 4) };
}

/// Sets a receive timeout on `fd`.
pub fn set_recv_timeout(fd: &impl AsRawFd, t: std::time::Duration) {
    let tv = libc::timeval { tv_sec: t.as_secs() as libc::time_t, tv_usec: t.subsec_micros() as libc::suseconds_t };
    // SAFETY: setsockopt with a live timeval of the size passed.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as u32,
        )
    };
}

/// One `recvmsg` into `buf`: its return value, and `each` called with every control message's
/// level, type and data.
pub fn recv_with_cmsgs(fd: &impl AsRawFd, buf: &mut [u8], mut each: impl FnMut(i32, i32, &[u8])) -> isize {
    let mut ctl = [0u64; 16];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: msghdr is plain data; it points at live buffers for the call.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
    m.msg_controllen = std::mem::size_of_val(&ctl) as _;
    // SAFETY: as above.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut m, 0) };
    if n > 0 {
        // SAFETY: walks the control messages the kernel wrote into `ctl`; each data slice lies
        // within its message (cmsg_len counts the header, CMSG_LEN(0)).
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&m);
            while !c.is_null() {
                let len = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                each((*c).cmsg_level, (*c).cmsg_type, std::slice::from_raw_parts(libc::CMSG_DATA(c), len));
                c = libc::CMSG_NXTHDR(&m, c);
            }
        }
    }
    n
}
