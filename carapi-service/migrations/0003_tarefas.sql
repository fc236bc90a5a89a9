-- Leases of the periodic jobs (reconciliation), so that several server processes on one
-- database do each pass once: a process runs a pass only while it holds the job's lease.
CREATE TABLE tarefas (
    nome    TEXT    NOT NULL PRIMARY KEY,
    dono    TEXT    NOT NULL,                                  -- id of the holding process
    ate_ms  INTEGER NOT NULL                                   -- lease end, Unix milliseconds
);
