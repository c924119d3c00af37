//! AF_PACKET sockets, one per interface: frames are received from a
//! memory-mapped receive ring (`PACKET_RX_RING`, `TPACKET_V2`) and copied
//! into buffer-pool slots, and sent in `sendmmsg` batches of the frames the
//! pacer released in one pass (each one already due: the batch only saves
//! system calls). The send message headers live in a reused [`MsgBatch`].
//!
//! Each socket is bound to its interface with `ETH_P_ALL` (it was opened
//! with protocol 0 so that it sees nothing before the bind), puts the
//! interface in promiscuous mode (the router forwards frames addressed to
//! the hosts behind it), ignores its own outgoing frames
//! (`PACKET_IGNORE_OUTGOING`, Linux 4.20) and bypasses the interface's
//! qdisc on send (`PACKET_QDISC_BYPASS`): nothing queues below the pacer.
//!
//! **The receive ring.** [`RING_FRAMES`] frames of [`RING_FRAME`] bytes
//! (16 MiB a socket): the kernel writes each frame and its header (length,
//! VLAN tag) into the next free ring frame and hands it over
//! (`TP_STATUS_USER`); the loop copies it into a pool slot and gives the
//! ring frame back (`TP_STATUS_KERNEL`). Reading costs no system call, and
//! the VLAN metadata comes in the header: `recvmmsg` with `PACKET_AUXDATA`
//! cost up to 131 ns more per frame than without, a control message the
//! kernel builds and copies out for each frame (docs/performance.md,
//! "Cause and fix of the 64 B difference").
//!
//! **VLAN tags.** A driver with VLAN receive offload (veth always, most
//! NICs by default) strips a received frame's outer tag into metadata, so
//! the bytes read have no tag. The ring header carries that metadata
//! (`TP_STATUS_VLAN_VALID`) and, when a frame carried a tag, the tag is
//! written back into the frame (after the MAC addresses) as it is copied
//! into its slot: tagged frames leave tagged. Each slot keeps 4 bytes for
//! it: frames longer than [`RX_ROOM`] are too long to forward (reported
//! longer than a slot, so the datapath drops them as oversize).
//!
//! **Kernel drops.** Frames the kernel dropped for this socket (its ring
//! full, e.g. while the pool had no free slot) are read with
//! `PACKET_STATISTICS` (which resets the kernel's counters on each read:
//! [`PacketSocket::kernel_drops`] adds them up).

use crate::pool::{Pool, SLOT};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// `tpacket_versions::TPACKET_V2` (linux/if_packet.h).
const TPACKET_V2: libc::c_int = 1;

/// Bytes per receive-ring frame: the ring header and a frame of up to
/// [`RX_ROOM`] bytes fit (the kernel puts the frame at offset 34 for a
/// `TPACKET_V2` raw socket), so no frame a slot can hold is cut.
pub const RING_FRAME: usize = 4096;
/// Frames in one socket's receive ring (the frames the kernel can hold
/// while the loop is away; beyond them it drops, counted in `drops.kernel`).
pub const RING_FRAMES: usize = 4096;
/// Ring frames per block (a block is a run of contiguous kernel pages).
const RING_BLOCK_FRAMES: usize = 32;

/// Room for a received frame: a slot less the 4 bytes a restored VLAN tag takes.
pub const RX_ROOM: usize = SLOT - VLAN_TAG;
const VLAN_TAG: usize = 4;

/// An AF_PACKET socket bound to one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    pub ifindex: i32,
    pub name: String,
    /// `PACKET_STATISTICS` drops read so far (the kernel resets its count on each read).
    kernel_drops: u64,
    ring: RxRing,
}

/// The receive ring, mapped into this process; unmapped on drop.
#[derive(Debug)]
struct RxRing {
    base: *mut u8,
    /// The next ring frame to read.
    head: usize,
}

// SAFETY: the mapping is owned by the ring and only touched through `&mut self`.
unsafe impl Send for RxRing {}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: `base` is the start of a live mapping of this size, unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, RING_FRAME * RING_FRAMES) };
    }
}

/// The index of interface `name`, if it exists.
pub fn ifindex(name: &str) -> Option<i32> {
    let c = CString::new(name).ok()?;
    // SAFETY: `c` is a valid NUL-terminated string for the call's duration.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (i != 0).then_some(i as i32)
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: `v` points to a live `T` of the size passed.
    let r = unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    check(r, what).map(|_| ())
}

impl PacketSocket {
    /// Opens and binds a socket on interface `name` (needs CAP_NET_RAW).
    pub fn open(name: &str) -> io::Result<PacketSocket> {
        let ifindex = ifindex(name)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no interface named {name:?}")))?;
        // SAFETY: plain socket(2) call; the fd is owned below.
        let raw = check(
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) },
            "socket(AF_PACKET)",
        )?;
        // SAFETY: `raw` is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one: libc::c_int = 1;
        setsockopt(raw, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, "PACKET_IGNORE_OUTGOING")?;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one, "PACKET_QDISC_BYPASS")?;
        let ring = RxRing::map(raw)?;
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll of the size passed.
        check(
            unsafe {
                libc::bind(
                    raw,
                    &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            },
            "bind(AF_PACKET)",
        )?;
        // SAFETY: packet_mreq is plain data.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = ifindex;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mr, "PACKET_ADD_MEMBERSHIP")?;
        Ok(PacketSocket { fd, ifindex, name: name.to_string(), kernel_drops: 0, ring })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Frames the kernel dropped for this socket since it was opened.
    pub fn kernel_drops(&mut self) -> u64 {
        // SAFETY: tpacket_stats is plain data; getsockopt writes at most `len` bytes.
        let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut st as *mut libc::tpacket_stats as *mut libc::c_void,
                &mut len,
            )
        };
        if r == 0 {
            self.kernel_drops += st.tp_drops as u64;
        }
        self.kernel_drops
    }

    /// Receives up to `max` frames into free pool slots; appends `(slot,
    /// len)` to `out` for each (the slot is then the caller's), and returns
    /// how many arrived (0: none waiting, or no free slot). A frame that
    /// carried a VLAN tag has it back (`len` counts it); a frame longer than
    /// [`RX_ROOM`] is not copied, and `len` is more than a slot.
    pub fn recv_batch(&mut self, pool: &mut Pool, max: usize, out: &mut Vec<(u32, usize)>) -> io::Result<usize> {
        let mut got = 0;
        while got < max {
            let hdr = self.ring.frame(self.ring.head);
            // SAFETY: `hdr` is the start of a ring frame: an aligned u32 the kernel also writes.
            let status = unsafe { AtomicU32::from_ptr(hdr as *mut u32) };
            let st = status.load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                break;
            }
            let Some(slot) = pool.alloc() else { break };
            // SAFETY: the kernel handed this frame over (TP_STATUS_USER): its header is written.
            let h: libc::tpacket2_hdr = unsafe { std::ptr::read(hdr as *const libc::tpacket2_hdr) };
            let (len, snap, mac) = (h.tp_len as usize, h.tp_snaplen as usize, h.tp_mac as usize);
            if len > RX_ROOM || snap < len || mac + len > RING_FRAME {
                out.push((slot, len.max(SLOT + 1)));
            } else {
                // SAFETY: the frame's `len` bytes lie inside this ring frame (checked above).
                let data = unsafe { std::slice::from_raw_parts(hdr.add(mac), len) };
                let f = pool.slot_mut(slot);
                if st & libc::TP_STATUS_VLAN_VALID != 0 && len >= 12 {
                    let tpid = if st & libc::TP_STATUS_VLAN_TPID_VALID != 0 { h.tp_vlan_tpid } else { 0x8100 };
                    f[..12].copy_from_slice(&data[..12]);
                    f[12..14].copy_from_slice(&tpid.to_be_bytes());
                    f[14..16].copy_from_slice(&h.tp_vlan_tci.to_be_bytes());
                    f[16..len + VLAN_TAG].copy_from_slice(&data[12..]);
                    out.push((slot, len + VLAN_TAG));
                } else {
                    f[..len].copy_from_slice(data);
                    out.push((slot, len));
                }
            }
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.ring.head = (self.ring.head + 1) % RING_FRAMES;
            got += 1;
        }
        Ok(got)
    }

    /// Sends the frames held in `slots`, in order, with as few `sendmmsg`
    /// calls as the kernel allows; `sent[i]` tells whether frame `i` went
    /// whole. A frame the kernel refuses (the call fails on it: a full
    /// device, `ENOBUFS`) is counted as not sent and the rest are tried,
    /// as one `send` per frame would.
    pub fn send_batch(&self, m: &mut MsgBatch, pool: &Pool, slots: &[u32], sent: &mut [bool]) {
        let mut i = 0;
        while i < slots.len() {
            let n = (slots.len() - i).min(m.msgs.len());
            for j in 0..n {
                let f = pool.frame(slots[i + j]);
                // The kernel only reads a frame being sent.
                m.set(j, f.as_ptr() as *mut u8, f.len());
            }
            // SAFETY: `m.msgs[..n]` are initialised headers over live frames.
            let r = unsafe { libc::sendmmsg(self.fd(), m.msgs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT) };
            if r <= 0 {
                if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                sent[i] = false;
                i += 1;
                continue;
            }
            for j in 0..r as usize {
                sent[i + j] = m.msgs[j].msg_len as usize == m.iov[j].iov_len;
            }
            i += r as usize;
        }
    }
}

/// The message headers of one `sendmmsg` call (one frame each), allocated
/// once and reused.
pub struct MsgBatch {
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

impl std::fmt::Debug for MsgBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MsgBatch({} messages)", self.msgs.len())
    }
}

impl MsgBatch {
    /// Headers for up to `max` frames a call.
    pub fn new(max: usize) -> MsgBatch {
        let max = max.max(1);
        // SAFETY: iovec and mmsghdr are plain data; all-zero is a valid value.
        let zero_iov: libc::iovec = unsafe { std::mem::zeroed() };
        let zero_msg: libc::mmsghdr = unsafe { std::mem::zeroed() };
        MsgBatch { iov: vec![zero_iov; max], msgs: vec![zero_msg; max] }
    }

    /// Points message `i` at the `len` bytes at `buf`.
    fn set(&mut self, i: usize, buf: *mut u8, len: usize) {
        self.iov[i] = libc::iovec { iov_base: buf as *mut libc::c_void, iov_len: len };
        let h = &mut self.msgs[i];
        h.msg_hdr.msg_iov = &mut self.iov[i];
        h.msg_hdr.msg_iovlen = 1;
        h.msg_hdr.msg_control = std::ptr::null_mut();
        h.msg_hdr.msg_controllen = 0;
        h.msg_len = 0;
    }
}

impl RxRing {
    /// Sets up the `TPACKET_V2` receive ring of socket `fd` and maps it.
    fn map(fd: RawFd) -> io::Result<RxRing> {
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
        let req = libc::tpacket_req {
            tp_block_size: (RING_FRAME * RING_BLOCK_FRAMES) as u32,
            tp_block_nr: (RING_FRAMES / RING_BLOCK_FRAMES) as u32,
            tp_frame_size: RING_FRAME as u32,
            tp_frame_nr: RING_FRAMES as u32,
        };
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        // SAFETY: maps the ring the kernel just allocated for `fd`; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RING_FRAME * RING_FRAMES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("mmap(PACKET_RX_RING): {e}")));
        }
        Ok(RxRing { base: base as *mut u8, head: 0 })
    }

    /// The start (header) of ring frame `i`.
    fn frame(&self, i: usize) -> *mut u8 {
        // SAFETY: `i < RING_FRAMES`, so the frame lies inside the mapping (frames are
        // contiguous: a block holds a whole number of them and blocks follow each other).
        unsafe { self.base.add(i * RING_FRAME) }
    }
}
