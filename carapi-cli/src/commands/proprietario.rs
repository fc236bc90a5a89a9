//! `carapi proprietario CPF_CNPJ`: the CARs tied to a document (charged lookup).

use crate::archive::split;
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::options::ConsultaArgs;
use crate::output::OutputFormat;

/// Arguments of `carapi proprietario`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// CPF (11 dígitos) ou CNPJ (14 caracteres), com ou sem máscara
    #[arg(value_name = "CPF_CNPJ")]
    pub(crate) documento: String,
    /// `-o/--formato` and the archive's flags.
    #[command(flatten)]
    pub(crate) consulta: ConsultaArgs,
}

/// Runs `carapi proprietario`; says so on stderr when the list is truncated at `limite`.
///
/// # Errors
/// Invalid document (2), 401 (3), 402 (5), 404 (4), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.consulta.format);
    let client = ctx.consulta_client(&args.consulta.archive).await?;
    let archived = client.archive().is_some();
    let (r, origin) = split(client.proprietario(&args.documento).await?, archived);
    if r.truncado {
        ctx.shell.warn(format!(
            "lista truncada: o documento tem mais de {} CARs; aqui estão os primeiros {} (ordem do código CAR)",
            r.limite, r.total
        ));
    }
    if ctx
        .consulta_answer(&client, origin.as_ref(), (r.sandbox, format), &r)
        .await?
    {
        return Ok(());
    }
    if format == OutputFormat::Geojson {
        let doc = carapi_sdk::CpfCnpj::parse(&args.documento)
            .map(|d| d.as_str().to_owned())
            .unwrap_or(args.documento);
        return super::car::geojson(
            ctx,
            crate::batch::BatchKind::Proprietario,
            &doc,
            &r,
            r.sandbox,
        );
    }
    let mut t = Listing::titled(&[
        "registroCar",
        "nomeImovel",
        "municipio",
        "uf",
        "areaTotalHa",
        "matriculaNumero",
        "codigoProtocolo",
        "proprietarioConsultado",
    ]);
    for i in &r.itens {
        let o = |s: &Option<String>| CellValue::optional(s.as_deref());
        let area = i
            .area_total_ha
            .as_deref()
            .and_then(|a| carapi_sdk::domain::br::parse_decimal(a).ok())
            .map(|a| a.normalize().to_string());
        t.push_row(vec![
            CellValue::text(&i.registro_car),
            o(&i.nome_imovel),
            o(&i.municipio),
            o(&i.uf),
            CellValue::registry(i.area_total_ha.as_deref(), area),
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
