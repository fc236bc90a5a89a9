//! A TCP proxy between the server under test and PostgreSQL that makes the faults of a real
//! network and of a crashing database on demand, without touching the machine's PostgreSQL:
//!
//! - [`ProxyPg::recusar`]: the port refuses new connections (the listener is closed), as when
//!   PostgreSQL is down; [`ProxyPg::passar`] opens it again on the same port.
//! - [`ProxyPg::engolir`]: connections are accepted and bytes read, but nothing is forwarded
//!   either way, as when packets go nowhere (a host that vanished).
//! - [`ProxyPg::cortar_conexoes`]: every open connection is closed at once, as after a crash.
//! - [`ProxyPg::perder_resposta_do_commit`]: the next `COMMIT` (a simple-query message, as sqlx
//!   sends it) is forwarded, so PostgreSQL commits, and its reply is swallowed and the connection
//!   cut: the client cannot know whether its transaction committed.
//!
//! Byte-level, one task pair per connection; the proxied URL asks for `sslmode=disable` so that
//! the PostgreSQL protocol is readable.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modo {
    /// Forwards both ways.
    Passar,
    /// No listener: new connections are refused by the operating system.
    Recusar,
    /// Accepts and reads, forwards nothing.
    Engolir,
}

#[derive(Debug)]
struct Estado {
    modo: watch::Sender<Modo>,
    /// Bumped to close every open connection.
    corte: watch::Sender<u64>,
    /// How many of the next `COMMIT` replies to swallow.
    commits_a_perder: AtomicUsize,
    /// How many `COMMIT` replies were swallowed.
    commits_perdidos: AtomicUsize,
    /// Connections accepted so far.
    conexoes: AtomicUsize,
    destino: String,
}

/// A running proxy; its tasks end with the test's runtime.
#[derive(Debug)]
pub struct ProxyPg {
    /// `127.0.0.1:<port>` the proxy listens on.
    pub address: String,
    estado: Arc<Estado>,
    _aceitar: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The `host:port` of a `postgres://user@host:port/db?query` URL (port 5432 when absent).
pub fn endereco_de(url: &str) -> String {
    let resto = url.split_once("://").map_or(url, |(_, r)| r);
    let autoridade = resto.split(['/', '?']).next().unwrap_or(resto);
    let host = autoridade.rsplit_once('@').map_or(autoridade, |(_, h)| h);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    }
}

impl ProxyPg {
    /// Starts a proxy in [`Modo::Passar`] to the PostgreSQL server of `database_url`.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn new_for(database_url: &str) -> ProxyPg {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let address = listener.local_addr().unwrap().to_string();
        let estado = Arc::new(Estado {
            modo: watch::channel(Modo::Passar).0,
            corte: watch::channel(0).0,
            commits_a_perder: AtomicUsize::new(0),
            commits_perdidos: AtomicUsize::new(0),
            conexoes: AtomicUsize::new(0),
            destino: endereco_de(database_url),
        });
        let tarefa = tokio::spawn(aceitar(listener, address.clone(), estado.clone()));
        ProxyPg {
            address,
            estado,
            _aceitar: Mutex::new(Some(tarefa)),
        }
    }

    /// `database_url` pointed at the proxy (same user, database and query, `sslmode=disable`).
    pub fn url(&self, database_url: &str) -> String {
        let (esquema, resto) = database_url
            .split_once("://")
            .unwrap_or(("postgres", database_url));
        let autoridade_fim = resto.find(['/', '?']).unwrap_or(resto.len());
        let (autoridade, caminho) = resto.split_at(autoridade_fim);
        let usuario = autoridade
            .rsplit_once('@')
            .map(|(u, _)| format!("{u}@"))
            .unwrap_or_default();
        let separador = if caminho.contains('?') { '&' } else { '?' };
        format!(
            "{esquema}://{usuario}{}{caminho}{separador}sslmode=disable",
            self.address
        )
    }

    /// Forwards both ways again (reopens the port after [`ProxyPg::recusar`]).
    pub fn passar(&self) {
        self.estado.modo.send_replace(Modo::Passar);
    }

    /// Closes the port: new connections are refused until [`ProxyPg::passar`]. Open
    /// connections are left alone (see [`ProxyPg::cortar_conexoes`]).
    pub fn recusar(&self) {
        self.estado.modo.send_replace(Modo::Recusar);
    }

    /// Accepts and reads but forwards nothing, on new and open connections.
    pub fn engolir(&self) {
        self.estado.modo.send_replace(Modo::Engolir);
    }

    /// Closes every open connection now (the server sees its connections reset).
    pub fn cortar_conexoes(&self) {
        self.estado.corte.send_modify(|n| *n += 1);
    }

    /// Swallows the reply to the next `COMMIT` and cuts that connection: PostgreSQL commits,
    /// the client never learns it.
    pub fn perder_resposta_do_commit(&self) {
        self.estado.commits_a_perder.fetch_add(1, Ordering::SeqCst);
    }

    /// How many `COMMIT` replies were swallowed so far.
    pub fn commits_perdidos(&self) -> usize {
        self.estado.commits_perdidos.load(Ordering::SeqCst)
    }

    /// How many connections the proxy accepted so far.
    pub fn conexoes(&self) -> usize {
        self.estado.conexoes.load(Ordering::SeqCst)
    }
}

/// The accept loop: closes the listener while the mode is [`Modo::Recusar`] and binds the same
/// port again when it changes.
async fn aceitar(listener: TcpListener, address: String, estado: Arc<Estado>) {
    let mut listener = Some(listener);
    let mut modo = estado.modo.subscribe();
    loop {
        let atual = *modo.borrow_and_update();
        if atual == Modo::Recusar {
            listener = None;
            if modo.changed().await.is_err() {
                return;
            }
            continue;
        }
        let l = match listener.take() {
            Some(l) => l,
            None => match TcpListener::bind(&address).await {
                Ok(l) => l,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        tokio::select! {
            aceito = l.accept() => {
                if let Ok((client_addr, _)) = aceito {
                    estado.conexoes.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(connection(client_addr, estado.clone()));
                }
                listener = Some(l);
            }
            mudou = modo.changed() => {
                if mudou.is_err() {
                    return;
                }
                listener = Some(l);
            }
        }
    }
}

/// One proxied connection: two pumps, cut together.
async fn connection(client_addr: TcpStream, estado: Arc<Estado>) {
    let Ok(server) = TcpStream::connect(&estado.destino).await else {
        return;
    };
    let _ = client_addr.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (cl_leitura, cl_escrita) = client_addr.into_split();
    let (sv_leitura, sv_escrita) = server.into_split();
    let perder = Arc::new(AtomicBool::new(false));
    let mut corte = estado.corte.subscribe();
    corte.borrow_and_update();
    let ida = bombear(cl_leitura, sv_escrita, estado.clone(), perder.clone(), true);
    let volta = bombear(sv_leitura, cl_escrita, estado.clone(), perder, false);
    tokio::select! {
        _ = ida => {}
        _ = volta => {}
        _ = corte.changed() => {}
    }
    // Dropping both halves of both sockets closes the connection both ways.
}

/// Copies `de` to `para`, obeying the mode. On the client->server side, a chunk holding a
/// `COMMIT` query while a commit reply is to be lost marks the connection; on the way back, a
/// marked connection swallows what arrives and ends.
async fn bombear(
    mut de: tokio::net::tcp::OwnedReadHalf,
    mut para: tokio::net::tcp::OwnedWriteHalf,
    estado: Arc<Estado>,
    perder: Arc<AtomicBool>,
    do_cliente: bool,
) {
    let mut modo = estado.modo.subscribe();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match de.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while *modo.borrow_and_update() == Modo::Engolir {
            if modo.changed().await.is_err() {
                return;
            }
        }
        let bytes = &buf[..n];
        if do_cliente && contem(bytes, b"COMMIT\0") && tomar_um(&estado.commits_a_perder) {
            perder.store(true, Ordering::SeqCst);
        }
        if !do_cliente && perder.load(Ordering::SeqCst) {
            estado.commits_perdidos.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if para.write_all(bytes).await.is_err() {
            return;
        }
    }
}

/// Takes one from a positive counter; `false` when it is zero.
fn tomar_um(contador: &AtomicUsize) -> bool {
    contador
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn contem(bytes: &[u8], agulha: &[u8]) -> bool {
    bytes.windows(agulha.len()).any(|w| w == agulha)
}

mod testes {
    //! The proxy itself, against the real PostgreSQL of `DATABASE_URL`.

    use super::{ProxyPg, endereco_de};
    use crate::postgres::BancoTeste;
    use sqlx::{Connection, Executor, PgConnection};
    use std::time::Duration;

    #[test]
    fn the_address_of_a_database_url() {
        assert_eq!(
            endereco_de("postgres://postgres@127.0.0.1:5432/test"),
            "127.0.0.1:5432"
        );
        assert_eq!(endereco_de("postgres://u:p@db/x?a=b"), "db:5432");
        assert_eq!(endereco_de("postgresql://h:6000"), "h:6000");
    }

    #[tokio::test]
    #[cfg_attr(
        not(carapi_pg),
        ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
    )]
    async fn a_lost_commit_reply_fails_the_commit_although_postgres_committed() {
        let Some(database) = BancoTeste::create("proxy_pg commit perdido").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let mut c = PgConnection::connect(&proxy.url(&database.url))
            .await
            .unwrap();
        c.execute("CREATE TABLE t (x int)").await.unwrap();
        let mut tx = c.begin().await.unwrap();
        tx.execute("INSERT INTO t VALUES (1)").await.unwrap();
        proxy.perder_resposta_do_commit();
        assert!(
            tx.commit().await.is_err(),
            "the commit's reply was swallowed"
        );
        assert_eq!(proxy.commits_perdidos(), 1);

        let mut direto = PgConnection::connect(&database.url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM t")
            .fetch_one(&mut direto)
            .await
            .unwrap();
        assert_eq!(n, 1, "PostgreSQL committed the row whose reply was lost");
    }

    #[tokio::test]
    #[cfg_attr(
        not(carapi_pg),
        ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
    )]
    async fn a_refusing_port_refuses_and_opens_again() {
        let Some(database) = BancoTeste::create("proxy_pg recusar").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let url = proxy.url(&database.url);
        proxy.recusar();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let erro = PgConnection::connect(&url).await.unwrap_err().to_string();
        assert!(erro.to_lowercase().contains("refused"), "{erro}");
        proxy.passar();
        let mut c = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Ok(c) = PgConnection::connect(&url).await {
                    break c;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the port opens again");
        c.execute("SELECT 1").await.unwrap();
    }

    #[tokio::test]
    #[cfg_attr(
        not(carapi_pg),
        ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
    )]
    async fn a_cut_ends_open_connections_and_a_swallowing_proxy_answers_nothing() {
        let Some(database) = BancoTeste::create("proxy_pg cortar").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let url = proxy.url(&database.url);
        let mut c = PgConnection::connect(&url).await.unwrap();
        proxy.cortar_conexoes();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            c.execute("SELECT 1").await.is_err(),
            "the cut connection fails"
        );

        let mut c = PgConnection::connect(&url).await.unwrap();
        proxy.engolir();
        let espera = tokio::time::timeout(Duration::from_millis(300), c.execute("SELECT 1")).await;
        assert!(
            espera.is_err(),
            "nothing comes back while the proxy swallows"
        );
        assert!(proxy.conexoes() >= 2);
    }
}
