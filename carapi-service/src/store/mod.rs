//! Storage behind one trait per area: accounts and the ledger ([`ContasStore`]), CAR records
//! ([`ImoveisStore`]), lookups with their history and limit counters ([`ConsultasStore`]),
//! top-ups ([`RecargasStore`]), the simulated PSP's book ([`PspStore`]) and what processes on
//! one database share ([`CoordinationStore`]); [`Store`] is all of them. All SQL lives in the
//! implementations ([`SqliteStore`], [`PgStore`], one file per area); handlers only call these
//! methods. The money rules are not here: both stores read state, call the plan functions of
//! [`crate::money`] and apply the plans.
//!
//! Money is [`Centavos`]; instants are UTC; the caller passes the Brasília calendar day (the
//! store never decides time zones).

mod consultas;
mod contas;
mod coordination;
mod error;
pub(crate) mod historico;
mod imoveis;
pub mod journal;
#[cfg(feature = "postgres")]
pub mod postgres;
mod psp;
mod recargas;
mod schema;
mod settings;
mod sqlite;

use std::fmt;

pub use crate::metrics::PoolUse;
pub use crate::money::cobranca::CobrancaResult;
pub use crate::money::limites::Patch;
pub use crate::money::recarga::{CREATION_DEADLINE_S, Confirmation, Recarga};
pub use crate::money::{Centavos, ContaId};
pub use consultas::{
    Cobranca, ConsultaRecord, ConsultasStore, Estorno, HistoricoFilter, RecordedConsulta,
    UsoEndpoint, UsoPeriod,
};
pub use contas::{Conta, ContasStore, Ledger, NovaContaRecord};
pub use coordination::CoordinationStore;
pub use error::StoreError;
pub use historico::SEARCH_WINDOW;
pub use imoveis::{ImoveisStore, OwnerImovel};
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use psp::{PspCharge, PspStore};
pub use recargas::RecargasStore;
pub use schema::OpenMode;
pub use settings::SettingsStore;
pub use sqlite::SqliteStore;

/// True for the URL schemes of the PostgreSQL store (`postgres://`, `postgresql://`), whether or
/// not this build includes it (cargo feature `postgres`).
pub fn is_postgres_url(url: &str) -> bool {
    let u = url.trim_start();
    ["postgres://", "postgresql://"]
        .iter()
        .any(|p| u.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// The server's storage: every area. Implemented by [`SqliteStore`] and [`PgStore`] (and by
/// any type implementing the six area traits). Callers import the area traits they use, or
/// `use crate::store::prelude::*`.
pub trait Store:
    ContasStore
    + ImoveisStore
    + ConsultasStore
    + RecargasStore
    + PspStore
    + SettingsStore
    + CoordinationStore
    + Send
    + Sync
    + fmt::Debug
    + 'static
{
}

impl<T> Store for T where
    T: ContasStore
        + ImoveisStore
        + ConsultasStore
        + RecargasStore
        + PspStore
        + SettingsStore
        + CoordinationStore
        + Send
        + Sync
        + fmt::Debug
        + 'static
{
}

/// The SQL of the owner lookup of each store, for plan checks (`EXPLAIN`) in tests and benches.
pub mod sql {
    #[cfg(feature = "postgres")]
    pub use super::postgres::{
        CODIGOS_DO_DOCUMENTO as POSTGRES_CODIGOS_DO_DOCUMENTO,
        ITENS_DO_DOCUMENTO as POSTGRES_ITENS_DO_DOCUMENTO,
        OWNERS_BY_CODIGOS as POSTGRES_OWNERS_BY_CODIGOS,
        imoveis_by_codigos as postgres_imoveis_by_codigos,
    };
    pub use super::sqlite::{
        CODIGOS_DO_DOCUMENTO as SQLITE_CODIGOS_DO_DOCUMENTO,
        IMOVEL_BY_CODIGO as SQLITE_IMOVEL_BY_CODIGO,
        ITENS_DO_DOCUMENTO as SQLITE_ITENS_DO_DOCUMENTO,
        OWNERS_BY_CODIGO as SQLITE_OWNERS_BY_CODIGO,
    };
}

/// The area traits, to call any [`Store`] method on a `dyn Store`.
pub mod prelude {
    pub use super::{
        ConsultasStore, ContasStore, CoordinationStore, ImoveisStore, PspStore, RecargasStore,
        SettingsStore, Store,
    };
}
