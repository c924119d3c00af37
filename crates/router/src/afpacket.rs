//! AF_PACKET sockets, one per interface: frames are received in
//! `recvmmsg` batches straight into buffer-pool slots, and sent in
//! `sendmmsg` batches of the frames the pacer released in one pass (each
//! one already due: the batch only saves system calls). The message
//! headers of both live in a reused [`MsgBatch`].
//!
//! Each socket is bound to its interface with `ETH_P_ALL` (it was opened
//! with protocol 0 so that it sees nothing before the bind), puts the
//! interface in promiscuous mode (the router forwards frames addressed to
//! the hosts behind it), ignores its own outgoing frames
//! (`PACKET_IGNORE_OUTGOING`, Linux 4.20) and bypasses the interface's
//! qdisc on send (`PACKET_QDISC_BYPASS`): nothing queues below the pacer.
//!
//! **VLAN tags.** A driver with VLAN receive offload (veth always, most
//! NICs by default) strips a received frame's outer tag into metadata, so
//! the bytes read have no tag. The socket asks for that metadata
//! (`PACKET_AUXDATA`) and, when a frame carried a tag, writes it back into
//! the frame (after the MAC addresses) before the datapath sees it: tagged
//! frames leave tagged. Each slot keeps 4 bytes for it: frames longer than
//! [`RX_ROOM`] are too long to forward (reported longer than a slot, so the
//! datapath drops them as oversize).
//!
//! **Kernel drops.** Frames the kernel dropped for this socket (its receive
//! buffer full, e.g. while the pool had no free slot) are read with
//! `PACKET_STATISTICS` (which resets the kernel's counters on each read:
//! [`PacketSocket::kernel_drops`] adds them up).

use crate::pool::{Pool, SLOT};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

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
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, &one, "PACKET_AUXDATA")?;
        let buf: libc::c_int = 8 << 20;
        // FORCE needs CAP_NET_ADMIN; fall back to the capped size without it.
        if setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &buf, "SO_RCVBUFFORCE").is_err() {
            setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &buf, "SO_RCVBUF")?;
        }
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
        Ok(PacketSocket { fd, ifindex, name: name.to_string(), kernel_drops: 0 })
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
    /// [`RX_ROOM`] arrives truncated, with `len` more than a slot.
    pub fn recv_batch(
        &self,
        m: &mut MsgBatch,
        pool: &mut Pool,
        max: usize,
        out: &mut Vec<(u32, usize)>,
    ) -> io::Result<usize> {
        m.slots.clear();
        while m.slots.len() < max.min(m.msgs.len()) {
            match pool.alloc() {
                Some(s) => m.slots.push(s),
                None => break,
            }
        }
        let n = m.slots.len();
        if n == 0 {
            return Ok(0);
        }
        let base = pool.base_ptr();
        for i in 0..n {
            // SAFETY: the slot lies inside `pool`'s block, which outlives the call.
            let buf = unsafe { base.add(m.slots[i] as usize * SLOT) };
            m.set(i, buf, RX_ROOM);
            m.want_control(i);
        }
        // SAFETY: `m.msgs[..n]` are initialised headers over live buffers.
        let r = unsafe {
            libc::recvmmsg(
                self.fd(),
                m.msgs.as_mut_ptr(),
                n as u32,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        let got = if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::WouldBlock && e.raw_os_error() != Some(libc::EINTR) {
                for &s in &m.slots {
                    pool.free(s);
                }
                return Err(e);
            }
            0
        } else {
            r as usize
        };
        for i in 0..got {
            let (slot, len) = (m.slots[i], m.msgs[i].msg_len as usize);
            if len > RX_ROOM {
                out.push((slot, len.max(SLOT + 1)));
                continue;
            }
            match m.vlan(i) {
                Some((tpid, tci)) => {
                    let f = pool.slot_mut(slot);
                    f.copy_within(12..len, 12 + VLAN_TAG);
                    f[12..14].copy_from_slice(&tpid.to_be_bytes());
                    f[14..16].copy_from_slice(&tci.to_be_bytes());
                    out.push((slot, len + VLAN_TAG));
                }
                None => out.push((slot, len)),
            }
        }
        for &s in &m.slots[got..n] {
            pool.free(s);
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

/// Bytes of control data per received frame: one `PACKET_AUXDATA` message
/// (CMSG_SPACE of a 20-byte `tpacket_auxdata`: 40 bytes), in u64 words for alignment.
const CONTROL_WORDS: usize = 6;

/// The message headers of one `recvmmsg` or `sendmmsg` call (one frame
/// each), allocated once and reused, with the pool slots they point at and
/// each message's control buffer (a received frame's VLAN metadata).
pub struct MsgBatch {
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    control: Vec<[u64; CONTROL_WORDS]>,
    slots: Vec<u32>,
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
        MsgBatch {
            iov: vec![zero_iov; max],
            msgs: vec![zero_msg; max],
            control: vec![[0; CONTROL_WORDS]; max],
            slots: Vec::with_capacity(max),
        }
    }

    /// Points message `i` at the `len` bytes at `buf` (no control data).
    fn set(&mut self, i: usize, buf: *mut u8, len: usize) {
        self.iov[i] = libc::iovec { iov_base: buf as *mut libc::c_void, iov_len: len };
        let h = &mut self.msgs[i];
        h.msg_hdr.msg_iov = &mut self.iov[i];
        h.msg_hdr.msg_iovlen = 1;
        h.msg_hdr.msg_control = std::ptr::null_mut();
        h.msg_hdr.msg_controllen = 0;
        h.msg_len = 0;
    }

    /// Lets message `i` receive control data (the frame's `PACKET_AUXDATA`).
    fn want_control(&mut self, i: usize) {
        let h = &mut self.msgs[i].msg_hdr;
        h.msg_control = self.control[i].as_mut_ptr() as *mut libc::c_void;
        h.msg_controllen = std::mem::size_of::<[u64; CONTROL_WORDS]>() as _;
    }

    /// The VLAN tag (TPID, TCI) the kernel took off received frame `i`, if any.
    fn vlan(&self, i: usize) -> Option<(u16, u16)> {
        let h = &self.msgs[i].msg_hdr;
        // SAFETY: the kernel wrote `msg_controllen` bytes of well-formed cmsgs into
        // our buffer; CMSG_FIRSTHDR/NXTHDR stay inside it.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_PACKET
                    && (*c).cmsg_type == libc::PACKET_AUXDATA
                    && (*c).cmsg_len as usize
                        >= libc::CMSG_LEN(std::mem::size_of::<libc::tpacket_auxdata>() as u32) as usize
                {
                    let a: libc::tpacket_auxdata =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::tpacket_auxdata);
                    if a.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                        let tpid =
                            if a.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 { a.tp_vlan_tpid } else { 0x8100 };
                        return Some((tpid, a.tp_vlan_tci));
                    }
                    return None;
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }
}
