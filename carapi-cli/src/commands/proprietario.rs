//! `carapi proprietario CPF_CNPJ`: the CARs tied to a document (charged lookup).

use crate::archive::{json_with_origin, split};
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::options::{ArchiveArgs, FormatArgs};
use crate::output::OutputFormat;

/// Arguments of `carapi proprietario`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// CPF (11 dígitos) ou CNPJ (14 caracteres), com ou sem máscara
    #[arg(value_name = "CPF_CNPJ")]
    pub(crate) documento: String,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// Runs `carapi proprietario`; says so on stderr when the list is truncated at `limite`.
///
/// # Errors
/// Invalid document (2), 401 (3), 402 (5), 404 (4), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let client = ctx.lookup_client(&args.archive).await?;
    let (r, origin) = if client.archive().is_some() {
        let (r, o) = split(client.proprietario_archived(&args.documento).await?);
        (r, Some(o))
    } else {
        (client.proprietario(&args.documento).await?, None)
    };
    ctx.show_origin(&client, origin.as_ref(), r.sandbox).await;
    if r.truncado {
        ctx.shell.warn(format!(
            "lista truncada: o documento tem mais de {} CARs; aqui estão os primeiros {} (ordem do código CAR)",
            r.limite, r.total
        ));
    }
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(&json_with_origin(&r, origin.as_ref()))?);
    }
    if format == OutputFormat::Geojson {
        let doc = carapi_sdk::CpfCnpj::parse(&args.documento)
            .map(|d| d.as_str().to_owned())
            .unwrap_or(args.documento);
        return super::car::geojson(
            ctx,
            crate::lote::BatchKind::Proprietario,
            &doc,
            &r,
            r.sandbox,
        );
    }
    let mut t = Listing::new(&[
        ("registroCar", "Código CAR"),
        ("nomeImovel", "Nome do imóvel"),
        ("municipio", "Município"),
        ("uf", "UF"),
        ("areaTotalHa", "Área total (ha)"),
        ("matriculaNumero", "Matrícula"),
        ("codigoProtocolo", "Código de protocolo"),
        ("proprietarioConsultado", "Proprietário"),
    ]);
    for i in &r.itens {
        let o = |s: &Option<String>| CellValue::optional(s.as_deref());
        t.push_row(vec![
            CellValue::text(&i.registro_car),
            o(&i.nome_imovel),
            o(&i.municipio),
            o(&i.uf),
            o(&i.area_total_ha),
            o(&i.matricula_numero),
            o(&i.codigo_protocolo),
            o(&i.proprietario_consultado),
        ]);
    }
    t.priority(&[
        "registroCar",
        "areaTotalHa",
        "municipio",
        "uf",
        "nomeImovel",
    ]);
    ctx.use_pager(format);
    ctx.shell.listing(&t, format)?;
    if format == OutputFormat::Table {
        let extra = if r.truncado { " (truncado)" } else { "" };
        ctx.shell.status(format!("{} CAR(s){extra}", r.total));
    }
    Ok(())
}
