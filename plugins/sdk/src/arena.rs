//! An allocator for an instance that judges one request and is thrown away: allocation is a
//! pointer bump in a fixed arena, freeing gives back only the last block (what a parser's
//! temporary strings mostly are), and the instance's end frees everything. Past the arena,
//! the standard allocator takes over, so a request that needs more never fails for it.
//!
//! Opt in with [`use_instance_arena!`](crate::use_instance_arena) in a plugin whose instances
//! the host makes fresh for every request (as it does for every plugin).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// The arena's size: far more than judging an ordinary command allocates (about 12 KiB), and
/// in the instance's zero-filled memory, so pages it does not reach are never touched.
const ARENA: usize = 1 << 20;

/// The arena: its bytes and the offset of the next free one.
pub struct InstanceArena {
    bytes: UnsafeCell<[u8; ARENA]>,
    next: UnsafeCell<usize>,
}

// SAFETY: a plugin instance runs on one thread (WebAssembly without threads); the arena is
// only ever reached from that thread.
unsafe impl Sync for InstanceArena {}

impl InstanceArena {
    pub const fn new() -> InstanceArena {
        InstanceArena {
            bytes: UnsafeCell::new([0; ARENA]),
            next: UnsafeCell::new(0),
        }
    }

    fn base(&self) -> usize {
        self.bytes.get() as usize
    }

    /// The arena offset of `ptr`, when it is the arena's.
    fn offset(&self, ptr: *mut u8) -> Option<usize> {
        (ptr as usize)
            .checked_sub(self.base())
            .filter(|offset| *offset < ARENA)
    }
}

impl Default for InstanceArena {
    fn default() -> InstanceArena {
        InstanceArena::new()
    }
}

// SAFETY: blocks handed out never overlap (the offset only grows past a live block, and falls
// back only to the start of the last block, when that block is freed or resized); each is
// aligned as asked; blocks outside the arena are the system allocator's, given back to it.
unsafe impl GlobalAlloc for InstanceArena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: one thread (see `Sync`), so no other reference to `next` is live.
        let next = unsafe { &mut *self.next.get() };
        let start = (self.base() + *next).next_multiple_of(layout.align()) - self.base();
        match start.checked_add(layout.size()).filter(|end| *end <= ARENA) {
            Some(end) => {
                *next = end;
                (self.base() + start) as *mut u8
            }
            // SAFETY: the layout is the caller's, valid for `alloc`.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.offset(ptr) {
            Some(offset) => {
                // SAFETY: one thread.
                let next = unsafe { &mut *self.next.get() };
                if offset + layout.size() == *next {
                    *next = offset;
                }
            }
            // SAFETY: a block outside the arena came from `System.alloc` with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if let Some(offset) = self.offset(ptr) {
            // SAFETY: one thread.
            let next = unsafe { &mut *self.next.get() };
            // The last block grows or shrinks where it is.
            if offset + layout.size() == *next && offset + new_size <= ARENA {
                *next = offset + new_size;
                return ptr;
            }
        }
        // SAFETY: as `GlobalAlloc::realloc` asks of its caller; the default copies into a new
        // block from `alloc` and frees the old one through `dealloc`, which tells the arena's
        // blocks from the system's.
        unsafe {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

/// Makes [`InstanceArena`] the plugin's allocator when it is built for WebAssembly (its native
/// tests keep the system's).
#[macro_export]
macro_rules! use_instance_arena {
    () => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static __ACP_GATE_ARENA: $crate::arena::InstanceArena = $crate::arena::InstanceArena::new();
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_apart_and_the_last_one_is_reused() {
        static ARENA_UNDER_TEST: InstanceArena = InstanceArena::new();
        let arena = &ARENA_UNDER_TEST;
        let layout = |size, align| Layout::from_size_align(size, align).unwrap();
        unsafe {
            let a = arena.alloc(layout(3, 1));
            let b = arena.alloc(layout(8, 8));
            assert_eq!(b as usize % 8, 0);
            assert!(b as usize >= a as usize + 3);
            arena.dealloc(b, layout(8, 8));
            let c = arena.alloc(layout(8, 8));
            assert_eq!(b, c, "the last block freed is given out again");
            let grown = arena.realloc(c, layout(8, 8), 64);
            assert_eq!(grown, c, "the last block grows in place");
            *grown.add(63) = 7;
            let moved = arena.realloc(a, layout(3, 1), 16);
            assert_ne!(moved, a, "a block that is not the last moves");
            // Past the arena, the system allocator answers.
            let big = arena.alloc(layout(ARENA, 1));
            assert!(big as usize >= arena.base() + ARENA || (big as usize) < arena.base());
            arena.dealloc(big, layout(ARENA, 1));
        }
    }
}
