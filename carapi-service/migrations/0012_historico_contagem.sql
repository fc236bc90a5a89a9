-- Counters kept by triggers in the same transaction as each history row, so that the `total`
-- of GET /v1/historico (per endpoint and success) and GET /v1/uso (per hour and endpoint) are
-- sums of a few rows instead of counts over the account's history.

-- Lookups per account, endpoint and success (HTTP 200 or not).
CREATE TABLE consultas_contagem (
    conta_id    INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL,
    sucesso     INTEGER NOT NULL,            -- 1 = HTTP 200
    quantidade  INTEGER NOT NULL,
    PRIMARY KEY (conta_id, endpoint, sucesso)
) WITHOUT ROWID;

-- Lookups and amount charged per account, UTC hour (Unix ms / 3,600,000) and endpoint.
CREATE TABLE consultas_uso_hora (
    conta_id        INTEGER NOT NULL,
    hora            INTEGER NOT NULL,
    endpoint        TEXT    NOT NULL,
    quantidade      INTEGER NOT NULL,
    valor_centavos  INTEGER NOT NULL,
    PRIMARY KEY (conta_id, hora, endpoint)
) WITHOUT ROWID;

INSERT INTO consultas_contagem (conta_id, endpoint, sucesso, quantidade)
SELECT conta_id, endpoint, status_http = 200, COUNT(*) FROM consultas GROUP BY 1, 2, 3;

INSERT INTO consultas_uso_hora (conta_id, hora, endpoint, quantidade, valor_centavos)
SELECT conta_id, data_ms / 3600000, endpoint, COUNT(*), SUM(valor_centavos)
FROM consultas GROUP BY 1, 2, 3;

CREATE TRIGGER consultas_contar AFTER INSERT ON consultas
BEGIN
    INSERT OR IGNORE INTO consultas_contagem (conta_id, endpoint, sucesso, quantidade)
    VALUES (NEW.conta_id, NEW.endpoint, NEW.status_http = 200, 0);
    UPDATE consultas_contagem SET quantidade = quantidade + 1
    WHERE conta_id = NEW.conta_id AND endpoint = NEW.endpoint
      AND sucesso = (NEW.status_http = 200);
    INSERT OR IGNORE INTO consultas_uso_hora (conta_id, hora, endpoint, quantidade, valor_centavos)
    VALUES (NEW.conta_id, NEW.data_ms / 3600000, NEW.endpoint, 0, 0);
    UPDATE consultas_uso_hora
    SET quantidade = quantidade + 1, valor_centavos = valor_centavos + NEW.valor_centavos
    WHERE conta_id = NEW.conta_id AND hora = NEW.data_ms / 3600000 AND endpoint = NEW.endpoint;
END;
