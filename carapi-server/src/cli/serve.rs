//! `carapi-server serve`.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::process::ExitCode;
use std::time::Duration;

use carapi_service::config::{
    Config, DEFAULT_BIND, DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_REQUESTS_PER_CONNECTION, DEFAULT_UNFINISHED_PER_ADDRESS, ReciboMode,
};
use carapi_service::http::client_addr::header_name;
use carapi_service::http::edge::Edge;
use carapi_test_double::test_mode::{TestModeConfig, assembly};

/// Opções de `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Endereço em que escutar.
    #[arg(long = "endereco", alias = "bind", env = "CARAPI_BIND", default_value = DEFAULT_BIND)]
    bind: SocketAddr,
    #[command(flatten)]
    database: super::DatabaseArgs,
    #[command(flatten)]
    webhook_secret: super::webhook_secret_args::WebhookSecretArgs,
    /// Segundos entre as passagens de reconciliação das recargas pendentes.
    #[arg(
        long = "intervalo-reconciliacao",
        alias = "reconcile-interval",
        env = "CARAPI_RECONCILE_INTERVAL",
        default_value_t = 120
    )]
    reconcile_interval: u64,
    /// Requisições por segundo por chave de API (0 desativa o limitador).
    #[arg(
        long = "limite-taxa",
        alias = "rate-limit",
        env = "CARAPI_RATE_LIMIT",
        default_value_t = 10
    )]
    rate_limit: u32,
    /// Comportamento do recibo: normal, indisponivel (503) ou falha-stream (502).
    #[arg(long = "recibo", env = "CARAPI_RECIBO", default_value = "normal")]
    recibo: ReciboMode,
    /// Faz o PSP simulado falhar (POST /v1/recarga responde 502 ERRO_PIX).
    #[arg(long = "pix-falha", env = "CARAPI_PIX_FALHA")]
    pix_failure: bool,
    /// Não carrega os registros CAR embutidos num banco vazio.
    #[arg(id = "sem_dados_embutidos")]
    #[arg(
        long = "sem-dados-embutidos",
        env = "CARAPI_NO_BUNDLED_DATA",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    without_bundled_data: bool,
    /// Segundos que um cliente tem para enviar os cabeçalhos de uma requisição; também quanto
    /// tempo uma conexão keep-alive ociosa fica aberta.
    #[arg(
        long = "tempo-cabecalho",
        env = "CARAPI_TEMPO_CABECALHO",
        default_value_t = 10
    )]
    header_timeout: u64,
    /// Segundos que um cliente tem para enviar o corpo inteiro de uma requisição (408 depois
    /// disso); lido só depois de verificada a chave (ou o cabeçalho de assinatura do webhook).
    #[arg(long = "tempo-corpo", env = "CARAPI_TEMPO_CORPO", default_value_t = 10)]
    body_timeout: u64,
    /// Maior corpo de requisição, em bytes (413 acima dele).
    #[arg(
        long = "corpo-maximo",
        env = "CARAPI_CORPO_MAXIMO",
        default_value_t = 65_536
    )]
    max_body: usize,
    /// Máximo de conexões abertas; acima dele, novas conexões esperam para ser aceitas.
    #[arg(
        long = "conexoes-maximas",
        env = "CARAPI_CONEXOES_MAXIMAS",
        default_value_t = 1_000
    )]
    max_connections: usize,
    /// O diário das cobranças cujo resultado não pôde ser sabido enquanto o banco esteve fora
    /// (com fsync; padrão: ao lado do arquivo SQLite, `FILE.diario`, ou `carapi.diario` no
    /// diretório atual para PostgreSQL).
    #[arg(long = "diario", alias = "journal", env = "CARAPI_JOURNAL")]
    diario: Option<std::path::PathBuf>,
    /// Máximo de conexões por endereço de cliente ainda enviando o cabeçalho da primeira
    /// requisição, enquanto mais da metade de --conexoes-maximas está aberta; além dele, as
    /// novas conexões desse endereço são fechadas na hora (um proxy confiável nunca é contado;
    /// 0 desativa).
    #[arg(long = "pendentes-por-endereco", env = "CARAPI_PENDENTES_POR_ENDERECO", default_value_t = DEFAULT_UNFINISHED_PER_ADDRESS)]
    unfinished_per_address: usize,
    /// Máximo de bytes do cabeçalho de uma requisição (linha de requisição e cabeçalhos), 8192
    /// ou mais: além dele a resposta é 431 e a conexão fecha (cabeçalhos inacabados não ocupam
    /// mais memória que isso).
    #[arg(long = "cabecalho-maximo", env = "CARAPI_CABECALHO_MAXIMO", default_value_t = DEFAULT_MAX_HEADER_BYTES)]
    max_header_bytes: usize,
    /// Máximo de conexões abertas por endereço de cliente; além dele, as novas conexões desse
    /// endereço são fechadas na hora, as de outros continuam sendo atendidas (0 desativa).
    #[arg(long = "conexoes-por-endereco", env = "CARAPI_CONEXOES_POR_ENDERECO", default_value_t = DEFAULT_CONNECTIONS_PER_ADDRESS)]
    connections_per_address: usize,
    /// Segundos que um cliente tem para aceitar bytes de uma resposta; uma conexão cujo par não
    /// lê nada durante esse tempo é fechada.
    #[arg(long = "tempo-envio", env = "CARAPI_TEMPO_ENVIO", default_value_t = 10)]
    send_timeout: u64,
    /// Dias que uma consulta com erro (não cobrada) fica no histórico antes de o servidor
    /// removê-la (ao menos 30: GET /v1/uso e usoHoje.erros leem 30 dias), ou `sempre` para
    /// guardá-las para sempre; consultas cobradas nunca são removidas.
    #[arg(long = "retencao-erros-dias", env = "CARAPI_RETENCAO_ERROS_DIAS", default_value = "90", value_parser = parse_retention)]
    error_retention: Retention,
    /// Máximo de requisições atendidas numa conexão; a última resposta a fecha (requisições em
    /// pipeline além dele não são atendidas).
    #[arg(long = "pedidos-por-conexao", env = "CARAPI_PEDIDOS_POR_CONEXAO", default_value_t = DEFAULT_REQUESTS_PER_CONNECTION)]
    requests_per_connection: u32,
    /// Proxies reversos (faixas de endereços em notação CIDR, ou endereços avulsos, separados
    /// por vírgula) cujo --cabecalho-cliente informa o endereço do cliente; nenhum por padrão
    /// (nenhum cabeçalho é lido). O endereço de socket deles não conta para nenhum limite por
    /// endereço.
    #[arg(
        long = "proxies-confiaveis",
        env = "CARAPI_PROXIES_CONFIAVEIS",
        value_delimiter = ',',
        value_parser = parse_range
    )]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// O único cabeçalho em que os proxies confiáveis escrevem o endereço do cliente, lido da
    /// direita para a esquerda, pulando os deles (X-Forwarded-For por padrão; Forwarded lê o
    /// for= da RFC 7239).
    #[arg(
        long = "cabecalho-cliente",
        env = "CARAPI_CLIENT_HEADER",
        default_value = "X-Forwarded-For",
        value_parser = parse_header
    )]
    client_header: String,
    /// Autenticações falhas por segundo por endereço de cliente antes de 429 (0 desativa).
    #[arg(id = "limite_nao_autenticado")]
    #[arg(
        long = "limite-nao-autenticado",
        env = "CARAPI_LIMITE_NAO_AUTENTICADO",
        default_value_t = 20
    )]
    unauthenticated_limit: u32,
    /// Endereço próprio onde servir GET /metrics (ex.: 127.0.0.1:9090), para que as métricas
    /// não fiquem expostas aos clientes; o endereço principal responde 404 em /metrics.
    #[arg(long = "endereco-metricas", env = "CARAPI_ENDERECO_METRICAS")]
    metrics_bind: Option<SocketAddr>,
    /// Roda como dublê de teste: um relógio ajustável, falhas sob demanda e as rotas /_teste
    /// (veja o README do servidor). Recusado a menos que --bind seja um endereço de loopback.
    #[arg(long = "modo-teste", id = "modo_teste")]
    test_mode: bool,
    /// Token Bearer das rotas /_teste (padrão: um aleatório, mostrado no início).
    #[arg(id = "token_teste")]
    #[arg(
        long = "token-teste",
        env = "CARAPI_TOKEN_TESTE",
        hide_env_values = true,
        requires = "modo_teste"
    )]
    test_token: Option<String>,
}

impl Args {
    /// The connection bounds and the proxy settings of the flags (`Edge`).
    fn edge(&self) -> anyhow::Result<Edge> {
        Ok(Edge {
            header_timeout: Duration::from_secs(self.header_timeout.max(1)),
            body_timeout: Duration::from_secs(self.body_timeout.max(1)),
            max_body: self.max_body,
            max_connections: self.max_connections.max(1),
            max_header_bytes: self.max_header_bytes,
            unfinished_per_address: (self.unfinished_per_address > 0)
                .then_some(self.unfinished_per_address),
            connections_per_address: (self.connections_per_address > 0)
                .then_some(self.connections_per_address),
            unauthenticated_per_second: NonZeroU32::new(self.unauthenticated_limit),
            send_timeout: Duration::from_secs(self.send_timeout.max(1)),
            requests_per_connection: self.requests_per_connection.max(1),
            trusted_proxies: self.trusted_proxies.clone(),
            client_header: header_name(&self.client_header).map_err(anyhow::Error::msg)?,
        })
    }
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.test_mode && !a.bind.ip().is_loopback() {
        eprintln!(
            "erro: --modo-teste só escuta em endereço de loopback (127.0.0.1 ou ::1), não em {}",
            a.bind
        );
        return Ok(ExitCode::from(2));
    }
    if a.test_mode && !a.trusted_proxies.is_empty() {
        eprintln!(
            "erro: --modo-teste com --proxies-confiaveis exporia as rotas /_teste pelo proxy; \
             use um ou outro"
        );
        return Ok(ExitCode::from(2));
    }
    let Ok(test_token) = test_token(&a) else {
        return Ok(ExitCode::from(2));
    };
    let said = |msg| eprintln!("erro: {msg}");
    let Ok(webhook_secret) = a.webhook_secret.resolve().map_err(said) else {
        return Ok(ExitCode::from(2));
    };
    let database_url = a.database.database.clone();
    let edge = a.edge()?;
    let config = Config {
        bind: a.bind,
        database_url: a.database.database,
        webhook_secret,
        reconcile_interval: Duration::from_secs(a.reconcile_interval.max(1)),
        recibo: a.recibo,
        pix_failure: a.pix_failure,
        load_bundled_data: !a.without_bundled_data,
        rate_limit: NonZeroU32::new(a.rate_limit),
        edge,
        journal: a.diario.clone(),
        metrics_bind: a.metrics_bind,
        error_retention_days: a.error_retention.0,
        ..Config::default()
    };
    // The composition root of the binary: a normal server, or the test double around it.
    let server = match &test_token {
        None => carapi_service::spawn(config).await?,
        Some(token) => {
            let test = TestModeConfig {
                token: Some(token.clone()),
            };
            assembly::start(config, &test).await?.0
        }
    };
    tracing::info!(address = %server.addr(), "carapi-server pronto em {}", server.base_url());
    super::warn_interrupted_load(&database_url).await;
    if let Some(m) = server.metrics_addr() {
        eprintln!("métricas em http://{m}/metrics");
    }
    eprintln!("carapi-server ouvindo em {}", server.base_url());
    if server.state().config.webhook_secret.is_none() {
        eprintln!(
            "segredo do webhook PIX: o do banco (veja com `carapi-server segredo-webhook --banco ...`)"
        );
    }
    if let Some(token) = test_token {
        say_test_token(&token, a.test_token.is_some());
    }
    signal().await;
    tracing::info!("sinal recebido; encerrando");
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr how to reach the /_teste routes: a token the operator gave (`dado`) is never
/// echoed, only a random one, which nobody knows yet.
fn say_test_token(token: &str, given: bool) {
    if given {
        eprintln!("modo de teste: rotas /_teste com o token dado (--token-teste)");
    } else {
        eprintln!("modo de teste: rotas /_teste com Authorization: Bearer {token}");
    }
}

/// The test mode's token of `a` (`None` outside test mode): the one given, or a random one;
/// `Err` (said on stderr) for one made only of spaces, never silently replaced.
fn test_token(a: &Args) -> Result<Option<String>, ()> {
    if a.test_token.as_deref().is_some_and(|t| t.trim().is_empty()) {
        eprintln!(
            "erro: --token-teste (CARAPI_TOKEN_TESTE) só tem espaços; dê um token de 32 caracteres ou mais, ou omita-o para um aleatório"
        );
        return Err(());
    }
    Ok(a.test_mode.then(|| {
        a.test_token
            .clone()
            .unwrap_or_else(|| format!("teste_{}", hex::encode(rand::random::<[u8; 24]>())))
    }))
}

/// Resolves on SIGINT or (Unix) SIGTERM.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// A trusted-proxy range: CIDR (`10.0.0.0/8`) or one address (`127.0.0.1`, as /32 or /128).
/// `--retencao-erros-dias`: days, or `None` for `sempre`.
#[derive(Debug, Clone, Copy)]
struct Retention(Option<u32>);

fn parse_retention(s: &str) -> Result<Retention, String> {
    carapi_service::config::parse_error_retention(s).map(Retention)
}

fn parse_range(s: &str) -> Result<ipnet::IpNet, String> {
    let s = s.trim();
    s.parse::<ipnet::IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("faixa de endereços inválida: {s:?} (ex.: 10.0.0.0/8, 127.0.0.1)"))
}

/// A header name (`X-Forwarded-For`, `Forwarded`, `X-Real-IP`), checked.
fn parse_header(s: &str) -> Result<String, String> {
    header_name(s).map(|_| s.trim().to_owned())
}
