-- GET /v1/historico reads a page of one account's lookups, newest first, for any combination
-- of the `endpoint` and `status` filters: each combination has an index whose order is the
-- page's order, so a page costs an index seek plus the page (never a scan of the account's
-- history). `status=sucesso` is HTTP 200, `status=erro` every other status (contract).
CREATE INDEX consultas_conta_endpoint ON consultas (conta_id, endpoint, id);
CREATE INDEX consultas_conta_sucesso ON consultas (conta_id, id) WHERE status_http = 200;
CREATE INDEX consultas_conta_erro ON consultas (conta_id, id) WHERE status_http <> 200;
CREATE INDEX consultas_conta_endpoint_sucesso ON consultas (conta_id, endpoint, id)
    WHERE status_http = 200;
CREATE INDEX consultas_conta_endpoint_erro ON consultas (conta_id, endpoint, id)
    WHERE status_http <> 200;
