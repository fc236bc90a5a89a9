//! `-v`: one line per HTTP request on stderr that a person reads, as xh's `-v` does: method,
//! route (the template, never the CAR code or document), status, time and whether the answer is
//! charged (contract, "Prices": every 200 of a lookup). Built from the SDK's `carapi_sdk::http`
//! events; `-vv` keeps the raw debug log.

use std::fmt::Write as _;
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer};

/// True when `route` is a charged lookup's template (contract, "Prices"; the SDK's table).
fn is_charged(route: &str) -> bool {
    carapi_sdk::EndpointConsulta::ALL
        .iter()
        .any(|e| e.route() == route)
}

/// The fields of one `carapi_sdk::http` event.
#[derive(Debug, Default)]
struct EventFields {
    method: String,
    route: String,
    status: Option<u64>,
    elapsed_ms: Option<u64>,
    attempt: Option<u64>,
    error: Option<String>,
    message: String,
}

impl Visit for EventFields {
    fn record_u64(&mut self, f: &Field, v: u64) {
        match f.name() {
            "status" => self.status = Some(v),
            "elapsed_ms" => self.elapsed_ms = Some(v),
            "attempt" => self.attempt = Some(v),
            _ => {}
        }
    }

    fn record_i64(&mut self, f: &Field, v: i64) {
        if let Ok(v) = u64::try_from(v) {
            self.record_u64(f, v);
        }
    }

    fn record_str(&mut self, f: &Field, v: &str) {
        self.record_debug(f, &v);
    }

    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        let text = format!("{v:?}");
        let text = text.trim_matches('"').to_owned();
        match f.name() {
            "method" => self.method = text,
            "route" => self.route = text,
            "error" => self.error = Some(text),
            "message" => self.message = text,
            _ => {}
        }
    }
}

/// The line of one request: `GET /v1/saldo → 200 em 12 ms (sem cobrança)`.
fn line(c: &EventFields) -> Option<String> {
    if c.route.is_empty() {
        return None;
    }
    let mut l = format!("{} {}", c.method, c.route);
    match (c.status, &c.error) {
        (Some(s), _) => {
            let _ = write!(l, " → {s}");
        }
        (None, Some(_)) => l.push_str(" → sem resposta"),
        (None, None) => {
            let _ = write!(l, ": {}", c.message);
            return Some(l);
        }
    }
    if let Some(ms) = c.elapsed_ms {
        let _ = write!(l, " em {ms} ms");
    }
    if let Some(a) = c.attempt.filter(|a| *a > 1) {
        let _ = write!(l, ", tentativa {a}");
    }
    let charged = c.status == Some(200) && is_charged(&c.route);
    l.push_str(if charged {
        " (cobrada, salvo valor sandbox)"
    } else if c.status.is_none() && is_charged(&c.route) {
        " (pode ter sido cobrada)"
    } else {
        " (sem cobrança)"
    });
    Some(l)
}

/// The `-v` layer: writes one line (method, route, status, time, charged or not) of each
/// `carapi_sdk::http` event to stderr.
#[derive(Debug, Default)]
pub(crate) struct RequestSummary;

impl<S: tracing::Subscriber> Layer<S> for RequestSummary {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != "carapi_sdk::http" {
            return;
        }
        let mut c = EventFields::default();
        event.record(&mut c);
        if let Some(l) = line(&c) {
            let _ = writeln!(std::io::stderr(), "{l}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_a_person_reads() {
        let c = EventFields {
            method: "GET".into(),
            route: "/v1/car/{codigoCar}".into(),
            status: Some(200),
            elapsed_ms: Some(12),
            attempt: Some(1),
            ..EventFields::default()
        };
        assert_eq!(
            line(&c).unwrap(),
            "GET /v1/car/{codigoCar} → 200 em 12 ms (cobrada, salvo valor sandbox)"
        );
    }
}
