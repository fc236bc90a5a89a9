-- The owners of a record, stored in the order of their primary key (codigo_car, ordem): a
-- WITHOUT ROWID table is that B-tree itself, where a rowid table kept its rows in one B-tree
-- and the key in a second one (the autoindex). Half the writes for a bulk load, one B-tree
-- descent for a complete lookup.
CREATE TABLE imovel_proprietarios_novo (
    codigo_car  TEXT    NOT NULL REFERENCES imoveis(codigo_car) ON DELETE CASCADE,
    ordem       INTEGER NOT NULL,
    documento   TEXT    NOT NULL,
    nome        TEXT    NOT NULL,
    PRIMARY KEY (codigo_car, ordem)
) WITHOUT ROWID;

INSERT INTO imovel_proprietarios_novo (codigo_car, ordem, documento, nome)
    SELECT codigo_car, ordem, documento, nome FROM imovel_proprietarios ORDER BY codigo_car, ordem;

DROP TABLE imovel_proprietarios;
ALTER TABLE imovel_proprietarios_novo RENAME TO imovel_proprietarios;
CREATE INDEX imovel_proprietarios_documento ON imovel_proprietarios (documento, codigo_car);
