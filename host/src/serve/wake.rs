//! Waking the gates that wait for a decision: a `Notify` per escalation someone waits on in
//! this instance, and, on PostgreSQL, `LISTEN`/`NOTIFY` so that a decision taken on one
//! instance wakes the waiters of every other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::Notify;

use super::db::{Backend, Db};

/// The PostgreSQL channel decisions are announced on (the payload: the escalation's id).
const CHANNEL: &str = "acp_gate_decisions";

#[derive(Default)]
pub struct Wake {
    waiting: Mutex<HashMap<String, Arc<Notify>>>,
    /// Set when the service stops: waits end at once (the gates ask again, elsewhere or later).
    closing: std::sync::atomic::AtomicBool,
}

/// A wait on one escalation; dropping it forgets the escalation when nobody else waits.
pub struct Waiting<'a> {
    wake: &'a Wake,
    id: String,
    pub notify: Arc<Notify>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut waiting = lock(&self.wake.waiting);
        // Ours and the map's: nobody else waits.
        if Arc::strong_count(&self.notify) <= 2 {
            waiting.remove(&self.id);
        }
    }
}

impl Wake {
    /// Starts waiting on escalation `id` (before reading its state, so that a decision in
    /// between is not missed).
    pub fn wait(&self, id: &str) -> Waiting<'_> {
        let notify = lock(&self.waiting)
            .entry(id.to_owned())
            .or_default()
            .clone();
        Waiting {
            wake: self,
            id: id.to_owned(),
            notify,
        }
    }

    /// The service is stopping: every wait ends now.
    pub fn close(&self) {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for notify in lock(&self.waiting).values() {
            notify.notify_waiters();
        }
    }

    pub fn closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Wakes this instance's waiters on `id`.
    pub fn local(&self, id: &str) {
        if let Some(notify) = lock(&self.waiting).get(id) {
            notify.notify_waiters();
        }
    }

    /// Escalation `id` was decided: wake its waiters here, and on PostgreSQL everywhere.
    pub async fn decided(&self, db: &Db, id: &str) -> Result<()> {
        self.local(id);
        if db.backend == Backend::Postgres {
            db.notify(CHANNEL, id).await?;
        }
        Ok(())
    }

    /// On PostgreSQL: listens for the other instances' decisions for as long as the service
    /// runs (the listener reconnects by itself; waiters also look again now and then, so a
    /// notification lost in a reconnection delays a wake, never loses it).
    pub async fn listen(self: Arc<Self>, db: &Db) -> Result<()> {
        if db.backend != Backend::Postgres {
            return Ok(());
        }
        let mut listener = sqlx::postgres::PgListener::connect(&db.url).await?;
        listener.listen(CHANNEL).await?;
        tokio::spawn(async move {
            loop {
                match listener.recv().await {
                    Ok(notification) => self.local(notification.payload()),
                    Err(error) => {
                        eprintln!("acp-gate serve: LISTEN {CHANNEL}: {error}; listening again");
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    }
                }
            }
        });
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
