-- GET /v1/historico in constant time per page, however deep: each history row carries its
-- ordinal (1 = oldest) in each group that a filter combination selects, and each combination's
-- index is on its ordinal, so page p is an index range (rules: src/store/historico.rs).
-- Written by the insert as the group's count in consultas_contagem plus one, after the
-- transaction has locked the account row, so that an account's inserts are serialised.
ALTER TABLE consultas ADD COLUMN ordem_conta BIGINT;
ALTER TABLE consultas ADD COLUMN ordem_endpoint BIGINT;
ALTER TABLE consultas ADD COLUMN ordem_status BIGINT;
ALTER TABLE consultas ADD COLUMN ordem_endpoint_status BIGINT;

UPDATE consultas
SET ordem_conta = o.a, ordem_endpoint = o.e, ordem_status = o.s, ordem_endpoint_status = o.es
FROM (SELECT id,
             ROW_NUMBER() OVER (PARTITION BY conta_id ORDER BY id) AS a,
             ROW_NUMBER() OVER (PARTITION BY conta_id, endpoint ORDER BY id) AS e,
             ROW_NUMBER() OVER (PARTITION BY conta_id, status_http = 200 ORDER BY id) AS s,
             ROW_NUMBER() OVER (PARTITION BY conta_id, endpoint, status_http = 200 ORDER BY id) AS es
      FROM consultas) AS o
WHERE consultas.id = o.id;

ALTER TABLE consultas ALTER COLUMN ordem_conta SET NOT NULL,
    ALTER COLUMN ordem_endpoint SET NOT NULL,
    ALTER COLUMN ordem_status SET NOT NULL,
    ALTER COLUMN ordem_endpoint_status SET NOT NULL;

DROP INDEX consultas_conta;
DROP INDEX consultas_conta_endpoint;
DROP INDEX consultas_conta_sucesso;
DROP INDEX consultas_conta_erro;
DROP INDEX consultas_conta_endpoint_sucesso;
DROP INDEX consultas_conta_endpoint_erro;
CREATE INDEX consultas_conta ON consultas (conta_id, ordem_conta);
CREATE INDEX consultas_conta_endpoint ON consultas (conta_id, endpoint, ordem_endpoint);
CREATE INDEX consultas_conta_sucesso ON consultas (conta_id, ordem_status) WHERE status_http = 200;
CREATE INDEX consultas_conta_erro ON consultas (conta_id, ordem_status) WHERE status_http <> 200;
CREATE INDEX consultas_conta_endpoint_sucesso ON consultas (conta_id, endpoint, ordem_endpoint_status)
    WHERE status_http = 200;
CREATE INDEX consultas_conta_endpoint_erro ON consultas (conta_id, endpoint, ordem_endpoint_status)
    WHERE status_http <> 200;
