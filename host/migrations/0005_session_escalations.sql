-- An escalation's page lists the other escalations of its session (the same gate's).
CREATE INDEX IF NOT EXISTS escalations_session ON escalations (token_id, session_id, created_ms);
