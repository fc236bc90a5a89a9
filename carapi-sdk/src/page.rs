//! Pagination of `GET /v1/historico` and `GET /v1/recargas` item by item (contract, "Shared
//! pagination parameters": `page` 1-based, `size` at most 100): [`Paginator`].

use std::collections::VecDeque;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::Result;

/// One fetched page, reduced to what the paginator needs.
pub(crate) struct FetchedPage<T> {
    pub(crate) page: u32,
    pub(crate) total_paginas: u32,
    pub(crate) itens: Vec<T>,
}

type PageFuture<T> = Pin<Box<dyn Future<Output = Result<FetchedPage<T>>> + Send>>;
type Fetch<T> = Box<dyn FnMut(u32) -> PageFuture<T> + Send>;

/// The items of a paginated list, page after page, fetched as they are needed
/// ([`Client::historico_stream`](crate::Client::historico_stream),
/// [`Client::recargas_stream`](crate::Client::recargas_stream)).
///
/// Read it with the inherent [`next`](Self::next) or [`try_collect`](Self::try_collect): no
/// futures crate and no pinning needed. It is also a
/// [`futures_core::Stream`](https://docs.rs/futures-core/0.3/futures_core/stream/trait.Stream.html)
/// of `Result<T>`, for `StreamExt`/`TryStreamExt` combinators. It is `Unpin` and `Send`, and owns
/// a clone of the client.
///
/// It ends after the last page (`totalPaginas`) or an empty page, and after the first error
/// (which it yields). Each page is one free request.
///
/// ```no_run
/// # async fn f(client: carapi_sdk::Client) -> carapi_sdk::Result<()> {
/// let mut historico = client.historico_stream(Default::default());
/// while let Some(item) = historico.next().await {
///     let item = item?;
///     println!("{} {} R$ {}", item.data, item.endpoint, item.valor_cobrado);
/// }
/// let recargas = client.recargas_stream(Default::default()).try_collect().await?;
/// # Ok(()) }
/// ```
#[must_use = "a paginator fetches nothing until it is read"]
pub struct Paginator<T> {
    fetch: Fetch<T>,
    /// The page to fetch next; `None` once the last one was read or an error was yielded.
    next_page: Option<u32>,
    /// The page being fetched and its number.
    pending: Option<(u32, PageFuture<T>)>,
    itens: VecDeque<T>,
}

impl<T: Send + 'static> Paginator<T> {
    /// Fetches page `start`, `start + 1`, … with `fetch`.
    pub(crate) fn new<F, Fut>(start: u32, mut fetch: F) -> Self
    where
        F: FnMut(u32) -> Fut + Send + 'static,
        Fut: Future<Output = Result<FetchedPage<T>>> + Send + 'static,
    {
        Self {
            fetch: Box::new(move |page| Box::pin(fetch(page))),
            next_page: Some(start),
            pending: None,
            itens: VecDeque::new(),
        }
    }
}

impl<T> Paginator<T> {
    /// The next item, fetching the next page when this one is used up; `None` at the end.
    ///
    /// # Errors
    /// The error of the page request (then `None`): those of
    /// [`Client::historico`](crate::Client::historico) or
    /// [`Client::recargas`](crate::Client::recargas).
    pub async fn next(&mut self) -> Option<Result<T>> {
        poll_fn(|cx| self.poll_item(cx)).await
    }

    /// Every remaining item, in order.
    ///
    /// # Errors
    /// The first error of a page request; the items read before it are dropped.
    pub async fn try_collect(mut self) -> Result<Vec<T>> {
        let mut all = Vec::new();
        while let Some(item) = self.next().await {
            all.push(item?);
        }
        Ok(all)
    }

    fn poll_item(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T>>> {
        loop {
            if let Some(item) = self.itens.pop_front() {
                return Poll::Ready(Some(Ok(item)));
            }
            let (page, fut) = match &mut self.pending {
                Some(pending) => pending,
                None => {
                    let Some(page) = self.next_page.take() else {
                        return Poll::Ready(None);
                    };
                    self.pending.insert((page, (self.fetch)(page)))
                }
            };
            let page = *page;
            let result = match fut.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => result,
            };
            self.pending = None;
            match result {
                Err(e) => return Poll::Ready(Some(Err(e))),
                Ok(p) => {
                    let last = p.itens.is_empty() || p.page.max(page) >= p.total_paginas;
                    self.next_page = (!last).then_some(page + 1);
                    self.itens = p.itens.into();
                }
            }
        }
    }
}

// Items are only ever moved, never pinned: the paginator is `Unpin` whatever `T` is.
impl<T> Unpin for Paginator<T> {}

impl<T> futures_core::Stream for Paginator<T> {
    type Item = Result<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_item(cx)
    }
}

impl<T> fmt::Debug for Paginator<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paginator")
            .field("next_page", &self.next_page)
            .field("fetching", &self.pending.as_ref().map(|(page, _)| page))
            .field("buffered", &self.itens.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiError, Error, ErrorCode};

    fn pages(total_paginas: u32) -> Paginator<u32> {
        Paginator::new(1, move |page| async move {
            Ok(FetchedPage {
                page,
                total_paginas,
                itens: vec![page * 10, page * 10 + 1],
            })
        })
    }

    #[tokio::test]
    async fn walks_pages_then_stops() {
        let all = pages(3).try_collect().await.unwrap();
        assert_eq!(all, [10, 11, 20, 21, 30, 31]);
    }

    #[test]
    fn is_a_stream_too() {
        fn unpin_send_stream<S: futures_core::Stream + Unpin + Send>(_: &S) {}
        let p = pages(2);
        unpin_send_stream(&p);
        let all: Vec<Result<u32>> = std::iter::from_fn({
            let mut p = p;
            move || {
                let waker = std::task::Waker::noop();
                let mut cx = Context::from_waker(waker);
                match futures_core::Stream::poll_next(Pin::new(&mut p), &mut cx) {
                    Poll::Ready(item) => item,
                    Poll::Pending => panic!("pages are ready at once"),
                }
            }
        })
        .collect();
        assert_eq!(all.len(), 4);
    }

    #[tokio::test]
    async fn stops_at_empty_page_and_after_error() {
        let mut empty = Paginator::new(1, |page| async move {
            Ok(FetchedPage::<u32> {
                page,
                total_paginas: 99,
                itens: vec![],
            })
        });
        assert!(empty.next().await.is_none());
        let mut failing = Paginator::new(1, |page| async move {
            if page == 2 {
                Err(Error::Api(ApiError::new(500, ErrorCode::ErroInterno, "x")))
            } else {
                Ok(FetchedPage {
                    page,
                    total_paginas: 5,
                    itens: vec![page],
                })
            }
        });
        assert_eq!(failing.next().await.unwrap().unwrap(), 1);
        assert!(failing.next().await.unwrap().is_err());
        assert!(failing.next().await.is_none(), "ends after the error");
    }
}
