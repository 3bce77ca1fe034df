//! The epoch clock that stops guest code at its CPU deadline: it ticks every [`EPOCH_TICK`]
//! only until the furthest deadline armed is reached, and sleeps otherwise, so that a process
//! with no guest running (a resident hook server between calls, a session waiting on its
//! agent) is not woken two hundred times a second for nothing.
//!
//! Sleeping never lets a guest run on: every deadline is armed through [`Clock::arm`], which
//! keeps the clock ticking until the epoch reaches it, so a guest that runs past its deadline
//! still meets it; and a store no deadline was armed on cannot run guest code at all (its
//! deadline is the epoch it was made at).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use wasmtime::{Engine, Store};

use super::EPOCH_TICK;

/// How often a sleeping clock looks whether its engine is gone (and its thread can end).
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The engine's epoch clock: the thread that ticks it, and the deadlines armed on it.
pub struct Clock {
    state: Mutex<Ticking>,
    armed: Condvar,
}

/// Where the clock stands.
#[derive(Debug, Default)]
struct Ticking {
    /// The engine's epoch: this clock is the only one to advance it.
    epoch: u64,
    /// The furthest epoch a deadline was armed for: the clock ticks until it gets there.
    until: u64,
}

impl Clock {
    /// Starts the clock of `engine` (configured with epoch interruption) on a thread of its
    /// own, which ends once the engine is gone.
    pub fn start(engine: &Engine) -> std::io::Result<Arc<Clock>> {
        let clock = Arc::new(Clock {
            state: Mutex::new(Ticking::default()),
            armed: Condvar::new(),
        });
        let weak = engine.weak();
        let ticking = clock.clone();
        std::thread::Builder::new()
            .name("acp-gate-epoch".into())
            .spawn(move || {
                let mut state = ticking.lock();
                loop {
                    if state.epoch >= state.until {
                        // Every deadline is reached: nothing to tick for until one is armed.
                        state = ticking
                            .armed
                            .wait_timeout(state, IDLE_CHECK)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                        if weak.upgrade().is_none() {
                            return;
                        }
                        continue;
                    }
                    let Some(engine) = weak.upgrade() else {
                        return;
                    };
                    engine.increment_epoch();
                    state.epoch += 1;
                    drop((engine, state));
                    std::thread::sleep(EPOCH_TICK);
                    state = ticking.lock();
                }
            })?;
        Ok(clock)
    }

    /// Arms `store`'s deadline: its guest code traps once it has run for `timeout` (in
    /// ticks), and the clock ticks until then.
    pub fn arm<T>(&self, store: &mut Store<T>, timeout: Duration) {
        let ticks = ticks(timeout);
        let mut state = self.lock();
        // Under the lock: the epoch the deadline counts from is the one this clock is at.
        store.set_epoch_deadline(ticks);
        let until = state.epoch + ticks;
        if until > state.until {
            state.until = until;
            self.armed.notify_one();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ticking> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A CPU deadline of `timeout` in ticks: one more than it holds, for the tick under way.
fn ticks(timeout: Duration) -> u64 {
    (timeout.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64 + 1
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use wasmtime::{Config, Module, Trap};

    use super::*;

    /// `(module (func (export "spin") (loop (br 0))))`: a guest that never returns.
    const SPIN: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
        0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
        0x03, 0x02, 0x01, 0x00, // function 0 of type 0
        0x07, 0x08, 0x01, 0x04, b's', b'p', b'i', b'n', 0x00, 0x00, // export "spin"
        0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop { br 0 }
    ];

    fn engine() -> Engine {
        let mut config = Config::new();
        config.epoch_interruption(true);
        Engine::new(&config).unwrap()
    }

    fn epoch(clock: &Clock) -> u64 {
        clock.lock().epoch
    }

    /// Waits (up to a few seconds) until the clock has reached every deadline armed; its epoch
    /// then.
    fn settled(clock: &Clock) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let state = clock.lock();
            if state.epoch >= state.until {
                return state.epoch;
            }
            drop(state);
            assert!(Instant::now() < deadline, "the clock never got there");
            std::thread::sleep(EPOCH_TICK);
        }
    }

    #[test]
    fn it_ticks_until_the_deadline_armed_then_sleeps() {
        let engine = engine();
        let clock = Clock::start(&engine).unwrap();
        std::thread::sleep(EPOCH_TICK * 10);
        assert_eq!(epoch(&clock), 0, "nothing armed: no tick");
        let mut store = Store::new(&engine, ());
        clock.arm(&mut store, Duration::from_millis(20));
        let reached = settled(&clock);
        assert_eq!(
            reached,
            ticks(Duration::from_millis(20)),
            "it stops at the deadline"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(epoch(&clock), reached, "and stays stopped");
        clock.arm(&mut store, Duration::from_millis(20));
        assert_eq!(settled(&clock), reached * 2, "armed again, it ticks again");
    }

    #[test]
    fn a_guest_started_while_the_clock_sleeps_still_meets_its_deadline() {
        let engine = engine();
        let clock = Clock::start(&engine).unwrap();
        let module = Module::new(&engine, SPIN).unwrap();
        let mut store = Store::new(&engine, ());
        clock.arm(&mut store, Duration::from_millis(10));
        settled(&clock);
        // Past its last tick's sleep, into its wait.
        std::thread::sleep(EPOCH_TICK * 10);
        // Asleep now, with this store's deadline behind it: armed again, the guest runs its
        // 50 ms of CPU, and no more.
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .unwrap();
        clock.arm(&mut store, Duration::from_millis(50));
        let started = Instant::now();
        let trap = spin.call(&mut store, ()).unwrap_err();
        assert_eq!(
            trap.downcast_ref::<Trap>(),
            Some(&Trap::Interrupt),
            "{trap:?}"
        );
        let ran = started.elapsed();
        // Woken by the arming, not by its once-a-second look at the engine.
        assert!(
            ran >= Duration::from_millis(50) && ran < IDLE_CHECK,
            "ran {ran:?}"
        );
        // A store with no deadline armed runs no guest code at all.
        let mut unarmed = Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut unarmed, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<(), ()>(&mut unarmed, "spin")
            .unwrap();
        let trap = spin.call(&mut unarmed, ()).unwrap_err();
        assert_eq!(
            trap.downcast_ref::<Trap>(),
            Some(&Trap::Interrupt),
            "{trap:?}"
        );
    }

    #[test]
    fn its_thread_ends_with_the_engine() {
        let engine = engine();
        let clock = Clock::start(&engine).unwrap();
        drop(engine);
        let deadline = Instant::now() + IDLE_CHECK * 5;
        // The thread's reference is the only other one.
        while Arc::strong_count(&clock) > 1 {
            assert!(
                Instant::now() < deadline,
                "the clock's thread outlived its engine"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn every_deadline_is_armed_on_the_clock() {
        for (path, source) in crate::crate_sources() {
            if path.ends_with("runtime/clock.rs") {
                continue;
            }
            assert!(
                !source.contains("set_epoch_deadline") && !source.contains("increment_epoch"),
                "{}: a deadline set or an epoch advanced past the clock",
                path.display()
            );
        }
    }
}
