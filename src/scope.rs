//! A [`Scope`]: the tools one request may see, fixed before ranking.
//!
//! A scope is a set of tool indexes of one catalog snapshot (a bitset), so
//! every read path (search, resolve, listing, one tool, prompt rendering,
//! explanations, dependency lists, counts) filters by index in constant
//! time. Tools outside it never reach scores, paths, counts or text.

/// A set of tool indexes of one snapshot (the default is the empty set of
/// an empty snapshot).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    words: Vec<u64>,
    universe: usize,
    len: usize,
}

impl Scope {
    /// Every tool of a snapshot of `universe` tools.
    pub fn all(universe: usize) -> Self {
        let mut words = vec![u64::MAX; universe.div_ceil(64)];
        if let Some(last) = words.last_mut()
            && !universe.is_multiple_of(64)
        {
            *last = (1u64 << (universe % 64)) - 1;
        }
        Self {
            words,
            universe,
            len: universe,
        }
    }

    /// No tool of a snapshot of `universe` tools.
    pub fn none(universe: usize) -> Self {
        Self {
            words: vec![0; universe.div_ceil(64)],
            universe,
            len: 0,
        }
    }

    /// The given indexes (those beyond `universe` are ignored).
    pub fn of(universe: usize, indexes: impl IntoIterator<Item = usize>) -> Self {
        let mut s = Self::none(universe);
        for i in indexes {
            s.insert(i);
        }
        s
    }

    /// Whether tool `i` is in scope.
    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Adds tool `i`; false when it was there already or is out of range.
    pub fn insert(&mut self, i: usize) -> bool {
        match self.words.get_mut(i / 64) {
            Some(w) if i < self.universe && *w & (1u64 << (i % 64)) == 0 => {
                *w |= 1u64 << (i % 64);
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    /// Removes tool `i`; false when it was not there.
    pub fn remove(&mut self, i: usize) -> bool {
        match self.words.get_mut(i / 64) {
            Some(w) if *w & (1u64 << (i % 64)) != 0 => {
                *w &= !(1u64 << (i % 64));
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    /// Keeps only the tools also in `other`.
    pub fn intersect(&mut self, other: &Scope) {
        let mut len = 0;
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
            len += w.count_ones() as usize;
        }
        self.len = len;
    }

    /// Adds every tool of `other`.
    pub fn union(&mut self, other: &Scope) {
        let mut len = 0;
        for (i, w) in self.words.iter_mut().enumerate() {
            *w |= other.words.get(i).copied().unwrap_or(0);
            len += w.count_ones() as usize;
        }
        self.len = len;
    }

    /// Removes every tool of `other`.
    #[cfg(test)]
    pub fn subtract(&mut self, other: &Scope) {
        let mut len = 0;
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= !other.words.get(i).copied().unwrap_or(0);
            len += w.count_ones() as usize;
        }
        self.len = len;
    }

    /// Number of tools in scope.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Size of the snapshot this scope is over.
    pub fn universe(&self) -> usize {
        self.universe
    }

    /// [`Self::iter`], knowing its length.
    pub fn members(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        Counted {
            inner: self.iter(),
            left: self.len,
        }
    }

    /// Calls `f` with every tool in both this scope and `other`, ascending
    /// (a word of each at a time, no list in between).
    pub fn each_also_in(&self, other: &Scope, mut f: impl FnMut(usize)) {
        for (wi, (&a, &b)) in self.words.iter().zip(&other.words).enumerate() {
            let mut bits = a & b;
            while bits != 0 {
                f(wi * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }

    /// Tool indexes in scope, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(wi * 64 + b)
            })
        })
    }
}

/// An iterator that knows how many items are left.
struct Counted<I> {
    inner: I,
    left: usize,
}

impl<I: Iterator<Item = usize>> Iterator for Counted<I> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let next = self.inner.next();
        if next.is_some() {
            self.left = self.left.saturating_sub(1);
        }
        next
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator<Item = usize>> ExactSizeIterator for Counted<I> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `each_also_in` visits the intersection in order, and `members`
    /// knows its length, across word edges and unequal universes.
    #[test]
    fn intersections_and_counted_members() {
        let a = Scope::of(200, (0..200).filter(|i| i % 3 == 0));
        let b = Scope::of(
            200,
            (0..200).filter(|i| i % 2 == 0 || *i == 63 || *i == 129),
        );
        let mut seen = Vec::new();
        a.each_also_in(&b, |i| seen.push(i));
        let want: Vec<usize> = (0..200)
            .filter(|&i| a.contains(i) && b.contains(i))
            .collect();
        assert_eq!(seen, want);
        assert!(want.contains(&63) && want.contains(&129) && !want.contains(&3));
        let mut none = Vec::new();
        a.each_also_in(&Scope::default(), |i| none.push(i));
        assert!(none.is_empty());
        let members = a.members();
        assert_eq!(members.len(), a.len());
        assert_eq!(members.collect::<Vec<_>>(), a.iter().collect::<Vec<_>>());
    }

    #[test]
    fn all_none_and_edges() {
        for n in [0usize, 1, 63, 64, 65, 130] {
            let all = Scope::all(n);
            assert_eq!(all.len(), n);
            assert_eq!(all.iter().collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
            assert!(!all.contains(n));
            assert!(Scope::none(n).len() == 0);
        }
        let mut s = Scope::none(10);
        assert!(s.insert(3) && !s.insert(3) && !s.insert(10));
        assert!(s.remove(3) && !s.remove(3));
        assert!(s.len() == 0);
    }

    proptest! {
        #[test]
        fn behaves_like_a_sorted_set(n in 0usize..300, a in proptest::collection::vec(0usize..320, 0..80), b in proptest::collection::vec(0usize..320, 0..80)) {
            let sa = Scope::of(n, a.iter().copied());
            let sb = Scope::of(n, b.iter().copied());
            let ea: std::collections::BTreeSet<usize> = a.iter().copied().filter(|&i| i < n).collect();
            let eb: std::collections::BTreeSet<usize> = b.iter().copied().filter(|&i| i < n).collect();
            prop_assert_eq!(sa.iter().collect::<Vec<_>>(), ea.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.len(), ea.len());
            let mut both = sa.clone();
            both.intersect(&sb);
            let want: Vec<usize> = ea.intersection(&eb).copied().collect();
            prop_assert_eq!(both.iter().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(both.len(), want.len());
            let mut either = sa.clone();
            either.union(&sb);
            let want: Vec<usize> = ea.union(&eb).copied().collect();
            prop_assert_eq!(either.iter().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(either.len(), want.len());
            let mut only = sa.clone();
            only.subtract(&sb);
            let want: Vec<usize> = ea.difference(&eb).copied().collect();
            prop_assert_eq!(only.iter().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(only.len(), want.len());
            for i in 0..n + 2 {
                prop_assert_eq!(sa.contains(i), ea.contains(&i));
            }
        }
    }
}
