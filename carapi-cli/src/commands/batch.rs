//! `carapi lote car|completo|proprietario|recibo ARQUIVO [--saida FILE] [--sim] [--max-custo V]`.
//! The behaviour is documented in [`crate::batch`].

use std::path::PathBuf;

use rust_decimal::Decimal;

use crate::batch::output::Stream;
use crate::batch::{self, BatchKind};
use crate::context::Context;
use crate::error::Result;
use crate::options::{ArchiveArgs, FormatArgs};
use crate::output::OutputFormat;
use carapi_sdk::domain::brl::parse_reais;

/// Arguments of `carapi lote`.
#[derive(Debug, clap::Args)]
#[command(after_help = batch::HELP)]
pub(crate) struct Args {
    /// Tipo de consulta: car, completo, proprietario ou recibo
    // The id of a positional is the label zsh's completion shows: Portuguese, as users read it.
    #[arg(id = "tipo", value_enum, value_name = "TIPO")]
    pub(crate) kind: BatchKind,
    /// Arquivo de entrada (`-` para o stdin): uma chave por linha, ou CSV
    #[arg(id = "arquivo", value_name = "ARQUIVO")]
    pub(crate) file: PathBuf,
    /// Coluna do CSV com as chaves: nome do cabeçalho ou número (a partir de 1)
    #[arg(long = "coluna", value_name = "NOME|N")]
    pub(crate) column: Option<String>,
    /// Arquivo de resultados, pela extensão: .jsonl (uma linha JSON por chave), .csv ou .xlsx
    /// (planilha, uma linha por linha da entrada), .geojson (mapa); rodar de novo retoma
    #[arg(long = "saida", value_name = "ARQUIVO")]
    output_file: Option<PathBuf>,
    /// Não pede confirmação antes de gastar
    #[arg(short = 's', long = "sim", alias = "yes", short_alias = 'y')]
    pub(crate) yes: bool,
    /// Gasto máximo deste lote em reais; para antes de ultrapassar
    #[arg(long = "max-custo", value_name = "V", value_parser = parse_reais, allow_negative_numbers = true)]
    pub(crate) max_cost: Option<Decimal>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// Runs `carapi lote`.
///
/// # Errors
/// See [`batch::execute`].
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    batch::execute(
        ctx,
        batch::BatchOptions {
            kind: args.kind,
            file: args.file,
            column: args.column,
            output: args.output_file,
            yes: args.yes,
            max_cost: args.max_cost,
            archive: args.archive,
            stdout: match format {
                OutputFormat::Csv => Stream::Spreadsheet,
                OutputFormat::RawCsv => Stream::Raw,
                _ => Stream::Jsonl,
            },
        },
    )
    .await
}
