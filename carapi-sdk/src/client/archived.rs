//! Lookups through the archive of paid answers (cargo feature `archive`): reuse while fresh,
//! one request per key at a time in this process, every bought 200 appended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use chrono::Utc;
use serde::de::DeserializeOwned;

use super::http::{Req, decode};
use super::{Client, Op};
use crate::archive::{Archive, ArchivePolicy, Archived, Entry, Freshness, NewEntry, Origin};
use crate::{
    CarDadosBasicos, CarDadosCompletos, CarResponse, CodigoCar, CpfCnpj, Error,
    ProprietarioResponse, Recibo, Result,
};

/// One in-flight lookup of a key: held by its buyer, waited on by the others.
type Flight = Arc<tokio::sync::Mutex<()>>;

/// The archive of a client, its policy, and the in-flight lookups.
pub(crate) struct ArchiveSetup {
    pub(crate) archive: Archive,
    pub(crate) policy: ArchivePolicy,
    /// Fingerprint of the client's API key.
    pub(crate) account: String,
    flights: Mutex<HashMap<(&'static str, String), Flight>>,
}

impl ArchiveSetup {
    pub(crate) fn new(archive: Archive, policy: ArchivePolicy, api_key: &str) -> Result<Self> {
        if policy.purpose.trim().is_empty() {
            return Err(Error::Config(
                "acervo sem finalidade: declare a finalidade das consultas (ArchivePolicy::purpose)"
                    .into(),
            ));
        }
        Ok(Self {
            archive,
            policy,
            account: crate::archive::fingerprint(api_key),
            flights: Mutex::new(HashMap::new()),
        })
    }

    fn flight(&self, op: Op, chave: &str) -> Flight {
        let mut map = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        map.entry((op.name(), chave.to_owned()))
            .or_default()
            .clone()
    }

    fn land(&self, op: Op, chave: &str) {
        let mut map = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (op.name(), chave.to_owned());
        if map.get(&key).is_some_and(|m| Arc::strong_count(m) == 1) {
            map.remove(&key);
        }
    }
}

impl std::fmt::Debug for ArchiveSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveSetup")
            .field("archive", &self.archive)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The archive this client keeps its paid answers in, if any
    /// ([`ClientBuilder::archive`](crate::ClientBuilder::archive)).
    #[must_use]
    pub fn archive(&self) -> Option<&Archive> {
        self.inner.archive.as_ref().map(|s| &s.archive)
    }

    /// [`Client::car`] through the archive, saying where the answer came from.
    ///
    /// # Errors
    /// As [`Client::car`]; [`Error::Archive`] when the archive cannot be read (nothing sent);
    /// [`Error::Config`] when the client has no archive.
    pub async fn car_archived(
        &self,
        codigo: impl AsRef<str>,
    ) -> Result<Archived<CarResponse<CarDadosBasicos>>> {
        let req = self.car_req(&CodigoCar::parse(codigo)?)?;
        self.archived_json(req).await
    }

    /// [`Client::car_completo`] through the archive, saying where the answer came from.
    ///
    /// # Errors
    /// As [`Client::car_archived`].
    pub async fn car_completo_archived(
        &self,
        codigo: impl AsRef<str>,
    ) -> Result<Archived<CarResponse<CarDadosCompletos>>> {
        let req = self.car_completo_req(&CodigoCar::parse(codigo)?)?;
        self.archived_json(req).await
    }

    /// [`Client::proprietario`] through the archive, saying where the answer came from.
    ///
    /// # Errors
    /// As [`Client::car_archived`], with the errors of [`Client::proprietario`].
    pub async fn proprietario_archived(
        &self,
        documento: impl AsRef<str>,
    ) -> Result<Archived<ProprietarioResponse>> {
        let req = self.proprietario_req(&CpfCnpj::parse(documento)?)?;
        self.archived_json(req).await
    }

    /// [`Client::recibo`] through the archive, saying where the PDF came from.
    ///
    /// # Errors
    /// As [`Client::car_archived`], with the errors of [`Client::recibo`].
    pub async fn recibo_archived(&self, codigo: impl AsRef<str>) -> Result<Archived<Recibo>> {
        let codigo = CodigoCar::parse(codigo)?;
        let req = self.recibo_req(&codigo)?;
        let filename = format!("{}.pdf", codigo.as_str());
        Ok(self
            .archived_bytes(req, Commit::Wait)
            .await?
            .map(|bytes| Recibo { filename, bytes }))
    }

    /// The archive's setup when `req` is a charged lookup to keep (not a sandbox value).
    pub(crate) fn archive_for(&self, req: &Req) -> Option<&ArchiveSetup> {
        self.inner.archive.as_ref().filter(|_| req.chargeable())
    }

    /// A JSON lookup through the archive.
    async fn archived_json<T: DeserializeOwned>(&self, req: Req) -> Result<Archived<T>> {
        let op = req.op;
        let a = self.archived_bytes(req, Commit::Wait).await?;
        let value = decode(op, 200, &a.value)?;
        Ok(a.map(|_| value))
    }

    /// The body of a plain lookup through the archive: its append left behind
    /// ([`Commit::Behind`]).
    pub(crate) async fn lookup_bytes_archived(&self, req: Req) -> Result<Bytes> {
        Ok(self.archived_bytes(req, Commit::Behind).await?.value)
    }

    /// The body of a lookup: from the archive when fresh, else bought and appended (the
    /// lookup waiting for the append's commit or not, as `commit` says). A sandbox value is
    /// sent and not archived.
    async fn archived_bytes(&self, req: Req, commit: Commit) -> Result<Archived<Bytes>> {
        let Some(setup) = self.archive_for(&req) else {
            if self.inner.archive.is_none() {
                return Err(Error::Config(
                    "cliente sem acervo: configure ClientBuilder::archive".into(),
                ));
            }
            let op = req.op;
            let (_, _, bytes) = self
                .execute_charged(req, true)
                .await?
                .into_parts(op, false)
                .await?;
            return Ok(from_api(bytes, Utc::now()));
        };
        let Freshness::MaxAge(max_age) = setup.policy.freshness else {
            let bought = self.buy(setup, req).await?;
            return Ok(self.keep(setup, bought, Sink::Archive(commit)).await);
        };
        let (op, chave) = (req.op, req.chave.clone());
        let flight = setup.flight(op, &chave);
        let guard = flight.lock().await;
        let result = self.fresh_or_buy(setup, req, max_age, commit).await;
        drop(guard);
        drop(flight);
        setup.land(op, &chave);
        result
    }

    /// The archived answer when fresh, else bought and kept. On a PostgreSQL archive the
    /// purchase is claimed across processes: a process that finds the key claimed waits for
    /// the buyer, then reads the archive again; a buyer that fails or is cancelled releases
    /// the claim unappended, and the waiter buys (or reports its own error).
    async fn fresh_or_buy(
        &self,
        setup: &ArchiveSetup,
        req: Req,
        max_age: std::time::Duration,
        commit: Commit,
    ) -> Result<Archived<Bytes>> {
        let (op, chave) = (req.op, req.chave.clone());
        // A SQLite archive's read is an index lookup of a few microseconds on its own
        // connection, which no writer blocks: it runs here, as a round trip through the
        // blocking pool cost more than the read, unless the key's append is still queued (the
        // read commits it first). A PostgreSQL read goes over the network.
        let found = if setup.archive.is_shared() || setup.archive.has_pending(op.name(), &chave) {
            let (archive, chave) = (setup.archive.clone(), chave.clone());
            blocking(move || archive.latest(op.name(), &chave)).await??
        } else {
            setup.archive.latest(op.name(), &chave)?
        };
        if let Some(a) = fresh(found, max_age) {
            return Ok(a);
        }
        #[cfg(feature = "archive-postgres")]
        if let Some(pg) = setup.archive.postgres() {
            let claim = pg.claim(op.name(), &chave).await?;
            if let Some(a) = fresh(claim.latest(op.name(), &chave).await?, max_age) {
                return Ok(a);
            }
            let bought = self.buy(setup, req).await?;
            return Ok(self.keep(setup, bought, Sink::Claim(claim)).await);
        }
        let bought = self.buy(setup, req).await?;
        Ok(self.keep(setup, bought, Sink::Archive(commit)).await)
    }

    /// Buys `req`: the body and the entry to append.
    async fn buy(&self, setup: &ArchiveSetup, req: Req) -> Result<(Bytes, NewEntry)> {
        let op = req.op;
        let chave = req.chave.clone();
        let (_, _, bytes) = self
            .execute_charged(req, true)
            .await?
            .into_parts(op, true)
            .await?;
        let data_consulta = (op != Op::Recibo)
            .then(|| serde_json::from_slice::<DataConsulta>(&bytes).ok())
            .flatten()
            .and_then(|d| d.data_consulta);
        let new = NewEntry {
            operation: op.name(),
            chave,
            body: bytes.to_vec(),
            preco: self.precos_conhecidos().map(|p| op.preco(&p)),
            data_consulta,
            bought_at: Utc::now(),
            account: setup.account.clone(),
            purpose: setup.policy.purpose.clone(),
            legal_basis: setup.policy.legal_basis,
            documentos: Vec::new(),
        };
        Ok((bytes, new))
    }

    /// Appends a bought answer; one that cannot be archived is still returned, with a warning
    /// (also a WARN event). An answer left behind ([`Commit::Behind`]) is returned at once,
    /// with no sequence number; its failure is the WARN event.
    async fn keep(
        &self,
        setup: &ArchiveSetup,
        (bytes, new): (Bytes, NewEntry),
        sink: Sink,
    ) -> Archived<Bytes> {
        let (op, bought_at) = (new.operation, new.bought_at);
        let new = match sink {
            Sink::Archive(Commit::Behind) => match setup.archive.append_behind(new) {
                None => return from_api(bytes, bought_at),
                Some(new) => new,
            },
            _ => new,
        };
        let appended = match sink {
            Sink::Archive(_) => {
                let archive = setup.archive.clone();
                blocking(move || archive.append(new.with_documents()))
                    .await
                    .map_err(|e| e.to_string())
            }
            #[cfg(feature = "archive-postgres")]
            Sink::Claim(claim) => match blocking(move || new.with_documents()).await {
                Ok(new) => Ok(claim.append(new).await),
                Err(e) => Err(e.to_string()),
            },
        };
        let (seq, bought_at, warning) = match appended {
            Ok(Ok(e)) => (Some(e.seq), e.bought_at, None),
            Ok(Err(e)) => (None, bought_at, Some(super::http::cadeia(&e))),
            Err(e) => (None, bought_at, Some(e)),
        };
        if let Some(w) = &warning {
            tracing::warn!(target: "carapi_sdk::archive", operation = op, error = %w, "resposta paga não arquivada");
        }
        Archived {
            seq,
            warning,
            ..from_api(bytes, bought_at)
        }
    }
}

/// An answer the API gave, bought at `bought_at`, with no entry number and no warning.
fn from_api(value: Bytes, bought_at: chrono::DateTime<Utc>) -> Archived<Bytes> {
    Archived {
        value,
        origin: Origin::Api,
        bought_at,
        seq: None,
        warning: None,
    }
}

/// Whether a lookup returns once its bought answer is committed to a SQLite archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Commit {
    /// It waits: the `*_archived` lookups, which give the entry's number or the reason it was
    /// not archived.
    Wait,
    /// It returns at once, the answer left to the archive's committer (the plain lookups,
    /// which give neither): a batch does not wait for each commit. The answer is committed
    /// within the next group; a read of the archive in this process commits it first.
    Behind,
}

/// Where a bought answer is appended.
enum Sink {
    /// The archive (its own transaction, or a group's).
    Archive(Commit),
    /// The claim's transaction, whose commit releases the claim.
    #[cfg(feature = "archive-postgres")]
    Claim(crate::archive::Claim),
}

/// The archived answer of `found` when younger than `max_age`.
fn fresh(found: Option<(Entry, Vec<u8>)>, max_age: std::time::Duration) -> Option<Archived<Bytes>> {
    let (entry, body) = found?;
    Archive::is_fresh(&entry, Freshness::MaxAge(max_age)).then(|| Archived {
        value: Bytes::from(body),
        origin: Origin::Archive,
        bought_at: entry.bought_at,
        seq: Some(entry.seq),
        warning: None,
    })
}

/// `dataConsulta` of a JSON answer, as received.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DataConsulta {
    #[serde(default)]
    data_consulta: Option<String>,
}

/// Runs `f` on tokio's blocking pool (SQLite calls block).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Config(format!("tarefa do acervo interrompida: {e}")))
}
