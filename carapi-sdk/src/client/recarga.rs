//! Top-up endpoints (free): faixas, criar, status, lista, and the waiter.

use std::time::Duration;

use reqwest::Method;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::conta::set_query;
use super::http::Req;
use super::{Client, Op};
use crate::page::{FetchedPage, Paginator};
use crate::wait::poll_until_final;
use crate::{
    FaixasResponse, NovaRecarga, RecargaCriadaResponse, RecargaItem, RecargaStatus,
    RecargaStatusResponse, RecargasParams, RecargasResponse, Result,
};

impl Client {
    /// Bonus tiers, minimum amount and price tables: `GET /v1/recarga/faixas` (free). With
    /// `valor` (BRL), the answer's `preview` tells what a top-up of that amount would credit.
    ///
    /// # Errors
    /// [`Error::Api`](crate::Error::Api) 401, 429; transport and decode errors.
    pub async fn faixas_recarga(&self, valor: Option<Decimal>) -> Result<FaixasResponse> {
        let mut url = self.url(&["recarga", "faixas"])?;
        if let Some(v) = valor {
            url.query_pairs_mut()
                .append_pair("valor", &v.normalize().to_string());
        }
        self.call_json(Req::get(Op::FaixasRecarga, url)).await
    }

    /// Creates a PIX top-up: `POST /v1/recarga` (contract, "Top-up endpoints"). Free, but it
    /// creates a real payment charge; the answer carries the PIX copy-and-paste payload
    /// (`qrCode`) and its QR PNG (`qrCodeBase64`). A pending PIX of the same amount created in
    /// the last 10 minutes is reused (`reaproveitada: true`), which is why this call may be
    /// retried after a lost answer.
    ///
    /// # Errors
    /// [`Error::Api`](crate::Error::Api) 400 `VALOR_INVALIDO` / `VALOR_MINIMO` (below 500 BRL) /
    /// `CONFIRMACAO_PRECOS_OBRIGATORIA` (legacy account without `confirmar_novos_precos`) /
    /// `DOCUMENTO_AUSENTE`, 401, 429, 500, 502 `ERRO_PIX`; transport and decode errors.
    pub async fn criar_recarga(&self, recarga: &NovaRecarga) -> Result<RecargaCriadaResponse> {
        let req = Req::json(
            Op::CriarRecarga,
            Method::POST,
            self.url(&["recarga"])?,
            recarga,
        )?;
        self.call_json(req).await
    }

    /// The stored status of a top-up: `GET /v1/recarga/{recargaId}` (free; reading changes
    /// nothing and never credits). While `Pendente` the answer repeats the QR data. Poll at
    /// most every 5 s, or use [`Client::wait_for_recarga`].
    ///
    /// # Errors
    /// [`Error::Api`](crate::Error::Api) 404 `RECARGA_NAO_ENCONTRADA` (missing or another account's), 401, 429;
    /// transport and decode errors.
    pub async fn recarga(&self, recarga_id: Uuid) -> Result<RecargaStatusResponse> {
        let id = recarga_id.to_string();
        let st: RecargaStatusResponse = self
            .call_json(Req::get(Op::Recarga, self.url(&["recarga", &id])?))
            .await?;
        if st.status == RecargaStatus::Confirmado {
            // A confirmed top-up moves a legacy account to the current prices.
            self.forget_prices();
        }
        Ok(st)
    }

    /// Waits until the top-up is final (`Confirmado` or `Rejeitado`) and returns that status,
    /// reading it every [`ClientBuilder::poll_interval`](crate::ClientBuilder::poll_interval)
    /// (5 s or more, contract rule 7). The first read is immediate.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) when `timeout` passes first (no read is started that could not be
    /// spaced 5 s from the previous one before the deadline); the errors of
    /// [`Client::recarga`], returned at once (transient ones are retried by the policy).
    pub async fn wait_for_recarga(
        &self,
        recarga_id: Uuid,
        timeout: Duration,
    ) -> Result<RecargaStatusResponse> {
        poll_until_final(recarga_id, self.inner.poll_interval, timeout, || {
            self.recarga(recarga_id)
        })
        .await
    }

    /// One page of the account's top-ups: `GET /v1/recargas` (free), filter `status`.
    ///
    /// # Errors
    /// [`Error::Api`](crate::Error::Api) 401, 429; transport and decode errors.
    pub async fn recargas(&self, params: &RecargasParams) -> Result<RecargasResponse> {
        let mut url = self.url(&["recargas"])?;
        set_query(&mut url, params)?;
        self.call_json(Req::get(Op::Recargas, url)).await
    }

    /// Every top-up matching `params`, page after page (`size` default 100 here), as a
    /// [`Paginator`] owning a clone of the client (`.next().await`, [`Paginator::try_collect`],
    /// or a `futures_core::Stream`); ends after the last page or the first error.
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) -> carapi_sdk::Result<()> {
    /// let mut recargas = client.recargas_stream(Default::default());
    /// while let Some(r) = recargas.next().await {
    ///     let r = r?;
    ///     println!("{} {}", r.valor_pago, r.status.as_str());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn recargas_stream(&self, params: RecargasParams) -> Paginator<RecargaItem> {
        let client = self.clone();
        let start = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        Paginator::new(start, move |page| {
            let client = client.clone();
            let params = RecargasParams {
                page: Some(page),
                size,
                ..params.clone()
            };
            async move {
                let r = client.recargas(&params).await?;
                Ok(FetchedPage {
                    page: r.page,
                    total_paginas: r.total_paginas,
                    itens: r.itens,
                })
            }
        })
    }
}
