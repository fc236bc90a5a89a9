//! The lookup use case, the one sequence of the four charged lookups (docs/contrato.md,
//! "Lookups"): parse the key (once per request: [`Request`]) -> a sandbox value's fixed answer
//! (never recorded, never charged) -> fetch the record or the owner's CARs (and render the
//! receipt) -> charge, recovering a lost commit reply ([`outcome::charge_with_outcome`])
//! -> the answer. Every other outcome, errors included, is recorded in the history
//! ([`record::Consulta`]); a 4xx or 5xx never debits.

mod outcome;
mod record;
mod sandbox;

use std::sync::Arc;

use carapi_sdk::domain::br;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    CarDadosBasicos, CarDadosCompletos, CarResponse, CodigoCar, CpfCnpj, EndpointConsulta,
    ErrorCode, ProprietarioItem, ProprietarioResponse,
};
use chrono::{DateTime, FixedOffset};
use chrono_tz::America::Sao_Paulo;

use crate::api_error::ApiError;
use crate::dados::Imovel;
use crate::money::Centavos;
use crate::state::AppState;
use crate::store::{ContaId, OwnerImovel};
pub(crate) use record::MAX_HISTORY_CHAVE;
use record::{Consulta, Failure};

/// Ceiling of items of an owner lookup (contract, "Lookups" 4).
pub(crate) const LIMITE_PROPRIETARIO: u32 = 200;

/// The key of a lookup, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chave {
    /// A CAR code (basic, complete and receipt lookups).
    Car(CodigoCar),
    /// An owner's CPF or CNPJ.
    Documento(CpfCnpj),
}

/// One lookup as its path asks for it: the endpoint, the key as sent and, parsed once, the key
/// itself (`None` when it does not parse: a 400 recorded with the raw key). The edge reads it
/// for the sandbox exemption of the rate limit and the handler runs it ([`run`]).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    endpoint: EndpointConsulta,
    raw: String,
    chave: Option<Chave>,
}

impl Request {
    /// The lookup of `raw` (the path parameter, percent-decoded) on `endpoint`.
    pub(crate) fn new(endpoint: EndpointConsulta, raw: impl Into<String>) -> Self {
        let raw = raw.into();
        let chave = if endpoint.takes_codigo_car() {
            CodigoCar::parse(&raw).ok().map(Chave::Car)
        } else {
            CpfCnpj::parse(raw.trim_start_matches('/'))
                .ok()
                .map(Chave::Documento)
        };
        Request {
            endpoint,
            raw,
            chave,
        }
    }

    /// True for a reserved sandbox value: answered with fixed data, never charged, counted
    /// toward no limit (contract, "Sandbox").
    pub(crate) fn is_sandbox(&self) -> bool {
        match &self.chave {
            Some(Chave::Car(c)) => c.is_sandbox(),
            Some(Chave::Documento(d)) => d.is_sandbox(),
            None => false,
        }
    }

    /// The key recorded in the history: the normal form once it parses, else as sent.
    fn recorded(&self) -> String {
        match &self.chave {
            Some(Chave::Car(c)) => c.to_string(),
            Some(Chave::Documento(d)) => d.to_string(),
            None => self.raw.trim_start_matches('/').to_owned(),
        }
    }
}

/// The answer of a lookup, as the contract's models.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `GET /v1/car/{codigoCar}`.
    Basico(CarResponse<CarDadosBasicos>),
    /// `GET /v1/car/{codigoCar}/completo`.
    Completo(CarResponse<CarDadosCompletos>),
    /// `GET /v1/car/{codigoCar}/recibo`: the PDF of the code.
    Recibo {
        /// The CAR code (the file name).
        codigo: CodigoCar,
        /// The PDF bytes.
        pdf: Vec<u8>,
    },
    /// `GET /v1/proprietario/{cpfCnpj}`.
    Proprietario(ProprietarioResponse),
}

/// What a lookup debited, centavos: put by the handler in the answer's extensions for the
/// access log's `cobrado_centavos` (`crate::http::access_log`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cobrado(pub(crate) Centavos);

/// A lookup's answer and what it debited (`None` for a sandbox value, never charged).
#[derive(Debug)]
pub(crate) struct Answered {
    /// The answer.
    pub(crate) answer: Answer,
    /// What was debited.
    pub(crate) cobrado: Option<Cobrado>,
}

/// What a lookup fetched before it is charged.
enum Fetched {
    Imovel(CodigoCar, Arc<Imovel>),
    Recibo(CodigoCar, Vec<u8>),
    Proprietario(CpfCnpj, Vec<OwnerImovel>, bool),
}

/// Runs the lookup `req` for `conta`: the one sequence of the module docs.
///
/// # Errors
/// The contract's error answer: 400 for a key that does not parse, 404 for an unknown record,
/// owner or receipt, 402 and 429 from the charge, 502 and 503 of the receipt, 503 for a
/// database that is away, 500 otherwise; each recorded in the history (sandbox ones excepted).
pub(crate) async fn run(st: &AppState, conta: ContaId, req: Request) -> Result<Answered, ApiError> {
    let c = Consulta::new(st, conta, req.endpoint, req.recorded());
    let Some(chave) = req.chave.clone() else {
        return Err(c.failed(invalid(&req)).await);
    };
    if req.is_sandbox() {
        return sandbox::answer(req.endpoint, &chave, c.data_consulta()).map(|answer| Answered {
            answer,
            cobrado: None,
        });
    }
    let fetched = match fetch(st, &c, req.endpoint, chave).await {
        Ok(f) => f,
        Err(e) => return Err(c.failed_or_away(e).await),
    };
    let consolidate = match &fetched {
        Fetched::Imovel(codigo, _) | Fetched::Recibo(codigo, _) => Some(codigo.clone()),
        Fetched::Proprietario(..) => None,
    };
    let (cache, valor) = c.charge(consolidate).await?;
    Ok(Answered {
        answer: answer(req.endpoint, fetched, cache, c.data_consulta()),
        cobrado: Some(Cobrado(valor)),
    })
}

/// The record, owner list or receipt the lookup will charge for.
async fn fetch(
    st: &AppState,
    c: &Consulta<'_>,
    endpoint: EndpointConsulta,
    chave: Chave,
) -> Result<Fetched, Failure> {
    match chave {
        Chave::Documento(documento) => {
            let (itens, truncado) = st
                .store
                .itens_of_documento(&documento, LIMITE_PROPRIETARIO)
                .await?;
            if itens.is_empty() {
                return Err(proprietario_not_found(&documento.formatted()).into());
            }
            Ok(Fetched::Proprietario(documento, itens, truncado))
        }
        Chave::Car(codigo) if endpoint == EndpointConsulta::Recibo => {
            if !st.recibo_service.is_available() {
                return Err(ApiError::new(
                    ErrorCode::ServicoIndisponivel,
                    "Serviço de recibos temporariamente indisponível. Nada foi cobrado.",
                )
                .into());
            }
            let imovel = imovel(st, &codigo).await?;
            if !imovel.has_recibo {
                return Err(ApiError::new(
                    ErrorCode::ReciboNaoEncontrado,
                    format!("Recibo do CAR {codigo} não disponível."),
                )
                .into());
            }
            let pdf = st
                .recibo_service
                .generate(&imovel, c.data_consulta())
                .map_err(|e| {
                    tracing::error!(erro = %e, "falha ao gerar recibo");
                    recibo_indisponivel()
                })?;
            Ok(Fetched::Recibo(codigo, pdf))
        }
        Chave::Car(codigo) => {
            let imovel = imovel(st, &codigo).await?;
            Ok(Fetched::Imovel(codigo, imovel))
        }
    }
}

/// The record of `codigo` (through the record cache), or 404 `CAR_NAO_ENCONTRADO`.
async fn imovel(st: &AppState, codigo: &CodigoCar) -> Result<Arc<Imovel>, Failure> {
    match st.caches.imovel(st.store.as_ref(), codigo).await? {
        Some(i) => Ok(i),
        None => Err(car_not_found(codigo).into()),
    }
}

/// The contract's answer of a charged lookup.
fn answer(
    endpoint: EndpointConsulta,
    fetched: Fetched,
    cache: bool,
    data_consulta: DateTime<FixedOffset>,
) -> Answer {
    match fetched {
        Fetched::Imovel(_, imovel) => car_answer(endpoint, &imovel, false, cache, data_consulta),
        Fetched::Recibo(codigo, pdf) => Answer::Recibo { codigo, pdf },
        Fetched::Proprietario(documento, itens, truncado) => {
            let itens: Vec<ProprietarioItem> = itens.iter().map(|i| item(i, &documento)).collect();
            Answer::Proprietario(ProprietarioResponse {
                success: true,
                sandbox: false,
                total: u32::try_from(itens.len()).unwrap_or(LIMITE_PROPRIETARIO),
                limite: LIMITE_PROPRIETARIO,
                truncado,
                itens,
            })
        }
    }
}

/// `CarResponse` of `imovel` for the basic or the complete lookup.
fn car_answer(
    endpoint: EndpointConsulta,
    imovel: &Imovel,
    sandbox: bool,
    cache: bool,
    data_consulta: DateTime<FixedOffset>,
) -> Answer {
    let data_expiracao = data_expiracao(imovel);
    if endpoint == EndpointConsulta::CarCompleto {
        return Answer::Completo(CarResponse {
            success: true,
            sandbox,
            cache,
            dados: imovel.dados_completos(),
            data_consulta,
            data_expiracao,
        });
    }
    Answer::Basico(CarResponse {
        success: true,
        sandbox,
        cache,
        dados: imovel.dados_basicos(),
        data_consulta,
        data_expiracao,
    })
}

/// `dataExpiracao`: the record's last update in the origin base, in Brasília time.
fn data_expiracao(imovel: &Imovel) -> Option<DateTime<FixedOffset>> {
    imovel
        .data_atualizacao
        .and_then(|d| d.and_local_timezone(Sao_Paulo).earliest())
        .map(|d| d.with_timezone(&brasilia()))
}

/// One item of an owner lookup.
fn item(imovel: &OwnerImovel, documento: &CpfCnpj) -> ProprietarioItem {
    ProprietarioItem {
        registro_car: imovel.codigo_car.to_string(),
        codigo_protocolo: imovel.codigo_protocolo.clone(),
        nome_imovel: imovel.nome_imovel.clone(),
        matricula_numero: imovel.matricula_numero.clone(),
        municipio: Some(imovel.municipio.clone()),
        uf: Some(imovel.uf.nome().to_owned()),
        area_total_ha: Some(br::format_decimal(imovel.area_total_ha, 4)),
        proprietario_consultado: Some(documento.formatted()),
    }
}

/// 400 of a key that does not parse: `CPF_CNPJ_INVALIDO` or `CODIGO_CAR_INVALIDO`.
fn invalid(req: &Request) -> ApiError {
    let raw = req.recorded();
    if req.endpoint == EndpointConsulta::Proprietario {
        return ApiError::new(
            ErrorCode::CpfCnpjInvalido,
            format!(
                "CPF/CNPJ inválido: {raw:?}. CPF com 11 dígitos ou CNPJ com 14 caracteres, com \
                 dígitos verificadores válidos."
            ),
        );
    }
    ApiError::new(
        ErrorCode::CodigoCarInvalido,
        format!(
            "Código CAR inválido: {raw:?}. Formato: UF-CodigoMunicipio-Hash (32 hexadecimais)."
        ),
    )
}

/// 404 `CAR_NAO_ENCONTRADO`.
pub(crate) fn car_not_found(codigo: &CodigoCar) -> ApiError {
    ApiError::new(
        ErrorCode::CarNaoEncontrado,
        format!("CAR {codigo} não encontrado."),
    )
}

/// 404 `CPF_CNPJ_NAO_ENCONTRADO`.
pub(crate) fn proprietario_not_found(documento: &str) -> ApiError {
    ApiError::new(
        ErrorCode::CpfCnpjNaoEncontrado,
        format!("Nenhum CAR vinculado ao documento {documento}."),
    )
}

/// 502 `RECIBO_INDISPONIVEL`: the PDF failed after validation; never charged.
fn recibo_indisponivel() -> ApiError {
    ApiError::new(
        ErrorCode::ReciboIndisponivel,
        "Falha ao gerar o PDF do recibo. Nada foi cobrado; tente novamente.",
    )
}
