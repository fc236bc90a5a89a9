//! The plan of a batch, before any charge: the input read and normalised ([`super::entrada`]),
//! what `--saida` already answers, the receipts already on disk, and the keys a killed run paid
//! for without writing their answer (the journal, [`super::diario`], checked against the free
//! history).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use carapi_sdk::{ClientBuilder, HistoricoParams, StatusConsulta};

use super::entrada::{self, Entrada};
use super::saida::{self, Anteriores, FormatoSaida};
use super::{Opcoes, TipoLote, diario};
use crate::context::Context;
use crate::error::{CliError, Result};

/// What a batch will do.
#[derive(Debug, Clone)]
pub struct Plano {
    /// The parsed input.
    pub entrada: Entrada,
    /// Keys to look up now, in input order.
    pub pendentes: Vec<String>,
    /// Receipt batches: keys whose PDF is already in [`Plano::pdf_dir`] (recorded, not bought).
    pub pdfs_existentes: Vec<String>,
    /// Keys charged by a killed run whose answer was never written (recorded, not bought again).
    pub recuperadas: Vec<String>,
    /// Keys with a final answer in `--saida` already.
    pub ja_respondidos: usize,
    /// Counts of the records already in `--saida` (for the cumulative summary).
    pub anteriores: Anteriores,
    /// Where receipt PDFs go: the directory of `--saida`, else the current one.
    pub pdf_dir: PathBuf,
    /// The journal of keys in flight, next to `--saida`.
    pub diario: Option<PathBuf>,
    /// The output's format.
    pub formato: FormatoSaida,
}

/// Reads the input and the previous output, and works out what is left to do.
///
/// # Errors
/// Unreadable input or output (1); an input with no valid key (2); history errors (3, 6, 7).
pub async fn planejar(ctx: &mut Context, op: &Opcoes, base: &ClientBuilder) -> Result<Plano> {
    let ent = ler_entrada(ctx, op)?;
    let formato = match &op.saida {
        Some(p) => FormatoSaida::por_extensao(p),
        None if op.csv_no_stdout => FormatoSaida::Csv,
        None => FormatoSaida::Jsonl,
    };
    let anteriores = match &op.saida {
        Some(p) => {
            terminado(p, formato)?;
            let r = super::exportar::arquivo_de_registros(p, formato);
            let a = saida::ler_anteriores(&r, formato).map_err(|e| CliError::io_at(&r, e))?;
            mesmo_tipo(p, op.tipo, &a)?;
            a.da_entrada(&ent.chaves)
        }
        None => Anteriores::default(),
    };
    let mut respondidas: HashSet<String> = anteriores.chaves.clone();
    let pdf_dir = match &op.saida {
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => PathBuf::from("."),
    };
    let pdfs_existentes: Vec<String> = if op.tipo == TipoLote::Recibo {
        ent.chaves
            .iter()
            .filter(|k| !respondidas.contains(*k) && pdf_dir.join(format!("{k}.pdf")).is_file())
            .cloned()
            .collect()
    } else {
        vec![]
    };
    respondidas.extend(pdfs_existentes.iter().cloned());
    let diario = op.saida.as_deref().map(diario::journal_path);
    let recuperadas = match &diario {
        Some(dp) => recuperar(dp, op.tipo, &ent, &respondidas, base).await?,
        None => vec![],
    };
    respondidas.extend(recuperadas.iter().cloned());
    let pendentes: Vec<String> = ent
        .chaves
        .iter()
        .filter(|k| !respondidas.contains(*k))
        .cloned()
        .collect();
    let ja_respondidos =
        ent.chaves.len() - pendentes.len() - pdfs_existentes.len() - recuperadas.len();
    let plano = Plano {
        entrada: ent,
        pendentes,
        pdfs_existentes,
        recuperadas,
        ja_respondidos,
        anteriores,
        pdf_dir,
        diario,
        formato,
    };
    anunciar(ctx, &plano);
    Ok(plano)
}

/// Refuses a `.xlsx`/`.geojson` that exists without its records: the output of a finished batch
/// (whose records were removed) or a file the CLI did not write. Resuming would not know which
/// keys it answers, and would buy them again.
fn terminado(saida: &Path, formato: FormatoSaida) -> Result<()> {
    let registros = super::exportar::arquivo_de_registros(saida, formato);
    if registros != saida && saida.exists() && !registros.exists() {
        return Err(CliError::usage(format!(
            "{} já existe e é o resultado de um lote terminado (ou de outro programa)",
            saida.display()
        ))
        .hint("para consultar estas chaves de novo, ou outras, use outro arquivo em --saida (nada foi cobrado)"));
    }
    Ok(())
}

/// Refuses to resume into an output of another kind of lookup (`lote completo` into the output
/// of `lote car` would skip every key and never give the owner columns).
fn mesmo_tipo(saida: &Path, tipo: TipoLote, a: &Anteriores) -> Result<()> {
    match a.tipos.iter().find(|t| **t != tipo) {
        Some(other) => Err(CliError::usage(format!(
            "{} tem respostas de `carapi lote {}`, não de `carapi lote {}`",
            saida.display(),
            other.name(),
            tipo.name()
        ))
        .hint(format!(
            "use outro arquivo em --saida para o lote {} (nada foi cobrado)",
            tipo.name()
        ))),
        None => Ok(()),
    }
}

/// The input file (or stdin for `-`), parsed; invalid keys reported on stderr.
fn ler_entrada(ctx: &mut Context, op: &Opcoes) -> Result<Entrada> {
    let bytes = if op.arquivo.as_os_str() == "-" {
        let mut b = vec![];
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .map_err(|e| CliError::io_at(Path::new("-"), e))?;
        b
    } else {
        std::fs::read(&op.arquivo).map_err(|e| CliError::io_at(&op.arquivo, e))?
    };
    let text = String::from_utf8_lossy(&bytes);
    let ent = entrada::ler_com(&text, op.tipo.chave(), op.coluna.as_deref()).map_err(|e| {
        CliError::usage(e).hint("confira --coluna (nome do cabeçalho ou número, a partir de 1)")
    })?;
    for inv in ent.invalidas.iter().take(20) {
        ctx.shell.warn(format!(
            "linha {}: chave inválida {:?} ({}); não será enviada",
            inv.linha, inv.valor, inv.reason
        ));
    }
    if ent.invalidas.len() > 20 {
        ctx.shell.warn(format!(
            "... e mais {} chaves inválidas",
            ent.invalidas.len() - 20
        ));
    }
    if ent.chaves.is_empty() {
        let o_que = match op.tipo.chave() {
            entrada::TipoChave::Car => "código CAR",
            entrada::TipoChave::Documento => "CPF/CNPJ",
        };
        return Err(CliError::usage(format!(
            "nenhuma chave válida na entrada ({} linha(s) inválida(s)); nada foi enviado",
            ent.invalidas.len()
        ))
        .hint(format!(
            "uma chave ({o_que}) por linha, ou um CSV com a coluna cod_imovel, codigo_car, cpf, cnpj ou cpf_cnpj (ou --coluna NOME|N)"
        )));
    }
    Ok(ent)
}

/// Keys the journal says were sent by a run killed before their answer was written, and that the
/// history shows charged since: not bought again.
async fn recuperar(
    dp: &Path,
    tipo: TipoLote,
    ent: &Entrada,
    respondidas: &HashSet<String>,
    base: &ClientBuilder,
) -> Result<Vec<String>> {
    let incertas: Vec<_> = diario::ler(dp)
        .map_err(|e| CliError::io_at(dp, e))?
        .into_iter()
        .filter(|(k, _)| !respondidas.contains(k) && ent.chaves.contains(k))
        .collect();
    if incertas.is_empty() {
        return Ok(vec![]);
    }
    let c = base.clone().build()?;
    let mut recuperadas = vec![];
    for (k, desde) in incertas {
        let params = HistoricoParams {
            busca: Some(k.clone()),
            endpoint: Some(tipo.endpoint()),
            status: Some(StatusConsulta::Sucesso),
            size: Some(100),
            page: None,
        };
        let h = c.historico(&params).await?;
        let limite = desde - chrono::Duration::seconds(60);
        if h.itens.iter().any(|i| {
            i.cobrado && i.chave_consulta.as_deref() == Some(k.as_str()) && i.data >= limite
        }) {
            recuperadas.push(k);
        }
    }
    Ok(recuperadas)
}

fn anunciar(ctx: &mut Context, p: &Plano) {
    if p.entrada.duplicadas > 0 {
        ctx.shell.note(format!(
            "{} chave(s) duplicada(s) ignorada(s).",
            p.entrada.duplicadas
        ));
    }
    if p.ja_respondidos > 0 {
        ctx.shell.note(format!(
            "{} chave(s) já respondida(s) em --saida: retomando sem consultá-las de novo.",
            p.ja_respondidos
        ));
    }
    if !p.recuperadas.is_empty() {
        ctx.shell.warn(format!(
            "{} chave(s) foram cobradas numa execução interrompida sem que a resposta fosse gravada; \
             não serão consultadas de novo (status encontrado, sem dados; consulte-as à parte se precisar)",
            p.recuperadas.len()
        ));
    }
}
