//! The code arena's granule bitmaps: one bit per 16-byte granule, bit `i` is
//! `bits[i / 64] >> (i % 64) & 1`. Compiled on every host for its tests.

/// First-fit search for `n` consecutive clear bits in `bits` (bit `i` is `bits[i / 64] >> (i %
/// 64) & 1`); returns the index of the first bit of the run.
pub(super) fn find_clear_run(bits: &[u64], n: usize) -> Option<usize> {
    let total = bits.len() * 64;
    let mut i = 0;
    while i + n <= total {
        let b = i % 64;
        let word = bits[i / 64] >> b;
        if word & 1 != 0 {
            // skip the set bits from i (at most to the end of this word)
            i += (!word).trailing_zeros() as usize;
            continue;
        }
        // clear bits from i: to the next set bit of this word, then whole words
        let mut j = i + if word == 0 {
            64 - b
        } else {
            word.trailing_zeros() as usize
        };
        if j % 64 == 0 {
            while j - i < n && j < total {
                let w = bits[j / 64];
                if w == 0 {
                    j += 64;
                } else {
                    j += w.trailing_zeros() as usize;
                    break;
                }
            }
        }
        if j - i >= n {
            return Some(i);
        }
        i = j;
    }
    None
}

/// Sets (`on`) or clears bits `start..start + n`.
pub(super) fn set_bits(bits: &mut [u64], start: usize, n: usize, on: bool) {
    for i in start..start + n {
        let (w, m) = (i / 64, 1u64 << (i % 64));
        if on {
            bits[w] |= m;
        } else {
            bits[w] &= !m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_first_fitting_run() {
        let mut bits = vec![0u64; 2];
        assert_eq!(find_clear_run(&bits, 128), Some(0));
        assert_eq!(find_clear_run(&bits, 129), None);
        set_bits(&mut bits, 0, 3, true);
        assert_eq!(find_clear_run(&bits, 1), Some(3));
        set_bits(&mut bits, 10, 1, true);
        assert_eq!(find_clear_run(&bits, 7), Some(3));
        assert_eq!(find_clear_run(&bits, 8), Some(11));
        // a run crossing the word boundary
        set_bits(&mut bits, 11, 50, true);
        assert_eq!(find_clear_run(&bits, 20), Some(61));
        set_bits(&mut bits, 61, 67, true);
        assert_eq!(find_clear_run(&bits, 1), Some(3));
        set_bits(&mut bits, 3, 7, true);
        assert_eq!(find_clear_run(&bits, 1), None);
        set_bits(&mut bits, 64, 1, false);
        assert_eq!(find_clear_run(&bits, 1), Some(64));
        assert_eq!(find_clear_run(&bits, 2), None);
    }

    #[test]
    fn agrees_with_a_naive_search() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 10 } else { 200 } {
            let mut bits = vec![0u64; 3];
            for w in bits.iter_mut() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // sparse or dense patterns
                *w = if seed >> 63 == 0 {
                    seed & (seed >> 7) & (seed >> 13)
                } else {
                    seed | (seed >> 3)
                };
            }
            for n in [1, 2, 5, 17, 64, 65, 100] {
                let naive =
                    (0..=192 - n).find(|&i| (i..i + n).all(|j| bits[j / 64] >> (j % 64) & 1 == 0));
                assert_eq!(find_clear_run(&bits, n), naive, "{bits:x?} n={n}");
            }
        }
    }
}
