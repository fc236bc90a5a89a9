//! Prometheus metrics of the process, served as text at `GET /metrics` (outside `/v1`, no
//! key) when the cargo feature `metrics` is on (`prometheus-client`); without it recording is
//! a no-op and `/metrics` answers 404.
//!
//! Labels carry route templates (`/v1/car/{codigoCar}`, never the raw path), status codes,
//! endpoint names and limit kinds only: no CPF/CNPJ, CAR code, key or account reaches a label.
//!
//! - `carapi_requests_total{route,status}` and `carapi_request_duration_seconds{route,status}`;
//! - `carapi_charges_total{endpoint}` and `carapi_debited_centavos_total{endpoint}`;
//! - `carapi_limit_refusals_total{limite}` (429 with `Carapi-Limite`: `taxa`, `diario`, `mensal`).

use std::time::Duration;

#[cfg(feature = "metrics")]
mod imp {
    use std::sync::LazyLock;
    use std::time::Duration;

    use prometheus_client::encoding::EncodeLabelSet;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
    use prometheus_client::registry::Registry;

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct RouteLabels {
        pub(super) route: &'static str,
        pub(super) status: u16,
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct EndpointLabels {
        pub(super) endpoint: &'static str,
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct LimitLabels {
        pub(super) limite: String,
    }

    fn buckets() -> Histogram {
        Histogram::new(exponential_buckets(0.0005, 2.0, 16))
    }

    pub(super) struct Metrics {
        pub(super) registry: Registry,
        pub(super) requests: Family<RouteLabels, Counter>,
        pub(super) latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
        pub(super) charges: Family<EndpointLabels, Counter>,
        pub(super) debited: Family<EndpointLabels, Counter>,
        pub(super) refusals: Family<LimitLabels, Counter>,
    }

    pub(super) static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
        let mut registry = Registry::with_prefix("carapi");
        let requests = Family::<RouteLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            buckets as fn() -> Histogram,
        );
        let charges = Family::<EndpointLabels, Counter>::default();
        let debited = Family::<EndpointLabels, Counter>::default();
        let refusals = Family::<LimitLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests answered, by route template and status",
            requests.clone(),
        );
        registry.register_with_unit(
            "request_duration",
            "Time to answer a request, by route template and status",
            prometheus_client::registry::Unit::Seconds,
            latency.clone(),
        );
        registry.register("charges", "Lookups debited, by endpoint", charges.clone());
        registry.register(
            "debited_centavos",
            "Amount debited for lookups, centavos (1/100 BRL), by endpoint",
            debited.clone(),
        );
        registry.register(
            "limit_refusals",
            "Requests refused with 429 by a limit (Carapi-Limite), by limit",
            refusals.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            charges,
            debited,
            refusals,
        }
    });

    pub(super) fn request(route: &'static str, status: u16, tempo: Duration) {
        let l = RouteLabels { route, status };
        METRICS.requests.get_or_create(&l).inc();
        METRICS
            .latency
            .get_or_create(&l)
            .observe(tempo.as_secs_f64());
    }
}

/// Records one answered request: `route` is the route template (or `"desconhecida"`),
/// `tempo` the time to answer.
pub(crate) fn request(route: &'static str, status: u16, tempo: Duration) {
    #[cfg(feature = "metrics")]
    imp::request(route, status, tempo);
    #[cfg(not(feature = "metrics"))]
    let _ = (route, status, tempo);
}

/// Records one debited lookup of `centavos` on `endpoint` (the contract's endpoint name).
pub(crate) fn debited(endpoint: &'static str, centavos: i64) {
    #[cfg(feature = "metrics")]
    {
        let l = imp::EndpointLabels { endpoint };
        imp::METRICS.charges.get_or_create(&l).inc();
        imp::METRICS
            .debited
            .get_or_create(&l)
            .inc_by(u64::try_from(centavos).unwrap_or(0));
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (endpoint, centavos);
}

/// Records one 429 refusal by the limit `limite` (`Carapi-Limite`'s value).
pub(crate) fn refused(limite: &str) {
    #[cfg(feature = "metrics")]
    imp::METRICS
        .refusals
        .get_or_create(&imp::LimitLabels {
            limite: limite.to_owned(),
        })
        .inc();
    #[cfg(not(feature = "metrics"))]
    let _ = limite;
}

/// The metrics in Prometheus' text format (OpenMetrics 1.0 text, which Prometheus reads), or
/// `None` without the feature `metrics`.
pub fn render() -> Option<String> {
    #[cfg(feature = "metrics")]
    {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &imp::METRICS.registry).ok()?;
        Some(s)
    }
    #[cfg(not(feature = "metrics"))]
    None
}
