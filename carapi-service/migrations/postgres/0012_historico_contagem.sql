-- Counters kept by a trigger in the same transaction as each history row, so that the `total`
-- of GET /v1/historico (per endpoint and success) and GET /v1/uso (per hour and endpoint) are
-- sums of a few rows instead of counts over the account's history.

-- Lookups per account, endpoint and success (HTTP 200 or not).
CREATE TABLE consultas_contagem (
    conta_id    BIGINT  NOT NULL,
    endpoint    TEXT COLLATE "C" NOT NULL,
    sucesso     BOOLEAN NOT NULL,
    quantidade  BIGINT  NOT NULL,
    PRIMARY KEY (conta_id, endpoint, sucesso)
);

-- Lookups and amount charged per account, UTC hour (Unix seconds / 3600) and endpoint.
CREATE TABLE consultas_uso_hora (
    conta_id        BIGINT NOT NULL,
    hora            BIGINT NOT NULL,
    endpoint        TEXT COLLATE "C" NOT NULL,
    quantidade      BIGINT NOT NULL,
    valor_centavos  BIGINT NOT NULL,
    PRIMARY KEY (conta_id, hora, endpoint)
);

CREATE FUNCTION consultas_hora(t TIMESTAMPTZ) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE AS $$ SELECT floor(extract(epoch FROM t) / 3600)::BIGINT $$;

INSERT INTO consultas_contagem (conta_id, endpoint, sucesso, quantidade)
SELECT conta_id, endpoint, status_http = 200, COUNT(*) FROM consultas GROUP BY 1, 2, 3;

INSERT INTO consultas_uso_hora (conta_id, hora, endpoint, quantidade, valor_centavos)
SELECT conta_id, consultas_hora(data), endpoint, COUNT(*), SUM(valor_centavos)
FROM consultas GROUP BY 1, 2, 3;

CREATE FUNCTION consultas_contar() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO consultas_contagem (conta_id, endpoint, sucesso, quantidade)
    VALUES (NEW.conta_id, NEW.endpoint, NEW.status_http = 200, 1)
    ON CONFLICT (conta_id, endpoint, sucesso)
    DO UPDATE SET quantidade = consultas_contagem.quantidade + 1;
    INSERT INTO consultas_uso_hora (conta_id, hora, endpoint, quantidade, valor_centavos)
    VALUES (NEW.conta_id, consultas_hora(NEW.data), NEW.endpoint, 1, NEW.valor_centavos)
    ON CONFLICT (conta_id, hora, endpoint)
    DO UPDATE SET quantidade = consultas_uso_hora.quantidade + 1,
                  valor_centavos = consultas_uso_hora.valor_centavos + EXCLUDED.valor_centavos;
    RETURN NULL;
END $$;

CREATE TRIGGER consultas_contar AFTER INSERT ON consultas
    FOR EACH ROW EXECUTE FUNCTION consultas_contar();
