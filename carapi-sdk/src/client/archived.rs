//! Lookups through the archive of paid answers (cargo feature `archive`): reuse while fresh
//! (each served answer checked against its hashes), one purchase per key in this process and
//! across processes, every bought 200 appended by the purchase's task before the key is let go.

use bytes::Bytes;
use chrono::{SubsecRound, Utc};
use tracing::Instrument;

use super::http::{Attempts, Req, Slot, call_span};
use super::purchase::ReplyTo;
use super::{Client, Op};
use crate::archive::{
    Archive, ArchiveError, ArchivePolicy, Claim, Commit, Flight, Freshness, Kept, NewEntry,
};
use crate::spend::Reservation;
use crate::{Answer, EndpointConsulta, Error, Origin, Result};

/// The archive of a client, its policy and its account.
pub(crate) struct ArchiveSetup {
    pub(crate) archive: Archive,
    pub(crate) policy: ArchivePolicy,
    /// Fingerprint of the client's API key.
    pub(crate) conta: String,
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
            archive: archive.for_this_process()?,
            policy,
            conta: crate::archive::fingerprint(api_key),
        })
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

/// A purchase ready to go: everything its task will own.
struct Purchase {
    req: Req,
    reservation: Reservation,
    read_prices: bool,
    slot: Slot,
    /// This process's flight of the key (none with [`Freshness::Never`]).
    flight: Option<Flight>,
    /// The key held across processes (none with [`Freshness::Never`]).
    claim: Option<Box<dyn Claim>>,
}

/// Where a lookup through the archive stands once the caller's part is done.
enum Step {
    /// Answered from the archive.
    Served(Answer<Bytes>),
    /// To buy.
    Buy(Box<Purchase>),
}

impl Client {
    /// The archive this client keeps its paid answers in, if any
    /// ([`ClientBuilder::archive`](crate::ClientBuilder::archive)).
    #[must_use]
    pub fn archive(&self) -> Option<&Archive> {
        self.inner.archive.as_ref().map(|s| &s.archive)
    }

    /// A handle on the same client whose lookups use `freshness` instead of the archive
    /// policy's: [`Freshness::Never`] buys again what the archive holds (and keeps the new
    /// answer: the explicit new purchase of an answer the archive refused as altered), a
    /// longer [`Freshness::MaxAge`] accepts older answers.
    #[must_use]
    pub fn with_freshness(&self, freshness: Freshness) -> Client {
        let mut c = self.clone();
        c.call.freshness = Some(freshness);
        c
    }

    /// A handle on the same client whose lookups return when `commit` says: once the bought
    /// answer is committed ([`Commit::Wait`], the default: its [`Answer::seq`]), or as soon as
    /// it arrives ([`Commit::Behind`]: no `seq`; the commit goes on in the purchase's task, a
    /// failure is a WARN event, and the key stays held until it commits).
    #[must_use]
    pub fn with_commit(&self, commit: Commit) -> Client {
        let mut c = self.clone();
        c.call.commit = commit;
        c
    }

    /// A handle on the same client whose owner lookups go out even for a document purged from
    /// the archive at its owner's request (by default refused before anything is sent:
    /// [`ArchiveErrorKind::Purged`](crate::archive::ArchiveErrorKind::Purged)): for a new
    /// processing with its own legal basis. The answer is kept as any other.
    #[must_use]
    pub fn with_purged_allowed(&self) -> Client {
        let mut c = self.clone();
        c.call.purged_allowed = true;
        c
    }

    /// The archive's setup when `req` is a charged lookup to keep (not a sandbox value).
    pub(crate) fn archive_for(&self, req: &Req) -> Option<&ArchiveSetup> {
        self.inner.archive.as_ref().filter(|_| req.chargeable())
    }

    /// The body of a lookup: from the archive when fresh, else bought in a task that appends
    /// it before letting the key go (see `purchase.rs`). The caller's part (reads, the key's
    /// flight and claim, the spend reservation, the limiter's permit) sends nothing when
    /// dropped or cancelled.
    pub(crate) async fn through_archive(
        &self,
        setup: &ArchiveSetup,
        req: Req,
    ) -> Result<Answer<Bytes>> {
        let op = req.op;
        let step = self.cancellable(op, self.prepare(setup, req)).await?;
        let purchase = match step {
            Step::Served(a) => return Ok(a),
            Step::Buy(p) => *p,
        };
        let span = call_span(&purchase.req);
        let keep = Keep {
            archive: setup.archive.clone(),
            purpose: setup.policy.purpose.clone(),
            legal_basis: setup.policy.legal_basis,
            conta: setup.conta.clone(),
            commit: self.call.commit,
        };
        let this = self.clone();
        self.spawn_purchase(op, move |left, reply| {
            this.buy_and_keep(purchase, keep, left, reply)
                .instrument(span)
        })
        .await
    }

    /// The caller's part of a lookup through the archive.
    async fn prepare(&self, setup: &ArchiveSetup, req: Req) -> Result<Step> {
        let archive = &setup.archive;
        let consulta = consulta_of(req.op);
        let chave = req.chave.clone();
        if consulta == EndpointConsulta::Proprietario
            && !self.call.purged_allowed
            && let Some(at) = archive.purged_at(&chave).await?
        {
            return Err(ArchiveError::purged(at).into());
        }
        let max_age = match self.call.freshness.unwrap_or(setup.policy.freshness) {
            Freshness::MaxAge(max_age) => Some(max_age),
            Freshness::Never => None,
        };
        let mut flight = None;
        if let Some(max_age) = max_age {
            if let Some(a) = served(archive.latest(consulta, &chave).await?, max_age)? {
                return Ok(Step::Served(a));
            }
            flight = Some(archive.flight(consulta, &chave).await);
            if let Some(a) = served(archive.latest(consulta, &chave).await?, max_age)? {
                return Ok(Step::Served(a));
            }
        }
        let (reservation, read_prices) = self.reserve_consulta(req.op, false, &chave).await?;
        // The limiter's place before the claim: no pooled connection waits for the limiter.
        let slot = self.slot(&req).await?;
        let mut claim = None;
        if let Some(max_age) = max_age {
            let mut held = archive.claim(consulta, &chave).await?;
            if let Some(a) = served(held.latest(consulta, &chave).await?, max_age)? {
                return Ok(Step::Served(a));
            }
            claim = Some(held);
        }
        Ok(Step::Buy(Box::new(Purchase {
            req,
            reservation,
            read_prices,
            slot,
            flight,
            claim,
        })))
    }

    /// The purchase's task: buys, answers its caller (before or after the commit, as
    /// `keep.commit` says), appends, and only then lets the key go.
    async fn buy_and_keep(
        self,
        purchase: Purchase,
        keep: Keep,
        left: tokio_util::sync::CancellationToken,
        reply: ReplyTo<Answer<Bytes>>,
    ) {
        let Purchase {
            req,
            reservation,
            read_prices,
            slot,
            flight,
            claim,
        } = purchase;
        let (op, chave) = (req.op, req.chave.clone());
        let call = Attempts {
            req,
            buffer: true,
            reservation,
            slot: Some(slot),
            left: Some(left),
        };
        let bytes = match self.buy(call, read_prices).await {
            Ok(reply) => reply.into_parts(op, true).await.map(|(_, _, b)| b),
            Err(e) => Err(e),
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let new = self.new_entry(&keep, op, chave, &bytes);
        let mut answer = Answer::bought(bytes, new.bought_at);
        // Queued first (a read of this process waits for what is queued), then answered.
        let appended = match claim {
            Some(claim) => claim.append(new),
            None => keep.archive.append(new),
        };
        let mut reply = Some(reply);
        if keep.commit == Commit::Behind
            && let Some(r) = reply.take()
        {
            let _ = r.send(Ok(answer.clone()));
        }
        let appended = appended.await;
        drop(flight);
        match appended {
            Ok(e) => {
                answer.seq = Some(e.seq);
                answer.bought_at = e.bought_at;
            }
            Err(e) => {
                let w = crate::error_chain(&e);
                tracing::warn!(target: "carapi_sdk::archive", operation = op.name(), error = %w, "resposta paga não arquivada");
                answer.warning = Some(w);
            }
        }
        // After the append: the claim (and, on PostgreSQL, its pooled connection) is released
        // first, so this read never waits for a connection a purchase holds.
        let purge = keep
            .archive
            .purge_warning(consulta_of(op), &answer.value)
            .await
            .unwrap_or_else(|e| {
                Some(format!(
                    "não foi possível conferir os expurgos do acervo: {e}"
                ))
            });
        if let Some(w) = purge {
            if reply.is_none() {
                tracing::warn!(target: "carapi_sdk::archive", operation = op.name(), "{w}");
            }
            answer.warning = Some(answer.warning.map_or(w.clone(), |a| format!("{a}; {w}")));
        }
        if let Some(r) = reply {
            let _ = r.send(Ok(answer));
        }
    }

    /// The entry to append for a bought `body`.
    fn new_entry(&self, keep: &Keep, op: Op, chave: String, body: &Bytes) -> NewEntry {
        let consulta = consulta_of(op);
        let data_consulta = (consulta != EndpointConsulta::Recibo)
            .then(|| serde_json::from_slice::<DataConsulta>(body).ok())
            .flatten()
            .and_then(|d| d.data_consulta);
        NewEntry {
            consulta,
            chave,
            body: body.to_vec(),
            preco: self.known_precos().map(|p| op.preco(&p)),
            data_consulta,
            // The archive keeps microseconds: the answer says the instant the entry says.
            bought_at: Utc::now().trunc_subsecs(6),
            conta: keep.conta.clone(),
            purpose: keep.purpose.clone(),
            legal_basis: keep.legal_basis,
            documentos: Vec::new(),
        }
    }
}

/// What a purchase's task needs to keep its answer.
struct Keep {
    archive: Archive,
    purpose: String,
    legal_basis: crate::archive::LegalBasis,
    conta: String,
    commit: Commit,
}

/// The lookup of a charged operation.
fn consulta_of(op: Op) -> EndpointConsulta {
    op.consulta().unwrap_or(EndpointConsulta::CarBasico)
}

/// The archived answer of `found` when younger than `max_age`, once checked against its
/// hashes (an altered entry is an error naming it, never served nor silently re-bought).
fn served(found: Kept, max_age: std::time::Duration) -> Result<Option<Answer<Bytes>>> {
    let Some((entry, body)) = found else {
        return Ok(None);
    };
    if !Archive::is_fresh(&entry, Freshness::MaxAge(max_age)) {
        return Ok(None);
    }
    Archive::check_entry(&entry, &body)?;
    Ok(Some(Answer {
        value: Bytes::from(body),
        origin: Origin::Archive,
        bought_at: entry.bought_at,
        seq: Some(entry.seq),
        warning: None,
    }))
}

/// `dataConsulta` of a JSON answer, as received.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DataConsulta {
    #[serde(default)]
    data_consulta: Option<String>,
}
