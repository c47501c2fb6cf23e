//! A fast hasher for the simulator's small integer keys (node and rack indices of the locality
//! model's per-job lists): one 64x64-bit multiply folded to 64 bits, instead of the standard
//! library's SipHash, which guards against adversarial keys the simulator never sees. Only lookup
//! speed changes: no output of the simulator depends on a map's iteration order.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-fold hasher for integer keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntHasher(u64);

impl IntHasher {
    #[inline]
    fn mix(&mut self, x: u64) {
        let p = ((self.0 ^ x) as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.mix(x as u64);
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.mix(x);
    }
}

/// A `HashMap` keyed by small integers, hashed with [`IntHasher`].
pub type IntMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    #[test]
    fn spreads_consecutive_keys_and_keeps_a_map_exact() {
        let build = BuildHasherDefault::<IntHasher>::default();
        let hashes: std::collections::BTreeSet<u64> = (0u32..10_000).map(|k| build.hash_one(k)).collect();
        assert_eq!(hashes.len(), 10_000, "no collisions among 10,000 consecutive keys");
        // The top 7 bits (hashbrown's control bytes) take many values over a few keys.
        let tops: std::collections::BTreeSet<u64> = (0u32..64).map(|k| build.hash_one(k) >> 57).collect();
        assert!(tops.len() > 32, "{}", tops.len());
        let mut m: IntMap<u32, u32> = IntMap::default();
        for k in 0..1000u32 {
            *m.entry(k % 97).or_default() += k;
        }
        assert_eq!(m.len(), 97);
        assert_eq!(m[&5], (0..1000u32).filter(|k| k % 97 == 5).sum::<u32>());
        let mut h = IntHasher::default();
        [1u8, 2, 3].hash(&mut h);
        assert_ne!(h.finish(), 0);
    }
}
