//! Instance lifecycle: every evaluation gets an instance no request has used. Making one and
//! wiping it afterwards are kept off the request's path: each handler has a spare instance
//! made in the background, which the next request takes, and the instances a decision used are
//! dropped in the background once it is made ([`Batch`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use wasmtime::Store;
use wasmtime::component::{ComponentExportIndex, InstancePre, TypedFunc};

use super::clock::Clock;
use super::sandbox::SandboxState;
use super::wit;
use super::{ComponentInfo, EPOCH_TICK, Failure, Limits, POOL_INSTANCES, Ruling, Runtime, clean};
use crate::request::ToolRequest;

/// A component linked and checked against the `plugin` world, ready to instantiate.
#[derive(Clone)]
pub(super) struct Prelinked {
    pub(super) pre: InstancePre<SandboxState>,
    pub(super) indices: wit::PluginIndices,
    /// Set for a prepared snapshot: its `prepare.judge` export, which is called instead of
    /// `handler.evaluate` (see `runtime::prepare`).
    pub(super) judge: Option<ComponentExportIndex>,
}

impl Prelinked {
    /// Checks that `pre` implements the `plugin` world.
    pub(super) fn new(pre: InstancePre<SandboxState>) -> wasmtime::Result<Prelinked> {
        Ok(Prelinked {
            indices: wit::PluginIndices::new(&pre)?,
            pre,
            judge: None,
        })
    }
}

/// A plugin compiled, checked and pre-linked: ready to instantiate per request.
pub struct LoadedPlugin {
    pub label: String,
    pub info: ComponentInfo,
    pub(super) pre: Prelinked,
    /// An instance made ahead of the next request, never called yet.
    pub(super) spare: Arc<Mutex<Option<Instance>>>,
    /// The requests it can have an opinion on, as its `prepare` declared for its config: it
    /// is not run on others.
    pub interest: Interest,
}

/// Which requests a plugin can have an opinion on (the WIT `interest`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interest {
    /// Only these kinds; `None`: any.
    pub(super) kinds: Option<Vec<crate::request::ToolKind>>,
    /// Only requests with at least one path.
    pub(super) paths: bool,
}

impl Interest {
    /// Whether a request of this plugin's interest: the others are abstained on unseen.
    pub fn covers(&self, request: &ToolRequest) -> bool {
        self.kinds
            .as_ref()
            .is_none_or(|kinds| kinds.contains(&request.kind))
            && (!self.paths || !request.paths.is_empty())
    }

    /// No request at all: the plugin abstains on every one.
    pub(super) fn is_none(&self) -> bool {
        self.kinds.as_ref().is_some_and(Vec::is_empty)
    }
}

/// A request in the contract's records, made once for every handler of a decision (the
/// agent's params as JSON text among them).
pub struct Lowered<'a> {
    request: &'a ToolRequest,
    wit: wit::types::Request,
}

impl<'a> Lowered<'a> {
    pub fn new(request: &'a ToolRequest) -> Lowered<'a> {
        Lowered {
            request,
            wit: wit::to_wit(request),
        }
    }

    pub fn request(&self) -> &'a ToolRequest {
        self.request
    }
}

/// The result of one evaluation: the plugin's ruling, or why there is none.
pub struct Evaluation {
    pub outcome: Result<Ruling, Failure>,
    pub logs: Vec<String>,
    pub elapsed: Duration,
}

impl Runtime {
    /// Evaluations whose clean-up waits for the end of the batch (see [`Batch`]).
    pub fn batch(self: &Arc<Self>) -> Batch {
        Batch {
            runtime: self.clone(),
            used: Vec::new(),
        }
    }

    /// One evaluation, in a batch of its own.
    pub async fn evaluate(
        self: &Arc<Self>,
        plugin: &LoadedPlugin,
        request: &ToolRequest,
        config: &str,
        limits: Limits,
    ) -> Evaluation {
        let request = Lowered::new(request);
        self.batch()
            .evaluate(plugin, &request, config, limits)
            .await
    }

    /// A fresh instance of `plugin` in its own store, with `limits`, once a pool slot is free.
    pub async fn instantiate(
        &self,
        plugin: &LoadedPlugin,
        limits: Limits,
    ) -> Result<Instance, Failure> {
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| Failure::Trap(e.to_string()))?;
        self.instantiate_in(&plugin.pre, slot, limits).await
    }

    async fn instantiate_in(
        &self,
        pre: &Prelinked,
        slot: OwnedSemaphorePermit,
        limits: Limits,
    ) -> Result<Instance, Failure> {
        let mut store = self.store(limits);
        let made = async {
            let instance = pre.pre.instantiate_async(&mut store).await?;
            let bindings = pre.indices.load(&mut store, &instance)?;
            let call = match pre.judge {
                Some(judge) => Call::Judge(instance.get_typed_func(&mut store, judge)?),
                None => Call::Evaluate(bindings),
            };
            Ok::<_, wasmtime::Error>(call)
        };
        match made.await {
            Ok(call) => Ok(Instance {
                store,
                call,
                limits,
                clock: self.clock.clone(),
                _slot: slot,
            }),
            Err(trap) => Err(describe_trap(&trap, limits)),
        }
    }
}

impl Runtime {
    /// A store for one instance: an empty sandbox with `limits`, its CPU deadline armed.
    pub(super) fn store(&self, limits: Limits) -> Store<SandboxState> {
        let mut store = Store::new(&self.engine, SandboxState::new(limits, self.roots.clone()));
        store.limiter(|state| &mut state.limits);
        store.epoch_deadline_trap();
        self.clock.arm(&mut store, limits.timeout);
        store
    }
}

/// Evaluations that leave their clean-up to the end: each runs in a fresh instance (the
/// handler's spare if there is one, else one made now), and when the batch is dropped, one
/// background task drops the instances used (wiping their pool slots) and makes new spares.
/// Wiping a slot makes the kernel interrupt every core of the process (TLB shootdown): done
/// while the next handler of a decision runs, it would slow that handler down.
pub struct Batch {
    runtime: Arc<Runtime>,
    used: Vec<Used>,
}

/// Where an evaluation's instance comes from: the handler's spare, or a pool slot to make one in.
enum Ready {
    Spare(Instance),
    Slot(Result<OwnedSemaphorePermit, Failure>),
}

/// What a batch has to clean up for one evaluation.
struct Used {
    instance: Option<Instance>,
    pre: Prelinked,
    spare: Arc<Mutex<Option<Instance>>>,
    limits: Limits,
}

impl Batch {
    /// Runs one evaluation. Never panics and never returns a ruling for a failure: every trap,
    /// timeout, memory cap or plugin error comes back as a [`Failure`].
    pub async fn evaluate(
        &mut self,
        plugin: &LoadedPlugin,
        request: &Lowered<'_>,
        config: &str,
        limits: Limits,
    ) -> Evaluation {
        // A pool slot is waited for before the handler's clock starts: however loaded the
        // gate is, a handler's deadline counts its own run only.
        let spare = lock(&plugin.spare).take().filter(|s| s.limits == limits);
        let ready = match spare {
            Some(spare) => Ready::Spare(spare),
            None => Ready::Slot(self.slot().await),
        };
        let started = Instant::now();
        let deadline = limits.timeout + EPOCH_TICK * 4;
        let run = async {
            let mut instance = match ready {
                Ready::Spare(instance) => instance,
                Ready::Slot(slot) => {
                    self.runtime
                        .instantiate_in(&plugin.pre, slot?, limits)
                        .await?
                }
            };
            let outcome = instance.evaluate_lowered(request, config).await;
            Ok::<_, Failure>((outcome, instance.take_logs(), instance))
        };
        // The epoch deadline stops guest code; the wall clock also stops a guest blocked in the host.
        let (outcome, logs, instance) = match tokio::time::timeout(deadline, run).await {
            Err(_) => (
                Err(Failure::Timeout {
                    ms: limits.timeout.as_millis(),
                }),
                Vec::new(),
                None,
            ),
            Ok(Err(error)) => (Err(error), Vec::new(), None),
            Ok(Ok((outcome, logs, instance))) => (outcome, logs, Some(instance)),
        };
        // Its clean-up waits for the end of the batch only while the pool has room to spare;
        // under load the slot is given back now.
        let room = self.runtime.slots.available_permits() >= POOL_INSTANCES as usize / 2;
        let instance = instance.filter(|_| room);
        self.used.push(Used {
            instance,
            pre: plugin.pre.clone(),
            spare: plugin.spare.clone(),
            limits,
        });
        Evaluation {
            outcome,
            logs,
            elapsed: started.elapsed(),
        }
    }

    /// A free pool slot. When there is none, the instances this batch still holds are dropped
    /// first: a decision that waits holds no slot that another waiting decision needs, so any
    /// number of handlers and of concurrent decisions goes through a pool of any size.
    async fn slot(&mut self) -> Result<OwnedSemaphorePermit, Failure> {
        if let Ok(slot) = self.runtime.slots.clone().try_acquire_owned() {
            return Ok(slot);
        }
        for used in &mut self.used {
            drop(used.instance.take());
        }
        self.runtime
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| Failure::Trap(e.to_string()))
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let (runtime, mut used) = (self.runtime.clone(), std::mem::take(&mut self.used));
        let Ok(background) = tokio::runtime::Handle::try_current() else {
            return;
        };
        background.spawn(async move {
            for used in &mut used {
                drop(used.instance.take());
            }
            for used in used {
                // A spare only while half the pool stays free for evaluations.
                if !runtime.spares
                    || lock(&used.spare).is_some()
                    || runtime.slots.available_permits() < POOL_INSTANCES as usize / 2
                {
                    continue;
                }
                let Ok(slot) = runtime.slots.clone().try_acquire_owned() else {
                    continue;
                };
                if let Ok(instance) = runtime.instantiate_in(&used.pre, slot, used.limits).await {
                    lock(&used.spare).get_or_insert(instance);
                }
            }
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A live plugin instance. The chain uses each one for a single request (isolation); the
/// benchmark also measures calling one repeatedly.
pub struct Instance {
    store: Store<SandboxState>,
    call: Call,
    limits: Limits,
    /// The clock its deadline is armed on, again for each request.
    clock: Arc<Clock>,
    /// The pool slot it occupies, given back when it is dropped.
    _slot: OwnedSemaphorePermit,
}

/// The export an instance judges with: the handler's `evaluate`, or for a prepared snapshot
/// `prepare.judge` (which reads the prepared config from memory).
enum Call {
    Evaluate(wit::Plugin),
    Judge(JudgeFunc),
}

type JudgeFunc = TypedFunc<(wit::types::Request,), (Result<wit::types::Verdict, String>,)>;

impl Instance {
    /// Calls the plugin's `evaluate` under the CPU deadline. A trap leaves the instance unusable.
    pub async fn evaluate(
        &mut self,
        request: &ToolRequest,
        config: &str,
    ) -> Result<Ruling, Failure> {
        self.evaluate_lowered(&Lowered::new(request), config).await
    }

    /// [`Instance::evaluate`] on a request already in the contract's records.
    async fn evaluate_lowered(
        &mut self,
        request: &Lowered<'_>,
        config: &str,
    ) -> Result<Ruling, Failure> {
        self.clock.arm(&mut self.store, self.limits.timeout);
        let state = self.store.data_mut();
        state.cwd.clone_from(&request.request.cwd);
        state.home.clone_from(&request.request.home);
        state
            .workspace_roots
            .clone_from(&request.request.workspace_roots);
        let returned = match &self.call {
            Call::Evaluate(bindings) => {
                let handler = bindings.acp_gate_plugin_handler();
                handler
                    .call_evaluate(&mut self.store, &request.wit, config)
                    .await
            }
            Call::Judge(judge) => {
                let returned = judge
                    .call_async(&mut self.store, (request.wit.clone(),))
                    .await;
                returned.map(|(verdict,)| verdict)
            }
        };
        match returned {
            Err(trap) => Err(describe_trap(&trap, self.limits)),
            Ok(Err(message)) => Err(Failure::Error(clean(&message))),
            Ok(Ok(verdict)) => Ok(wit::from_wit(verdict)),
        }
    }

    pub fn take_logs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.store.data_mut().logs)
    }
}

pub(super) fn describe_trap(error: &wasmtime::Error, limits: Limits) -> Failure {
    let text = format!("{error:#}");
    if let Some(wasmtime::Trap::Interrupt) = error.downcast_ref::<wasmtime::Trap>() {
        return Failure::Cpu {
            ms: limits.timeout.as_millis(),
        };
    }
    if text.contains("memory")
        && (text.contains("limit") || text.contains("grow") || text.contains("minimum"))
    {
        return Failure::Memory {
            mib: limits.memory_bytes >> 20,
            detail: clean(&text),
        };
    }
    Failure::Trap(clean(&text))
}
