//! Settling lost answers against the free history: [`Client::settle_uncertain`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::Client;
use crate::spend::{Incerto, TOLERANCIA};
use crate::{ConsumoItem, HistoricoParams, Result, StatusConsulta};

/// What [`Client::settle_uncertain`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Settlement {
    /// Lookups the history shows as charged: moved to [`Gasto::confirmado`](crate::Gasto::confirmado).
    pub cobradas: u32,
    /// Lookups the history shows no charge for: dropped from [`Gasto::incerto`](crate::Gasto::incerto).
    pub nao_cobradas: u32,
    /// Lookups left uncertain: lost less than 30 s ago and not (yet) in the history, which a
    /// request still being processed by the server may reach later. Call again later.
    pub pendentes: u32,
}

/// Former name of [`Settlement`].
#[deprecated(
    since = "0.1.0",
    note = "renamed `Settlement` (English for the client's machinery)"
)]
pub type Resolucao = Settlement;

impl Client {
    /// Settles the lookups whose answer was lost after sending ([`Gasto::incerto`](crate::Gasto::incerto))
    /// against the free history (`GET /v1/historico`, contract "Account endpoints"): a lookup
    /// is matched by endpoint, key (CAR code or document) and time (from 30 s before it was sent
    /// to 30 s after its answer was lost, for clock differences). Found: moved to
    /// `confirmado` at the amount the history shows. Not found: dropped when lost more than
    /// 30 s ago, otherwise left uncertain ([`Settlement::pendentes`]).
    ///
    /// A 200 of the same key this client got within that window is told apart (each history
    /// item accounts for one lookup). Costs one history request per distinct key (more when it
    /// has many charged lookups in the window).
    ///
    /// # Errors
    /// Those of [`Client::historico`]; nothing is settled for the keys not yet read.
    pub async fn settle_uncertain(&self) -> Result<Settlement> {
        let mut grupos: BTreeMap<(&'static str, String), Vec<Incerto>> = BTreeMap::new();
        for i in self.inner.spend.incertos() {
            grupos
                .entry((i.op.name(), i.chave.clone()))
                .or_default()
                .push(i);
        }
        let mut total = Settlement::default();
        for grupo in grupos.into_values() {
            let itens = self.cobrados_desde(&grupo).await?;
            let r = classificar(grupo, &itens, Utc::now());
            self.inner.spend.assentar(&r.cobrados, &r.nao_cobrados);
            total.cobradas += r.cobrados.len() as u32;
            total.nao_cobradas += r.nao_cobrados.len() as u32;
            total.pendentes += r.pendentes;
        }
        Ok(total)
    }

    /// Former name of [`Client::settle_uncertain`].
    ///
    /// # Errors
    /// Those of [`Client::settle_uncertain`].
    #[deprecated(
        since = "0.1.0",
        note = "renamed `Client::settle_uncertain` (English for the client's machinery)"
    )]
    pub async fn resolver_incertos(&self) -> Result<Settlement> {
        self.settle_uncertain().await
    }

    /// The charged history items of the group's endpoint and key since the earliest window.
    async fn cobrados_desde(&self, grupo: &[Incerto]) -> Result<Vec<ConsumoItem>> {
        let primeiro = &grupo[0];
        let desde = grupo
            .iter()
            .map(|i| i.enviado)
            .min()
            .unwrap_or(primeiro.enviado)
            - TOLERANCIA;
        let params = HistoricoParams {
            busca: Some(primeiro.chave.clone()),
            endpoint: primeiro.op.endpoint_consulta(),
            status: Some(StatusConsulta::Sucesso),
            ..HistoricoParams::default()
        };
        let mut itens = self.historico_stream(params);
        let mut cobrados = Vec::new();
        while let Some(i) = itens.next().await {
            let i = i?;
            if i.data < desde {
                break;
            }
            if i.cobrado && i.chave_consulta.as_deref() == Some(primeiro.chave.as_str()) {
                cobrados.push(i);
            }
        }
        Ok(cobrados)
    }
}

/// How the lookups of one endpoint and key were settled.
#[derive(Debug, Default)]
pub(crate) struct Classificacao {
    pub(crate) cobrados: Vec<(u64, Decimal)>,
    pub(crate) nao_cobrados: Vec<u64>,
    pub(crate) pendentes: u32,
}

/// Matches uncertain lookups of one endpoint and key with the charged history items of that
/// key. Earliest first, each lookup takes the unused items of its window: the first
/// `conhecidas` belong to 200s this client got, one more means it was charged.
pub(crate) fn classificar(
    mut grupo: Vec<Incerto>,
    itens: &[ConsumoItem],
    agora: DateTime<Utc>,
) -> Classificacao {
    grupo.sort_by_key(|i| i.enviado);
    let mut usados = vec![false; itens.len()];
    let mut c = Classificacao::default();
    for inc in grupo {
        let (ini, fim) = (inc.enviado - TOLERANCIA, inc.perdido + TOLERANCIA);
        let candidatos: Vec<usize> = (0..itens.len())
            .filter(|&k| !usados[k] && itens[k].data >= ini && itens[k].data <= fim)
            .collect();
        let conhecidas = inc.conhecidas as usize;
        if candidatos.len() > conhecidas {
            let mut por_data = candidatos;
            por_data.sort_by_key(|&k| itens[k].data);
            for &k in por_data.iter().take(conhecidas + 1) {
                usados[k] = true;
            }
            c.cobrados
                .push((inc.id, itens[por_data[conhecidas]].valor_cobrado));
        } else if fim < agora {
            for k in candidatos {
                usados[k] = true;
            }
            c.nao_cobrados.push(inc.id);
        } else {
            c.pendentes += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;
    use crate::op::Op;

    fn incerto(id: u64, em: DateTime<Utc>, conhecidas: u32) -> Incerto {
        Incerto {
            id,
            op: Op::Car,
            chave: "k".into(),
            enviado: em,
            perdido: em + TimeDelta::seconds(1),
            preco: Some(Decimal::ONE),
            conhecidas,
        }
    }

    fn item(em: DateTime<Utc>) -> ConsumoItem {
        ConsumoItem {
            data: em.fixed_offset(),
            endpoint: "/v1/car/{codigo}".into(),
            chave_consulta: Some("k".into()),
            status_http: 200,
            cobrado: true,
            valor_cobrado: Decimal::new(50, 2),
            saldo_antes: None,
            saldo_depois: None,
        }
    }

    #[test]
    fn charged_not_charged_and_pending() {
        let t0 = Utc::now() - TimeDelta::minutes(10);
        let s = TimeDelta::seconds;
        // Lost at t0 and charged; lost at t0+5min, no item; lost now, no item yet.
        let grupo = vec![
            incerto(1, t0, 0),
            incerto(2, t0 + TimeDelta::minutes(5), 0),
            incerto(3, Utc::now(), 0),
        ];
        let c = classificar(grupo, &[item(t0 + s(1))], Utc::now());
        assert_eq!(
            c.cobrados,
            vec![(1, Decimal::new(50, 2))],
            "the history's amount"
        );
        assert_eq!(c.nao_cobrados, vec![2]);
        assert_eq!(c.pendentes, 1);
    }

    #[test]
    fn a_known_200_of_the_same_key_is_not_the_lost_one() {
        let t0 = Utc::now() - TimeDelta::minutes(10);
        let s = TimeDelta::seconds;
        // The client got a 200 for "k" 2 s before losing an answer for "k": one item is its.
        let c = classificar(vec![incerto(1, t0, 1)], &[item(t0 - s(2))], Utc::now());
        assert_eq!(c.nao_cobrados, vec![1]);
        let c = classificar(
            vec![incerto(1, t0, 1)],
            &[item(t0 - s(2)), item(t0 + s(1))],
            Utc::now(),
        );
        assert_eq!(c.cobrados.len(), 1);
        // Two lost answers, one charge: the earliest takes it.
        let c = classificar(
            vec![incerto(2, t0 + s(3), 0), incerto(1, t0, 0)],
            &[item(t0 + s(1))],
            Utc::now(),
        );
        assert_eq!(c.cobrados[0].0, 1);
        assert_eq!(c.nao_cobrados, vec![2]);
    }
}
