//! Paginated lists as iterators, blocking: [`Client::historico_stream`],
//! [`Client::recargas_stream`].

use std::collections::VecDeque;
use std::fmt;

use super::Client;
use crate::page::FetchedPage;
use crate::{ConsumoItem, HistoricoParams, RecargaItem, RecargasParams, Result};

type Busca<T> = Box<dyn FnMut(&Client, u32) -> Result<FetchedPage<T>> + Send>;

/// The items of a paginated list, page after page (each page one free request, made when the
/// items before are used up), as an [`Iterator`] of `Result<T>`: the blocking
/// [`Paginator`](crate::Paginator). It ends after the last page or an empty page, and after the
/// first error (which it yields). It holds a clone of the client, so it works in a child after
/// `fork()` too.
pub struct Pages<T> {
    client: Client,
    busca: Busca<T>,
    proxima: Option<u32>,
    itens: VecDeque<T>,
}

impl<T> Iterator for Pages<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            if let Some(item) = self.itens.pop_front() {
                return Some(Ok(item));
            }
            let page = self.proxima.take()?;
            match (self.busca)(&self.client, page) {
                Err(e) => return Some(Err(e)),
                Ok(p) => {
                    let ultima = p.itens.is_empty() || p.page.max(page) >= p.total_paginas;
                    self.proxima = (!ultima).then_some(page + 1);
                    self.itens = p.itens.into();
                }
            }
        }
    }
}

impl<T> fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Pages")
            .field("next_page", &self.proxima)
            .field("buffered", &self.itens.len())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Every history item matching `params`, page after page (`size` default 100 here), as an
    /// iterator: the blocking [`crate::Client::historico_stream`].
    ///
    /// ```no_run
    /// # fn f(client: carapi_sdk::blocking::Client) -> carapi_sdk::Result<()> {
    /// for item in client.historico_stream(Default::default()) {
    ///     let item = item?;
    ///     println!("{} {}", item.endpoint, item.valor_cobrado);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn historico_stream(&self, params: HistoricoParams) -> Pages<ConsumoItem> {
        let inicio = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        let busca = move |c: &Client, page: u32| {
            let p = HistoricoParams {
                page: Some(page),
                size,
                ..params.clone()
            };
            c.historico(&p).map(|r| FetchedPage {
                page: r.page,
                total_paginas: r.total_paginas,
                itens: r.itens,
            })
        };
        self.pages(inicio, Box::new(busca))
    }

    /// Every top-up matching `params`, page after page, as an iterator: the blocking
    /// [`crate::Client::recargas_stream`].
    pub fn recargas_stream(&self, params: RecargasParams) -> Pages<RecargaItem> {
        let inicio = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        let busca = move |c: &Client, page: u32| {
            let p = RecargasParams {
                page: Some(page),
                size,
                ..params.clone()
            };
            c.recargas(&p).map(|r| FetchedPage {
                page: r.page,
                total_paginas: r.total_paginas,
                itens: r.itens,
            })
        };
        self.pages(inicio, Box::new(busca))
    }

    fn pages<T>(&self, inicio: u32, busca: Busca<T>) -> Pages<T> {
        Pages {
            client: self.clone(),
            busca,
            proxima: Some(inicio),
            itens: VecDeque::new(),
        }
    }
}
