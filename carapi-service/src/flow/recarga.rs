//! The top-up use case (docs/contrato.md, "Top-up endpoints", "States and transitions"): the
//! tiers and preview, creating a PIX charge or reusing a pending one of the same amount from the
//! last 10 minutes, and reading a top-up's state or the list. Reading never changes a top-up
//! nor credits anything.

use carapi_sdk::domain::brl;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    ErrorCode, FaixasResponse, NovaRecarga, Precos, PreviewBonus, PreviewRecarga,
    RecargaCriadaResponse, RecargaItem, RecargaStatus, RecargaStatusResponse, RecargasResponse,
};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::money::recarga::{self, VALOR_MAXIMO, VALOR_MINIMO, ValorRefused};
use crate::money::tarifa;
use crate::pix::reservation::{RecargaError, RecargaRequest, create_or_reuse};
use crate::state::AppState;
use crate::store::{Conta, StoreError};

/// `GET /v1/recarga/faixas` for `conta`: the tiers, the minimum, the price tables and, with
/// `valor` (the query parameter as sent), its preview: exact for any finite number up to the
/// largest top-up, `null` for one no top-up would accept or text that is no number (the
/// contract lists only 200 for this endpoint, and `preview` is nullable).
pub(crate) fn faixas(conta: &Conta, valor: Option<&str>) -> FaixasResponse {
    let preview = valor
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|t| preview_of(t).ok());
    FaixasResponse {
        success: true,
        valor_minimo: VALOR_MINIMO.reais(),
        usa_preco_legado: conta.legado,
        precos_atuais: tarifa::table(conta.legado),
        precos_apos_recarga: Precos::ATUAIS,
        confirmar_novos_precos_obrigatorio: conta.legado,
        faixas: tarifa::faixas(),
        preview,
    }
}

/// 400 `VALOR_INVALIDO` for the amount `valor` as sent (`POST /v1/recarga` and the preview of
/// `GET /v1/recarga/faixas` refuse the same amounts with it).
fn valor_invalid(valor: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::ValorInvalido,
        format!(
            "Valor inválido: {valor}. Use um valor positivo em reais, até {}, com até 2 casas decimais.",
            brl::format(VALOR_MAXIMO.reais())
        ),
    )
}

/// The preview of `texto` (contract: `valor` is a number): any finite number up to
/// [`VALOR_MAXIMO`] gets exact centavo arithmetic ([`recarga::preview`]); above it, the
/// 400 `VALOR_INVALIDO` that `POST /v1/recarga` answers. Not a JSON number: 400
/// `VALOR_INVALIDO`.
fn preview_of(text: &str) -> Result<PreviewRecarga, ApiError> {
    // Only to tell a number from text (and `NaN`/`inf`); the amount itself is a Decimal.
    if !text.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(ApiError::new(
            ErrorCode::ValorInvalido,
            format!("valor não é um número: {text:?}"),
        ));
    }
    // A finite number that Decimal cannot hold: far above the maximum, or a tiny fraction.
    let as_written = text
        .parse::<Decimal>()
        .or_else(|_| Decimal::from_scientific(text))
        .or_else(|_| {
            let t = text.to_ascii_lowercase();
            let negative_exponent = t.split_once('e').is_some_and(|(_, e)| e.starts_with('-'));
            if negative_exponent {
                Ok(Decimal::ZERO)
            } else {
                Err(())
            }
        })
        .map_err(|()| valor_invalid(text))?;
    let p = recarga::preview(as_written).map_err(|_| valor_invalid(text))?;
    Ok(PreviewRecarga {
        valor_pago: p.valor.reais(),
        percentual_bonus: Decimal::from(p.percentual),
        valor_bonus: p.bonus.reais(),
        total_creditado: p.total().map_err(|_| valor_invalid(text))?.reais(),
    })
}

/// `POST /v1/recarga` for `conta` with the body `pedido` and its `valor` read exactly
/// (`exato`: `None` when it was not a decimal number).
///
/// # Errors
/// 400 `VALOR_INVALIDO`, `VALOR_MINIMO`, `CONFIRMACAO_PRECOS_OBRIGATORIA`, `DOCUMENTO_AUSENTE`
/// (nothing created); 502 `ERRO_PIX` for a provider failure; a store failure.
pub(crate) async fn create(
    st: &AppState,
    conta: &Conta,
    requested: NovaRecarga,
    as_written: Option<Decimal>,
) -> Result<RecargaCriadaResponse, ApiError> {
    let as_written = as_written.ok_or_else(|| valor_invalid(requested.valor))?;
    let valor = match recarga::recarga_valor(as_written) {
        Ok(v) => v,
        Err(ValorRefused::Invalid) => return Err(valor_invalid(as_written)),
        Err(ValorRefused::BelowMinimum) => {
            return Err(ApiError::new(
                ErrorCode::ValorMinimo,
                format!(
                    "Valor mínimo de recarga: {}.",
                    brl::format(VALOR_MINIMO.reais())
                ),
            ));
        }
    };
    if conta.legado && !requested.confirmar_novos_precos {
        return Err(ApiError::new(
            ErrorCode::ConfirmacaoPrecosObrigatoria,
            "Esta conta usa a tabela de preços legada; após a recarga valem os preços atuais. Envie confirmarNovosPrecos: true.",
        ));
    }
    let Some(documento) = conta.documento.clone() else {
        return Err(ApiError::new(
            ErrorCode::DocumentoAusente,
            "O usuário vinculado à conta não tem CPF/CNPJ cadastrado; ele é obrigatório para a cobrança PIX.",
        ));
    };
    let request = RecargaRequest {
        conta: conta.id,
        valor,
        documento,
        email: conta.email.clone(),
        now: st.clock.now(),
    };
    let (recarga, reaproveitada) = create_or_reuse(st.store.as_ref(), st.pix.as_ref(), request)
        .await
        .map_err(|e| match e {
            RecargaError::Store(e) => ApiError::from(e),
            RecargaError::Pix(e) => {
                tracing::warn!(erro = %e, "falha no provedor PIX");
                ApiError::new(
                    ErrorCode::ErroPix,
                    "Falha no provedor PIX ao criar a cobrança. Nada foi criado; tente novamente.",
                )
            }
        })?;
    let qr_code_base64 = qr_base64(&recarga.qr_code)?;
    let total = recarga.total().map_err(ApiError::internal)?;
    Ok(RecargaCriadaResponse {
        success: true,
        reaproveitada,
        recarga_id: recarga.id,
        payment_id: recarga.payment_id.clone(),
        valor: recarga.valor.reais(),
        status: recarga.status,
        qr_code: recarga.qr_code.clone(),
        qr_code_base64,
        preview_bonus: PreviewBonus {
            percentual_bonus: Decimal::from(recarga.percentual_bonus),
            valor_bonus: recarga.bonus.reais(),
            total_creditado: total.reais(),
        },
        message: if reaproveitada {
            "Cobrança PIX pendente do mesmo valor reaproveitada (criada há menos de 10 minutos)."
                .into()
        } else {
            format!(
                "Cobrança PIX criada. Após o pagamento serão creditados {}.",
                brl::format(total.reais())
            )
        },
    })
}

fn qr_base64(payload: &str) -> Result<String, ApiError> {
    crate::pix::qr::png_base64(payload).map_err(ApiError::internal)
}

fn not_found_recarga() -> ApiError {
    ApiError::new(ErrorCode::RecargaNaoEncontrada, "Recarga não encontrada.")
}

/// `GET /v1/recarga/{recargaId}` of `conta` (`raw`: the id as sent): the stored state, the QR
/// code while pending, the balance now.
///
/// # Errors
/// 404 `RECARGA_NAO_ENCONTRADA` for an id that is not a UUID, unknown, or another account's; a
/// store failure.
pub(crate) async fn status(
    st: &AppState,
    conta: &Conta,
    raw: &str,
) -> Result<RecargaStatusResponse, ApiError> {
    let id = Uuid::parse_str(raw.trim()).map_err(|_| not_found_recarga())?;
    let recarga = st
        .store
        .recarga(conta.id, id)
        .await?
        .ok_or_else(not_found_recarga)?;
    let saldo = st
        .store
        .conta(conta.id)
        .await?
        .map_or(conta.saldo, |c| c.saldo);
    let total = recarga.total().map_err(ApiError::internal)?;
    let pago = recarga.status == RecargaStatus::Confirmado;
    let pending = recarga.status == RecargaStatus::Pendente;
    let (qr_code, qr_code_base64) = if pending {
        (
            Some(recarga.qr_code.clone()),
            Some(qr_base64(&recarga.qr_code)?),
        )
    } else {
        (None, None)
    };
    Ok(RecargaStatusResponse {
        success: true,
        pago,
        recarga_id: recarga.id,
        valor: recarga.valor.reais(),
        valor_bonus: pago.then(|| recarga.bonus.reais()),
        percentual_bonus: pago.then(|| Decimal::from(recarga.percentual_bonus)),
        total_creditado: pago.then_some(total.reais()),
        status: recarga.status,
        qr_code,
        qr_code_base64,
        saldo_atual: saldo.reais(),
        message: match recarga.status {
            RecargaStatus::Pendente => "Aguardando o pagamento PIX.".into(),
            RecargaStatus::Confirmado => "Pagamento confirmado e saldo creditado.".into(),
            RecargaStatus::Rejeitado => "Pagamento rejeitado.".into(),
        },
    })
}

/// `GET /v1/recargas` of `conta`: the page `page` of `size` top-ups in the state `status` (any
/// when `None`), newest first.
///
/// # Errors
/// A store failure.
pub(crate) async fn list(
    st: &AppState,
    conta: &Conta,
    status: Option<RecargaStatus>,
    (page, size): (u32, u32),
) -> Result<RecargasResponse, StoreError> {
    let (itens, total) = st.store.recargas(conta.id, status, page, size).await?;
    Ok(RecargasResponse {
        success: true,
        page,
        size,
        total,
        total_paginas: super::pagination::total_paginas(total, size),
        itens: itens
            .into_iter()
            .map(|r| -> Result<RecargaItem, StoreError> {
                Ok(RecargaItem {
                    recarga_id: r.id,
                    data: r.created_at.with_timezone(&brasilia()),
                    data_confirmacao: r.confirmed_at.map(|d| d.with_timezone(&brasilia())),
                    valor_pago: r.valor.reais(),
                    valor_bonus: r.bonus.reais(),
                    percentual_bonus: Decimal::from(r.percentual_bonus),
                    total_creditado: r.total()?.reais(),
                    status: r.status,
                })
            })
            .collect::<Result<_, _>>()?,
    })
}
