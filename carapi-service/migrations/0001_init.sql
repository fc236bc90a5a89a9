-- carapi reference server: initial schema. Money in integer centavos; instants in Unix
-- milliseconds (UTC); Brasília calendar days as 'YYYY-MM-DD'.

CREATE TABLE contas (
    id                      INTEGER PRIMARY KEY AUTOINCREMENT,
    chave_hash              TEXT    NOT NULL UNIQUE,          -- hex SHA-256 of the API key
    saldo_centavos          INTEGER NOT NULL CHECK (saldo_centavos >= 0),
    legado                  INTEGER NOT NULL DEFAULT 0,       -- 1 = legacy price table
    documento               TEXT,                             -- bare CPF/CNPJ of the linked user
    email                   TEXT,
    limite_diario           INTEGER,                          -- NULL = unlimited
    limite_mensal_centavos  INTEGER,                          -- NULL = unlimited
    criada_em               INTEGER NOT NULL
);

-- The ledger: every change of a balance, credit or debit. saldo = sum(credits) - sum(debits).
CREATE TABLE lancamentos (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conta_id        INTEGER NOT NULL REFERENCES contas(id),
    tipo            TEXT    NOT NULL CHECK (tipo IN ('credito', 'debito')),
    valor_centavos  INTEGER NOT NULL CHECK (valor_centavos > 0),
    origem          TEXT    NOT NULL,                         -- saldo_inicial | recarga | consulta
    referencia      TEXT,                                     -- recarga id or consulta id
    criado_em       INTEGER NOT NULL
);
CREATE INDEX lancamentos_conta ON lancamentos (conta_id);

CREATE TABLE imoveis (
    codigo_car              TEXT PRIMARY KEY,
    status_imovel           TEXT    NOT NULL,
    condicao                TEXT,
    nome_imovel             TEXT,
    area_total_ha           TEXT    NOT NULL,                 -- decimal, dot separator
    modulos_fiscais         TEXT,
    data_cadastro           TEXT    NOT NULL,                 -- 'YYYY-MM-DD HH:MM:SS', Brasília
    data_atualizacao        TEXT,
    tipo_imovel             TEXT    NOT NULL,
    municipio               TEXT    NOT NULL,
    codigo_municipio_ibge   INTEGER NOT NULL,
    uf                      TEXT    NOT NULL,
    codigo_protocolo        TEXT,
    latitude                TEXT,
    longitude               TEXT,
    matricula_numero        TEXT,
    matricula_data          TEXT,
    matricula_cartorio      TEXT,
    tem_recibo              INTEGER NOT NULL,
    consolidado_em          INTEGER                           -- first successful lookup (cache)
);

CREATE TABLE imovel_proprietarios (
    codigo_car  TEXT    NOT NULL REFERENCES imoveis(codigo_car) ON DELETE CASCADE,
    ordem       INTEGER NOT NULL,
    documento   TEXT    NOT NULL,
    nome        TEXT    NOT NULL,
    PRIMARY KEY (codigo_car, ordem)
);
CREATE INDEX imovel_proprietarios_documento ON imovel_proprietarios (documento, codigo_car);

-- Every lookup (errors too); newest first by id.
CREATE TABLE consultas (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conta_id        INTEGER NOT NULL REFERENCES contas(id),
    data_ms         INTEGER NOT NULL,
    endpoint        TEXT    NOT NULL,
    chave           TEXT,
    status_http     INTEGER NOT NULL,
    cobrado         INTEGER NOT NULL,
    valor_centavos  INTEGER NOT NULL,
    saldo_antes     INTEGER,
    saldo_depois    INTEGER
);
CREATE INDEX consultas_conta ON consultas (conta_id, id DESC);
CREATE INDEX consultas_conta_data ON consultas (conta_id, data_ms);

-- Limit counters per Brasília day, changed in the same transaction as the lookup row.
CREATE TABLE uso_diario (
    conta_id        INTEGER NOT NULL REFERENCES contas(id),
    dia             TEXT    NOT NULL,
    requisicoes     INTEGER NOT NULL DEFAULT 0,
    cobradas        INTEGER NOT NULL DEFAULT 0,
    erros           INTEGER NOT NULL DEFAULT 0,
    gasto_centavos  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conta_id, dia)
);

CREATE TABLE recargas (
    id                  TEXT    PRIMARY KEY,                  -- UUID
    conta_id            INTEGER NOT NULL REFERENCES contas(id),
    payment_id          TEXT    NOT NULL UNIQUE,
    valor_centavos      INTEGER NOT NULL,
    percentual_bonus    INTEGER NOT NULL,
    bonus_centavos      INTEGER NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN ('Pendente', 'Confirmado', 'Rejeitado')),
    qr_code             TEXT    NOT NULL,
    criada_em           INTEGER NOT NULL,
    confirmada_em       INTEGER
);
CREATE INDEX recargas_conta ON recargas (conta_id, criada_em DESC);
CREATE INDEX recargas_pendentes ON recargas (status, criada_em) WHERE status = 'Pendente';

-- The simulated PSP's own book of charges (shared through the database so that another
-- process, e.g. `carapi local pagar`, can pay a charge the server created).
CREATE TABLE psp_cobrancas (
    payment_id      TEXT    PRIMARY KEY,
    valor_centavos  INTEGER NOT NULL,
    documento       TEXT    NOT NULL,
    email           TEXT,
    criada_em       INTEGER NOT NULL,
    paga_em         INTEGER
);
