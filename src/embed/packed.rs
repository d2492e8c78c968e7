//! Many short strings kept for a snapshot's life (a vector index's row ids
//! and content hashes), packed into one string with where each ends: a
//! row's bytes and four more, not a `String` each (24 bytes, an allocation
//! of its own, and at a million rows pages the registration's temporaries
//! kept from going back to the OS).

/// Strings in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed {
    text: String,
    /// Where each one ends in `text`.
    ends: Vec<u32>,
}

impl Packed {
    /// Room for `n` strings.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            text: String::new(),
            ends: Vec::with_capacity(n),
        }
    }

    /// Appends `s`; `false`, and nothing changes, past 4 GiB of text.
    pub(crate) fn push(&mut self, s: &str) -> bool {
        let Some(end) = self
            .text
            .len()
            .checked_add(s.len())
            .and_then(|e| u32::try_from(e).ok())
        else {
            return false;
        };
        self.text.push_str(s);
        self.ends.push(end);
        true
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th string.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        self.text.get(start..end)
    }

    /// Each string in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }
}

impl<'a> FromIterator<&'a str> for Packed {
    /// Collects as many as fit (see [`Packed::push`]), with no spare room.
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Self {
        let mut out = Packed::default();
        for s in iter {
            if !out.push(s) {
                break;
            }
        }
        out.text.shrink_to_fit();
        out.ends.shrink_to_fit();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Packed;

    #[test]
    fn gives_back_each_string_in_order() {
        let packed: Packed = ["ab", "", "cdef", "ü"].into_iter().collect();
        assert_eq!(packed.len(), 4);
        assert_eq!(packed.get(0), Some("ab"));
        assert_eq!(packed.get(1), Some(""));
        assert_eq!(packed.get(2), Some("cdef"));
        assert_eq!(packed.get(3), Some("ü"));
        assert_eq!(packed.get(4), None);
        let all: Vec<&str> = packed.iter().collect();
        assert_eq!(all, ["ab", "", "cdef", "ü"]);
        let none: Packed = std::iter::empty().collect();
        assert!(none.is_empty() && none.get(0).is_none());
        let mut grown = Packed::with_capacity(1);
        assert!(grown.push("x") && grown.push("yz"));
        assert_eq!(grown.iter().collect::<Vec<_>>(), ["x", "yz"]);
    }
}
