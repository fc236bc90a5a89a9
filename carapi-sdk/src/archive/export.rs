//! The audit exports of the archive's records (LGPD art. 37): JSON and CSV, with [`Entry`]'s
//! serialised names.

use std::io::Write;

use super::chain::instant;
use super::{ArchiveError, ArchiveErrorKind, Entry};

/// The CSV header: [`Entry`]'s serialised names, in its order.
const HEADER: &str = "seq,operacao,chave,preco,dataConsulta,compradoEm,conta,finalidade,baseLegal,hashConteudo,hashAnterior,hash,expurgadoEm";

/// `entries` as a JSON array.
pub(crate) fn json(entries: &[Entry], out: impl Write) -> Result<(), ArchiveError> {
    serde_json::to_writer_pretty(out, entries)
        .map_err(|e| ArchiveError::new(ArchiveErrorKind::Other, "exportar", e))
}

/// `entries` as CSV, header first.
pub(crate) fn csv(entries: &[Entry], mut out: impl Write) -> Result<(), ArchiveError> {
    let io = ArchiveError::io("exportar");
    writeln!(out, "{HEADER}").map_err(&io)?;
    for e in entries {
        let fields = [
            e.seq.to_string(),
            e.consulta.name().to_owned(),
            e.chave.clone().unwrap_or_default(),
            e.preco.map(|p| p.to_string()).unwrap_or_default(),
            e.data_consulta.clone().unwrap_or_default(),
            instant(e.bought_at),
            e.conta.clone(),
            e.purpose.clone(),
            e.legal_basis.clone(),
            e.content_hash.clone(),
            e.prev_hash.clone(),
            e.hash.clone(),
            e.purged_at.map(instant).unwrap_or_default(),
        ];
        let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
        writeln!(out, "{}", line.join(",")).map_err(&io)?;
    }
    Ok(())
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}
