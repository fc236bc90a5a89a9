//! `carapi-server serve`.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::process::ExitCode;
use std::time::Duration;

use carapi_service::config::{
    BIND_PADRAO, CONEXOES_POR_ENDERECO_PADRAO, Config, PEDIDOS_POR_CONEXAO_PADRAO, ReciboModo,
};
use carapi_service::http::borda::Borda;
use carapi_test_double::modo_teste::{ConfigTeste, montagem};

/// Options of `serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, env = "CARAPI_BIND", default_value = BIND_PADRAO)]
    bind: SocketAddr,
    #[command(flatten)]
    banco: super::Banco,
    /// HMAC-SHA256 secret of POST /webhooks/pix, at least 32 bytes. By default the database's
    /// own random secret, generated on first start (print it with `carapi-server
    /// webhook-secret`). Prefer the environment variable or --webhook-secret-file: a value
    /// given on the command line is visible to every local user in /proc/*/cmdline.
    #[arg(long, env = "CARAPI_WEBHOOK_SECRET", hide_env_values = true)]
    webhook_secret: Option<String>,
    /// File holding the HMAC-SHA256 secret of POST /webhooks/pix (at least 32 bytes; one
    /// trailing newline is ignored).
    #[arg(
        long,
        env = "CARAPI_WEBHOOK_SECRET_FILE",
        conflicts_with = "webhook_secret"
    )]
    webhook_secret_file: Option<std::path::PathBuf>,
    /// Seconds between reconciliation passes for pending top-ups.
    #[arg(long, env = "CARAPI_RECONCILE_INTERVAL", default_value_t = 120)]
    reconcile_interval: u64,
    /// Requests per second per API key (0 disables the limiter).
    #[arg(long, env = "CARAPI_RATE_LIMIT", default_value_t = 10)]
    rate_limit: u32,
    /// Receipt behaviour: normal, indisponivel (503) or falha-stream (502).
    #[arg(long, env = "CARAPI_RECIBO", default_value = "normal")]
    recibo: ReciboModo,
    /// Make the simulated PSP fail (POST /v1/recarga answers 502 ERRO_PIX).
    #[arg(long, env = "CARAPI_PIX_FALHA")]
    pix_falha: bool,
    /// Do not load the bundled CAR records into an empty database.
    #[arg(long)]
    sem_dados_embutidos: bool,
    /// Seconds a client has to send a request's headers; also how long an idle keep-alive
    /// connection stays open.
    #[arg(long, env = "CARAPI_TEMPO_CABECALHO", default_value_t = 10)]
    tempo_cabecalho: u64,
    /// Seconds a client has to send a whole request body (408 after it).
    #[arg(long, env = "CARAPI_TEMPO_CORPO", default_value_t = 30)]
    tempo_corpo: u64,
    /// Largest request body, bytes (413 above it).
    #[arg(long, env = "CARAPI_CORPO_MAXIMO", default_value_t = 65_536)]
    corpo_maximo: usize,
    /// Open connections at most; above it new connections wait to be accepted.
    #[arg(long, env = "CARAPI_CONEXOES_MAXIMAS", default_value_t = 1_000)]
    conexoes_maximas: usize,
    /// Open connections per client address at most; past it that address's new connections
    /// are closed at once, others are still served (0 disables).
    #[arg(long, env = "CARAPI_CONEXOES_POR_ENDERECO", default_value_t = CONEXOES_POR_ENDERECO_PADRAO)]
    conexoes_por_endereco: usize,
    /// Seconds a client has to accept bytes of an answer; a connection whose peer reads
    /// nothing for this long is closed.
    #[arg(long, env = "CARAPI_TEMPO_ENVIO", default_value_t = 10)]
    tempo_envio: u64,
    /// Requests served on one connection at most; the last answer closes it (pipelined
    /// requests past it are not served).
    #[arg(long, env = "CARAPI_PEDIDOS_POR_CONEXAO", default_value_t = PEDIDOS_POR_CONEXAO_PADRAO)]
    pedidos_por_conexao: u32,
    /// Reverse proxies (IP addresses, comma-separated) whose Forwarded / X-Forwarded-For
    /// headers name the client address; none by default (those headers are ignored).
    #[arg(long, env = "CARAPI_PROXIES_CONFIAVEIS", value_delimiter = ',')]
    proxies_confiaveis: Vec<IpAddr>,
    /// Failed authentications per second per client address before 429 (0 disables).
    #[arg(long, env = "CARAPI_LIMITE_NAO_AUTENTICADO", default_value_t = 20)]
    limite_nao_autenticado: u32,
    /// Run as a test double: a movable clock, faults on demand and the /_teste routes (see the
    /// server README). Refused unless --bind is a loopback address.
    #[arg(long)]
    modo_teste: bool,
    /// Bearer token of the /_teste routes (default: a random one, printed at start).
    #[arg(
        long,
        env = "CARAPI_TOKEN_TESTE",
        hide_env_values = true,
        requires = "modo_teste"
    )]
    token_teste: Option<String>,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.modo_teste && !a.bind.ip().is_loopback() {
        eprintln!(
            "erro: --modo-teste só escuta em endereço de loopback (127.0.0.1 ou ::1), não em {}",
            a.bind
        );
        return Ok(ExitCode::from(2));
    }
    let token_teste = a.modo_teste.then(|| {
        a.token_teste
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| format!("teste_{}", hex::encode(rand::random::<[u8; 24]>())))
    });
    let webhook_secret = match segredo_webhook(&a) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("erro: {msg}");
            return Ok(ExitCode::from(2));
        }
    };
    let database_url = a.banco.database.clone();
    let config = Config {
        bind: a.bind,
        database_url: a.banco.database,
        webhook_secret,
        reconcile_interval: Duration::from_secs(a.reconcile_interval.max(1)),
        recibo: a.recibo,
        pix_falha: a.pix_falha,
        load_bundled_data: !a.sem_dados_embutidos,
        rate_limit: NonZeroU32::new(a.rate_limit),
        borda: Borda {
            tempo_cabecalho: Duration::from_secs(a.tempo_cabecalho.max(1)),
            tempo_corpo: Duration::from_secs(a.tempo_corpo.max(1)),
            corpo_maximo: a.corpo_maximo,
            conexoes_maximas: a.conexoes_maximas.max(1),
            conexoes_por_endereco: (a.conexoes_por_endereco > 0).then_some(a.conexoes_por_endereco),
            nao_autenticados_por_segundo: NonZeroU32::new(a.limite_nao_autenticado),
            tempo_envio: Duration::from_secs(a.tempo_envio.max(1)),
            pedidos_por_conexao: a.pedidos_por_conexao.max(1),
            proxies_confiaveis: a.proxies_confiaveis.clone(),
        },
        ..Config::default()
    };
    // The composition root of the binary: a normal server, or the test double around it.
    let server = match &token_teste {
        None => carapi_service::spawn(config).await?,
        Some(token) => {
            let teste = ConfigTeste {
                token: Some(token.clone()),
            };
            montagem::iniciar(config, &teste).await?.0
        }
    };
    tracing::info!(endereco = %server.addr(), "carapi-server pronto em {}", server.base_url());
    super::avisar_carga_interrompida(&database_url).await;
    eprintln!("carapi-server ouvindo em {}", server.base_url());
    if server.state().config.webhook_secret.is_none() {
        eprintln!(
            "segredo do webhook PIX: o do banco (veja com `carapi-server webhook-secret --database ...`)"
        );
    }
    if let Some(token) = token_teste {
        eprintln!("modo de teste: rotas /_teste com Authorization: Bearer {token}");
    }
    sinal().await;
    tracing::info!("sinal recebido; encerrando");
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The webhook secret of `a`: from `--webhook-secret-file`, else from `--webhook-secret` /
/// `CARAPI_WEBHOOK_SECRET` (with a warning on stderr when it came on the command line), checked
/// against [`carapi_service::webhook::SEGREDO_MINIMO`]; `Err` is the message for stderr.
fn segredo_webhook(a: &Args) -> Result<Option<String>, String> {
    let segredo = if let Some(arquivo) = &a.webhook_secret_file {
        let texto = std::fs::read_to_string(arquivo)
            .map_err(|e| format!("--webhook-secret-file {}: {e}", arquivo.display()))?;
        let texto = texto.strip_suffix('\n').unwrap_or(&texto);
        Some(texto.strip_suffix('\r').unwrap_or(texto).to_owned())
    } else {
        let do_ambiente = std::env::var("CARAPI_WEBHOOK_SECRET").ok();
        if a.webhook_secret.is_some() && a.webhook_secret != do_ambiente {
            eprintln!(
                "aviso: --webhook-secret fica visível a todo usuário local em /proc/*/cmdline; \
                 use CARAPI_WEBHOOK_SECRET ou --webhook-secret-file"
            );
        }
        a.webhook_secret.clone()
    };
    carapi_service::webhook::validar_segredo(segredo.as_deref()).map_err(|e| e.to_string())?;
    Ok(segredo)
}

/// Resolves on SIGINT or (Unix) SIGTERM.
async fn sinal() {
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
