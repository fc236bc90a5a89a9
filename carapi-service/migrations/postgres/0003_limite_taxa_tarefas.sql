-- Per-key request rate shared by every server process on this database (GCRA): the
-- theoretical arrival time of each key's next request, in microseconds of the database clock.
-- UNLOGGED: losing it in a crash only forgets up to one second of rate history.
CREATE UNLOGGED TABLE limite_taxa (
    conta_id  BIGINT PRIMARY KEY,
    tat_us    BIGINT NOT NULL
);

-- Leases of the periodic jobs (reconciliation), so that several server processes on one
-- database do each pass once: a process runs a pass only while it holds the job's lease.
CREATE TABLE tarefas (
    nome  TEXT        PRIMARY KEY,
    dono  TEXT        NOT NULL,                                -- id of the holding process
    ate   TIMESTAMPTZ NOT NULL                                 -- lease end
);
