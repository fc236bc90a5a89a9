//! What the test mode does on request, shared by the Rust API
//! (`carapi_test_double::TestServer`) and the `/_teste` routes: create an account with
//! its limits, pay a top-up with or without the webhook, read an account's state.

use carapi_sdk::CpfCnpj;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::TestMode;
use carapi_service::ServerError;
use carapi_service::contas::{self, ContaCriada, NovaConta};
use carapi_service::money::Centavos;
use carapi_service::pix::payment;
use carapi_service::state::AppState;
use carapi_service::store::ContaId;

/// An account to create in a test: [`NovaConta`] plus its consumption limits.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = NovaContaTeste))]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct TestNovaConta {
    /// Initial balance in BRL (default 100.00); a JSON number.
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(default = 100.0))]
    pub(crate) saldo: Decimal,
    /// On the legacy price table (docs/contrato.md, "Prices").
    pub(crate) legado: bool,
    /// The linked user's CPF/CNPJ (default a valid fictitious CPF); `None` makes
    /// `POST /v1/recarga` answer `DOCUMENTO_AUSENTE`.
    pub(crate) documento: Option<String>,
    /// Daily limit of charged lookups (Brasília day); `None` = none.
    pub(crate) limite_diario: Option<u32>,
    /// Monthly spending limit in BRL (Brasília month); `None` = none.
    #[serde(with = "rust_decimal::serde::float_option")]
    pub(crate) limite_mensal: Option<Decimal>,
}

impl Default for TestNovaConta {
    fn default() -> Self {
        TestNovaConta {
            saldo: NovaConta::default().saldo,
            legado: false,
            documento: Some(contas::DEFAULT_DOCUMENT.to_owned()),
            limite_diario: None,
            limite_mensal: None,
        }
    }
}

/// An account's state as the store has it, read without HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = EstadoConta))]
#[serde(rename_all = "camelCase")]
pub struct ContaState {
    /// Account id.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub(crate) conta_id: ContaId,
    /// Balance in BRL (a JSON number, as every amount of the contract).
    #[serde(with = "rust_decimal::serde::float")]
    pub saldo: Decimal,
    /// Still on the legacy price table.
    pub(crate) legado: bool,
    /// Daily limit of charged lookups.
    pub(crate) limite_diario: Option<u32>,
    /// Monthly spending limit in BRL.
    #[serde(with = "rust_decimal::serde::float_option")]
    pub(crate) limite_mensal: Option<Decimal>,
    /// Total charged so far in BRL (the ledger's debits).
    #[serde(rename = "debitado")]
    #[serde(with = "rust_decimal::serde::float")]
    pub debited: Decimal,
    /// The ledger check ([`carapi_service::store::Ledger::is_consistent`]): balance = credits - debits,
    /// debits = what the history charged, credits = initial balance + confirmed top-ups.
    #[serde(rename = "razaoConsistente")]
    pub ledger_consistent: bool,
}

/// Creates the account `nova` with the test clock's time and sets its limits.
///
/// # Errors
/// [`ServerError::Invalid`] for a negative balance, fractions of a centavo, an invalid
/// document or limits outside the contract's ranges ([`carapi_service::money::limites::limites_of_patch`]);
/// [`ServerError::Store`].
pub(crate) async fn create_conta(
    st: &AppState,
    fresh: TestNovaConta,
) -> Result<ContaCriada, ServerError> {
    let documento = fresh
        .documento
        .as_deref()
        .map(|d| {
            CpfCnpj::parse(d).map_err(|e| ServerError::Invalid(format!("documento {d:?}: {e}")))
        })
        .transpose()?;
    let (diario, mensal) = carapi_service::money::limites::limites_of_patch(
        Some(fresh.limite_diario),
        Some(fresh.limite_mensal),
    )
    .map_err(ServerError::Invalid)?;
    let created = contas::create_conta_at(
        st.store.as_ref(),
        NovaConta {
            saldo: fresh.saldo,
            legado: fresh.legado,
            documento,
            email: Some("cliente@example.com".into()),
        },
        st.clock.now(),
    )
    .await?;
    if fresh.limite_diario.is_some() || fresh.limite_mensal.is_some() {
        st.store
            .atualizar_limites(created.conta_id, diario, mensal)
            .await?;
    }
    Ok(created)
}

/// Plays the payer and the PSP for the top-up `recarga_id`: marks its charge paid in the
/// simulated PSP's book at the test clock's time and, when `webhook`, delivers the signed
/// webhook to this server (the top-up is then `Confirmado`); without it only reconciliation
/// will see the payment.
///
/// # Errors
/// [`ServerError::NotFound`] for an unknown top-up or charge; [`ServerError::Webhook`]
/// when the delivery fails; [`ServerError::Store`].
pub(crate) async fn pay(
    st: &AppState,
    mode: &TestMode,
    recarga_id: Uuid,
    webhook: bool,
) -> Result<(), ServerError> {
    let recarga = st
        .store
        .recarga_by_id(recarga_id)
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("recarga {recarga_id}")))?;
    let now = st.clock.now();
    if !webhook {
        return payment::mark_paid(st.store.as_ref(), &recarga.payment_id, now).await;
    }
    let address = mode
        .address
        .get()
        .copied()
        .ok_or_else(|| ServerError::Webhook("servidor ainda sem endereço".into()))?;
    let secret = st.webhook_secret().await?;
    payment::pay_via_webhook(
        st.store.as_ref(),
        &format!("http://{address}"),
        &secret,
        &recarga.payment_id,
        now,
    )
    .await
}

/// The state of account `id`.
///
/// # Errors
/// [`ServerError::NotFound`] for an unknown account; [`ServerError::Store`].
pub(crate) async fn conta_state_of(st: &AppState, id: ContaId) -> Result<ContaState, ServerError> {
    let none_left = || ServerError::NotFound(format!("conta {id}"));
    let conta = st.store.conta(id).await?.ok_or_else(none_left)?;
    let ledger = st.store.ledger(id).await?.ok_or_else(none_left)?;
    Ok(ContaState {
        conta_id: id,
        saldo: conta.saldo.reais(),
        legado: conta.legado,
        limite_diario: conta.limite_diario,
        limite_mensal: conta.limite_mensal.map(Centavos::reais),
        debited: ledger.debits.reais(),
        ledger_consistent: ledger.is_consistent(),
    })
}

/// One owner in an [`ImovelChange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ProprietarioTeste))]
#[serde(deny_unknown_fields)]
pub struct OwnerChange {
    /// CPF or CNPJ, with or without mask (valid check digits).
    pub documento: String,
    /// Name.
    pub nome: String,
}

impl OwnerChange {
    /// An owner from its document (CPF or CNPJ, with or without mask) and name.
    pub fn new(documento: impl Into<String>, nome: impl Into<String>) -> Self {
        Self {
            documento: documento.into(),
            nome: nome.into(),
        }
    }
}

/// A change to a CAR record's data (`TestServer::change_imovel`,
/// `POST /_teste/imoveis/{codigoCar}`): each field given replaces the record's; the record's
/// last update in the origin base (`dataExpiracao` of the answers) becomes the test clock's
/// instant. Lookups answer the new data at once.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AlteracaoImovel))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ImovelChange {
    /// The owners, in order (replacing all of them; `[]` leaves none).
    pub proprietarios: Option<Vec<OwnerChange>>,
    /// Total area, hectares; a JSON number.
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub area_total_ha: Option<Decimal>,
    /// Fiscal modules; a JSON number.
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub modulos_fiscais: Option<Decimal>,
    /// Property name.
    pub nome_imovel: Option<String>,
    /// Matrícula number.
    pub matricula_numero: Option<String>,
    /// Matrícula date, `dd/MM/yyyy`.
    pub matricula_data: Option<String>,
    /// Registry office (cartório).
    pub matricula_cartorio: Option<String>,
}

/// Applies `change` to the record of `codigo` and stores it (the server's record cache
/// forgets it); returns the record as now stored.
///
/// # Errors
/// [`ServerError::Invalid`] for a malformed code, an invalid owner document or a negative
/// area; [`ServerError::NotFound`] when no record has the code; [`ServerError::Store`].
pub(crate) async fn change_imovel(
    st: &AppState,
    codigo: &str,
    change: ImovelChange,
) -> Result<carapi_service::dados::Imovel, ServerError> {
    let codigo = carapi_sdk::CodigoCar::parse(codigo)
        .map_err(|e| ServerError::Invalid(format!("codigoCar: {e}")))?;
    let mut imovel = st
        .store
        .imovel(&codigo)
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("imóvel {codigo}")))?;
    if let Some(owners) = change.proprietarios {
        imovel.proprietarios = owners
            .into_iter()
            .map(|o| {
                let documento = CpfCnpj::parse(&o.documento).map_err(|e| {
                    ServerError::Invalid(format!("documento {:?}: {e}", o.documento))
                })?;
                Ok(carapi_service::dados::Proprietario {
                    documento,
                    nome: o.nome,
                })
            })
            .collect::<Result<_, ServerError>>()?;
    }
    if let Some(a) = change.area_total_ha {
        if a.is_sign_negative() {
            return Err(ServerError::Invalid("areaTotalHa negativa".into()));
        }
        imovel.area_total_ha = a;
    }
    if let Some(m) = change.modulos_fiscais {
        imovel.modulos_fiscais = Some(m);
    }
    let texts = [
        (change.nome_imovel, &mut imovel.nome_imovel),
        (change.matricula_numero, &mut imovel.matricula_numero),
        (change.matricula_data, &mut imovel.matricula_data),
        (change.matricula_cartorio, &mut imovel.matricula_cartorio),
    ];
    for (new, field) in texts {
        if let Some(v) = new {
            *field = Some(v);
        }
    }
    // Brasília local time (UTC-3, no daylight saving since 2019), as the records keep it.
    imovel.data_atualizacao = Some((st.clock.now() - chrono::Duration::hours(3)).naive_utc());
    st.replace_imoveis(std::slice::from_ref(&imovel)).await?;
    Ok(imovel)
}
