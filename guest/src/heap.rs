//! The components' allocator: blocks of a few sizes, each size a free list.
//!
//! An apply makes about 260 allocations, frees and reallocations, nearly all small. Through the
//! standard allocator of wasm32 (dlmalloc) each cost about 200 instructions in a component
//! (three calls, its bins, and an epoch check at each call and loop), a fifth of the engine's
//! instructions. Here a small block is popped from or pushed onto its size's list, a few loads
//! and stores with no loop, and a list that is empty takes its block from the current chunk.
//! Blocks over [`LARGEST`] bytes, and chunks, come from the standard allocator.
//!
//! The cost is memory: a block freed stays with its size, for the next block of that size, and
//! a small block takes its size rounded up to a power of two. The blocks of a size are at most as
//! many as were ever live at once, so a component holds at most what its busiest moment held
//! in each size, and the runtime's memory budget bounds that as it bounds the rest.

// An allocator hands out raw memory.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

/// The smallest block: room for the pointer a free block holds, on a 64-bit target too.
const SMALLEST_SHIFT: u32 = 4;
/// The largest block the lists serve. Larger lists kept more memory apart by size, and a fresh
/// instance (one per memory) pays a page fault for each page it first writes: with lists up to
/// 4 KiB an apply took 65 µs against dlmalloc's 37 (`make bench`), up to 1 KiB 74 µs on a fresh
/// instance against 46; up to 256 bytes, the same as dlmalloc, for 6k more instructions than
/// at 4 KiB.
const LARGEST_SHIFT: u32 = 8;
const LARGEST: usize = 1 << LARGEST_SHIFT;
const SIZES: usize = (LARGEST_SHIFT - SMALLEST_SHIFT + 1) as usize;
/// What a list that is empty carves its blocks from, taken from the standard allocator whole:
/// small, so that an instance's first blocks are on few pages.
const CHUNK: usize = 16 << 10;

/// The allocator's state: one per component, or one per test.
struct Lists {
    /// Each size's free blocks, each holding the address of the next.
    free: [*mut u8; SIZES],
    /// The current chunk's unused part.
    next: usize,
    end: usize,
}

/// The list that serves `size` bytes at `align`, or `None` past [`LARGEST`].
#[inline(always)]
fn list(size: usize, align: usize) -> Option<usize> {
    let size = size.max(align);
    if size > LARGEST {
        return None;
    }
    // The power of two at or above `size`, counted from the smallest.
    let shift = usize::BITS - (size.max(1 << SMALLEST_SHIFT) - 1).leading_zeros();
    Some((shift - SMALLEST_SHIFT) as usize)
}

#[inline(always)]
fn block(list: usize) -> usize {
    1 << (list as u32 + SMALLEST_SHIFT)
}

impl Lists {
    const fn new() -> Self {
        Lists { free: [ptr::null_mut(); SIZES], next: 0, end: 0 }
    }

    /// # Safety
    /// As [`GlobalAlloc::alloc`].
    #[inline(always)]
    unsafe fn alloc(&mut self, layout: Layout) -> *mut u8 {
        let Some(list) = list(layout.size(), layout.align()) else {
            return unsafe { System.alloc(layout) };
        };
        let head = self.free[list];
        if head.is_null() {
            return self.cut(list);
        }
        // SAFETY: a free block holds the next one's address, written by `dealloc`.
        self.free[list] = unsafe { head.cast::<*mut u8>().read() };
        head
    }

    /// A new block, cut from the current chunk, or from a new one when it has no room. What
    /// the last chunk had left, less than two blocks of the size asked for, is not used.
    fn cut(&mut self, list: usize) -> *mut u8 {
        let size = block(list);
        // Blocks sit at multiples of their size, which covers their alignment.
        let start = (self.next + size - 1) & !(size - 1);
        if start + size <= self.end {
            self.next = start + size;
            return start as *mut u8;
        }
        // SAFETY: the layout's size is not zero.
        let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, LARGEST)) };
        if chunk.is_null() {
            return chunk;
        }
        self.next = chunk as usize + size;
        self.end = chunk as usize + CHUNK;
        chunk
    }

    /// # Safety
    /// As [`GlobalAlloc::dealloc`].
    #[inline(always)]
    unsafe fn dealloc(&mut self, ptr: *mut u8, layout: Layout) {
        match list(layout.size(), layout.align()) {
            Some(list) => {
                // SAFETY: a block of any list has room and alignment for a pointer.
                unsafe { ptr.cast::<*mut u8>().write(self.free[list]) };
                self.free[list] = ptr;
            }
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    /// # Safety
    /// As [`GlobalAlloc::realloc`].
    #[inline(always)]
    unsafe fn realloc(&mut self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = list(layout.size(), layout.align());
        let new = list(new_size, layout.align());
        match (old, new) {
            // The block has room already.
            (Some(a), Some(b)) if a == b => ptr,
            (None, None) => unsafe { System.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: the caller's size and alignment make a valid layout.
                let to = unsafe { self.alloc(Layout::from_size_align_unchecked(new_size, layout.align())) };
                if !to.is_null() {
                    unsafe {
                        ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                to
            }
        }
    }
}

/// The global allocator of the components, over the one [`Lists`] of the instance.
///
/// Each method is a call to a function that takes only the layout: a method that took the
/// allocator's address would put that address at each of the thousands of places that
/// allocate or free (+19 KB), and one inlined there would grow them by a quarter.
#[cfg(target_arch = "wasm32")]
pub struct Global;

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
compile_error!("the components' allocator shares its lists unguarded: a build with threads needs another");

#[cfg(target_arch = "wasm32")]
mod global {
    use super::{Global, Lists};
    use std::alloc::{GlobalAlloc, Layout};
    use std::cell::UnsafeCell;

    struct Shared(UnsafeCell<Lists>);

    // A component is one thread: wasm32-unknown-unknown is built without atomics (a build with
    // them stops below).
    unsafe impl Sync for Shared {}

    static LISTS: Shared = Shared(UnsafeCell::new(Lists::new()));

    // SAFETY (each): one thread, and nothing the allocator calls allocates, so no two
    // references to the lists are alive at once.
    #[inline(never)]
    unsafe fn alloc(layout: Layout) -> *mut u8 {
        unsafe { (*LISTS.0.get()).alloc(layout) }
    }

    #[inline(never)]
    unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
        unsafe { (*LISTS.0.get()).dealloc(ptr, layout) }
    }

    #[inline(never)]
    unsafe fn realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { (*LISTS.0.get()).realloc(ptr, layout, new_size) }
    }

    unsafe impl GlobalAlloc for Global {
        #[inline(always)]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe { alloc(layout) }
        }

        #[inline(always)]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { dealloc(ptr, layout) }
        }

        #[inline(always)]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            unsafe { realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Alloc { size: usize, align_shift: u32 },
        Free(usize),
        Realloc(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Sizes each side of the lists' limit, and alignments up to past the largest block.
        let size = prop_oneof![1usize..64, 1usize..LARGEST + 64, 1usize..3 * LARGEST];
        prop_oneof![
            4 => (size.clone(), prop_oneof![6 => 0u32..4, 1 => 4u32..14]).prop_map(|(size, align_shift)| Op::Alloc { size, align_shift }),
            3 => any::<usize>().prop_map(Op::Free),
            2 => (any::<usize>(), size).prop_map(|(i, s)| Op::Realloc(i, s)),
        ]
    }

    /// A live block: where, its layout, and the byte it was filled with.
    struct Live {
        at: *mut u8,
        layout: Layout,
        fill: u8,
    }

    fn check(live: &[Live]) {
        for b in live {
            assert_eq!(b.at as usize % b.layout.align(), 0, "misaligned");
            let bytes = unsafe { std::slice::from_raw_parts(b.at, b.layout.size()) };
            assert!(bytes.iter().all(|&x| x == b.fill), "a live block was written over");
        }
    }

    proptest! {
        /// Every block is aligned, and holds what was written to it until it is freed, through
        /// any mix of allocations, frees and reallocations: no two live blocks overlap, and a
        /// reallocation keeps the contents.
        #[test]
        fn blocks_stay_apart_and_keep_their_bytes(ops in proptest::collection::vec(op(), 1..400)) {
            let mut heap = Lists::new();
            let mut live: Vec<Live> = Vec::new();
            let mut fill = 0u8;
            for op in ops {
                fill = fill.wrapping_add(1);
                match op {
                    Op::Alloc { size, align_shift } => {
                        let layout = Layout::from_size_align(size, 1 << align_shift).unwrap();
                        let at = unsafe { heap.alloc(layout) };
                        assert!(!at.is_null());
                        unsafe { at.write_bytes(fill, size) };
                        live.push(Live { at, layout, fill });
                    }
                    Op::Free(i) if !live.is_empty() => {
                        let b = live.swap_remove(i % live.len());
                        unsafe { heap.dealloc(b.at, b.layout) };
                    }
                    Op::Realloc(i, size) if !live.is_empty() => {
                        let i = i % live.len();
                        let b = &mut live[i];
                        let at = unsafe { heap.realloc(b.at, b.layout, size) };
                        assert!(!at.is_null());
                        let kept = unsafe { std::slice::from_raw_parts(at, b.layout.size().min(size)) };
                        assert!(kept.iter().all(|&x| x == b.fill), "a reallocation lost the contents");
                        unsafe { at.write_bytes(fill, size) };
                        *b = Live { at, layout: Layout::from_size_align(size, b.layout.align()).unwrap(), fill };
                    }
                    _ => {}
                }
                check(&live);
            }
            // Chunks are never handed back: a test's heap lives as long as the test process.
            for b in live {
                unsafe { heap.dealloc(b.at, b.layout) };
            }
        }
    }

    #[test]
    fn a_freed_block_is_the_next_of_its_size() {
        let mut heap = Lists::new();
        let layout = Layout::from_size_align(40, 8).unwrap();
        let a = unsafe { heap.alloc(layout) };
        let other = unsafe { heap.alloc(Layout::from_size_align(200, 8).unwrap()) };
        unsafe { heap.dealloc(a, layout) };
        // 33 to 64 bytes share a list.
        let b = unsafe { heap.alloc(Layout::from_size_align(64, 8).unwrap()) };
        assert_eq!(a, b);
        assert_ne!(b, other);
    }
}
