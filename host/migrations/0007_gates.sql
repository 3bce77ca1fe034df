-- The fleet (serve/fleet.rs): each gate's last report, one per token, machine and developer.
-- `body` is the report as the gate sent it (service/fleet.rs).
CREATE TABLE gates (
    token_id TEXT NOT NULL,
    machine TEXT NOT NULL,
    developer TEXT NOT NULL,
    body TEXT NOT NULL,
    first_ms BIGINT NOT NULL,
    last_ms BIGINT NOT NULL,
    PRIMARY KEY (token_id, machine, developer)
);
CREATE INDEX gates_last ON gates (last_ms);
