//! Buffers the size of the catalog that one search fills sparsely and the
//! next one reuses. At a million tools a search wanted such buffers fresh
//! (the graph channel's slot per tool, the BM25 accumulator: 4 MB each;
//! the sign pass's sums too, before it compared them as computed) plus the
//! graph channel's growing lists, and `perf record` put most of that cost
//! in the kernel zeroing new pages (`clear_page_erms`) and in copies of
//! lists that doubled.
//!
//! A [`Clean`] pool keeps buffers whose every element is its fill value:
//! whoever gives one back has restored it (it knows which elements it
//! wrote; restoring those is cheaper than filling the whole). A [`Spare`]
//! pool keeps empty lists with the room they grew to.

use std::sync::Mutex;

/// Buffers kept per pool: more than the searches that run at once on this
/// machine's cores; a buffer given back past it is freed.
const KEPT: usize = 8;

/// Buffers whose every element is `fill` while they are in the pool.
#[derive(Debug)]
pub(crate) struct Clean<T> {
    fill: T,
    free: Mutex<Vec<Vec<T>>>,
}

impl<T: Copy + PartialEq> Clean<T> {
    pub const fn new(fill: T) -> Self {
        Self {
            fill,
            free: Mutex::new(Vec::new()),
        }
    }

    /// A buffer of `len` elements, each the fill value.
    pub fn take(&self, len: usize) -> Vec<T> {
        match pop(&self.free) {
            Some(mut v) => {
                // Clean, so what `resize` keeps or adds is the fill value.
                v.resize(len, self.fill);
                v
            }
            None => vec![self.fill; len],
        }
    }

    /// Gives back a buffer whose every element is the fill value again
    /// (checked in debug builds).
    pub fn put(&self, v: Vec<T>) {
        debug_assert!(
            v.iter().all(|x| *x == self.fill),
            "a buffer given back clean"
        );
        push(&self.free, v);
    }

    /// Gives back `v` after setting the elements at `written` (every index
    /// written since it was taken) to the fill value: those alone when they
    /// are few, the whole buffer when they are many.
    pub fn restore(&self, mut v: Vec<T>, written: impl ExactSizeIterator<Item = usize>) {
        if written.len().saturating_mul(16) >= v.len() {
            v.fill(self.fill);
        } else {
            for i in written {
                if let Some(x) = v.get_mut(i) {
                    *x = self.fill;
                }
            }
        }
        self.put(v);
    }
}

/// Empty lists that keep their room.
#[derive(Debug)]
pub(crate) struct Spare<T> {
    free: Mutex<Vec<Vec<T>>>,
}

impl<T: Copy> Spare<T> {
    pub const fn new() -> Self {
        Self {
            free: Mutex::new(Vec::new()),
        }
    }

    /// An empty buffer (with room kept from an earlier search).
    pub fn empty(&self) -> Vec<T> {
        pop(&self.free).unwrap_or_default()
    }

    /// Gives back a buffer; its contents are forgotten.
    pub fn put(&self, mut v: Vec<T>) {
        v.clear();
        push(&self.free, v);
    }
}

fn pop<T>(free: &Mutex<Vec<Vec<T>>>) -> Option<Vec<T>> {
    free.lock().ok().and_then(|mut f| f.pop())
}

fn push<T>(free: &Mutex<Vec<Vec<T>>>, v: Vec<T>) {
    if v.capacity() == 0 {
        return;
    }
    if let Ok(mut free) = free.lock()
        && free.len() < KEPT
    {
        free.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_buffer_comes_back_filled_whatever_its_length() {
        let pool = Clean::new(0u32);
        let mut v = pool.take(100);
        assert_eq!(v, vec![0; 100]);
        v[3] = 7;
        v[90] = 9;
        pool.restore(v, [3, 90].into_iter());
        let v = pool.take(120);
        assert_eq!(v, vec![0; 120], "reused, grown with the fill value");
        assert!(v.capacity() >= 120);
        pool.put(v);
        assert_eq!(pool.take(10), vec![0; 10], "reused, shortened");
    }

    #[test]
    fn many_written_elements_are_restored_by_a_fill() {
        let pool = Clean::new(-1i32);
        let mut v = pool.take(8);
        v.iter_mut().for_each(|x| *x = 5);
        pool.restore(v, 0..8);
        assert_eq!(pool.take(8), vec![-1; 8]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a buffer given back clean")]
    fn a_dirty_buffer_given_back_is_caught_in_debug_builds() {
        let pool = Clean::new(0u8);
        let mut v = pool.take(4);
        v[1] = 1;
        pool.put(v);
    }

    #[test]
    fn spare_buffers_keep_their_room_and_have_the_asked_length() {
        let pool: Spare<u64> = Spare::new();
        let mut v = pool.empty();
        v.extend(0..1000);
        pool.put(v);
        let v = pool.empty();
        assert!(v.is_empty() && v.capacity() >= 1000);
        pool.put(v);
        let kept: Vec<Vec<u64>> = (0..KEPT + 3).map(|_| vec![1; 4]).collect();
        for v in kept {
            pool.put(v);
        }
        assert_eq!(pool.free.lock().map(|f| f.len()).unwrap_or(0), KEPT);
    }
}
