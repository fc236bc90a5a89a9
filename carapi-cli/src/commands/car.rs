//! `carapi car CODIGO [--completo]`: a property's record (charged lookup).

use carapi_sdk::{CarDadosBasicos, CarResponse};

use crate::archive::{json_with_origin, split};
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Fields};
use crate::lote::BatchKind;
use crate::lote::output::{BatchStatus, Record};
use crate::options::{ArchiveArgs, FormatArgs};
use crate::output::OutputFormat;

/// Arguments of `carapi car`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Código CAR (UF-IIIIIII-<32 hex>; pontos e minúsculas são aceitos)
    #[arg(value_name = "CODIGO")]
    pub(crate) codigo: String,
    /// Consulta completa, com proprietários (preço maior)
    #[arg(long)]
    pub(crate) completo: bool,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// Runs `carapi car`.
///
/// # Errors
/// Invalid code (2), 401 (3), 402 (5), 404 (4), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let client = ctx.lookup_client(&args.archive).await?;
    let archived = client.archive().is_some();
    if args.completo {
        let (r, origin) = if archived {
            let (r, o) = split(client.car_completo_archived(&args.codigo).await?);
            (r, Some(o))
        } else {
            (client.car_completo(&args.codigo).await?, None)
        };
        ctx.show_origin(&client, origin.as_ref(), r.sandbox).await;
        if format == OutputFormat::Json {
            return Ok(ctx.shell.json(&json_with_origin(&r, origin.as_ref()))?);
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
        fields.add(
            "proprietariosNomes",
            "Proprietários",
            CellValue::optional(r.dados.proprietarios_nomes.as_deref()),
        );
        fields.add(
            "proprietariosCpfs",
            "CPF/CNPJ dos proprietários",
            CellValue::optional(r.dados.proprietarios_cpfs.as_deref()),
        );
        lookup_fields(&mut fields, &r);
        Ok(ctx.shell.fields(&fields, format)?)
    } else {
        let (r, origin) = if archived {
            let (r, o) = split(client.car_archived(&args.codigo).await?);
            (r, Some(o))
        } else {
            (client.car(&args.codigo).await?, None)
        };
        ctx.show_origin(&client, origin.as_ref(), r.sandbox).await;
        if format == OutputFormat::Json {
            return Ok(ctx.shell.json(&json_with_origin(&r, origin.as_ref()))?);
        }
        if format == OutputFormat::Geojson {
            return geojson(ctx, BatchKind::Car, &r.dados.codigo_car, &r, r.sandbox);
        }
        let mut fields = basic_fields(&r.dados);
        lookup_fields(&mut fields, &r);
        Ok(ctx.shell.fields(&fields, format)?)
    }
}

/// A lookup's answer as a GeoJSON FeatureCollection of one Point (the batch's `.geojson` form,
/// [`crate::lote::export::geojson`]); `cobrado` is what was charged: every 200 of a value
/// that is not a sandbox value (contract, "Prices").
pub(crate) fn geojson<T: serde::Serialize>(
    ctx: &mut Context,
    kind: BatchKind,
    key: &str,
    response: &T,
    sandbox: bool,
) -> Result<()> {
    let r = Record {
        key: key.to_owned(),
        status: BatchStatus::Found,
        http_status: Some(200),
        error_code: None,
        message: None,
        cobrado: !sandbox,
        file: None,
        response: serde_json::to_value(response).ok(),
        origin: None,
        comprado_em: None,
    };
    ctx.shell
        .line(crate::lote::export::geojson(kind, &[r], false))?;
    Ok(())
}

/// The fields of `CarDadosBasicos` with Portuguese labels, in the contract's order.
fn basic_fields(d: &CarDadosBasicos) -> Fields {
    let mut c = Fields::new();
    let o = |s: &Option<String>| CellValue::optional(s.as_deref());
    c.add("codigoCar", "Código CAR", CellValue::text(&d.codigo_car))
        .add("nomeImovel", "Nome do imóvel", o(&d.nome_imovel))
        .add("areaTotalHa", "Área total (ha)", o(&d.area_total_ha))
        .add("modulosFiscais", "Módulos fiscais", o(&d.modulos_fiscais))
        .add("dataCadastro", "Data de cadastro", o(&d.data_cadastro))
        .add("tipoImovel", "Tipo de imóvel", o(&d.tipo_imovel))
        .add("municipio", "Município", o(&d.municipio))
        .add("uf", "UF", o(&d.uf))
        .add("matriculaNumero", "Matrícula", o(&d.matricula_numero))
        .add("matriculaData", "Data da matrícula", o(&d.matricula_data))
        .add("matriculaCartorio", "Cartório", o(&d.matricula_cartorio))
        .add(
            "codigoProtocolo",
            "Código de protocolo",
            o(&d.codigo_protocolo),
        )
        .add("latitude", "Latitude", o(&d.latitude))
        .add("longitude", "Longitude", o(&d.longitude));
    c
}

fn lookup_fields<T>(c: &mut Fields, r: &CarResponse<T>) {
    c.add(
        "dataConsulta",
        "Data da consulta",
        CellValue::instant(r.data_consulta),
    )
    .add(
        "dataExpiracao",
        "Atualizado na origem em",
        CellValue::optional_instant(r.data_expiracao),
    )
    .add(
        "cache",
        "Da base consolidada (cache)",
        CellValue::boolean(r.cache),
    );
    if r.sandbox {
        c.add(
            "sandbox",
            "Sandbox (sem cobrança)",
            CellValue::boolean(true),
        );
    }
}
