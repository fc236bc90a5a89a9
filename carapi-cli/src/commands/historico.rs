//! `carapi historico`: recorded lookups, newest first (free).

use carapi_sdk::{ConsumoItem, EndpointConsulta, HistoricoParams, StatusConsulta};
use chrono::{DateTime, FixedOffset, NaiveDate};
use chrono_tz::America::Sao_Paulo;
use futures::TryStreamExt;

use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::options::FormatArgs;
use crate::output::OutputFormat;

/// `--status`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Status {
    /// só HTTP 200
    #[value(name = "sucesso")]
    Success,
    /// todos os outros status
    #[value(name = "erro")]
    Error,
}

/// Arguments of `carapi historico`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Página (a partir de 1)
    #[arg(long = "pagina", alias = "page", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub(crate) page: Option<u32>,
    /// Itens por página (máximo 100)
    #[arg(long = "por-pagina", alias = "size", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub(crate) size: Option<u32>,
    /// Trecho da chave consultada ou do endpoint (CPF/CNPJ e código CAR com ou sem máscara)
    #[arg(long, value_name = "S")]
    pub(crate) busca: Option<String>,
    /// Endpoint: car, completo, recibo, proprietario (ou a forma /v1/...)
    #[arg(long, value_name = "E", value_parser = parse_endpoint)]
    pub(crate) endpoint: Option<EndpointConsulta>,
    /// Só sucessos (HTTP 200) ou só erros
    #[arg(long, value_enum)]
    pub(crate) status: Option<Status>,
    /// Todas as páginas (a partir de --pagina)
    #[arg(long = "todas", alias = "all")]
    pub(crate) all: bool,
    /// Só consultas a partir desta data (horário de Brasília): dd/mm/aaaa ou aaaa-mm-dd
    #[arg(long = "desde", value_name = "DATA", value_parser = parse_date)]
    pub(crate) since: Option<NaiveDate>,
    /// Só consultas até esta data, inclusive (horário de Brasília)
    #[arg(long = "ate", value_name = "DATA", value_parser = parse_date)]
    pub(crate) until: Option<NaiveDate>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

/// `--busca` as the history records keys: a CPF/CNPJ or CAR code in any form the CLI accepts
/// or prints (`385.211.390-39`, lower case) becomes the normalised key the lookups send
/// (`38521139039`); anything else is searched as typed.
fn normalize_busca(s: &str) -> String {
    if let Ok(d) = carapi_sdk::CpfCnpj::parse(s) {
        return d.as_str().to_owned();
    }
    if let Ok(c) = carapi_sdk::CodigoCar::parse(s) {
        return c.as_str().to_owned();
    }
    s.trim().to_owned()
}

fn parse_endpoint(s: &str) -> Result<EndpointConsulta, String> {
    s.parse()
}

/// A date typed by a person: `dd/mm/aaaa` (Brazilian) or `aaaa-mm-dd` (ISO 8601).
///
/// # Errors
/// A Portuguese message with the accepted forms.
fn parse_date(s: &str) -> Result<NaiveDate, String> {
    let s = s.trim();
    NaiveDate::parse_from_str(s, "%d/%m/%Y")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y-%m-%d"))
        .map_err(|_| format!("data inválida {s:?}: use dd/mm/aaaa ou aaaa-mm-dd"))
}

/// True when `instant`, in Brasília time, falls on a day within `[since, until]`.
fn in_period(
    instant: DateTime<FixedOffset>,
    since: Option<NaiveDate>,
    until: Option<NaiveDate>,
) -> bool {
    let day = instant.with_timezone(&Sao_Paulo).date_naive();
    since.is_none_or(|d| day >= d) && until.is_none_or(|a| day <= a)
}

/// Runs `carapi historico`. With `--todas`, `-o json` prints an array of the items.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let client = ctx.client().await?;
    let params = HistoricoParams {
        page: args.page,
        size: crate::parsers::page_size(ctx, args.size),
        busca: args.busca.as_deref().map(normalize_busca),
        endpoint: args.endpoint,
        status: args.status.map(|s| match s {
            Status::Success => StatusConsulta::Sucesso,
            Status::Error => StatusConsulta::Erro,
        }),
    };
    let (since, until) = (args.since, args.until);
    if let (Some(d), Some(a)) = (since, until)
        && d > a
    {
        return Err(crate::error::CliError::usage("--desde é depois de --ate"));
    }
    let filtered = since.is_some() || until.is_some();
    let itens: Vec<ConsumoItem> = if args.all || filtered {
        // Newest first: once an item is older than --desde, the rest are too.
        let itens: Vec<ConsumoItem> = client
            .historico_stream(params)
            .try_take_while(|i| {
                let day = i.data.with_timezone(&Sao_Paulo).date_naive();
                futures::future::ready(Ok(since.is_none_or(|d| day >= d)))
            })
            .try_filter(|i| futures::future::ready(in_period(i.data, since, until)))
            .try_collect()
            .await?;
        if format == OutputFormat::Json {
            return Ok(ctx.shell.json(&itens)?);
        }
        itens
    } else {
        let r = client.historico(&params).await?;
        if format == OutputFormat::Json {
            return Ok(ctx.shell.json(&r)?);
        }
        ctx.shell.status(format!(
            "Página {} de {} ({} registros)",
            r.page,
            r.total_paginas.max(1),
            r.total
        ));
        r.itens
    };
    let t = listing(&itens);
    ctx.use_pager(format);
    Ok(ctx.shell.listing(&t, format)?)
}

/// The history's items as a table; a narrow terminal keeps the key and the amount first.
fn listing(itens: &[ConsumoItem]) -> Listing {
    let mut t = Listing::new(&[
        ("data", "Data"),
        ("endpoint", "Endpoint"),
        ("chaveConsulta", "Chave consultada"),
        ("statusHttp", "HTTP"),
        ("cobrado", "Cobrado"),
        ("valorCobrado", "Valor"),
        ("saldoAntes", "Saldo antes"),
        ("saldoDepois", "Saldo depois"),
    ]);
    for i in itens {
        t.push_row(vec![
            CellValue::instant(i.data),
            CellValue {
                human: short_endpoint(i.endpoint.as_str()).to_owned(),
                raw: i.endpoint.as_str().to_owned(),
            },
            CellValue::optional(i.chave_consulta.as_deref()),
            CellValue::integer(i.status_http),
            CellValue::boolean(i.cobrado),
            CellValue::money(i.valor_cobrado),
            CellValue::optional_money(i.saldo_antes, "—"),
            CellValue::optional_money(i.saldo_depois, "—"),
        ]);
    }
    t.priority(&[
        "chaveConsulta",
        "valorCobrado",
        "data",
        "cobrado",
        "endpoint",
    ]);
    t
}

/// The lookup's name in a table (`car`, `completo`, `recibo`, `proprietario`: the names
/// `--endpoint` takes) for the history's endpoint path (`/v1/car/{codigo}/completo`); other
/// paths as they are.
fn short_endpoint(endpoint: &str) -> &str {
    match endpoint.parse::<EndpointConsulta>() {
        Ok(e) => e.short_name(),
        Err(_) => endpoint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busca_takes_the_printed_forms() {
        assert_eq!(normalize_busca("385.211.390-39"), "38521139039");
        assert_eq!(
            normalize_busca("df-5300108-b69b317dd02c43daa77a0784aeef7d47"),
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
        );
        assert_eq!(normalize_busca("recibo"), "recibo");
    }

    #[test]
    fn brasilia_days() {
        let d = |s| parse_date(s).unwrap();
        assert_eq!(d("05/11/2026"), d("2026-11-05"));
        assert!(parse_date("11/31/2026").is_err());
        // 01:30 UTC on the 6th is 22:30 on the 5th in Brasília.
        let t = DateTime::parse_from_rfc3339("2026-11-06T01:30:00Z").unwrap();
        assert!(in_period(t, Some(d("05/11/2026")), Some(d("05/11/2026"))));
        assert!(!in_period(t, Some(d("06/11/2026")), None));
        assert!(in_period(t, None, None));
    }
}
