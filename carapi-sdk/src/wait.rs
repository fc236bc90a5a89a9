//! The top-up waiter: reads the status at a fixed interval until it is final or time is up.

use std::future::Future;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};
use uuid::Uuid;

use crate::{Error, RecargaStatusResponse, Result};

/// Calls `fetch` now and then every `interval` (measured from the start of each read) until
/// the status is final. When the next read could not start before `start + timeout`, sleeps
/// until the deadline and returns [`Error::Timeout`]. Errors of `fetch` end the wait.
pub(crate) async fn poll_until_final<F, Fut>(
    recarga_id: Uuid,
    interval: Duration,
    timeout: Duration,
    mut fetch: F,
) -> Result<RecargaStatusResponse>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<RecargaStatusResponse>>,
{
    let start = Instant::now();
    let far = Duration::from_secs(100 * 365 * 86_400);
    let deadline = start.checked_add(timeout).unwrap_or_else(|| start + far);
    loop {
        let read_at = Instant::now();
        let st = fetch().await?;
        if st.status.is_final() {
            return Ok(st);
        }
        let next = read_at.checked_add(interval).unwrap_or(deadline);
        if next > deadline {
            sleep_until(deadline).await;
            return Err(Error::Timeout {
                recarga_id,
                waited: start.elapsed(),
                last_status: Some(st.status),
            });
        }
        sleep_until(next).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use rust_decimal::Decimal;

    use super::*;
    use crate::RecargaStatus;

    fn status(s: RecargaStatus) -> RecargaStatusResponse {
        RecargaStatusResponse {
            success: true,
            pago: s == RecargaStatus::Confirmado,
            recarga_id: Uuid::nil(),
            valor: Decimal::new(500, 0),
            valor_bonus: None,
            percentual_bonus: None,
            total_creditado: None,
            status: s,
            qr_code: None,
            qr_code_base64: None,
            saldo_atual: Decimal::ZERO,
            message: String::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn polls_spaced_by_the_interval_until_final() {
        let reads = Arc::new(Mutex::new(Vec::new()));
        let r = reads.clone();
        let t0 = Instant::now();
        let st = poll_until_final(
            Uuid::nil(),
            Duration::from_secs(5),
            Duration::from_secs(600),
            move || {
                let r = r.clone();
                async move {
                    let mut v = r.lock().unwrap();
                    v.push(Instant::now());
                    Ok(status(if v.len() < 4 {
                        RecargaStatus::Pendente
                    } else {
                        RecargaStatus::Confirmado
                    }))
                }
            },
        )
        .await
        .unwrap();
        assert_eq!(st.status, RecargaStatus::Confirmado);
        let v = reads.lock().unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[0], t0);
        for w in v.windows(2) {
            assert!(w[1] - w[0] >= Duration::from_secs(5));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn times_out_with_the_last_status() {
        let t0 = Instant::now();
        let mut n = 0;
        let e = poll_until_final(
            Uuid::nil(),
            Duration::from_secs(5),
            Duration::from_secs(12),
            || {
                n += 1;
                async { Ok(status(RecargaStatus::Pendente)) }
            },
        )
        .await
        .unwrap_err();
        assert_eq!(n, 3, "reads at 0, 5 and 10 s; 15 s is past the deadline");
        assert_eq!(t0.elapsed(), Duration::from_secs(12));
        assert!(matches!(
            e,
            Error::Timeout {
                last_status: Some(RecargaStatus::Pendente),
                ..
            }
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn rejected_is_final_and_errors_end_the_wait() {
        let st = poll_until_final(
            Uuid::nil(),
            Duration::from_secs(5),
            Duration::ZERO,
            || async { Ok(status(RecargaStatus::Rejeitado)) },
        )
        .await
        .unwrap();
        assert_eq!(st.status, RecargaStatus::Rejeitado);
        let e = poll_until_final(
            Uuid::nil(),
            Duration::from_secs(5),
            Duration::from_secs(60),
            || async { Err(Error::Config("x".into())) },
        )
        .await
        .unwrap_err();
        assert!(matches!(e, Error::Config(_)));
    }
}
