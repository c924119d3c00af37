//! The router's two ways to reach an interface (`router.io`): AF_PACKET
//! sockets ([`crate::afpacket`], the default) or AF_XDP sockets
//! ([`crate::afxdp`]). The daemon's loop calls the same four operations
//! on either.

use crate::afpacket::{MsgBatch, PacketSocket};
use crate::afxdp::XdpSocket;
use crate::config::IoMode;
use crate::pool::Pool;
use std::io;
use std::os::fd::RawFd;

/// A socket on one interface.
#[derive(Debug)]
pub enum FrameSocket {
    Packet(PacketSocket),
    Xdp(Box<XdpSocket>),
}

impl FrameSocket {
    /// Opens interface `name` the way `mode` says.
    pub fn open(name: &str, mode: IoMode) -> io::Result<FrameSocket> {
        Ok(match mode {
            IoMode::AfPacket => FrameSocket::Packet(PacketSocket::open(name)?),
            IoMode::AfXdp => FrameSocket::Xdp(Box::new(XdpSocket::open(name)?)),
        })
    }
    /// The descriptor to wait on for arrivals.
    pub fn fd(&self) -> RawFd {
        match self {
            FrameSocket::Packet(s) => s.fd(),
            FrameSocket::Xdp(s) => s.fd(),
        }
    }
    /// Up to `max` frames into free pool slots, appended to `out` as `(slot, len)`.
    pub fn recv_batch(&mut self, pool: &mut Pool, max: usize, out: &mut Vec<(u32, usize)>) -> io::Result<usize> {
        match self {
            FrameSocket::Packet(s) => s.recv_batch(pool, max, out),
            FrameSocket::Xdp(s) => Ok(s.recv_batch(pool, max, out)),
        }
    }
    /// The frames in `slots`, in order; `sent[i]` when frame `i` went.
    pub fn send_batch(&mut self, m: &mut MsgBatch, pool: &Pool, slots: &[u32], sent: &mut [bool]) {
        match self {
            FrameSocket::Packet(s) => s.send_batch(m, pool, slots, sent),
            FrameSocket::Xdp(s) => s.send_batch(pool, slots, sent),
        }
    }
    /// Frames the kernel dropped before the router read them, since the socket opened.
    pub fn kernel_drops(&mut self) -> u64 {
        match self {
            FrameSocket::Packet(s) => s.kernel_drops(),
            FrameSocket::Xdp(s) => s.kernel_drops(),
        }
    }
    /// The socket's pending error, cleared (`SO_ERROR`): ENETDOWN when its
    /// interface went down or away.
    pub fn take_error(&self) -> Option<io::Error> {
        let mut e: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes one c_int.
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                &mut e as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        (r == 0 && e != 0).then(|| io::Error::from_raw_os_error(e))
    }
    /// The interface's name and the index it was opened on.
    pub fn interface(&self) -> (&str, i32) {
        match self {
            FrameSocket::Packet(s) => (&s.name, s.ifindex),
            FrameSocket::Xdp(s) => (&s.name, s.ifindex),
        }
    }
}
