//! AF_XDP sockets (`router.io = "af_xdp"`), one per interface, in copy
//! mode: the other way for frames to reach the datapath, beside
//! [`crate::afpacket`].
//!
//! ```text
//! interface ── XDP program: bpf_redirect_map(xskmap, rx_queue_index, XDP_PASS) ──► XSK RX ring
//!     RX ring → copy into a pool slot → the datapath → a batch of due frames
//!     → copy into a TX frame of the UMEM → TX ring → sendto() kick → the interface
//!     completion ring → TX frames free again; fill ring ← RX frames handed back
//! ```
//!
//! Each socket has its own UMEM (4096 frames of 2048 B: half for receiving,
//! half for sending), its four rings (fill, completion, RX, TX), a
//! one-entry-per-queue XSKMAP with the socket at queue 0, and a five-
//! instruction XDP program (`ldxw`, `lddw` of the map, `mov`, `call
//! bpf_redirect_map`, `exit`) loaded with `bpf(BPF_PROG_LOAD)` and
//! attached through a BPF link (`BPF_LINK_CREATE`, driver mode, else
//! generic mode), so that it is detached when the socket is dropped, even
//! if the router dies. Frames arriving on another queue than 0 go to the
//! kernel's stack (`XDP_PASS`): the testbed's veth have one queue.
//!
//! Copies: frames are copied between the UMEM and the pool (a few
//! hundred ns at 1500 B, against the system calls AF_PACKET spends), so
//! the datapath and its pool stay as they are.

use crate::pool::{Pool, SLOT};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// UMEM frames per socket (half RX, half TX) and their size.
const FRAMES: u32 = 4096;
const FRAME: u32 = 2048;
/// Entries of each ring (a power of two).
const RING: u32 = 2048;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// `union bpf_attr` is 144 bytes on this kernel; larger is zero-padded.
const ATTR: usize = 160;

fn sys_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// `bpf(cmd, attr)`; the attribute block is little-endian words at offsets.
fn bpf(cmd: libc::c_long, attr: &mut [u8; ATTR], what: &str) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a live buffer of the size passed.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), ATTR as u32) };
    if r < 0 {
        return Err(sys_err(what));
    }
    // SAFETY: a successful bpf() of these commands returns a new fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

fn put32(a: &mut [u8; ATTR], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}
fn put64(a: &mut [u8; ATTR], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// One eBPF instruction: opcode, dst | src << 4, offset, immediate.
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0] = code;
    b[1] = dst | (src << 4);
    b[2..4].copy_from_slice(&off.to_ne_bytes());
    b[4..8].copy_from_slice(&imm.to_ne_bytes());
    b
}

/// Creates the XSKMAP, loads the redirect program and attaches it to
/// `ifindex`; returns (map, link) fds (the link holds the attachment).
fn attach_program(ifindex: i32) -> io::Result<(OwnedFd, OwnedFd, &'static str)> {
    let mut a = [0u8; ATTR];
    put32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
    put32(&mut a, 4, 4); // key: the queue index
    put32(&mut a, 8, 4); // value: the socket's fd
    put32(&mut a, 12, 64);
    let map = bpf(BPF_MAP_CREATE, &mut a, "bpf(BPF_MAP_CREATE, XSKMAP)")?;
    let prog: Vec<u8> = [
        insn(0x61, 2, 1, 16, 0),                    // r2 = ctx->rx_queue_index (u32 at 16)
        insn(0x18, 1, 1, 0, map.as_raw_fd()),       // r1 = the map (BPF_PSEUDO_MAP_FD)
        insn(0, 0, 0, 0, 0),                        //      (second half of the 64-bit load)
        insn(0xb7, 3, 0, 0, XDP_PASS),              // r3 = XDP_PASS if the queue has no socket
        insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP), // r0 = bpf_redirect_map(r1, r2, r3)
        insn(0x95, 0, 0, 0, 0),                     // return r0
    ]
    .concat();
    let license = c"GPL";
    let mut a = [0u8; ATTR];
    put32(&mut a, 0, BPF_PROG_TYPE_XDP);
    put32(&mut a, 4, (prog.len() / 8) as u32);
    put64(&mut a, 8, prog.as_ptr() as u64);
    put64(&mut a, 16, license.as_ptr() as u64);
    put32(&mut a, 68, BPF_XDP); // expected_attach_type
    let prog_fd = bpf(BPF_PROG_LOAD, &mut a, "bpf(BPF_PROG_LOAD, XDP redirect)")?;
    let mut last = None;
    for (flags, mode) in [(XDP_FLAGS_DRV_MODE, "driver"), (XDP_FLAGS_SKB_MODE, "generic")] {
        let mut a = [0u8; ATTR];
        put32(&mut a, 0, prog_fd.as_raw_fd() as u32);
        put32(&mut a, 4, ifindex as u32);
        put32(&mut a, 8, BPF_XDP);
        put32(&mut a, 12, flags);
        match bpf(BPF_LINK_CREATE, &mut a, "bpf(BPF_LINK_CREATE, XDP)") {
            Ok(link) => return Ok((map, link, mode)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("two modes tried"))
}

/// One mapped ring: producer and consumer indices and the entries.
struct Ring {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    desc: *mut u8,
    map: *mut libc::c_void,
    map_len: usize,
}

impl Ring {
    /// Maps the ring at page offset `pgoff` with entries of `entry` bytes.
    fn map(fd: RawFd, off: &libc::xdp_ring_offset, pgoff: u64, entry: usize, what: &str) -> io::Result<Ring> {
        let len = off.desc as usize + RING as usize * entry;
        // SAFETY: mmap of the socket's ring region; checked below.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        if m == libc::MAP_FAILED {
            return Err(sys_err(what));
        }
        let b = m as *mut u8;
        // SAFETY: the offsets come from XDP_MMAP_OFFSETS and lie inside the mapping.
        unsafe {
            Ok(Ring {
                producer: b.add(off.producer as usize) as *const AtomicU32,
                consumer: b.add(off.consumer as usize) as *const AtomicU32,
                desc: b.add(off.desc as usize),
                map: m,
                map_len: len,
            })
        }
    }
    fn prod(&self) -> &AtomicU32 {
        // SAFETY: points into the live mapping, 4-byte aligned (kernel layout).
        unsafe { &*self.producer }
    }
    fn cons(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }
    fn addr_at(&self, i: u32) -> *mut u64 {
        // SAFETY: `i & (RING - 1)` indexes an entry of the mapping (u64 entries).
        unsafe { (self.desc as *mut u64).add((i & (RING - 1)) as usize) }
    }
    fn desc_at(&self, i: u32) -> *mut libc::xdp_desc {
        // SAFETY: as above, with `xdp_desc` entries.
        unsafe { (self.desc as *mut libc::xdp_desc).add((i & (RING - 1)) as usize) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps what `map` mapped.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

/// An AF_XDP socket on queue 0 of one interface, with its UMEM and program.
pub struct XdpSocket {
    fill: Ring,
    comp: Ring,
    rx: Ring,
    tx: Ring,
    umem: *mut u8,
    /// UMEM addresses of TX frames not in flight.
    tx_free: Vec<u64>,
    fd: OwnedFd,
    _map: OwnedFd,
    _link: OwnedFd,
    pub ifindex: i32,
    pub name: String,
    /// `driver` or `generic` XDP.
    pub mode: &'static str,
}

impl std::fmt::Debug for XdpSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XdpSocket({}, {} XDP)", self.name, self.mode)
    }
}

fn setsockopt<T>(fd: RawFd, name: libc::c_int, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: `v` points to a live `T` of the size passed.
    let r = unsafe {
        libc::setsockopt(fd, libc::SOL_XDP, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    if r < 0 {
        Err(sys_err(what))
    } else {
        Ok(())
    }
}

impl XdpSocket {
    /// Opens an AF_XDP socket on queue 0 of interface `name` and redirects
    /// the interface's frames to it (needs CAP_NET_ADMIN and CAP_BPF).
    pub fn open(name: &str) -> io::Result<XdpSocket> {
        let ifindex = crate::afpacket::ifindex(name)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no interface named {name:?}")))?;
        // SAFETY: plain socket(2); the fd is owned at once.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(sys_err("socket(AF_XDP)"));
        }
        // SAFETY: a fresh fd nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let len = (FRAMES * FRAME) as usize;
        // SAFETY: an anonymous private mapping, checked below.
        let umem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if umem == libc::MAP_FAILED {
            return Err(sys_err("mmap(UMEM)"));
        }
        // From here on `umem` is unmapped by `Umem`'s drop on every error path.
        let guard = Umem(umem, len);
        // SAFETY: xdp_umem_reg is plain data.
        let mut reg: libc::xdp_umem_reg = unsafe { std::mem::zeroed() };
        reg.addr = umem as u64;
        reg.len = len as u64;
        reg.chunk_size = FRAME;
        setsockopt(raw, libc::XDP_UMEM_REG, &reg, "XDP_UMEM_REG")?;
        for (opt, what) in [
            (libc::XDP_UMEM_FILL_RING, "XDP_UMEM_FILL_RING"),
            (libc::XDP_UMEM_COMPLETION_RING, "XDP_UMEM_COMPLETION_RING"),
            (libc::XDP_RX_RING, "XDP_RX_RING"),
            (libc::XDP_TX_RING, "XDP_TX_RING"),
        ] {
            setsockopt(raw, opt, &RING, what)?;
        }
        // SAFETY: xdp_mmap_offsets is plain data, filled by getsockopt.
        let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
        let mut ol = std::mem::size_of::<libc::xdp_mmap_offsets>() as libc::socklen_t;
        // SAFETY: `off` is live and `ol` its size.
        let r = unsafe {
            libc::getsockopt(
                raw,
                libc::SOL_XDP,
                libc::XDP_MMAP_OFFSETS,
                &mut off as *mut libc::xdp_mmap_offsets as *mut libc::c_void,
                &mut ol,
            )
        };
        if r < 0 {
            return Err(sys_err("XDP_MMAP_OFFSETS"));
        }
        let d = std::mem::size_of::<libc::xdp_desc>();
        let fill = Ring::map(raw, &off.fr, libc::XDP_UMEM_PGOFF_FILL_RING, 8, "mmap(fill ring)")?;
        let comp = Ring::map(raw, &off.cr, libc::XDP_UMEM_PGOFF_COMPLETION_RING, 8, "mmap(completion ring)")?;
        let rx = Ring::map(raw, &off.rx, libc::XDP_PGOFF_RX_RING as u64, d, "mmap(RX ring)")?;
        let tx = Ring::map(raw, &off.tx, libc::XDP_PGOFF_TX_RING as u64, d, "mmap(TX ring)")?;
        // The first half of the UMEM receives: hand it all to the fill ring.
        let half = FRAMES / 2;
        let p = fill.prod().load(Ordering::Relaxed);
        for i in 0..half.min(RING) {
            // SAFETY: an entry of the fill ring, which we produce into.
            unsafe { *fill.addr_at(p + i) = (i * FRAME) as u64 };
        }
        fill.prod().store(p + half.min(RING), Ordering::Release);
        let tx_free: Vec<u64> = (half..FRAMES).map(|i| (i * FRAME) as u64).collect();
        // SAFETY: sockaddr_xdp is plain data.
        let mut sa: libc::sockaddr_xdp = unsafe { std::mem::zeroed() };
        sa.sxdp_family = libc::AF_XDP as u16;
        sa.sxdp_flags = libc::XDP_COPY;
        sa.sxdp_ifindex = ifindex as u32;
        sa.sxdp_queue_id = 0;
        // SAFETY: `sa` is a live sockaddr_xdp of the size passed.
        let r = unsafe {
            libc::bind(
                raw,
                &sa as *const libc::sockaddr_xdp as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_xdp>() as u32,
            )
        };
        if r < 0 {
            return Err(sys_err("bind(AF_XDP, queue 0)"));
        }
        let (map, link, mode) = attach_program(ifindex)?;
        let (key, value) = (0u32, raw as u32);
        let mut a = [0u8; ATTR];
        put32(&mut a, 0, map.as_raw_fd() as u32);
        put64(&mut a, 8, &key as *const u32 as u64);
        put64(&mut a, 16, &value as *const u32 as u64);
        // BPF_MAP_UPDATE_ELEM returns 0, not an fd.
        // SAFETY: `a` is live and points at live key and value.
        if unsafe { libc::syscall(libc::SYS_bpf, BPF_MAP_UPDATE_ELEM, a.as_mut_ptr(), ATTR as u32) } < 0 {
            return Err(sys_err("bpf(BPF_MAP_UPDATE_ELEM, XSKMAP)"));
        }
        std::mem::forget(guard);
        Ok(XdpSocket {
            fill,
            comp,
            rx,
            tx,
            umem: umem as *mut u8,
            tx_free,
            fd,
            _map: map,
            _link: link,
            ifindex,
            name: name.to_string(),
            mode,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Frames the kernel dropped for this socket since it was opened
    /// (`XDP_STATISTICS`, cumulative): no fill-ring frame (`rx_dropped`),
    /// the RX ring full (`rx_ring_full`), a descriptor it could not use.
    pub fn kernel_drops(&self) -> u64 {
        // SAFETY: xdp_statistics is plain data; getsockopt writes at most `len` bytes.
        let mut st: libc::xdp_statistics = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::xdp_statistics>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_XDP,
                libc::XDP_STATISTICS,
                &mut st as *mut libc::xdp_statistics as *mut libc::c_void,
                &mut len,
            )
        };
        if r == 0 {
            st.rx_dropped + st.rx_ring_full + st.rx_invalid_descs
        } else {
            0
        }
    }

    /// As [`crate::afpacket::PacketSocket::recv_batch`]: up to `max`
    /// frames into free pool slots (copied out of the UMEM, whose frames
    /// go straight back to the fill ring).
    pub fn recv_batch(&mut self, pool: &mut Pool, max: usize, out: &mut Vec<(u32, usize)>) -> usize {
        let cons = self.rx.cons().load(Ordering::Relaxed);
        let ready = self.rx.prod().load(Ordering::Acquire).wrapping_sub(cons);
        let fp = self.fill.prod().load(Ordering::Relaxed);
        let mut n = 0u32;
        while n < ready && (n as usize) < max {
            let Some(slot) = pool.alloc() else { break };
            // SAFETY: entry `cons + n` was produced by the kernel (below `ready`).
            let d = unsafe { *self.rx.desc_at(cons.wrapping_add(n)) };
            // A frame longer than a slot is copied in part; the datapath drops it as oversize.
            let len = d.len as usize;
            let take = len.min(SLOT);
            // SAFETY: the kernel wrote `len` bytes at `addr` inside the UMEM.
            let src = unsafe { std::slice::from_raw_parts(self.umem.add(d.addr as usize), take) };
            pool.slot_mut(slot)[..take].copy_from_slice(src);
            out.push((slot, len));
            // SAFETY: the fill ring has room: every RX frame came from it.
            unsafe { *self.fill.addr_at(fp.wrapping_add(n)) = d.addr - d.addr % FRAME as u64 };
            n += 1;
        }
        if n > 0 {
            self.rx.cons().store(cons.wrapping_add(n), Ordering::Release);
            self.fill.prod().store(fp.wrapping_add(n), Ordering::Release);
        }
        n as usize
    }

    /// Takes back the TX frames the kernel has sent.
    fn reclaim(&mut self) {
        let cons = self.comp.cons().load(Ordering::Relaxed);
        let done = self.comp.prod().load(Ordering::Acquire).wrapping_sub(cons);
        for i in 0..done {
            // SAFETY: entry produced by the kernel.
            self.tx_free.push(unsafe { *self.comp.addr_at(cons.wrapping_add(i)) });
        }
        self.comp.cons().store(cons.wrapping_add(done), Ordering::Release);
    }

    /// Queues `frame` on the TX ring; false when no TX frame is free.
    fn queue(&mut self, frame: &[u8], prod: u32) -> bool {
        let Some(addr) = self.tx_free.pop() else { return false };
        let n = frame.len().min(FRAME as usize);
        // SAFETY: `addr` is a free TX frame of FRAME bytes inside the UMEM.
        unsafe {
            std::ptr::copy_nonoverlapping(frame.as_ptr(), self.umem.add(addr as usize), n);
            *self.tx.desc_at(prod) = libc::xdp_desc { addr, len: n as u32, options: 0 };
        }
        true
    }

    /// Publishes the TX ring up to `prod` and kicks the kernel until it has
    /// taken everything queued (copy mode sends at most 32 frames a call).
    fn kick(&mut self, prod: u32) {
        self.tx.prod().store(prod, Ordering::Release);
        for _ in 0..RING / 16 {
            if self.tx.cons().load(Ordering::Acquire) == prod {
                break;
            }
            // SAFETY: sendto with no data is the AF_XDP TX doorbell.
            let r = unsafe { libc::sendto(self.fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
            if r < 0 {
                let e = io::Error::last_os_error().raw_os_error();
                if !matches!(e, Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) | Some(libc::EINTR)) {
                    break;
                }
            }
        }
        self.reclaim();
    }

    /// As [`crate::afpacket::PacketSocket::send_batch`]: `sent[i]` when
    /// frame `i` went onto the TX ring (false: no free TX frame).
    pub fn send_batch(&mut self, pool: &Pool, slots: &[u32], sent: &mut [bool]) {
        self.reclaim();
        let mut prod = self.tx.prod().load(Ordering::Relaxed);
        for (s, ok) in slots.iter().zip(sent.iter_mut()) {
            *ok = self.queue(pool.frame(*s), prod);
            prod = prod.wrapping_add(*ok as u32);
        }
        self.kick(prod);
    }
}

/// Unmaps the UMEM if opening fails half way.
struct Umem(*mut libc::c_void, usize);

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `open`.
        unsafe { libc::munmap(self.0, self.1) };
    }
}

impl Drop for XdpSocket {
    fn drop(&mut self) {
        // The rings unmap themselves; the link and socket fds close after.
        // SAFETY: unmaps the UMEM mapped in `open`.
        unsafe { libc::munmap(self.umem as *mut libc::c_void, (FRAMES * FRAME) as usize) };
    }
}
