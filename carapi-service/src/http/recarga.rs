//! Top-ups: `GET /v1/recarga/faixas`, `POST /v1/recarga`, `GET /v1/recarga/{recargaId}`,
//! `GET /v1/recargas` (contract, "Top-up endpoints"). Status and list only read.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use carapi_sdk::domain::brl;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    ErrorCode, FaixasResponse, Precos, PreviewBonus, PreviewRecarga, RecargaCriadaResponse,
    RecargaItem, RecargaStatus, RecargaStatusResponse, RecargasParams, RecargasResponse,
};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use super::extract::Segment;
use super::extract::{Authenticated, Params, RecargaBody};
use crate::api_error::ApiError;
use crate::flow::pagination;
use crate::money::recarga::{self, VALOR_MAXIMO, VALOR_MINIMO, ValorRefused};
use crate::money::tarifa;
use crate::pix::reservation::{RecargaError, RecargaRequest, create_or_reuse};
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/recarga/faixas", get(faixas))
        .route("/v1/recarga", post(create))
        .route("/v1/recarga/{recargaId}", get(status))
        .route("/v1/recargas", get(list_all))
}

/// Query of `GET /v1/recarga/faixas`.
#[derive(Debug, Deserialize)]
pub struct FaixasQuery {
    /// Amount to preview, BRL.
    pub valor: Option<String>,
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
fn preview_of(texto: &str) -> Result<PreviewRecarga, ApiError> {
    // Only to tell a number from text (and `NaN`/`inf`); the amount itself is a Decimal.
    if !texto.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(ApiError::new(
            ErrorCode::ValorInvalido,
            format!("valor não é um número: {texto:?}"),
        ));
    }
    // A finite number that Decimal cannot hold: far above the maximum, or a tiny fraction.
    let exato = texto
        .parse::<Decimal>()
        .or_else(|_| Decimal::from_scientific(texto))
        .or_else(|_| {
            let t = texto.to_ascii_lowercase();
            let negativo_expoente = t.split_once('e').is_some_and(|(_, e)| e.starts_with('-'));
            if negativo_expoente {
                Ok(Decimal::ZERO)
            } else {
                Err(())
            }
        })
        .map_err(|()| valor_invalid(texto))?;
    let p = recarga::preview(exato).map_err(|_| valor_invalid(texto))?;
    Ok(PreviewRecarga {
        valor_pago: p.valor.reais(),
        percentual_bonus: Decimal::from(p.percentual),
        valor_bonus: p.bonus.reais(),
        total_creditado: p.total().reais(),
    })
}

/// `GET /v1/recarga/faixas[?valor=V]`: tiers, minimum, price tables and, with `valor`, a
/// preview for it (any finite number up to the largest top-up).
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recarga/faixas", tag = "recarga", security(("bearer" = [])),
    params(("valor" = Option<f64>, Query, description = "Amount in BRL to preview (any finite number up to the largest top-up; rounded to the centavo)")),
    responses(
        (status = 200, description = "Bonus tiers, minimum, price tables, optional preview", body = FaixasResponse),
        (status = 400, description = "`VALOR_INVALIDO`: `valor` is not a finite number (outside the schema), or is above the largest amount `POST /v1/recarga` accepts (the same refusal)", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub async fn faixas(
    Authenticated(conta): Authenticated,
    Params(q): Params<FaixasQuery>,
) -> Result<Json<FaixasResponse>, ApiError> {
    let preview = q
        .valor
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(preview_of)
        .transpose()?;
    Ok(Json(FaixasResponse {
        success: true,
        valor_minimo: VALOR_MINIMO.reais(),
        usa_preco_legado: conta.legado,
        precos_atuais: tarifa::table(conta.legado),
        precos_apos_recarga: Precos::ATUAIS,
        confirmar_novos_precos_obrigatorio: conta.legado,
        faixas: tarifa::faixas(),
        preview,
    }))
}

fn qr_base64(payload: &str) -> Result<String, ApiError> {
    crate::pix::qr::png_base64(payload).map_err(ApiError::internal)
}

/// `POST /v1/recarga`: creates (or reuses, within 10 minutes) a PIX charge.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/v1/recarga", tag = "recarga", security(("bearer" = [])),
    request_body = carapi_sdk::NovaRecarga,
    responses(
        (status = 200, description = "PIX charge created or reused (`reaproveitada`)", body = RecargaCriadaResponse),
        (status = 400, description = "`VALOR_INVALIDO`, `VALOR_MINIMO`, `CONFIRMACAO_PRECOS_OBRIGATORIA` or `DOCUMENTO_AUSENTE`", body = carapi_sdk::ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = carapi_sdk::ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = carapi_sdk::ApiErrorBody),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
        (status = 502, description = "`ERRO_PIX`: payment-provider failure", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub async fn create(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    RecargaBody { request_id, exato }: RecargaBody,
) -> Result<Json<RecargaCriadaResponse>, ApiError> {
    let exato = exato.ok_or_else(|| valor_invalid(request_id.valor))?;
    let valor = match recarga::recarga_valor(exato) {
        Ok(v) => v,
        Err(ValorRefused::Invalido) => return Err(valor_invalid(exato)),
        Err(ValorRefused::AbaixoDoMinimo) => {
            return Err(ApiError::new(
                ErrorCode::ValorMinimo,
                format!(
                    "Valor mínimo de recarga: {}.",
                    brl::format(VALOR_MINIMO.reais())
                ),
            ));
        }
    };
    if conta.legado && !request_id.confirmar_novos_precos {
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
    let request_id = RecargaRequest {
        conta: conta.id,
        valor,
        documento,
        email: conta.email.clone(),
        now: st.clock.now(),
    };
    let (recarga, reaproveitada) = create_or_reuse(st.store.as_ref(), st.pix.as_ref(), request_id)
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
    let total = recarga.valor + recarga.bonus;
    Ok(Json(RecargaCriadaResponse {
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
    }))
}

fn not_found_recarga() -> ApiError {
    ApiError::new(ErrorCode::RecargaNaoEncontrada, "Recarga não encontrada.")
}

/// `GET /v1/recarga/{recargaId}`: the stored state; never changes anything.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recarga/{recargaId}", tag = "recarga", security(("bearer" = [])),
    params(("recargaId" = uuid::Uuid, Path, description = "Top-up id")),
    responses(
        (status = 200, description = "Stored state (never changed by reading)", body = RecargaStatusResponse),
        (status = 404, description = "`RECARGA_NAO_ENCONTRADA`", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub async fn status(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Segment(raw): Segment,
) -> Result<Json<RecargaStatusResponse>, ApiError> {
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
    Ok(Json(RecargaStatusResponse {
        success: true,
        pago,
        recarga_id: recarga.id,
        valor: recarga.valor.reais(),
        valor_bonus: pago.then(|| recarga.bonus.reais()),
        percentual_bonus: pago.then(|| Decimal::from(recarga.percentual_bonus)),
        total_creditado: pago.then(|| (recarga.valor + recarga.bonus).reais()),
        status: recarga.status,
        qr_code,
        qr_code_base64,
        saldo_atual: saldo.reais(),
        message: match recarga.status {
            RecargaStatus::Pendente => "Aguardando o pagamento PIX.".into(),
            RecargaStatus::Confirmado => "Pagamento confirmado e saldo creditado.".into(),
            RecargaStatus::Rejeitado => "Pagamento rejeitado.".into(),
        },
    }))
}

/// `GET /v1/recargas`: the account's top-ups, newest first.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recargas", tag = "recarga", security(("bearer" = [])),
    params(RecargasParams),
    responses(
        (status = 200, description = "Top-ups, newest first", body = RecargasResponse),
        (status = 400, description = "`PARAMETRO_INVALIDO`, only for input outside the schema: `page` or `size` below 1 or not an integer, `status` outside its enumeration, a repeated parameter. Integers of any size are accepted (`size` reduced to 100, a page past the end is empty)", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub async fn list_all(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Params(p): Params<RecargasParams>,
) -> Result<Json<RecargasResponse>, ApiError> {
    let (page, size) = pagination::page_params(p.page, p.size)?;
    let (itens, total) = st.store.recargas(conta.id, p.status, page, size).await?;
    Ok(Json(RecargasResponse {
        success: true,
        page,
        size,
        total,
        total_paginas: pagination::total_paginas(total, size),
        itens: itens
            .into_iter()
            .map(|r| RecargaItem {
                recarga_id: r.id,
                data: r.criada_em.with_timezone(&brasilia()),
                data_confirmacao: r.confirmada_em.map(|d| d.with_timezone(&brasilia())),
                valor_pago: r.valor.reais(),
                valor_bonus: r.bonus.reais(),
                percentual_bonus: Decimal::from(r.percentual_bonus),
                total_creditado: (r.valor + r.bonus).reais(),
                status: r.status,
            })
            .collect(),
    }))
}
