//! One budget per run, shared by everything that costs: the engine's heap
//! (every allocation QuickJS makes goes through [`Metered`]), what the mock
//! runtime keeps outside the engine (trace, logs, labels, phases, agent
//! results, prompts, strings copied out of JavaScript), the result
//! generator, and one deadline. `--memory-mb` bounds the sum of the engine's
//! heap and the host's share; `--timeout-ms` bounds the run, Rust-side work
//! included.
//!
//! The first limit reached is recorded as the run's [`Stop`]: the engine's
//! interrupt handler sees it and ends the script, and every later charge
//! fails, so one stop is never reported as another.

use rquickjs::allocator::{Allocator, RustAllocator};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Why a run was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Timeout,
    Memory,
    AgentCap,
}

#[derive(Debug)]
pub struct Budget {
    limit: usize,
    /// Bytes the engine holds (as [`Metered`] counts them).
    engine: Cell<usize>,
    /// Bytes the host keeps, or holds for the moment, outside the engine.
    host: Cell<usize>,
    deadline: Instant,
    stop: Cell<Option<Stop>>,
}

impl Budget {
    pub fn new(limit: usize, timeout: Duration) -> Budget {
        let now = Instant::now();
        Budget {
            limit,
            engine: Cell::new(0),
            host: Cell::new(0),
            // A timeout too large to add is no deadline at all.
            deadline: now
                .checked_add(timeout)
                .unwrap_or(now + Duration::from_secs(100 * 365 * 86_400)),
            stop: Cell::new(None),
        }
    }

    /// The first limit reached, if any.
    pub fn stopped(&self) -> Option<Stop> {
        self.stop.get()
    }

    /// Record `why` unless a limit was already reached (the first one is
    /// what happened; the rest are its consequences).
    pub fn halt(&self, why: Stop) {
        if self.stop.get().is_none() {
            self.stop.set(Some(why));
        }
    }

    pub fn used(&self) -> usize {
        self.engine.get() + self.host.get()
    }

    /// Take `bytes` for the host, or fail (and stop the run) when the
    /// engine's heap and the host's share would pass the cap.
    pub fn charge(&self, bytes: usize) -> Result<(), Stop> {
        if let Some(s) = self.stop.get() {
            return Err(s);
        }
        match self.used().checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.host.set(self.host.get() + bytes);
                Ok(())
            }
            _ => {
                self.halt(Stop::Memory);
                Err(Stop::Memory)
            }
        }
    }

    /// Give back bytes taken by [`charge`](Self::charge).
    pub fn release(&self, bytes: usize) {
        self.host.set(self.host.get().saturating_sub(bytes));
    }

    /// Fail (and stop the run) once the deadline has passed. Cheap enough
    /// to call per generated value.
    pub fn tick(&self) -> Result<(), Stop> {
        if let Some(s) = self.stop.get() {
            return Err(s);
        }
        if Instant::now() >= self.deadline {
            self.halt(Stop::Timeout);
            return Err(Stop::Timeout);
        }
        Ok(())
    }

    /// The engine asks for `bytes` more.
    fn engine_take(&self, bytes: usize) -> bool {
        match self.used().checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.engine.set(self.engine.get() + bytes);
                true
            }
            _ => {
                // The engine throws "out of memory", which a script could
                // catch; the run stops at the interrupt handler instead, so
                // the status says what happened.
                self.halt(Stop::Memory);
                false
            }
        }
    }

    fn engine_give(&self, bytes: usize) {
        self.engine.set(self.engine.get().saturating_sub(bytes));
    }
}

/// Bookkeeping per allocation besides its usable size: the size header of
/// [`RustAllocator`] and the system allocator's own.
const OVERHEAD: usize = 16;

/// The engine's allocator: Rust's, with every byte counted in the budget
/// and refused past the cap.
pub struct Metered(pub Rc<Budget>);

fn cost(usable: usize) -> usize {
    usable + OVERHEAD
}

/// What [`RustAllocator`] will report as usable for a request of `size`.
fn rounded(size: usize) -> Option<usize> {
    size.checked_next_multiple_of(8)
}

// SAFETY: every pointer comes from RustAllocator, which meets the trait's
// contract; this wrapper only counts, refuses (null) and guards the cases
// RustAllocator does not handle (overflow, null in realloc).
unsafe impl Allocator for Metered {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let Some(usable) = rounded(size) else {
            return std::ptr::null_mut();
        };
        if size == 0 || !self.0.engine_take(cost(usable)) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.alloc(size);
        if p.is_null() {
            self.0.engine_give(cost(usable));
        }
        p
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        let Some(usable) = rounded(total) else {
            return std::ptr::null_mut();
        };
        if total == 0 || !self.0.engine_take(cost(usable)) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.calloc(count, size);
        if p.is_null() {
            self.0.engine_give(cost(usable));
        }
        p
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        // SAFETY: ptr came from RustAllocator (the caller's contract).
        unsafe {
            self.0.engine_give(cost(RustAllocator::usable_size(ptr)));
            RustAllocator.dealloc(ptr);
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        if new_size == 0 {
            // SAFETY: as in dealloc.
            unsafe { self.dealloc(ptr) };
            return std::ptr::null_mut();
        }
        let Some(new) = rounded(new_size) else {
            return std::ptr::null_mut();
        };
        // SAFETY: ptr came from RustAllocator.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new > old && !self.0.engine_take(new - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: ptr came from RustAllocator.
        let p = unsafe { RustAllocator.realloc(ptr, new_size) };
        if p.is_null() {
            if new > old {
                self.0.engine_give(new - old);
            }
        } else if new < old {
            self.0.engine_give(old - new);
        }
        p
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: ptr came from RustAllocator.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_covers_engine_and_host_and_the_first_stop_sticks() {
        let b = Rc::new(Budget::new(1000, Duration::from_secs(60)));
        let mut m = Metered(b.clone());
        let p = m.alloc(500);
        assert!(!p.is_null());
        assert!(b.used() >= 500);
        assert_eq!(b.charge(600), Err(Stop::Memory), "engine + host > cap");
        assert_eq!(b.stopped(), Some(Stop::Memory));
        unsafe { m.dealloc(p) };
        assert_eq!(b.used(), 0);
        // The run already stopped: later charges fail with the first cause.
        assert_eq!(b.charge(1), Err(Stop::Memory));
        b.halt(Stop::Timeout);
        assert_eq!(b.stopped(), Some(Stop::Memory));

        let b = Rc::new(Budget::new(1 << 20, Duration::ZERO));
        assert_eq!(b.tick(), Err(Stop::Timeout));
        let mut m = Metered(b.clone());
        assert!(m.calloc(usize::MAX, 2).is_null(), "overflow is refused");
        let p = m.alloc(100);
        let q = unsafe { m.realloc(p, 10_000) };
        assert!(!q.is_null());
        assert!(b.used() >= 10_000);
        assert!(unsafe { m.realloc(q, 2 << 20) }.is_null(), "past the cap");
        unsafe { m.dealloc(q) };
        assert_eq!(b.used(), 0);
    }
}
