//! The one source of randomness: an RNG passed in by the driver.
//!
//! Every random choice in a run derives from the run's seed. Each entity
//! (a source, a queue) gets its own stream, `stream(seed, id)`, so adding a
//! flow to a scenario does not change the random choices of the others.

use rand::SeedableRng;

/// The generator every mechanism takes: xoshiro256++ (fast, 256-bit state).
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// SplitMix64 step (Steele, Lea & Flood 2014), used to derive stream seeds.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An independent generator for entity `stream` of a run seeded with `seed`.
pub fn stream(seed: u64, stream: u64) -> Rng {
    let s = splitmix64(seed ^ splitmix64(stream.wrapping_add(0xD1B5_4A32_D192_ED03)));
    Rng::seed_from_u64(s)
}

/// True with probability `p` (0 <= p <= 1): a link's loss draw, the simulator's and the router's
/// (`rand`'s Bernoulli trial, one draw from `rng`).
pub fn bernoulli(rng: &mut Rng, p: f64) -> bool {
    use rand::Rng as _;
    rng.random_bool(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(1, 0).random();
        let b: u64 = stream(1, 0).random();
        let c: u64 = stream(1, 1).random();
        let d: u64 = stream(2, 0).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
