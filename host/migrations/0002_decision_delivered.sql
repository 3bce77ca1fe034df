-- When a decision reached the gate that waited for it: it is then used, and a resumed session
-- cannot claim it again (a decision lets one ask through, once).
ALTER TABLE escalations ADD COLUMN delivered_ms BIGINT;
