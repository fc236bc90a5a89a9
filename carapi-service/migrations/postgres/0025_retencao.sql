-- The retention of uncharged error rows (rules: src/money/retencao.rs): what it deleted from
-- each account's history, per account (endpoint '') and per endpoint, so that history pages and
-- totals skip the deleted rows (src/store/historico.rs). consultas_contagem keeps counting the
-- rows ever recorded (the next row's ordinals are its counts plus one).
CREATE TABLE consultas_removidas (
    conta_id        BIGINT NOT NULL,
    endpoint        TEXT   NOT NULL,             -- '' = the whole account
    removidas       BIGINT NOT NULL,             -- error rows deleted
    sucessos_antes  BIGINT NOT NULL,             -- 200s older than the newest deleted row
    PRIMARY KEY (conta_id, endpoint)
);
