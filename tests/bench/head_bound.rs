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

use crate::Figura;
use crate::binary::Server;

/// Sockets in all, spread over [`ENDERECOS`] addresses.
const SOCKETS: usize = 1_000;
const ENDERECOS: u8 = 10;
/// Bytes of the unfinished head each socket sends.
const HEAD_BYTES: usize = 390 * 1024;
/// hyper's default read buffer bound (8 KiB + 100 x 4 KiB): the bound before the flag.
const HYPER_PADRAO: &str = "417792";
const ALVO_MB: f64 = 64.0;

/// A line of `/proc/<pid>/status` in MB.
fn status_mb(pid: u32, campo: &str) -> f64 {
    let texto = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    texto
        .lines()
        .find_map(|l| l.strip_prefix(campo))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// One socket from `origem`: the unfinished head, then waits for the server to close it.
async fn socket(destino: SocketAddr, origem: IpAddr) -> Option<String> {
    let s = TcpSocket::new_v4().ok()?;
    s.bind(SocketAddr::new(origem, 0)).ok()?;
    let s = s.connect(destino).await.ok()?;
    let (mut leitura, mut escrita) = s.into_split();
    let envio = tokio::spawn(async move {
        let _ = escrita
            .write_all(b"GET /v1/saldo HTTP/1.1\r\nHost: carapi\r\nX-Enchimento: ")
            .await;
        let bloco = vec![b'a'; 16 * 1024];
        let mut n = 0;
        while n < HEAD_BYTES && escrita.write_all(&bloco).await.is_ok() {
            n += bloco.len();
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    let mut resposta = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), leitura.read_to_end(&mut resposta)).await;
    envio.abort();
    String::from_utf8_lossy(&resposta)
        .lines()
        .next()
        .map(str::to_owned)
}

/// The attack on a server started with `mais`: (peak MB, RSS MB after the sockets closed,
/// sockets answered 431).
async fn medir(mais: &[&str]) -> (f64, f64, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("cabecalho.db").display());
    let srv = Server::start_with(&url, mais);
    let destino: SocketAddr = srv
        .base_url
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let pid = srv.pid();
    let inicio = status_mb(pid, "VmHWM:");
    let tarefas: Vec<_> = (0..SOCKETS)
        .map(|i| {
            let origem = IpAddr::V4(Ipv4Addr::new(
                127,
                0,
                0,
                2 + (i % usize::from(ENDERECOS)) as u8,
            ));
            tokio::spawn(socket(destino, origem))
        })
        .collect();
    let mut recusados = 0;
    for t in tarefas {
        if t.await
            .ok()
            .flatten()
            .is_some_and(|l| l.starts_with("HTTP/1.1 431"))
        {
            recusados += 1;
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pico = status_mb(pid, "VmHWM:");
    let depois = status_mb(pid, "VmRSS:");
    eprintln!(
        "head {mais:?}: RSS at start {inicio:.0} MB, peak {pico:.0} MB, after {depois:.0} MB, {recusados} x 431"
    );
    (pico, depois, recusados)
}

pub async fn run() -> Vec<Figura> {
    crate::attack::raise_open_file_limit(SOCKETS as u64 * 2 + 1_024);
    // The head bound alone: the bound of unfinished heads per address would refuse most of
    // these sockets before they send anything.
    let sem_pendentes = ["--pendentes-por-endereco", "0"];
    let (pico, depois, recusados) = medir(&sem_pendentes).await;
    let (pico_antes, depois_antes, _) = medir(&[
        sem_pendentes[0],
        sem_pendentes[1],
        "--cabecalho-maximo",
        HYPER_PADRAO,
    ])
    .await;
    vec![Figura {
        nome: "unfinished heads: server peak RSS, 1,000 sockets x 390 KB from 10 addresses",
        medido: format!(
            "peak {pico:.0} MB, {depois:.0} MB after, {recusados}/{SOCKETS} answered 431"
        ),
        referencia: format!(
            "hyper's default buffer: peak {pico_antes:.0} MB, {depois_antes:.0} MB after"
        ),
        ratio: pico / pico_antes.max(0.001),
        alvo: "peak < 64 MB",
        ok: pico < ALVO_MB && recusados == SOCKETS,
    }]
}
