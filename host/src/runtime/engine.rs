//! The engine's settings, shared by the runtime and by `build.rs` (which compiles the built-in
//! plugins into the binary with them, so the two must agree to the bit). A leaf: it imports
//! only wasmtime.

use wasmtime::{Config, Enabled, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How many plugin instances may be live at once: the size of the instance pool. More
/// concurrent evaluations wait for a slot.
pub const POOL_INSTANCES: u32 = 128;

/// The most of a wiped slot's memory (and of its tables) restored by copying instead of being
/// given back to the kernel: more than a built-in's call writes.
const KEEP_RESIDENT: usize = 256 << 10;

/// Where a process's plugin instances come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instances {
    /// The instance pool, set up once: a process that decides many requests.
    Pooled,
    /// Allocated one by one, with the pool's memory reservations (the native code compiled for
    /// the pool runs here too): a process that decides one request, for which setting up a
    /// pool of 128 slots costs more than the decision.
    OneByOne,
    /// Allocated one by one without the 4 GiB reservation per memory, where the address space
    /// for it is refused (`ulimit -v`): bounds are checked in code instead, so plugins compiled
    /// for the pool must be compiled again.
    Unreserved,
}

/// The engine's configuration: async, epoch interruption, the component model, and where
/// instances come from (`instances`).
pub fn config(instances: Instances) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    match instances {
        Instances::Pooled => {
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(instance_pool()));
        }
        Instances::OneByOne => {
            config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
        }
        Instances::Unreserved => {
            config
                .memory_reservation(0)
                .memory_guard_size(0)
                .memory_reservation_for_growth(0);
        }
    }
    config
}

/// Fresh instances come from a pool set up once: each costs a slot's reset (memory back to its
/// copy-on-write image) instead of mapping and unmapping memory, which is most of what a
/// fresh instance used to cost. Isolation is the same: a slot is wiped between instances.
///
/// The wipe finds the pages the instance wrote (`PAGEMAP_SCAN`, Linux 6.7 and later) and
/// copies them back from the image, up to [`KEEP_RESIDENT`]; only the rest is given back to
/// the kernel (`madvise`). Giving pages back interrupts every core of the process (a TLB
/// shootdown), and the next instance faults them in again: that was most of a decision's time.
/// The slots stay resident, so the pool reuses a handler's own slots before any other
/// (`max_unused_warm_slots(0)`): the slots ever used are as many as were ever live at once.
fn instance_pool() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(POOL_INSTANCES)
        // Language runtimes (Python, JavaScript) are components of several core modules.
        .total_core_instances(POOL_INSTANCES * 8)
        .total_memories(POOL_INSTANCES * 2)
        .total_tables(POOL_INSTANCES * 8)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_module(1)
        .table_elements(1 << 17)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        .pagemap_scan(Enabled::Auto)
        .max_unused_warm_slots(0)
        // `memory_mb` is at most 4096; each handler's own cap is its store's limiter.
        .max_memory_size(4 << 30);
    pool
}
