//! Figure: the server's peak RSS while 1,000 sockets from 10 loopback addresses (127.0.0.2 to
//! 127.0.0.11, 100 each: the default per-address bound) each send a 390 KB request head that
//! never ends, against the same attack on a server whose head bound is hyper's default buffer
//! (417,792 bytes, the bound before `--cabecalho-maximo`). Target: peak under 64 MB. The
//! release server runs in its own process with `--pendentes-por-endereco 0` (that bound would
//! refuse most sockets before they send anything); `VmHWM` and `VmRSS` of
//! `/proc/<pid>/status` (Linux).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

use crate::Figure;
use crate::binary::Server;

/// Sockets in all, spread over [`ADDRESSES`] addresses.
const SOCKETS: usize = 1_000;
const ADDRESSES: u8 = 10;
/// Bytes of the unfinished head each socket sends.
const HEAD_BYTES: usize = 390 * 1024;
/// hyper's default read buffer bound (8 KiB + 100 x 4 KiB): the bound before the flag.
const HYPER_DEFAULT: &str = "417792";
const TARGET_MB: f64 = 64.0;

/// A line of `/proc/<pid>/status` in MB.
fn status_mb(pid: u32, field: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// One socket from `origem`: the unfinished head, then waits for the server to close it.
async fn socket(destination: SocketAddr, origin: IpAddr) -> Option<String> {
    let s = TcpSocket::new_v4().ok()?;
    s.bind(SocketAddr::new(origin, 0)).ok()?;
    let s = s.connect(destination).await.ok()?;
    let (mut read, mut write) = s.into_split();
    let send = tokio::spawn(async move {
        let _ = write
            .write_all(b"GET /v1/saldo HTTP/1.1\r\nHost: carapi\r\nX-Enchimento: ")
            .await;
        let block = vec![b'a'; 16 * 1024];
        let mut n = 0;
        while n < HEAD_BYTES && write.write_all(&block).await.is_ok() {
            n += block.len();
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), read.read_to_end(&mut response)).await;
    send.abort();
    String::from_utf8_lossy(&response)
        .lines()
        .next()
        .map(str::to_owned)
}

/// The attack on a server started with `mais`: (peak MB, RSS MB after the sockets closed,
/// sockets answered 431).
async fn measure(more: &[&str]) -> (f64, f64, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("cabecalho.db").display());
    let srv = Server::start_with(&url, more);
    let destination: SocketAddr = srv
        .base_url
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let pid = srv.pid();
    let start = status_mb(pid, "VmHWM:");
    let tasks: Vec<_> = (0..SOCKETS)
        .map(|i| {
            let origin = IpAddr::V4(Ipv4Addr::new(
                127,
                0,
                0,
                2 + (i % usize::from(ADDRESSES)) as u8,
            ));
            tokio::spawn(socket(destination, origin))
        })
        .collect();
    let mut refused = 0;
    for t in tasks {
        if t.await
            .ok()
            .flatten()
            .is_some_and(|l| l.starts_with("HTTP/1.1 431"))
        {
            refused += 1;
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let peak = status_mb(pid, "VmHWM:");
    let depois = status_mb(pid, "VmRSS:");
    eprintln!(
        "head {more:?}: RSS at start {start:.0} MB, peak {peak:.0} MB, after {depois:.0} MB, {refused} x 431"
    );
    (peak, depois, refused)
}

pub async fn run() -> Vec<Figure> {
    crate::attack::raise_open_file_limit(SOCKETS as u64 * 2 + 1_024);
    // The head bound alone: the bound of unfinished heads per address would refuse most of
    // these sockets before they send anything.
    let without_pending = ["--pendentes-por-endereco", "0"];
    let (peak, depois, refused) = measure(&without_pending).await;
    let (peak_before, depois_antes, _) = measure(&[
        without_pending[0],
        without_pending[1],
        "--cabecalho-maximo",
        HYPER_DEFAULT,
    ])
    .await;
    vec![Figure {
        name: "unfinished heads: server peak RSS, 1,000 sockets x 390 KB from 10 addresses",
        measured: format!(
            "peak {peak:.0} MB, {depois:.0} MB after, {refused}/{SOCKETS} answered 431"
        ),
        reference: format!(
            "hyper's default buffer: peak {peak_before:.0} MB, {depois_antes:.0} MB after"
        ),
        ratio: peak / peak_before.max(0.001),
        target: "peak < 64 MB",
        ok: peak < TARGET_MB && refused == SOCKETS,
    }]
}
