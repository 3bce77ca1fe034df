-- The review service's first schema, in the SQL that SQLite and PostgreSQL share. Times are
-- milliseconds since the Unix epoch.

-- Who may call the service: a token's secret is never stored, only its sha256.
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('gate', 'reviewer', 'admin')),
    team TEXT,
    hash TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT
);

-- The key decisions are signed with: one per database, shared by every instance on it.
CREATE TABLE signing_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pem TEXT NOT NULL
);

CREATE TABLE escalations (
    id TEXT PRIMARY KEY,
    token_id TEXT NOT NULL REFERENCES tokens (id),
    requester TEXT NOT NULL,
    team TEXT,
    session_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool TEXT NOT NULL,
    subject TEXT NOT NULL,
    agent TEXT NOT NULL,
    body TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'allowed', 'denied')),
    reviewer TEXT,
    decided_ms BIGINT,
    message TEXT,
    rule TEXT,
    statement TEXT,
    signature TEXT,
    claimed_ms BIGINT
);
CREATE INDEX escalations_by_status ON escalations (status, created_ms);

-- Audit records as the gates shipped them: one per (gate, log, number).
CREATE TABLE audit_records (
    token_id TEXT NOT NULL,
    log TEXT NOT NULL,
    seq BIGINT NOT NULL,
    prev TEXT,
    hash TEXT NOT NULL,
    developer TEXT NOT NULL,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    decision TEXT NOT NULL,
    allowed BIGINT,
    answer TEXT NOT NULL,
    subject TEXT NOT NULL,
    handlers TEXT NOT NULL,
    timestamp_ms BIGINT NOT NULL,
    received_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (token_id, log, seq)
);

-- Each log's chain as far as the service has it, and the first break it found.
CREATE TABLE audit_chains (
    token_id TEXT NOT NULL,
    log TEXT NOT NULL,
    developer TEXT NOT NULL,
    last_seq BIGINT NOT NULL,
    last_hash TEXT NOT NULL,
    broken_seq BIGINT,
    broken_why TEXT,
    PRIMARY KEY (token_id, log)
);

-- Reviewers' page sessions: the cookie's sha256, its CSRF token and when it ends.
CREATE TABLE page_sessions (
    id TEXT PRIMARY KEY,
    token_id TEXT NOT NULL REFERENCES tokens (id),
    csrf TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);
