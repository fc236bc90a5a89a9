//! The watch engine of `carapi vigiar`, beside [`crate::batch`] and sharing its input reading,
//! concurrency and prices: given a list of CAR codes, an archive and a clock, it sorts the codes
//! into fresh (the archive answers: not bought) and due (older than the maximum age, or never
//! archived), buys the due ones in input order while the next purchase fits the ceiling, and
//! compares each new answer with the archived one field by field ([`crate::changes`]).
//!
//! The freshness rule is the SDK's ([`carapi_sdk::archive::Archive::is_fresh_at`]); the clock is a
//! parameter ([`Watch::now`]), never read here.

mod buy;
pub(crate) mod report;

use carapi_sdk::archive::{Archive, Freshness};
use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse, Client};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::Serialize;
use serde_json::Value;

use crate::batch::BatchKind;
use crate::changes::Change;
use crate::context::Context;
use crate::error::{CliError, Result};

/// Which lookup is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WatchKind {
    /// dados completos, com proprietários (GET /v1/car/{codigo}/completo)
    Completo,
    /// dados básicos, sem proprietários (GET /v1/car/{codigo})
    Car,
}

impl WatchKind {
    /// The batch kind of the same lookup (its price, its key kind).
    pub(crate) fn batch(self) -> BatchKind {
        match self {
            WatchKind::Completo => BatchKind::Completo,
            WatchKind::Car => BatchKind::Car,
        }
    }

    /// The lookup.
    fn operation(self) -> carapi_sdk::EndpointConsulta {
        self.batch().endpoint()
    }

    /// An answer's body in the SDK's model, back to JSON: both sides of a comparison read
    /// alike.
    fn normalise(self, body: &[u8]) -> Option<Value> {
        match self {
            WatchKind::Completo => serde_json::from_slice::<CarResponse<CarDadosCompletos>>(body)
                .ok()
                .and_then(|r| serde_json::to_value(r).ok()),
            WatchKind::Car => serde_json::from_slice::<CarResponse<CarDadosBasicos>>(body)
                .ok()
                .and_then(|r| serde_json::to_value(r).ok()),
        }
    }
}

/// The outcome of one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Verdict {
    /// Bought again; something changed.
    #[serde(rename = "mudou")]
    Changed,
    /// Bought again; nothing changed.
    #[serde(rename = "igual")]
    Unchanged,
    /// Not in the archive: bought now.
    #[serde(rename = "novo")]
    New,
    /// Archived and younger than the maximum age: not bought.
    #[serde(rename = "recente")]
    Fresh,
    /// Due, not bought: the ceiling (or a stop: balance, limit).
    #[serde(rename = "nao_comprado")]
    NotBought,
    /// 404 now: left the registry (when archived before), or never found.
    #[serde(rename = "nao_encontrado")]
    NotFound,
    /// The lookup failed (network, server).
    #[serde(rename = "erro")]
    Failed,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outcome {
    /// The code.
    pub(crate) codigo_car: String,
    /// What happened.
    #[serde(rename = "situacao")]
    pub(crate) verdict: Verdict,
    /// When the answer shown was bought (now, or the archived one's instant).
    #[serde(rename = "compradoEm", skip_serializing_if = "Option::is_none")]
    pub(crate) bought_at: Option<DateTime<Utc>>,
    /// When the archived answer compared against was bought.
    #[serde(rename = "anteriorCompradoEm", skip_serializing_if = "Option::is_none")]
    pub(crate) previously_bought_at: Option<DateTime<Utc>>,
    /// The fields that changed.
    pub(crate) mudancas: Vec<Change>,
    /// Why it was not bought, or the error.
    #[serde(rename = "mensagem", skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

impl Outcome {
    fn new(codigo: &str, verdict: Verdict) -> Self {
        Outcome {
            codigo_car: codigo.to_owned(),
            verdict,
            bought_at: None,
            previously_bought_at: None,
            mudancas: vec![],
            message: None,
        }
    }

    /// True when the record changed (or left the registry) since its archived answer.
    pub(crate) fn changed(&self) -> bool {
        self.verdict == Verdict::Changed || self.left_registry()
    }

    /// True when a code archived before is now answered 404: it left the registry.
    pub(crate) fn left_registry(&self) -> bool {
        self.verdict == Verdict::NotFound && self.previously_bought_at.is_some()
    }

    /// True when a new answer was bought for it (a 404 is no answer).
    pub(crate) fn bought(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::Changed | Verdict::Unchanged | Verdict::New
        )
    }
}

/// A code to buy and its archived answer, if any.
#[derive(Debug)]
pub(crate) struct Due {
    codigo: String,
    previous: Option<(DateTime<Utc>, Option<Value>)>,
}

/// What one watch needs.
#[derive(Debug)]
pub(crate) struct Watch {
    /// The lookup compared.
    pub(crate) kind: WatchKind,
    /// The codes, canonical, in input order.
    pub(crate) codes: Vec<String>,
    /// The archive, and how old an archived answer may be.
    pub(crate) archive: Archive,
    /// The maximum age (`--idade-maxima`, `--comprar`).
    pub(crate) freshness: Freshness,
    /// The instant ages are measured against.
    pub(crate) now: DateTime<Utc>,
    /// `--teto`, BRL.
    pub(crate) ceiling: Decimal,
    /// The price of one lookup, BRL.
    pub(crate) preco: Decimal,
}

/// What a watch found.
#[derive(Debug)]
pub(crate) struct Watched {
    /// One per code, in input order.
    pub(crate) outcomes: Vec<Outcome>,
    /// Codes due but not bought because of the ceiling.
    pub(crate) over_ceiling: usize,
    /// The error that stopped the purchases (401, 402, 429), if one did.
    pub(crate) stop: Option<CliError>,
}

/// Runs a watch with `client` (the archive attached, never reusing, `--teto` as its spend cap).
///
/// # Errors
/// An archive that cannot be read (1).
pub(crate) async fn watch(ctx: &mut Context, client: &Client, w: Watch) -> Result<Watched> {
    let (mut outcomes, due) = classify(&w)?;
    let (to_buy, over) = within_ceiling(due, w.kind, w.preco, w.ceiling);
    let run = buy::buy_all(ctx, client, w.kind, to_buy).await;
    outcomes.extend(run.outcomes);
    for d in &over {
        let mut o = Outcome::new(&d.codigo, Verdict::NotBought);
        o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
        o.message = Some(format!(
            "teto de {} atingido",
            carapi_sdk::domain::brl::format(w.ceiling)
        ));
        outcomes.push(o);
    }
    let order: std::collections::HashMap<&str, usize> = w
        .codes
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    outcomes.sort_by_key(|o| order.get(o.codigo_car.as_str()).copied());
    Ok(Watched {
        outcomes,
        over_ceiling: over.len(),
        stop: run.stop,
    })
}

/// Splits the codes into those the archive answers (fresh at `w.now`: reported, not bought) and
/// those due.
///
/// # Errors
/// An archive that cannot be read (1).
fn classify(w: &Watch) -> Result<(Vec<Outcome>, Vec<Due>)> {
    let fail = |e: carapi_sdk::archive::ArchiveError| {
        CliError::other("ACERVO", carapi_sdk::error_chain(&e))
    };
    let (mut fresh, mut due) = (vec![], vec![]);
    for k in &w.codes {
        let Some(entry) = w
            .archive
            .latest_entry(w.kind.operation(), k)
            .map_err(fail)?
        else {
            due.push(Due {
                codigo: k.clone(),
                previous: None,
            });
            continue;
        };
        if carapi_sdk::archive::Archive::is_fresh_at(&entry, w.freshness, w.now) {
            let mut o = Outcome::new(k, Verdict::Fresh);
            o.bought_at = Some(entry.bought_at);
            fresh.push(o);
        } else {
            let body = w.archive.body(entry.seq).map_err(fail)?;
            due.push(Due {
                codigo: k.clone(),
                previous: Some((entry.bought_at, body.and_then(|b| w.kind.normalise(&b)))),
            });
        }
    }
    Ok((fresh, due))
}

/// The codes bought (input order, while the next purchase fits the ceiling at `preco` each;
/// sandbox codes are free) and those left over.
fn within_ceiling(
    due: Vec<Due>,
    kind: WatchKind,
    preco: Decimal,
    ceiling: Decimal,
) -> (Vec<Due>, Vec<Due>) {
    let fits = if preco.is_zero() {
        usize::MAX
    } else {
        (ceiling / preco).floor().to_usize().unwrap_or(usize::MAX)
    };
    let (mut buy, mut over) = (vec![], vec![]);
    let mut charged = 0usize;
    for d in due {
        if kind.batch().is_sandbox(&d.codigo) {
            buy.push(d);
        } else if charged < fits {
            charged += 1;
            buy.push(d);
        } else {
            over.push(d);
        }
    }
    (buy, over)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(codigo: &str) -> Due {
        Due {
            codigo: codigo.into(),
            previous: None,
        }
    }

    #[test]
    fn the_ceiling_buys_in_order_and_sandbox_codes_are_free() {
        let codes = [
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
            carapi_sdk::sandbox::CAR_BASICO,
            "DF-5300108-02B2E1AB4D9A42079E1FE1FAC35A2A65",
            "DF-5300108-13EC6FAD7D144E23B0D5D5FDC71EEC18",
        ];
        let (buy, over) = within_ceiling(
            codes.iter().map(|c| due(c)).collect(),
            WatchKind::Completo,
            Decimal::new(230, 2),
            Decimal::new(500, 2),
        );
        let bought: Vec<&str> = buy.iter().map(|d| d.codigo.as_str()).collect();
        assert_eq!(bought, codes[..3]);
        assert_eq!(over.len(), 1);
    }

    #[test]
    fn a_404_of_an_archived_code_left_the_registry_and_was_not_bought() {
        let mut o = Outcome::new("X", Verdict::NotFound);
        assert!(!o.changed() && !o.bought());
        o.previously_bought_at = Some(Utc::now());
        assert!(o.left_registry() && o.changed() && !o.bought());
    }
}
