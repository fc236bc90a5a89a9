//! `carapi historico`: recorded lookups, newest first (free).

use carapi_sdk::{ConsumoItem, EndpointConsulta, HistoricoParams, StatusConsulta};
use futures::TryStreamExt;

use crate::cli::FormatoArgs;
use crate::context::Context;
use crate::error::Result;
use crate::format::{Celula, Tabela};
use crate::output::Formato;

/// `--status`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Status {
    /// só HTTP 200
    Sucesso,
    /// todos os outros status
    Erro,
}

/// Arguments of `carapi historico`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Página (a partir de 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub page: Option<u32>,
    /// Itens por página (máximo 100)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub size: Option<u32>,
    /// Trecho da chave consultada ou do endpoint
    #[arg(long, value_name = "S")]
    pub busca: Option<String>,
    /// Endpoint: car, completo, recibo, proprietario (ou a forma /v1/...)
    #[arg(long, value_name = "E", value_parser = parse_endpoint)]
    pub endpoint: Option<EndpointConsulta>,
    /// Só sucessos (HTTP 200) ou só erros
    #[arg(long, value_enum)]
    pub status: Option<Status>,
    /// Todas as páginas (a partir de --page)
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub formato: FormatoArgs,
}

fn parse_endpoint(s: &str) -> Result<EndpointConsulta, String> {
    s.parse()
}

/// Runs `carapi historico`. With `--all`, `-o json` prints an array of the items.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let formato = ctx.formato(args.formato);
    let client = ctx.client().await?;
    let params = HistoricoParams {
        page: args.page,
        size: args.size,
        busca: args.busca,
        endpoint: args.endpoint,
        status: args.status.map(|s| match s {
            Status::Sucesso => StatusConsulta::Sucesso,
            Status::Erro => StatusConsulta::Erro,
        }),
    };
    let itens: Vec<ConsumoItem> = if args.all {
        let itens: Vec<ConsumoItem> = client.historico_stream(params).try_collect().await?;
        if formato == Formato::Json {
            return Ok(ctx.shell.json(&itens)?);
        }
        itens
    } else {
        let r = client.historico(&params).await?;
        if formato == Formato::Json {
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
    let mut t = Tabela::new(&[
        ("data", "Data"),
        ("endpoint", "Endpoint"),
        ("chaveConsulta", "Chave consultada"),
        ("statusHttp", "HTTP"),
        ("cobrado", "Cobrado"),
        ("valorCobrado", "Valor"),
        ("saldoAntes", "Saldo antes"),
        ("saldoDepois", "Saldo depois"),
    ]);
    for i in &itens {
        t.linha(vec![
            Celula::instante(i.data),
            Celula::texto(&i.endpoint),
            Celula::opcional(i.chave_consulta.as_deref()),
            Celula::inteiro(i.status_http),
            Celula::booleano(i.cobrado),
            Celula::dinheiro(i.valor_cobrado),
            Celula::dinheiro_opcional(i.saldo_antes, "—"),
            Celula::dinheiro_opcional(i.saldo_depois, "—"),
        ]);
    }
    Ok(ctx.shell.tabela(&t, formato)?)
}
