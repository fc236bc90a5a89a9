//! Account endpoints (free): saldo, histórico, limites, uso.

use reqwest::Method;

use super::http::Req;
use super::{Client, Op};
use crate::page::{FetchedPage, Paginator};
use crate::{
    ConsumoItem, Error, HistoricoParams, HistoricoResponse, LimitesResponse, LimitesUpdate, Result,
    SaldoResponse, UsoResponse,
};

impl Client {
    /// Balance, limits, effective prices and today's/this month's use: `GET /v1/saldo`
    /// (contract, "Account endpoints"). Free and not recorded in the history.
    ///
    /// # Errors
    /// [`Error::Api`] 401 `TOKEN_INVALIDO`, 429 `LIMITE_EXCEDIDO`; transport and decode errors.
    pub async fn saldo(&self) -> Result<SaldoResponse> {
        let saldo: SaldoResponse = self
            .call_json(Req::get(Op::Saldo, self.url(&["saldo"])?))
            .await?;
        self.learn_precos(saldo.precos);
        Ok(saldo)
    }

    /// One page of the request history, newest first: `GET /v1/historico` (free). `page` is
    /// 1-based, `size` 1 to 100 (default 20); filters `busca`, `endpoint`, `status`.
    ///
    /// # Errors
    /// [`Error::Api`] 401, 429; transport and decode errors.
    pub async fn historico(&self, params: &HistoricoParams) -> Result<HistoricoResponse> {
        let mut url = self.url(&["historico"])?;
        set_query(&mut url, params)?;
        self.call_json(Req::get(Op::Historico, url)).await
    }

    /// Every history item matching `params`, page after page (from `params.page`, default 1;
    /// `size` default 100 here), as a [`Paginator`] that owns a clone of the client: read it
    /// with `.next().await` (no `use` of any futures trait needed), collect it with
    /// [`Paginator::try_collect`], or use it as a `futures_core::Stream`. It ends after the
    /// last page (`totalPaginas`) or an empty page, and after the first error.
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) -> Result<(), carapi_sdk::Error> {
    /// let mut historico = client.historico_stream(Default::default());
    /// while let Some(item) = historico.next().await {
    ///     let item = item?;
    ///     println!("{} {}", item.endpoint, item.valor_cobrado);
    /// }
    /// let todos = client.historico_stream(Default::default()).try_collect().await?;
    /// # Ok(()) }
    /// ```
    pub fn historico_stream(&self, params: HistoricoParams) -> Paginator<ConsumoItem> {
        let client = self.clone();
        let start = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        Paginator::new(start, move |page| {
            let client = client.clone();
            let params = HistoricoParams {
                page: Some(page),
                size,
                ..params.clone()
            };
            async move {
                let r = client.historico(&params).await?;
                Ok(FetchedPage {
                    page: r.page,
                    total_paginas: r.total_paginas,
                    itens: r.itens,
                })
            }
        })
    }

    /// The account's consumption limits: `GET /v1/limites` (free).
    ///
    /// # Errors
    /// [`Error::Api`] 401, 429; transport and decode errors.
    pub async fn limites(&self) -> Result<LimitesResponse> {
        self.call_json(Req::get(Op::Limites, self.url(&["limites"])?))
            .await
    }

    /// Changes the limits with merge-patch semantics: `PUT /v1/limites` (free). See
    /// [`LimitesUpdate`]: `None` keeps, `Some(None)` or `Some(Some(0))` removes, a positive value
    /// sets (daily 0..=100000 requests, monthly 0..=1000000 BRL).
    ///
    /// # Errors
    /// [`Error::Api`] 400 `LIMITE_INVALIDO`, 401, 429; transport and decode errors.
    pub async fn atualizar_limites(&self, update: &LimitesUpdate) -> Result<LimitesResponse> {
        let req = Req::json(
            Op::AtualizarLimites,
            Method::PUT,
            self.url(&["limites"])?,
            update,
        )?;
        self.call_json(req).await
    }

    /// Use per endpoint over the last 30 days: `GET /v1/uso` (free).
    ///
    /// # Errors
    /// [`Error::Api`] 401, 429; transport and decode errors.
    pub async fn uso(&self) -> Result<UsoResponse> {
        self.call_json(Req::get(Op::Uso, self.url(&["uso"])?)).await
    }
}

/// Sets the URL query from a `Serialize` struct (`None` fields omitted).
pub(crate) fn set_query(url: &mut url::Url, params: &impl serde::Serialize) -> Result<()> {
    let q = serde_urlencoded::to_string(params)
        .map_err(|e| Error::Config(format!("parâmetros inválidos: {e}")))?;
    url.set_query(if q.is_empty() { None } else { Some(&q) });
    Ok(())
}
