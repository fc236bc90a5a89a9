//! What the four charged lookups share: recording every non-sandbox outcome, and the debit
//! (balance, limits, history row and counters in one store transaction).

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use carapi_sdk::domain::brl;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{CodigoCar, EndpointConsulta, ErrorCode};
use chrono::{DateTime, FixedOffset, SubsecRound, Utc};
use uuid::Uuid;

use super::error::{ApiError, Limite};
use crate::money::{Centavos, calendario, cobranca};
use crate::state::AppState;
use crate::store::{
    Cobranca, ContaId, RegistroConsulta, ResultadoCobranca, StoreError, cobrar_com_desfecho,
};

/// The single path parameter of a route, decoded; one that does not decode to UTF-8 gets the
/// route's own contract error ([`super::borda::erro_de_segmento`]).
#[derive(Debug)]
pub struct Segmento(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segmento {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(s)| Segmento(s))
            .map_err(|e| {
                super::borda::erro_de_segmento(
                    parts.uri.path(),
                    format!("Parâmetro de caminho inválido: {e}"),
                )
            })
    }
}

/// At most this many characters of a looked-up key are stored in the history: a valid CAR
/// code has 43 and a masked CNPJ 18, so only garbage is cut, and a free 400 cannot grow the
/// database by more than a bounded row.
pub const CHAVE_MAXIMA_HISTORICO: usize = 64;

/// The first [`CHAVE_MAXIMA_HISTORICO`] characters of `chave`, each NUL replaced by U+FFFD:
/// the form stored in the history (PostgreSQL text cannot hold NUL, and both stores must
/// record the same thing).
pub fn chave_registrada(chave: &str) -> String {
    let curta: String = chave.chars().take(CHAVE_MAXIMA_HISTORICO).collect();
    crate::store::historico::sem_nul(&curta).into_owned()
}

/// One charged lookup in progress.
#[derive(Debug)]
pub struct Consulta<'a> {
    st: &'a AppState,
    conta: ContaId,
    endpoint: EndpointConsulta,
    /// The key recorded in the history: the raw input until it parses, then its normal form.
    pub chave: String,
    agora: DateTime<Utc>,
}

impl<'a> Consulta<'a> {
    /// Starts a lookup of `chave` (raw) on `endpoint`.
    pub fn new(
        st: &'a AppState,
        conta: ContaId,
        endpoint: EndpointConsulta,
        chave: impl Into<String>,
    ) -> Self {
        Consulta {
            st,
            conta,
            endpoint,
            chave: chave.into(),
            agora: st.relogio.agora().trunc_subsecs(3),
        }
    }

    /// Time of the lookup in Brasília time (`dataConsulta`).
    pub fn data_consulta(&self) -> DateTime<FixedOffset> {
        self.agora.with_timezone(&brasilia())
    }

    /// Records a failed lookup (never for sandbox values) and hands the error back.
    pub async fn falhou(&self, erro: ApiError) -> ApiError {
        if !erro.is_sandbox() {
            let registro = RegistroConsulta {
                conta: self.conta,
                endpoint: self.endpoint,
                chave: Some(chave_registrada(&self.chave)),
                status: erro.status().as_u16(),
                em: self.agora,
                dia: calendario::dia_brasilia(self.agora),
            };
            if let Err(e) = self.st.store.registrar_consulta(registro).await {
                tracing::error!(erro = %e, "falha ao registrar consulta no histórico");
            }
        }
        erro
    }

    /// [`Consulta::falhou`] for a store error; a database that is away
    /// ([`super::error::banco_fora`]) is not asked to record anything.
    pub async fn falhou_no_banco(&self, e: StoreError) -> ApiError {
        if super::error::banco_fora(&e) {
            return e.into();
        }
        self.falhou(e.into()).await
    }

    /// Debits the lookup; `consolidar` is the CAR record whose earlier consolidation gives
    /// `cache`. Returns `cache`. A refusal (402, 429) has been recorded by the store.
    pub async fn cobrar(&self, consolidar: Option<&CodigoCar>) -> Result<bool, ApiError> {
        let cobranca = Cobranca {
            pedido: Uuid::new_v4(),
            conta: self.conta,
            endpoint: self.endpoint,
            chave: chave_registrada(&self.chave),
            consolidar: consolidar.cloned(),
            em: self.agora,
            dia: calendario::dia_brasilia(self.agora),
        };
        let resultado = cobrar_com_desfecho(self.st.store.as_ref(), cobranca).await?;
        let espera = cobranca::espera(&resultado, self.agora).unwrap_or(1);
        match resultado {
            ResultadoCobranca::Cobrada { cache, .. } => Ok(cache),
            ResultadoCobranca::SaldoInsuficiente { saldo, preco } => {
                Err(saldo_insuficiente(saldo, preco))
            }
            ResultadoCobranca::LimiteDiario { limite } => Err(ApiError::limite_excedido(
                Limite::Diario,
                espera,
                format!(
                    "Limite diário de {limite} consultas cobradas atingido (horário de Brasília)."
                ),
            )),
            ResultadoCobranca::LimiteMensal { limite, gasto } => Err(ApiError::limite_excedido(
                Limite::Mensal,
                espera,
                format!(
                    "Limite mensal de gastos de {limite} seria ultrapassado (gasto no mês: {gasto})."
                ),
            )),
        }
    }
}

/// 402 `SALDO_INSUFICIENTE`.
pub fn saldo_insuficiente(saldo: Centavos, preco: Centavos) -> ApiError {
    ApiError::new(
        ErrorCode::SaldoInsuficiente,
        format!(
            "Saldo insuficiente: a consulta custa {} e o saldo é {}. Nada foi cobrado.",
            brl::format(preco.reais()),
            brl::format(saldo.reais())
        ),
    )
}

/// 400 `CODIGO_CAR_INVALIDO` for `bruto`.
pub fn codigo_car_invalido(bruto: &str) -> ApiError {
    ApiError::new(
        ErrorCode::CodigoCarInvalido,
        format!(
            "Código CAR inválido: {bruto:?}. Formato: UF-CodigoMunicipio-Hash (32 hexadecimais)."
        ),
    )
}
