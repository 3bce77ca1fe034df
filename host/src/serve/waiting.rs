//! Whether a gate still waits for an escalation's decision, and whether a decision reached
//! one. A waiting gate long-polls for its decision, one poll after another until its own
//! deadline (`--wait`), and each poll tells the service how long it holds
//! (the database's `gate_waits` keeps when the latest one ends). So while a poll is
//! open, or ended a moment ago (the next one is on its way), the gate waits; once the last one
//! ended longer ago than that, the gate stopped waiting: its deadline passed, it was stopped,
//! or the service was down past its deadline. A decision taken then reaches no agent: the
//! page says so rather than "Allowed by bob".

use serde::Serialize;

/// How long after a long-poll ended its gate still counts as waiting: the gate asks again at
/// once, or within half a second when the service cannot be reached; 15 s covers a service
/// restarting under it.
pub const GRACE_MS: i64 = 15_000;

/// Where the gate of an escalation is, as its long-polls tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Gate {
    /// A long-poll is open (it ends at `until_ms`), ended a moment ago, or the escalation has
    /// just arrived and its gate's first poll is on its way (`until_ms` unknown).
    Waiting { until_ms: Option<i64> },
    /// It waited, and its last long-poll ended at `until_ms`.
    GaveUp { until_ms: i64 },
    /// It never waited (sent without `--wait`): a decision is for a resumed session to claim.
    DidNotWait,
}

impl Gate {
    /// The gate of an escalation created at `created_ms`, whose latest long-poll ends at
    /// `until_ms` (none: it never polled), at `now`.
    pub fn of(created_ms: i64, until_ms: Option<i64>, now: i64) -> Gate {
        match until_ms {
            Some(until) if now < until + GRACE_MS => Gate::Waiting {
                until_ms: Some(until),
            },
            Some(until) => Gate::GaveUp { until_ms: until },
            None if now < created_ms + GRACE_MS => Gate::Waiting { until_ms: None },
            None => Gate::DidNotWait,
        }
    }

    pub fn waits(self) -> bool {
        matches!(self, Gate::Waiting { .. })
    }
}

/// What became of a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Reached {
    /// The gate that waited for it received it.
    Delivered { at_ms: i64 },
    /// A resumed session claimed it as its grant.
    Claimed { at_ms: i64 },
    /// Its gate still waits: it is on its way.
    OnItsWay,
    /// No gate received it: the gate had stopped waiting, or never waited and no resumed
    /// session has claimed it. An allow let nothing through: it stands as a proposal.
    Nobody,
}

impl Reached {
    /// What became of a decision delivered at `delivered_ms` or claimed at `claimed_ms` (if
    /// ever), whose escalation's gate is `gate`.
    pub fn of(delivered_ms: Option<i64>, claimed_ms: Option<i64>, gate: Gate) -> Reached {
        match (delivered_ms, claimed_ms) {
            (Some(at_ms), _) => Reached::Delivered { at_ms },
            (None, Some(at_ms)) => Reached::Claimed { at_ms },
            (None, None) if gate.waits() => Reached::OnItsWay,
            (None, None) => Reached::Nobody,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_waits_while_it_polls_and_a_moment_after_and_then_it_gave_up() {
        let created = 1_000_000;
        let polled = Some(created + 25_000);
        assert_eq!(
            Gate::of(created, None, created + 1),
            Gate::Waiting { until_ms: None }
        );
        assert_eq!(
            Gate::of(created, None, created + GRACE_MS),
            Gate::DidNotWait
        );
        assert!(Gate::of(created, polled, created + 10_000).waits());
        assert!(Gate::of(created, polled, created + 25_000 + GRACE_MS - 1).waits());
        assert_eq!(
            Gate::of(created, polled, created + 25_000 + GRACE_MS),
            Gate::GaveUp {
                until_ms: created + 25_000
            }
        );
    }

    #[test]
    fn a_decision_that_no_gate_received_is_said_to_have_reached_nobody() {
        let waiting = Gate::Waiting { until_ms: Some(5) };
        let gone = Gate::GaveUp { until_ms: 5 };
        assert_eq!(
            Reached::of(Some(7), None, gone),
            Reached::Delivered { at_ms: 7 }
        );
        assert_eq!(
            Reached::of(None, Some(9), Gate::DidNotWait),
            Reached::Claimed { at_ms: 9 }
        );
        assert_eq!(Reached::of(None, None, waiting), Reached::OnItsWay);
        assert_eq!(Reached::of(None, None, gone), Reached::Nobody);
        assert_eq!(Reached::of(None, None, Gate::DidNotWait), Reached::Nobody);
    }
}
