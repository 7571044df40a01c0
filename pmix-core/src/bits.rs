//! Word-level bitset operations: the one implementation behind [`CpuSet`] (a growable
//! set that never stores trailing zero words) and [`MemberSet`] (a set whose capacity
//! is fixed at creation), and the word helpers the group and fault-tolerance state
//! machines combine member sets with.
//!
//! A bitset here is a slice of `u64` words, bit `i` being bit `i % 64` of word
//! `i / 64`. Nothing here allocates: growing, trimming and bounds policy (what an index
//! beyond the storage means) belong to the owning type. Where two slices of different
//! lengths meet, the missing words read as zero.
//!
//! [`CpuSet`]: crate::CpuSet
//! [`MemberSet`]: crate::group::MemberSet

/// The word that holds bit `index`.
#[inline]
pub(crate) const fn word_of(index: u32) -> usize {
    (index / 64) as usize
}

/// The mask of bit `index` within its word.
#[inline]
pub(crate) const fn mask_of(index: u32) -> u64 {
    1 << (index % 64)
}

/// The number of words that hold `bits` bits.
#[inline]
pub(crate) const fn words_for(bits: u32) -> usize {
    bits.div_ceil(64) as usize
}

/// The mask of valid bits in the last word of a set of `capacity` bits.
#[inline]
pub(crate) const fn tail_mask(capacity: u32) -> u64 {
    match capacity % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    }
}

/// `true` if bit `index` is set (`false` beyond the words).
#[inline]
pub(crate) fn contains(words: &[u64], index: u32) -> bool {
    words
        .get(word_of(index))
        .is_some_and(|w| w & mask_of(index) != 0)
}

/// Sets bit `index`; returns whether it was clear.
///
/// # Panics
/// If `index` lies beyond the words: the owner sizes (or refuses) first.
#[inline]
pub(crate) fn insert(words: &mut [u64], index: u32) -> bool {
    let w = &mut words[word_of(index)];
    let added = *w & mask_of(index) == 0;
    *w |= mask_of(index);
    added
}

/// Clears bit `index` (nothing beyond the words); returns whether it was set.
#[inline]
pub(crate) fn remove(words: &mut [u64], index: u32) -> bool {
    match words.get_mut(word_of(index)) {
        Some(w) => {
            let removed = *w & mask_of(index) != 0;
            *w &= !mask_of(index);
            removed
        }
        None => false,
    }
}

/// Sets bits `start..end`.
///
/// # Panics
/// If `end - 1` lies beyond the words (an empty range touches nothing).
pub(crate) fn insert_range(words: &mut [u64], start: u32, end: u32) {
    if start >= end {
        return;
    }
    let (first, last) = (word_of(start), word_of(end - 1));
    let low = u64::MAX << (start % 64);
    let high = u64::MAX >> (63 - (end - 1) % 64);
    if first == last {
        words[first] |= low & high;
    } else {
        words[first] |= low;
        words[first + 1..last].fill(u64::MAX);
        words[last] |= high;
    }
}

/// Sets bits `0..capacity` and clears the rest of the last word; `words` holds exactly
/// [`words_for(capacity)`](words_for) words.
pub(crate) fn fill(words: &mut [u64], capacity: u32) {
    words.fill(u64::MAX);
    if let Some(last) = words.last_mut() {
        *last &= tail_mask(capacity);
    }
}

/// The number of set bits.
#[inline]
pub(crate) fn count(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

/// The number of set bits below `index`.
pub(crate) fn count_below(words: &[u64], index: u32) -> u32 {
    let w = word_of(index);
    match words.get(w) {
        Some(partial) => {
            let below: u32 = words[..w].iter().map(|w| w.count_ones()).sum();
            below + (partial & (mask_of(index) - 1)).count_ones()
        }
        None => words.iter().map(|w| w.count_ones()).sum(),
    }
}

/// The lowest set bit.
#[inline]
pub(crate) fn first(words: &[u64]) -> Option<u32> {
    next_set(words, 0, |_, w| w)
}

/// The highest set bit.
pub(crate) fn last(words: &[u64]) -> Option<u32> {
    let (i, w) = words.iter().enumerate().rev().find(|(_, w)| **w != 0)?;
    Some(i as u32 * 64 + 63 - w.leading_zeros())
}

/// The smallest index `>= from` whose bit is set in `word(i, words[i])`: a lazy scan
/// of a word-wise combination of sets (`|i, w| w & !other[i]`) that builds none.
#[inline]
pub(crate) fn next_set(words: &[u64], from: u32, word: impl Fn(usize, u64) -> u64) -> Option<u32> {
    let mut i = word_of(from);
    let mut w = word(i, *words.get(i)?) & (u64::MAX << (from % 64));
    loop {
        if w != 0 {
            return Some(i as u32 * 64 + w.trailing_zeros());
        }
        i += 1;
        w = word(i, *words.get(i)?);
    }
}

/// `true` if the two sets share a bit.
#[inline]
pub(crate) fn intersects(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

/// `true` if every bit of `a` is in `b`.
#[inline]
pub(crate) fn is_subset(a: &[u64], b: &[u64]) -> bool {
    a.iter()
        .enumerate()
        .all(|(i, x)| x & !b.get(i).copied().unwrap_or(0) == 0)
}

/// `true` if `s` has a bit that is in `a` but not in `b`.
#[inline]
pub(crate) fn intersects_difference(s: &[u64], a: &[u64], b: &[u64]) -> bool {
    s.iter()
        .zip(a)
        .enumerate()
        .any(|(i, (s, x))| s & x & !b.get(i).copied().unwrap_or(0) != 0)
}

/// Adds the bits of `b` that fall within `a`'s words.
#[inline]
pub(crate) fn union_with(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

/// Keeps only the bits of `a` that are also in `b` (words of `a` beyond `b` clear).
#[inline]
pub(crate) fn intersect_with(a: &mut [u64], b: &[u64]) {
    for (i, x) in a.iter_mut().enumerate() {
        *x &= b.get(i).copied().unwrap_or(0);
    }
}

/// The number of words up to the last non-zero one (what a trimmed set stores).
#[inline]
pub(crate) fn trimmed_len(words: &[u64]) -> usize {
    words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1)
}

/// The set bits in ascending order.
#[derive(Debug, Clone)]
pub(crate) struct Ones<'a> {
    words: &'a [u64],
    /// The word `bits` came from.
    word: usize,
    /// What is left of that word.
    bits: u64,
}

impl<'a> Ones<'a> {
    /// Iterates over the set bits of `words`.
    #[inline]
    pub(crate) fn new(words: &'a [u64]) -> Self {
        Ones {
            words,
            word: 0,
            bits: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for Ones<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.word as u32 * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    #[test]
    fn ranges_match_bit_by_bit_insertion() {
        for start in [0, 1, 5, 63, 64, 65, 127, 128, 130] {
            for end in [0, 1, 6, 63, 64, 65, 128, 129, 190, 192] {
                let mut fast = vec![0u64; 3];
                insert_range(&mut fast, start, end);
                let mut slow = vec![0u64; 3];
                for i in start..end {
                    insert(&mut slow, i);
                }
                assert_eq!(fast, slow, "{start}..{end}");
            }
        }
    }

    #[test]
    fn counts_first_last_and_iteration() {
        let mut w = vec![0u64; 4];
        for i in [3, 64, 65, 200] {
            assert!(insert(&mut w, i));
        }
        assert!(!insert(&mut w, 64));
        assert_eq!(count(&w), 4);
        assert_eq!((first(&w), last(&w)), (Some(3), Some(200)));
        assert_eq!(Ones::new(&w).collect::<Vec<_>>(), [3, 64, 65, 200]);
        assert_eq!(count_below(&w, 0), 0);
        assert_eq!(count_below(&w, 64), 1);
        assert_eq!(count_below(&w, 66), 3);
        assert_eq!(count_below(&w, 1000), 4);
        assert_eq!(next_set(&w, 66, |_, w| w), Some(200));
        assert!(remove(&mut w, 200) && !remove(&mut w, 200) && !remove(&mut w, 9999));
        assert_eq!(trimmed_len(&w), 2);
        assert_eq!((first(&[]), last(&[0, 0])), (None, None));
        assert_eq!(Ones::new(&[]).next(), None);
    }

    #[test]
    fn set_algebra_reads_missing_words_as_zero() {
        let (a, b) = ([0b0110u64, 1], [0b0100u64]);
        assert!(intersects(&a, &b) && !is_subset(&a, &b) && is_subset(&b, &a));
        assert!(intersects_difference(&a, &a, &b));
        assert!(!intersects_difference(&b, &a, &b));
        let mut c = a;
        intersect_with(&mut c, &b);
        assert_eq!(c, [0b0100, 0]);
        union_with(&mut c, &[1, 2, 3]);
        assert_eq!(c, [0b0101, 2]);
        let mut f = [0u64; 2];
        fill(&mut f, 70);
        assert_eq!(f, [u64::MAX, 0b11_1111]);
        assert_eq!(words_for(70), 2);
    }
}
