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
    pub fn recv_batch(
        &mut self,
        m: &mut MsgBatch,
        pool: &mut Pool,
        max: usize,
        out: &mut Vec<(u32, usize)>,
    ) -> io::Result<usize> {
        match self {
            FrameSocket::Packet(s) => s.recv_batch(m, pool, max, out),
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
    /// One frame (a frame that bypasses the ports).
    pub fn send(&mut self, frame: &[u8]) -> bool {
        match self {
            FrameSocket::Packet(s) => s.send(frame),
            FrameSocket::Xdp(s) => s.send(frame),
        }
    }
}
