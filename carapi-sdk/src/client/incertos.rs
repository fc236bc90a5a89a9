//! Settling lost answers against the free history: [`Client::settle_incertos`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::Client;
use crate::op::Op;
use crate::spend::{Answered200, Incerto, Window};
use crate::{ConsumoItem, HistoricoParams, Result, StatusConsulta};

/// What [`Client::settle_incertos`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Settlement {
    /// Lookups the history shows as charged: moved to [`Gasto::confirmado`](crate::Gasto::confirmado).
    pub cobradas: u32,
    /// Lookups the history shows no charge for: dropped from
    /// [`Gasto::incerto`](crate::Gasto::incerto).
    pub nao_cobradas: u32,
    /// Lookups left uncertain: lost less than the settle grace ago
    /// ([`ClientBuilder::settle_grace`](crate::ClientBuilder::settle_grace), 30 s by default,
    /// on this client's monotonic clock) and not (yet) in the history, which a request still in
    /// process at the server may reach later. Call again later.
    pub pendentes: u32,
}

impl Client {
    /// Settles the lookups whose answer never came back ([`Gasto::incerto`](crate::Gasto::incerto):
    /// lost, or the call's future dropped after sending) against the free history
    /// (`GET /v1/historico`, contract "Account endpoints").
    ///
    /// A lookup is matched by endpoint, key (CAR code or document) and the server's own time:
    /// its history item is recorded after the `Date` of the last answer this client had before
    /// sending it (RFC 9110 §6.6.1), and, once it can no longer be in process, before the
    /// `Date` of an answer to a later request. The client's wall clock is never compared with
    /// the server's, so a client clock that is off, or a test double's clock moved by hours,
    /// changes nothing. The 200s this client got for the same key are told apart (each history
    /// item accounts for one lookup). Found: moved to `confirmado` at the amount the history
    /// shows. Not found: dropped once the settle grace has passed since the loss, otherwise left
    /// uncertain ([`Settlement::pendentes`]).
    ///
    /// Costs one history request per distinct key (more when it has many charged lookups in
    /// the window).
    ///
    /// # Errors
    /// Those of [`Client::historico`]; nothing is settled for the keys not yet read.
    pub async fn settle_incertos(&self) -> Result<Settlement> {
        let (incertos, answered) = self.inner.spend.to_settle();
        let mut groups: BTreeMap<(&'static str, String), Vec<u64>> = BTreeMap::new();
        for i in &incertos {
            groups
                .entry((i.op.name(), i.chave.clone()))
                .or_default()
                .push(i.id);
        }
        let mut total = Settlement::default();
        for ids in groups.into_values() {
            let Some(first) = incertos.iter().find(|i| i.id == ids[0]) else {
                continue;
            };
            let (op, chave) = (first.op, first.chave.clone());
            let its_200s: Vec<Answered200> = answered
                .iter()
                .filter(|c| c.op == op && c.chave == chave)
                .cloned()
                .collect();
            let group: Vec<Incerto> = incertos
                .iter()
                .filter(|i| ids.contains(&i.id))
                .cloned()
                .collect();
            let items = self
                .charged_since(op, &chave, earliest_bound(&group, &its_200s))
                .await?;
            // The history's answers narrowed the bounds: read them again.
            let group = self.inner.spend.incertos(&ids);
            let r = classify(
                group,
                &its_200s,
                &items,
                Instant::now(),
                self.inner.spend.grace(),
            );
            self.inner.spend.settle(&r.charged, &r.not_charged);
            total.cobradas += r.charged.len() as u32;
            total.nao_cobradas += r.not_charged.len() as u32;
            total.pendentes += r.pendentes;
        }
        Ok(total)
    }

    /// The charged history items of `op` and `chave` recorded at or after `not_before` (all of them
    /// when `None`), newest first as the history lists them.
    async fn charged_since(
        &self,
        op: Op,
        chave: &str,
        not_before: Option<DateTime<Utc>>,
    ) -> Result<Vec<ConsumoItem>> {
        let params = HistoricoParams {
            busca: Some(chave.to_owned()),
            endpoint: op.consulta(),
            status: Some(StatusConsulta::Sucesso),
            ..HistoricoParams::default()
        };
        let mut items = self.historico_stream(params);
        let mut charged = Vec::new();
        while let Some(i) = items.next().await {
            let i = i?;
            if not_before.is_some_and(|d| i.data < d) {
                break;
            }
            if i.cobrado && i.chave_consulta.as_deref() == Some(chave) {
                charged.push(i);
            }
        }
        Ok(charged)
    }
}

/// How far back the history is read for a group: the earliest lower bound of its uncertain
/// lookups and of the 200s whose windows reach theirs (`None`: unbounded).
fn earliest_bound(group: &[Incerto], answered: &[Answered200]) -> Option<DateTime<Utc>> {
    let mut not_before: Option<DateTime<Utc>> = None;
    for j in group
        .iter()
        .map(|i| &i.window)
        .chain(answered.iter().map(|c| &c.window))
    {
        not_before = Some(match (not_before, j.not_before) {
            (_, None) => return None,
            (None, Some(d)) => d,
            (Some(a), Some(d)) => a.min(d),
        });
    }
    not_before
}

/// How the lookups of one endpoint and key were settled.
#[derive(Debug, Default)]
pub(crate) struct Classification {
    pub(crate) charged: Vec<(u64, Decimal)>,
    pub(crate) not_charged: Vec<u64>,
    pub(crate) pendentes: u32,
}

/// Who may have caused a history item: a 200 this client got, or an uncertain lookup (by index).
struct Candidate<'a> {
    window: &'a Window,
    incerto: Option<usize>,
}

/// Matches the uncertain lookups of one endpoint and key, and the 200s this client got for it,
/// with the charged history items of that key (in any order): oldest item first, each goes to
/// the unmatched candidate whose window holds it and closes first (a known 200 before an
/// uncertain lookup, then the earliest sent). An uncertain lookup that gets an item was charged
/// that item's amount; one that gets none was not charged once `grace` has passed since it
/// was lost (at `now`, monotonic), and is pending before.
pub(crate) fn classify(
    group: Vec<Incerto>,
    answered: &[Answered200],
    items: &[ConsumoItem],
    now: Instant,
    grace: Duration,
) -> Classification {
    let mut items: Vec<&ConsumoItem> = items.iter().collect();
    items.sort_by_key(|i| i.data);
    let mut candidates: Vec<Candidate<'_>> = answered
        .iter()
        .map(|c| Candidate {
            window: &c.window,
            incerto: None,
        })
        .chain(group.iter().enumerate().map(|(k, i)| Candidate {
            window: &i.window,
            incerto: Some(k),
        }))
        .collect();
    candidates.sort_by_key(|c| {
        (
            c.window.not_after.unwrap_or(DateTime::<Utc>::MAX_UTC),
            c.incerto.is_some(),
            c.window.sent,
        )
    });
    let mut used = vec![false; candidates.len()];
    let mut amount: Vec<Option<Decimal>> = vec![None; group.len()];
    for item in items {
        let data = item.data.with_timezone(&Utc);
        let chosen =
            (0..candidates.len()).find(|&k| !used[k] && candidates[k].window.contains(data));
        if let Some(k) = chosen {
            used[k] = true;
            if let Some(i) = candidates[k].incerto {
                amount[i] = Some(item.valor_cobrado);
            }
        }
    }
    let mut c = Classification::default();
    for (inc, amount) in group.iter().zip(amount) {
        match amount {
            Some(v) => c.charged.push((inc.id, v)),
            None if inc
                .window
                .ended
                .checked_add(grace)
                .is_some_and(|t| now >= t) =>
            {
                c.not_charged.push(inc.id);
            }
            None => c.pendentes += 1,
        }
    }
    c
}

#[cfg(test)]
mod tests;
