//! Paginated lists as iterators, blocking: [`Client::historico_stream`],
//! [`Client::recargas_stream`].

use std::collections::VecDeque;
use std::fmt;

use super::Client;
use crate::page::FetchedPage;
use crate::{ConsumoItem, HistoricoParams, RecargaItem, RecargasParams, Result};

type Fetch<T> = Box<dyn FnMut(&Client, u32) -> Result<FetchedPage<T>> + Send>;

/// The items of a paginated list, page after page (each page one free request, made when the
/// items before are used up), as an [`Iterator`] of `Result<T>`: the blocking
/// [`Paginator`](crate::Paginator). It ends after the last page or an empty page, and after the
/// first error (which it yields). It holds a clone of the client, so it works in a child after
/// `fork()` too.
pub struct Pages<T> {
    client: Client,
    fetch: Fetch<T>,
    next_page: Option<u32>,
    buffered: VecDeque<T>,
}

impl<T> Iterator for Pages<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            if let Some(item) = self.buffered.pop_front() {
                return Some(Ok(item));
            }
            let page = self.next_page.take()?;
            match (self.fetch)(&self.client, page) {
                Err(e) => return Some(Err(e)),
                Ok(p) => {
                    let last = p.itens.is_empty() || p.page.max(page) >= p.total_paginas;
                    self.next_page = (!last).then_some(page + 1);
                    self.buffered = p.itens.into();
                }
            }
        }
    }
}

impl<T> fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Pages")
            .field("next_page", &self.next_page)
            .field("buffered", &self.buffered.len())
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
        let first = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        let fetch = move |c: &Client, page: u32| {
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
        self.pages(first, Box::new(fetch))
    }

    /// Every top-up matching `params`, page after page, as an iterator: the blocking
    /// [`crate::Client::recargas_stream`].
    pub fn recargas_stream(&self, params: RecargasParams) -> Pages<RecargaItem> {
        let first = params.page.unwrap_or(1).max(1);
        let size = Some(params.size.unwrap_or(100));
        let fetch = move |c: &Client, page: u32| {
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
        self.pages(first, Box::new(fetch))
    }

    fn pages<T>(&self, first: u32, fetch: Fetch<T>) -> Pages<T> {
        Pages {
            client: self.clone(),
            fetch,
            next_page: Some(first),
            buffered: VecDeque::new(),
        }
    }
}
