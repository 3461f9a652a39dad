//! A memo bounded by the bytes it holds, shared by threads: what a compiler, its conditions
//! and the token bounds remember between compiles.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;

use rustc_hash::FxBuildHasher;

/// What an entry of a [`BoundedMemo`] costs beside the bytes its key and value hold: its slot
/// in the table with the table's spare capacity, and the headers of its allocations. A memo
/// of many small entries (a condition's result by the few values it read) would otherwise
/// hold several times what it counts.
const ENTRY_BYTES: usize = 64;

/// Results kept by key, shared by threads, up to a number of bytes: past it, what is kept is
/// dropped and the memory starts again, so a long run (a matrix of thousands of outputs)
/// holds a bounded amount. Never iterated: nothing depends on its order.
pub struct BoundedMemo<K, V> {
    limit: usize,
    /// Read side by side by the compile threads; written only on a miss.
    held: RwLock<Held<K, V>>,
}

struct Held<K, V> {
    by_key: HashMap<K, V, FxBuildHasher>,
    bytes: usize,
}

impl<K: Hash + Eq, V: Clone> BoundedMemo<K, V> {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            held: RwLock::new(Held {
                by_key: HashMap::default(),
                bytes: 0,
            }),
        }
    }

    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.held.read().ok()?.by_key.get(key).cloned()
    }

    /// What [`BoundedMemo::get`] finds for each of `keys`, in their order, under one lock:
    /// the token bounds ask for every part of a prompt, and the compile threads asking at
    /// once each took and gave back the lock (a write to memory both cores share) for every
    /// part.
    pub fn get_each<Q: Hash + Eq + ?Sized>(&self, keys: &[&Q]) -> Vec<Option<V>>
    where
        K: Borrow<Q>,
    {
        let Ok(held) = self.held.read() else {
            return vec![None; keys.len()];
        };
        keys.iter()
            .map(|key| held.by_key.get(*key).cloned())
            .collect()
    }

    /// Keeps `value` under `key`, counting `bytes` for what they hold and [`ENTRY_BYTES`] for
    /// the entry itself; one larger than the whole limit is not kept.
    pub fn insert(&self, key: K, value: V, bytes: usize) {
        self.insert_each([(key, value, bytes)]);
    }

    /// [`BoundedMemo::insert`] for each entry, under one lock.
    pub fn insert_each(&self, entries: impl IntoIterator<Item = (K, V, usize)>) {
        let Ok(mut held) = self.held.write() else {
            return;
        };
        for (key, value, bytes) in entries {
            let bytes = bytes + ENTRY_BYTES;
            if bytes > self.limit {
                continue;
            }
            if held.bytes + bytes > self.limit {
                // A new table: a cleared one would keep the capacity the old entries needed.
                held.by_key = HashMap::default();
                held.bytes = 0;
            }
            if held.by_key.insert(key, value).is_none() {
                held.bytes += bytes;
            }
        }
    }

    /// The bytes counted for what is kept now.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        self.held.read().map_or(0, |held| held.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However much is kept, the memory stays under its limit: past it, it starts again with
    /// the newest.
    #[test]
    fn a_bounded_memo_starts_again_past_its_limit() {
        let memo = BoundedMemo::new(100);
        for index in 0..50u32 {
            memo.insert(index, index, 30);
            assert!(memo.held_bytes() <= 100);
            assert_eq!(memo.get(&index), Some(index));
        }
        memo.insert(99, 99, 101);
        assert_eq!(memo.get(&99), None);
    }

    /// An entry costs memory whatever its key and value hold: a memo of tiny entries is
    /// bounded in number too.
    #[test]
    fn every_entry_counts_its_own_cost() {
        let memo = BoundedMemo::new(10 * ENTRY_BYTES);
        for index in 0..5u32 {
            memo.insert(index, (), 0);
        }
        assert_eq!(memo.held_bytes(), 5 * ENTRY_BYTES);
        for index in 5..1000u32 {
            memo.insert(index, (), 0);
            assert!(memo.held_bytes() <= 10 * ENTRY_BYTES);
        }
    }
}
