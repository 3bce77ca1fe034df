-- Who asked, as the person the gate's token stands for (serve/identity.rs): what the page's
-- developer filter compares, as the audit records' `developer` is. The service fills it in for
-- escalations stored before, from `requester`, as it opens the database (serve/db.rs).
ALTER TABLE escalations ADD COLUMN developer TEXT;
CREATE INDEX IF NOT EXISTS escalations_developer ON escalations (developer, created_ms);
CREATE INDEX IF NOT EXISTS escalations_decided ON escalations (status, decided_ms);
CREATE INDEX IF NOT EXISTS audit_records_time ON audit_records (timestamp_ms);
