//! `carapi car CODIGO [--completo]`: a property's record (charged lookup).

use carapi_sdk::{CarDadosBasicos, CarResponse};

use crate::archive::split;
use crate::batch::BatchKind;
use crate::batch::output::{BatchStatus, Record};
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Fields};
use crate::options::ConsultaArgs;
use crate::output::OutputFormat;

/// Arguments of `carapi car`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Código CAR (UF-IIIIIII-<32 hex>; pontos, minúsculas, espaços ou travessões no lugar dos hífens, ou sem hífens, são aceitos)
    #[arg(value_name = "CODIGO")]
    pub(crate) codigo: String,
    /// Consulta completa, com proprietários (preço maior)
    #[arg(long)]
    pub(crate) completo: bool,
    /// `-o/--formato` and the archive's flags.
    #[command(flatten)]
    pub(crate) consulta: ConsultaArgs,
}

/// Runs `carapi car`.
///
/// # Errors
/// Invalid code (2), 401 (3), 402 (5), 404 (4), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, mut args: Args) -> Result<()> {
    // As pasted (spaces or en dashes for the dashes, no dashes): the canonical code.
    args.codigo = carapi_sdk::CodigoCar::parse_pasted(&args.codigo)
        .map_err(carapi_sdk::Error::from)?
        .to_string();
    let format = ctx.format(args.consulta.format);
    let client = ctx.consulta_client(&args.consulta.archive).await?;
    let archived = client.archive().is_some();
    if args.completo {
        let (r, origin) = split(client.car_completo(&args.codigo).await?, archived);
        if ctx
            .consulta_answer(&client, origin.as_ref(), (r.sandbox, format), &r)
            .await?
        {
            return Ok(());
        }
        if format == OutputFormat::Geojson {
            return geojson(
                ctx,
                BatchKind::Completo,
                &r.dados.basicos.codigo_car,
                &r,
                r.sandbox,
            );
        }
        let mut fields = basic_fields(&r.dados.basicos);
        fields.titled(
            "proprietariosNomes",
            CellValue::optional(r.dados.proprietarios_nomes.as_deref()),
        );
        fields.titled(
            "proprietariosCpfs",
            CellValue::optional(r.dados.proprietarios_cpfs.as_deref()),
        );
        consulta_fields(&mut fields, &r);
        Ok(ctx.shell.fields(&fields, format)?)
    } else {
        let (r, origin) = split(client.car(&args.codigo).await?, archived);
        if ctx
            .consulta_answer(&client, origin.as_ref(), (r.sandbox, format), &r)
            .await?
        {
            return Ok(());
        }
        if format == OutputFormat::Geojson {
            return geojson(ctx, BatchKind::Car, &r.dados.codigo_car, &r, r.sandbox);
        }
        let mut fields = basic_fields(&r.dados);
        consulta_fields(&mut fields, &r);
        Ok(ctx.shell.fields(&fields, format)?)
    }
}

/// A lookup's answer as a GeoJSON FeatureCollection of one Point (the batch's `.geojson` form,
/// [`crate::batch::export::geojson_records`]); `cobrado` is what was charged: every 200 of a value
/// that is not a sandbox value (contract, "Prices").
pub(crate) fn geojson<T: serde::Serialize>(
    ctx: &mut Context,
    kind: BatchKind,
    chave: &str,
    response: &T,
    sandbox: bool,
) -> Result<()> {
    let r = Record {
        chave: chave.to_owned(),
        status: BatchStatus::Found,
        http_status: Some(200),
        error_code: None,
        message: None,
        cobrado: !sandbox,
        preco: None,
        file: None,
        response: serde_json::to_value(response).ok(),
        origin: None,
        bought_at: None,
    };
    ctx.shell
        .line(crate::batch::export::geojson_records(kind, &[r]))?;
    Ok(())
}

/// The fields of `CarDadosBasicos` titled from the SDK's map, in the contract's order: the
/// registry's text in tables, the machine's form in `-o csv-cru` (areas with a decimal point,
/// dates in ISO 8601, coordinates in decimal degrees; docs/dominio.md) and the analyst's in
/// `-o csv`.
fn basic_fields(d: &CarDadosBasicos) -> Fields {
    let mut c = Fields::new();
    let o = |s: &Option<String>| CellValue::optional(s.as_deref());
    let number = |s: &Option<String>, v: Option<rust_decimal::Decimal>| {
        CellValue::registry(s.as_deref(), v.map(|v| v.normalize().to_string()))
    };
    let registered = d
        .data_cadastro_datetime()
        .map(|t| crate::format::from_brasilia(t).to_rfc3339());
    let matricula = d.matricula_data.as_deref().and_then(|s| {
        chrono::NaiveDate::parse_from_str(s.trim(), "%d/%m/%Y")
            .ok()
            .map(|x| x.to_string())
            .or_else(|| {
                carapi_sdk::domain::br::parse_data(s)
                    .ok()
                    .map(|t| crate::format::from_brasilia(t).to_rfc3339())
            })
    });
    c.titled("codigoCar", CellValue::text(&d.codigo_car))
        .titled("nomeImovel", o(&d.nome_imovel))
        .titled("areaTotalHa", number(&d.area_total_ha, d.area_total()))
        .titled("modulosFiscais", number(&d.modulos_fiscais, d.modulos()))
        .titled(
            "dataCadastro",
            CellValue::registry(d.data_cadastro.as_deref(), registered),
        )
        .titled("tipoImovel", o(&d.tipo_imovel))
        .titled("municipio", o(&d.municipio))
        .titled("uf", o(&d.uf))
        .titled("matriculaNumero", o(&d.matricula_numero))
        .titled(
            "matriculaData",
            CellValue::registry(d.matricula_data.as_deref(), matricula),
        )
        .titled("matriculaCartorio", o(&d.matricula_cartorio))
        .titled("codigoProtocolo", o(&d.codigo_protocolo))
        .titled("latitude", number(&d.latitude, d.latitude_degrees()))
        .titled("longitude", number(&d.longitude, d.longitude_degrees()));
    c
}

fn consulta_fields<T>(c: &mut Fields, r: &CarResponse<T>) {
    c.titled("dataConsulta", CellValue::instant(r.data_consulta))
        .titled(
            "dataExpiracao",
            CellValue::optional_instant(r.data_expiracao),
        )
        .titled("cache", CellValue::boolean(r.cache));
    if r.sandbox {
        c.titled("sandbox", CellValue::boolean(true));
    }
}
