-- The "already consolidated" fact of a CAR record (the `cache` of a charged lookup's answer),
-- kept apart from `imoveis`: the first lookup of a record inserts one small row here instead of
-- updating a row of the big table. `imoveis.consolidado_em` is no longer written nor read.
CREATE TABLE imoveis_consolidados (
    codigo_car      TEXT    NOT NULL PRIMARY KEY,
    consolidado_em  INTEGER NOT NULL                           -- Unix milliseconds (UTC)
) WITHOUT ROWID;

INSERT INTO imoveis_consolidados (codigo_car, consolidado_em)
    SELECT codigo_car, consolidado_em FROM imoveis WHERE consolidado_em IS NOT NULL;
