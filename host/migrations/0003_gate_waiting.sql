-- When the latest long-poll of an escalation's gate ends: while it lasts, and a moment after
-- (the next one is on its way), the gate waits for its decision; after that it stopped waiting,
-- and a decision reaches no agent (serve/waiting.rs). NULL: the gate never waited.
ALTER TABLE escalations ADD COLUMN gate_until_ms BIGINT;
