//! A small ordered map kept as a vector sorted by key.
//!
//! For per-node tables that usually hold a handful of entries (a PCN
//! ingress's aggregates and flows): one entry costs its own size, where a
//! hash map reserves four buckets and a B-tree a node of eleven. Lookups
//! are a binary search; keys that arrive in increasing order (dense ids
//! handed out in sequence) are appended at the end.

/// A map from `K` to `V`, sorted by key.
#[derive(Clone, Debug)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { entries: Vec::new() }
    }
}

impl<K: Ord + Copy, V> VecMap<K, V> {
    pub fn new() -> Self {
        VecMap::default()
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    #[inline]
    fn find(&self, k: &K) -> Result<usize, usize> {
        // Fast path: a key at or past the last one (ids in sequence).
        match self.entries.last() {
            Some((last, _)) if *last == *k => Ok(self.entries.len() - 1),
            Some((last, _)) if *last < *k => Err(self.entries.len()),
            None => Err(0),
            _ => self.entries.binary_search_by(|(x, _)| x.cmp(k)),
        }
    }
    #[inline]
    pub fn get(&self, k: &K) -> Option<&V> {
        self.find(k).ok().map(|i| &self.entries[i].1)
    }
    #[inline]
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.find(k).ok().map(|i| &mut self.entries[i].1)
    }
    /// The value of `k`, inserted from `make` if absent.
    #[inline]
    pub fn get_or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&k) {
            Ok(i) => i,
            Err(i) => {
                if self.entries.capacity() == 0 {
                    self.entries.reserve_exact(1);
                }
                self.entries.insert(i, (k, make()));
                i
            }
        };
        &mut self.entries[i].1
    }
    /// Sets `k` to `v`, returning the value it replaces.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, v)),
            Err(_) => {
                self.get_or_insert_with(k, || v);
                None
            }
        }
    }
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.find(k).ok().map(|i| self.entries.remove(i).1)
    }
    /// Entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn one_entry_takes_one_slot() {
        let mut m: VecMap<u32, [u64; 8]> = VecMap::new();
        *m.get_or_insert_with(7, || [0; 8]) = [1; 8];
        assert_eq!(m.entries.capacity(), 1);
        assert_eq!(m.get(&7), Some(&[1; 8]));
        assert_eq!(m.get(&6), None);
    }

    proptest! {
        #[test]
        fn behaves_as_an_ordered_map(ops in proptest::collection::vec((0u8..4, 0u32..40, any::<u16>()), 0..300)) {
            let mut m = VecMap::new();
            let mut r = BTreeMap::new();
            for (op, k, v) in ops {
                match op {
                    0 => prop_assert_eq!(m.insert(k, v), r.insert(k, v)),
                    1 => prop_assert_eq!(m.remove(&k), r.remove(&k)),
                    2 => {
                        let got = *m.get_or_insert_with(k, || v);
                        prop_assert_eq!(got, *r.entry(k).or_insert(v));
                    }
                    _ => {
                        if let Some(x) = m.get_mut(&k) {
                            *x = x.wrapping_add(1);
                        }
                        if let Some(x) = r.get_mut(&k) {
                            *x = x.wrapping_add(1);
                        }
                    }
                }
                prop_assert_eq!(m.get(&k), r.get(&k));
                prop_assert_eq!(m.len(), r.len());
            }
            let a: Vec<_> = m.iter().map(|(k, v)| (*k, *v)).collect();
            let b: Vec<_> = r.into_iter().collect();
            prop_assert_eq!(a, b);
        }
    }
}
