//! Two futures polled together on the caller's task (no task spawned, no runtime feature).

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

/// Runs `a` and `b` concurrently and returns both outputs once both are ready; dropping it
/// drops both.
pub(crate) async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let mut a = pin!(a);
    let mut b = pin!(b);
    let (mut ra, mut rb) = (None, None);
    poll_fn(move |cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn both_run_at_once() {
        let t = tokio::time::Instant::now();
        let d = std::time::Duration::from_millis(100);
        let (a, b) = both(
            async {
                tokio::time::sleep(d).await;
                1
            },
            async {
                tokio::time::sleep(d).await;
                2
            },
        )
        .await;
        assert_eq!((a, b), (1, 2));
        assert_eq!(t.elapsed(), d, "side by side, not one after the other");
    }
}
