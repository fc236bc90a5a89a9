//! Settling lost answers against the free history: [`Client::settle_uncertain`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::Client;
use crate::op::Op;
use crate::spend::{Conhecida, Uncertain, Window};
use crate::{ConsumoItem, HistoricoParams, Result, StatusConsulta};

/// What [`Client::settle_uncertain`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Settlement {
    /// Lookups the history shows as charged: moved to [`Gasto::confirmado`](crate::Gasto::confirmado).
    pub cobradas: u32,
    /// Lookups the history shows no charge for: dropped from [`Gasto::uncertain`](crate::Gasto::incerto).
    pub nao_cobradas: u32,
    /// Lookups left uncertain: lost less than the settle grace ago
    /// ([`ClientBuilder::settle_grace`](crate::ClientBuilder::settle_grace), 30 s by default,
    /// on this client's monotonic clock) and not (yet) in the history, which a request still in
    /// process at the server may reach later. Call again later.
    pub pendentes: u32,
}

impl Client {
    /// Settles the lookups whose answer never came back ([`Gasto::uncertain`](crate::Gasto::incerto):
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
    pub async fn settle_uncertain(&self) -> Result<Settlement> {
        let (uncertain, conhecidas) = self.inner.spend.to_settle();
        let mut grupos: BTreeMap<(&'static str, String), Vec<u64>> = BTreeMap::new();
        for i in &uncertain {
            grupos
                .entry((i.op.name(), i.chave.clone()))
                .or_default()
                .push(i.id);
        }
        let mut total = Settlement::default();
        for ids in grupos.into_values() {
            let Some(primeiro) = uncertain.iter().find(|i| i.id == ids[0]) else {
                continue;
            };
            let (op, chave) = (primeiro.op, primeiro.chave.clone());
            let suas: Vec<Conhecida> = conhecidas
                .iter()
                .filter(|c| c.op == op && c.chave == chave)
                .cloned()
                .collect();
            let grupo: Vec<Uncertain> = uncertain
                .iter()
                .filter(|i| ids.contains(&i.id))
                .cloned()
                .collect();
            let itens = self
                .cobrados_desde(op, &chave, desde(&grupo, &suas))
                .await?;
            // The history's answers narrowed the bounds: read them again.
            let grupo = self.inner.spend.uncertain(&ids);
            let r = classificar(
                grupo,
                &suas,
                &itens,
                Instant::now(),
                self.inner.spend.grace(),
            );
            self.inner.spend.settle(&r.cobrados, &r.nao_cobrados);
            total.cobradas += r.cobrados.len() as u32;
            total.nao_cobradas += r.nao_cobrados.len() as u32;
            total.pendentes += r.pendentes;
        }
        Ok(total)
    }

    /// The charged history items of `op` and `chave` recorded at or after `desde` (all of them
    /// when `None`), newest first as the history lists them.
    async fn cobrados_desde(
        &self,
        op: Op,
        chave: &str,
        desde: Option<DateTime<Utc>>,
    ) -> Result<Vec<ConsumoItem>> {
        let params = HistoricoParams {
            busca: Some(chave.to_owned()),
            endpoint: op.endpoint_consulta(),
            status: Some(StatusConsulta::Sucesso),
            ..HistoricoParams::default()
        };
        let mut itens = self.historico_stream(params);
        let mut cobrados = Vec::new();
        while let Some(i) = itens.next().await {
            let i = i?;
            if desde.is_some_and(|d| i.data < d) {
                break;
            }
            if i.cobrado && i.chave_consulta.as_deref() == Some(chave) {
                cobrados.push(i);
            }
        }
        Ok(cobrados)
    }
}

/// How far back the history is read for a group: the earliest lower bound of its uncertain
/// lookups and of the 200s whose windows reach theirs (`None`: unbounded).
fn desde(grupo: &[Uncertain], conhecidas: &[Conhecida]) -> Option<DateTime<Utc>> {
    let mut desde: Option<DateTime<Utc>> = None;
    for j in grupo
        .iter()
        .map(|i| &i.window)
        .chain(conhecidas.iter().map(|c| &c.window))
    {
        desde = Some(match (desde, j.desde) {
            (_, None) => return None,
            (None, Some(d)) => d,
            (Some(a), Some(d)) => a.min(d),
        });
    }
    desde
}

/// How the lookups of one endpoint and key were settled.
#[derive(Debug, Default)]
pub(crate) struct Classificacao {
    pub(crate) cobrados: Vec<(u64, Decimal)>,
    pub(crate) nao_cobrados: Vec<u64>,
    pub(crate) pendentes: u32,
}

/// Who may have caused a history item: a 200 this client got, or an uncertain lookup (by index).
struct Candidato<'a> {
    window: &'a Window,
    uncertain: Option<usize>,
}

/// Matches the uncertain lookups of one endpoint and key, and the 200s this client got for it,
/// with the charged history items of that key (in any order): oldest item first, each goes to
/// the unmatched candidate whose window holds it and closes first (a known 200 before an
/// uncertain lookup, then the earliest sent). An uncertain lookup that gets an item was charged
/// that item's amount; one that gets none was not charged once `grace` has passed since it
/// was lost (at `now`, monotonic), and is pending before.
pub(crate) fn classificar(
    grupo: Vec<Uncertain>,
    conhecidas: &[Conhecida],
    itens: &[ConsumoItem],
    now: Instant,
    grace: Duration,
) -> Classificacao {
    let mut itens: Vec<&ConsumoItem> = itens.iter().collect();
    itens.sort_by_key(|i| i.data);
    let mut candidatos: Vec<Candidato<'_>> = conhecidas
        .iter()
        .map(|c| Candidato {
            window: &c.window,
            uncertain: None,
        })
        .chain(grupo.iter().enumerate().map(|(k, i)| Candidato {
            window: &i.window,
            uncertain: Some(k),
        }))
        .collect();
    candidatos.sort_by_key(|c| {
        (
            c.window.ate.unwrap_or(DateTime::<Utc>::MAX_UTC),
            c.uncertain.is_some(),
            c.window.enviado,
        )
    });
    let mut usado = vec![false; candidatos.len()];
    let mut valor: Vec<Option<Decimal>> = vec![None; grupo.len()];
    for item in itens {
        let data = item.data.with_timezone(&Utc);
        let escolhido =
            (0..candidatos.len()).find(|&k| !usado[k] && candidatos[k].window.contem(data));
        if let Some(k) = escolhido {
            usado[k] = true;
            if let Some(i) = candidatos[k].uncertain {
                valor[i] = Some(item.valor_cobrado);
            }
        }
    }
    let mut c = Classificacao::default();
    for (inc, valor) in grupo.iter().zip(valor) {
        match valor {
            Some(v) => c.cobrados.push((inc.id, v)),
            None if inc.window.fim.checked_add(grace).is_some_and(|t| now >= t) => {
                c.nao_cobrados.push(inc.id);
            }
            None => c.pendentes += 1,
        }
    }
    c
}

#[cfg(test)]
mod tests;
