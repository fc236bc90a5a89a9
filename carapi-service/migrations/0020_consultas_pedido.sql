-- The id of a charged lookup (a UUID as text), kept with its history row: when the writer's
-- reply to a charge is lost, the server looks the charge up by account, instant (at or after
-- the request's, index consultas_conta_data) and this id to learn whether it was committed.
-- NULL for lookups recorded without a charge and for rows written before this migration.
ALTER TABLE consultas ADD COLUMN pedido TEXT;
