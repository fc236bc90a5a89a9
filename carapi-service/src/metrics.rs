//! Prometheus metrics of the process, served as text at `GET /metrics` (outside `/v1`, no
//! key) when the cargo feature `metrics` is on (`prometheus-client`); without it recording is
//! a no-op and `/metrics` answers 404.
//!
//! Labels carry route templates (`/v1/car/{codigoCar}`, never the raw path), status codes,
//! endpoint names and limit kinds only: no CPF/CNPJ, CAR code, key or account reaches a label.
//!
//! - `carapi_requests_total{route,status}` and `carapi_request_duration_seconds{route,status}`;
//! - `carapi_charges_total{endpoint}` and `carapi_debited_centavos_total{endpoint}`;
//! - `carapi_limit_refusals_total{limite}` (429 with `Carapi-Limite`: `taxa`, `diario`, `mensal`);
//! - `carapi_connections_open` and `carapi_connections_refused_total{motivo}` (closed at once
//!   by a per-address bound: `conexoes_por_endereco`, `pendentes_por_endereco`);
//! - `carapi_db_pool_connections{pool,state}` (`in_use`, `idle`) and
//!   `carapi_db_pool_max_connections{pool}`, read from the store's pools when scraped, and
//!   `carapi_db_pool_timeouts_total` (waits for a pooled connection that ran out).

use std::time::Duration;

#[cfg(feature = "metrics")]
mod imp {
    use std::sync::LazyLock;
    use std::time::Duration;

    use prometheus_client::encoding::EncodeLabelSet;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
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

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct ReasonLabels {
        pub(super) motivo: &'static str,
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct PoolLabels {
        pub(super) pool: &'static str,
        pub(super) state: &'static str,
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    pub(super) struct PoolNameLabels {
        pub(super) pool: &'static str,
    }

    /// The gauges and counters of connections and of the database's pools.
    pub(super) struct Operations {
        pub(super) open: Gauge,
        pub(super) refused: Family<ReasonLabels, Counter>,
        pub(super) pool: Family<PoolLabels, Gauge>,
        pub(super) pool_max: Family<PoolNameLabels, Gauge>,
        pub(super) pool_timeouts: Counter,
    }

    impl Operations {
        fn register(registry: &mut Registry) -> Self {
            let o = Operations {
                open: Gauge::default(),
                refused: Family::default(),
                pool: Family::default(),
                pool_max: Family::default(),
                pool_timeouts: Counter::default(),
            };
            registry.register(
                "connections_open",
                "Client connections open now",
                o.open.clone(),
            );
            registry.register(
                "connections_refused",
                "Connections closed at once by a per-address bound, by bound",
                o.refused.clone(),
            );
            registry.register(
                "db_pool_connections",
                "Connections of the database pools, by pool and state (in_use, idle)",
                o.pool.clone(),
            );
            registry.register(
                "db_pool_max_connections",
                "Most connections each database pool opens",
                o.pool_max.clone(),
            );
            registry.register(
                "db_pool_timeouts",
                "Waits for a pooled database connection that ran out (answered 503)",
                o.pool_timeouts.clone(),
            );
            o
        }
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
        pub(super) ops: Operations,
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
        let ops = Operations::register(&mut registry);
        Metrics {
            ops,
            registry,
            requests,
            latency,
            charges,
            debited,
            refusals,
        }
    });

    pub(super) fn request(route: &'static str, status: u16, time: Duration) {
        let l = RouteLabels { route, status };
        METRICS.requests.get_or_create(&l).inc();
        METRICS
            .latency
            .get_or_create(&l)
            .observe(time.as_secs_f64());
    }
}

/// Records one answered request: `route` is the route template (or `"desconhecida"`),
/// `tempo` the time to answer.
pub(crate) fn request(route: &'static str, status: u16, time: Duration) {
    #[cfg(feature = "metrics")]
    imp::request(route, status, time);
    #[cfg(not(feature = "metrics"))]
    let _ = (route, status, time);
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

/// One open client connection in `carapi_connections_open`, counted until dropped.
#[derive(Debug)]
pub(crate) struct OpenConnection(());

impl OpenConnection {
    /// Counts one more open connection.
    pub(crate) fn new() -> Self {
        #[cfg(feature = "metrics")]
        imp::METRICS.ops.open.inc();
        OpenConnection(())
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        imp::METRICS.ops.open.dec();
    }
}

/// Records one connection closed at once by the per-address bound `motivo`.
pub(crate) fn connection_refused(reason: &'static str) {
    #[cfg(feature = "metrics")]
    imp::METRICS
        .ops
        .refused
        .get_or_create(&imp::ReasonLabels { motivo: reason })
        .inc();
    #[cfg(not(feature = "metrics"))]
    let _ = reason;
}

/// Records one wait for a pooled database connection that ran out.
pub(crate) fn pool_timed_out() {
    #[cfg(feature = "metrics")]
    imp::METRICS.ops.pool_timeouts.inc();
}

/// The use of one connection pool of a store ([`crate::store::CoordinationStore::pools`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolUse {
    /// The pool's name (`leitura`, `escrita`, `historico`, `principal`).
    pub pool: &'static str,
    /// Connections open (in use and idle).
    pub size: u32,
    /// Connections open and idle.
    pub idle: usize,
    /// Most connections the pool opens.
    pub max: u32,
}

impl PoolUse {
    /// The use of the sqlx pool `p`, named `pool`.
    pub(crate) fn of<DB: sqlx::Database>(pool: &'static str, p: &sqlx::Pool<DB>) -> Self {
        PoolUse {
            pool,
            size: p.size(),
            idle: p.num_idle(),
            max: p.options().get_max_connections(),
        }
    }
}

/// Sets the pool gauges from `pools` (read when `/metrics` is scraped).
pub(crate) fn observe_pools(pools: &[PoolUse]) {
    #[cfg(feature = "metrics")]
    for p in pools {
        let g = |state| imp::PoolLabels {
            pool: p.pool,
            state,
        };
        let idle = i64::try_from(p.idle).unwrap_or(i64::MAX);
        let size = i64::from(p.size);
        imp::METRICS
            .ops
            .pool
            .get_or_create(&g("in_use"))
            .set((size - idle).max(0));
        imp::METRICS.ops.pool.get_or_create(&g("idle")).set(idle);
        imp::METRICS
            .ops
            .pool_max
            .get_or_create(&imp::PoolNameLabels { pool: p.pool })
            .set(i64::from(p.max));
    }
    #[cfg(not(feature = "metrics"))]
    let _ = pools;
}

/// The metrics in Prometheus' text exposition format 0.0.4 (what every scraper reads and
/// `promtool check metrics` checks), or `None` without the feature `metrics`.
pub fn render() -> Option<String> {
    #[cfg(feature = "metrics")]
    {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &imp::METRICS.registry).ok()?;
        Some(prometheus_text(&s))
    }
    #[cfg(not(feature = "metrics"))]
    None
}

/// OpenMetrics 1.0 text (what `prometheus-client` writes) as Prometheus text 0.0.4: a counter
/// family's `HELP` and `TYPE` name its `_total` samples, `UNIT` lines and the closing `# EOF`
/// are left out (0.0.4 has neither). Sample lines are the same in both formats.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
fn prometheus_text(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<&str> = None;
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if line.starts_with("# HELP ") {
            // Held until the family's TYPE says whether its samples end in `_total`.
            help = Some(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let suffix = if kind == "counter" { "_total" } else { "" };
            if let Some(h) = help.take() {
                let text = h["# HELP ".len()..].split_once(' ').map_or("", |(_, t)| t);
                out.push_str(&format!("# HELP {name}{suffix} {text}\n"));
            }
            out.push_str(&format!("# TYPE {name}{suffix} {kind}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn openmetrics_counters_become_prometheus_text_families_of_their_samples() {
        let om = "# HELP carapi_charges Lookups debited.\n# TYPE carapi_charges counter\n\
                  carapi_charges_total{endpoint=\"car\"} 2\n\
                  # HELP carapi_d_seconds Time.\n# TYPE carapi_d_seconds histogram\n\
                  # UNIT carapi_d_seconds seconds\ncarapi_d_seconds_sum 0.5\n# EOF\n";
        assert_eq!(
            super::prometheus_text(om),
            "# HELP carapi_charges_total Lookups debited.\n# TYPE carapi_charges_total counter\n\
             carapi_charges_total{endpoint=\"car\"} 2\n\
             # HELP carapi_d_seconds Time.\n# TYPE carapi_d_seconds histogram\n\
             carapi_d_seconds_sum 0.5\n"
        );
    }
}
