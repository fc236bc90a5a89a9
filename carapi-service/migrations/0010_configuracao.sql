-- Server settings kept in the database, e.g. the webhook secret (`webhook_secret`): 32 random
-- bytes in hex generated on first start (src/webhook.rs), so that no secret is built in.
CREATE TABLE configuracao (
    chave   TEXT PRIMARY KEY,
    valor   TEXT NOT NULL
);
