//! The buffer pool: the bytes of every packet the router holds, in
//! fixed-size slots of one preallocated block. A packet's `handle` is its
//! slot number. The pool's size bounds the router's packet memory: when no
//! slot is free an arriving frame is not read (the kernel's socket buffer
//! holds or drops it); the daemon counts such a receive pass in
//! `pool_exhausted` and the kernel's drops in `drops.kernel`.

/// Bytes per slot: a full Ethernet frame with VLAN tags fits (frames longer
/// than this arrive truncated and are dropped as oversize).
pub const SLOT: usize = 2048;

/// Fixed-size packet buffers with a free list.
#[derive(Debug)]
pub struct Pool {
    bytes: Vec<u8>,
    len: Vec<u16>,
    free: Vec<u32>,
}

impl Pool {
    /// A pool of `slots` buffers, all free.
    pub fn new(slots: u32) -> Pool {
        Pool { bytes: vec![0; slots as usize * SLOT], len: vec![0; slots as usize], free: (0..slots).rev().collect() }
    }
    pub fn capacity(&self) -> usize {
        self.len.len()
    }
    pub fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }
    /// Takes a free slot, if any.
    #[inline]
    pub fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }
    /// Gives a slot back. Freeing a slot twice is a driver bug: debug builds assert.
    #[inline]
    pub fn free(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "slot {slot} freed twice");
        self.free.push(slot);
    }
    /// The whole slot, to receive into.
    #[inline]
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let s = slot as usize * SLOT;
        &mut self.bytes[s..s + SLOT]
    }
    /// Records the frame length held in `slot`.
    #[inline]
    pub fn set_len(&mut self, slot: u32, len: usize) {
        self.len[slot as usize] = len.min(SLOT) as u16;
    }
    /// The frame held in `slot`.
    #[inline]
    pub fn frame(&self, slot: u32) -> &[u8] {
        let s = slot as usize * SLOT;
        &self.bytes[s..s + self.len[slot as usize] as usize]
    }
    #[inline]
    pub fn frame_mut(&mut self, slot: u32) -> &mut [u8] {
        let s = slot as usize * SLOT;
        let n = self.len[slot as usize] as usize;
        &mut self.bytes[s..s + n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_allocates_every_slot_once_then_refuses() {
        let mut p = Pool::new(3);
        let got: Vec<u32> = (0..3).map(|_| p.alloc().unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2]);
        assert_eq!(p.alloc(), None);
        assert_eq!(p.in_use(), 3);
        p.slot_mut(1)[..3].copy_from_slice(&[7, 8, 9]);
        p.set_len(1, 3);
        assert_eq!(p.frame(1), &[7, 8, 9]);
        p.free(1);
        assert_eq!(p.alloc(), Some(1));
    }
}
