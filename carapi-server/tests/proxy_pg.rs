//! A TCP proxy between the server under test and PostgreSQL that makes the faults of a real
//! network and of a crashing database on demand, without touching the machine's PostgreSQL:
//!
//! - [`ProxyPg::refuse`]: the port refuses new connections (the listener is closed), as when
//!   PostgreSQL is down; [`ProxyPg::pass`] opens it again on the same port.
//! - [`ProxyPg::swallow`]: connections are accepted and bytes read, but nothing is forwarded
//!   either way, as when packets go nowhere (a host that vanished).
//! - [`ProxyPg::cut_connections`]: every open connection is closed at once, as after a crash.
//! - [`ProxyPg::lose_commit_reply`]: the next `COMMIT` (a simple-query message, as sqlx
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
pub enum Mode {
    /// Forwards both ways.
    Pass,
    /// No listener: new connections are refused by the operating system.
    Refuse,
    /// Accepts and reads, forwards nothing.
    Swallow,
}

#[derive(Debug)]
struct State {
    mode: watch::Sender<Mode>,
    /// Bumped to close every open connection.
    cut: watch::Sender<u64>,
    /// How many of the next `COMMIT` replies to swallow.
    commits_to_lose: AtomicUsize,
    /// How many `COMMIT` replies were swallowed.
    commits_lost: AtomicUsize,
    /// Connections accepted so far.
    connections: AtomicUsize,
    destination: String,
}

/// A running proxy; its tasks end with the test's runtime.
#[derive(Debug)]
pub struct ProxyPg {
    /// `127.0.0.1:<port>` the proxy listens on.
    pub address: String,
    state: Arc<State>,
    _accept: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The `host:port` of a `postgres://user@host:port/db?query` URL (port 5432 when absent).
pub fn address_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    }
}

impl ProxyPg {
    /// Starts a proxy in [`Mode::Pass`] to the PostgreSQL server of `database_url`.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn new_for(database_url: &str) -> ProxyPg {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let address = listener.local_addr().unwrap().to_string();
        let state = Arc::new(State {
            mode: watch::channel(Mode::Pass).0,
            cut: watch::channel(0).0,
            commits_to_lose: AtomicUsize::new(0),
            commits_lost: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            destination: address_of(database_url),
        });
        let task = tokio::spawn(accept(listener, address.clone(), state.clone()));
        ProxyPg {
            address,
            state,
            _accept: Mutex::new(Some(task)),
        }
    }

    /// `database_url` pointed at the proxy (same user, database and query, `sslmode=disable`).
    pub fn url(&self, database_url: &str) -> String {
        let (schema, rest) = database_url
            .split_once("://")
            .unwrap_or(("postgres", database_url));
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        let user = authority
            .rsplit_once('@')
            .map(|(u, _)| format!("{u}@"))
            .unwrap_or_default();
        let separator = if path.contains('?') { '&' } else { '?' };
        format!(
            "{schema}://{user}{}{path}{separator}sslmode=disable",
            self.address
        )
    }

    /// Forwards both ways again (reopens the port after [`ProxyPg::refuse`]).
    pub fn pass(&self) {
        self.state.mode.send_replace(Mode::Pass);
    }

    /// Closes the port: new connections are refused until [`ProxyPg::pass`]. Open
    /// connections are left alone (see [`ProxyPg::cut_connections`]).
    pub fn refuse(&self) {
        self.state.mode.send_replace(Mode::Refuse);
    }

    /// Accepts and reads but forwards nothing, on new and open connections.
    pub fn swallow(&self) {
        self.state.mode.send_replace(Mode::Swallow);
    }

    /// Closes every open connection now (the server sees its connections reset).
    pub fn cut_connections(&self) {
        self.state.cut.send_modify(|n| *n += 1);
    }

    /// Swallows the reply to the next `COMMIT` and cuts that connection: PostgreSQL commits,
    /// the client never learns it.
    pub fn lose_commit_reply(&self) {
        self.state.commits_to_lose.fetch_add(1, Ordering::SeqCst);
    }

    /// How many `COMMIT` replies were swallowed so far.
    pub fn commits_lost(&self) -> usize {
        self.state.commits_lost.load(Ordering::SeqCst)
    }

    /// How many connections the proxy accepted so far.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }
}

/// The accept loop: closes the listener while the mode is [`Mode::Refuse`] and binds the same
/// port again when it changes.
async fn accept(listener: TcpListener, address: String, state: Arc<State>) {
    let mut listener = Some(listener);
    let mut mode = state.mode.subscribe();
    loop {
        let atual = *mode.borrow_and_update();
        if atual == Mode::Refuse {
            listener = None;
            if mode.changed().await.is_err() {
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
                    state.connections.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(connection(client_addr, state.clone()));
                }
                listener = Some(l);
            }
            mudou = mode.changed() => {
                if mudou.is_err() {
                    return;
                }
                listener = Some(l);
            }
        }
    }
}

/// One proxied connection: two pumps, cut together.
async fn connection(client_addr: TcpStream, state: Arc<State>) {
    let Ok(server) = TcpStream::connect(&state.destination).await else {
        return;
    };
    let _ = client_addr.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (cl_read, cl_write) = client_addr.into_split();
    let (sv_read, sv_write) = server.into_split();
    let lose = Arc::new(AtomicBool::new(false));
    let mut cut = state.cut.subscribe();
    cut.borrow_and_update();
    let out = pump(cl_read, sv_write, state.clone(), lose.clone(), true);
    let back = pump(sv_read, cl_write, state.clone(), lose, false);
    tokio::select! {
        _ = out => {}
        _ = back => {}
        _ = cut.changed() => {}
    }
    // Dropping both halves of both sockets closes the connection both ways.
}

/// Copies `de` to `para`, obeying the mode. On the client->server side, a chunk holding a
/// `COMMIT` query while a commit reply is to be lost marks the connection; on the way back, a
/// marked connection swallows what arrives and ends.
async fn pump(
    mut de: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    state: Arc<State>,
    lose: Arc<AtomicBool>,
    from_client: bool,
) {
    let mut mode = state.mode.subscribe();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match de.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while *mode.borrow_and_update() == Mode::Swallow {
            if mode.changed().await.is_err() {
                return;
            }
        }
        let bytes = &buf[..n];
        if from_client && contains(bytes, b"COMMIT\0") && take_one(&state.commits_to_lose) {
            lose.store(true, Ordering::SeqCst);
        }
        if !from_client && lose.load(Ordering::SeqCst) {
            state.commits_lost.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if to.write_all(bytes).await.is_err() {
            return;
        }
    }
}

/// Takes one from a positive counter; `false` when it is zero.
fn take_one(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn contains(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

mod tests {
    //! The proxy itself, against the real PostgreSQL of `DATABASE_URL`.

    use super::{ProxyPg, address_of};
    use crate::postgres::TestDatabase;
    use sqlx::{Connection, Executor, PgConnection};
    use std::time::Duration;

    #[test]
    fn the_address_of_a_database_url() {
        assert_eq!(
            address_of("postgres://postgres@127.0.0.1:5432/test"),
            "127.0.0.1:5432"
        );
        assert_eq!(address_of("postgres://u:p@db/x?a=b"), "db:5432");
        assert_eq!(address_of("postgresql://h:6000"), "h:6000");
    }

    #[tokio::test]
    #[cfg_attr(
        not(carapi_pg),
        ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
    )]
    async fn a_lost_commit_reply_fails_the_commit_although_postgres_committed() {
        let Some(database) = TestDatabase::create("proxy_pg commit perdido").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let mut c = PgConnection::connect(&proxy.url(&database.url))
            .await
            .unwrap();
        c.execute("CREATE TABLE t (x int)").await.unwrap();
        let mut tx = c.begin().await.unwrap();
        tx.execute("INSERT INTO t VALUES (1)").await.unwrap();
        proxy.lose_commit_reply();
        assert!(
            tx.commit().await.is_err(),
            "the commit's reply was swallowed"
        );
        assert_eq!(proxy.commits_lost(), 1);

        let mut direct = PgConnection::connect(&database.url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM t")
            .fetch_one(&mut direct)
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
        let Some(database) = TestDatabase::create("proxy_pg recusar").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let url = proxy.url(&database.url);
        proxy.refuse();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let error = PgConnection::connect(&url).await.unwrap_err().to_string();
        assert!(error.to_lowercase().contains("refused"), "{error}");
        proxy.pass();
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
        let Some(database) = TestDatabase::create("proxy_pg cortar").await else {
            return;
        };
        let proxy = ProxyPg::new_for(&database.url).await;
        let url = proxy.url(&database.url);
        let mut c = PgConnection::connect(&url).await.unwrap();
        proxy.cut_connections();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            c.execute("SELECT 1").await.is_err(),
            "the cut connection fails"
        );

        let mut c = PgConnection::connect(&url).await.unwrap();
        proxy.swallow();
        let wait = tokio::time::timeout(Duration::from_millis(300), c.execute("SELECT 1")).await;
        assert!(wait.is_err(), "nothing comes back while the proxy swallows");
        assert!(proxy.connections() >= 2);
    }
}
