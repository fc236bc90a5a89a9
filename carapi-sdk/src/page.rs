//! Pagination of `GET /v1/historico` and `GET /v1/recargas` as item streams (contract,
//! "Shared pagination parameters": `page` 1-based, `size` at most 100).

use std::future::Future;

use futures::{Stream, TryStreamExt, stream};

use crate::Result;

/// One fetched page, reduced to what the stream needs.
pub(crate) struct Pagina<T> {
    pub(crate) page: u32,
    pub(crate) total_paginas: u32,
    pub(crate) itens: Vec<T>,
}

/// Fetches page `start`, `start + 1`, … and yields their items; stops after the last page
/// (`page >= total_paginas`), an empty page, or the first error (yielded).
pub(crate) fn paginate<T, F, Fut>(
    start: u32,
    fetch: F,
) -> impl Stream<Item = Result<T>> + Send + 'static
where
    T: Send + 'static,
    F: FnMut(u32) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Pagina<T>>> + Send + 'static,
{
    stream::try_unfold((fetch, Some(start)), |(mut fetch, next)| async move {
        let Some(page) = next else {
            return Ok::<_, crate::Error>(None);
        };
        let p = fetch(page).await?;
        let next = if p.itens.is_empty() || p.page.max(page) >= p.total_paginas {
            None
        } else {
            Some(page + 1)
        };
        Ok(Some((p.itens, (fetch, next))))
    })
    .map_ok(|itens| stream::iter(itens.into_iter().map(Ok)))
    .try_flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiError, Error, ErrorCode};
    use futures::StreamExt;

    #[tokio::test]
    async fn walks_pages_then_stops() {
        let s = paginate(1, |page| async move {
            Ok(Pagina {
                page,
                total_paginas: 3,
                itens: vec![page * 10, page * 10 + 1],
            })
        });
        let all: Vec<u32> = s.try_collect().await.unwrap();
        assert_eq!(all, [10, 11, 20, 21, 30, 31]);
    }

    #[tokio::test]
    async fn stops_at_empty_page_and_after_error() {
        let empty = paginate(1, |page| async move {
            Ok(Pagina::<u32> {
                page,
                total_paginas: 99,
                itens: vec![],
            })
        });
        assert_eq!(empty.collect::<Vec<_>>().await.len(), 0);
        let failing = paginate(1, |page| async move {
            if page == 2 {
                Err(Error::Api(ApiError::new(500, ErrorCode::ErroInterno, "x")))
            } else {
                Ok(Pagina {
                    page,
                    total_paginas: 5,
                    itens: vec![page],
                })
            }
        });
        let got: Vec<_> = failing.collect().await;
        assert_eq!(got.len(), 2);
        assert!(got[0].is_ok() && got[1].is_err());
    }
}
