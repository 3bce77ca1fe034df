-- Who decided each audited call, for the audit page's outcomes: 'chain', 'person' (at the
-- terminal, in the editor, at the agent's own prompt, or an "always" they gave), 'reviewer' (on
-- the review service, or a grant of an escalation) or 'nobody' (escalated with nobody to ask,
-- or cancelled). The service reads it from the record's answer as it ingests it (serve/db.rs);
-- records stored before are read here from the same answer, by the name that follows its word.
ALTER TABLE audit_records ADD COLUMN decided_by TEXT NOT NULL DEFAULT 'chain';
UPDATE audit_records SET decided_by = CASE
    WHEN answer LIKE '% (reviewer)%' OR answer LIKE '% (reviewer:%'
        OR answer LIKE '% (granted)%' OR answer LIKE '% (granted:%' THEN 'reviewer'
    WHEN answer LIKE '% (escalated)%' OR answer LIKE '% (escalated:%' THEN 'nobody'
    WHEN answer LIKE '% (user)%' OR answer LIKE '% (user:%'
        OR answer LIKE '% (editor)%' OR answer LIKE '% (editor:%'
        OR answer LIKE '% (agent)%' OR answer LIKE '% (agent:%'
        OR answer LIKE '% (session-rule)%' OR answer LIKE '% (session-rule:%' THEN 'person'
    WHEN allowed IS NULL THEN 'nobody'
    ELSE 'chain'
END;
