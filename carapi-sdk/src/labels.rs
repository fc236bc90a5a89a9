//! The Portuguese column titles of the fields a person reads in a table or a spreadsheet: one
//! map from a field's name (the contract's camelCase name, `areaTotalHa`, or the name of a
//! column the tools add, `chave`, `preco`, `origem`) to its title (`Área total (ha)`). The
//! CLI's tables and `.xlsx`, and the Python package's `to_excel`, all read it, so a column is
//! titled the same everywhere.
//!
//! A leaf module: plain data, no dependency on the rest of the SDK.
//!
//! ```
//! use carapi_sdk::labels;
//! assert_eq!(labels::title("areaTotalHa"), Some("Área total (ha)"));
//! assert_eq!(labels::title_or_name("campoNovo"), "campoNovo");
//! ```

/// Every `(field, title)` pair, grouped by where the fields come from. A field's title is the
/// same in every group it appears in, so each name is listed once.
pub const TITLES: &[(&str, &str)] = &[
    // A CAR record (`CarDadosBasicos`, `CarDadosCompletos`, docs/contrato.md).
    ("codigoCar", "Código CAR"),
    ("nomeImovel", "Nome do imóvel"),
    ("areaTotalHa", "Área total (ha)"),
    ("modulosFiscais", "Módulos fiscais"),
    ("dataCadastro", "Data de cadastro"),
    ("tipoImovel", "Tipo de imóvel"),
    ("municipio", "Município"),
    ("uf", "UF"),
    ("matriculaNumero", "Matrícula"),
    ("matriculaData", "Data da matrícula"),
    ("matriculaCartorio", "Cartório"),
    ("codigoProtocolo", "Código de protocolo"),
    ("latitude", "Latitude"),
    ("longitude", "Longitude"),
    ("proprietariosNomes", "Proprietários"),
    ("proprietariosCpfs", "CPF/CNPJ dos proprietários"),
    // A lookup's answer around its record (`CarResponse`).
    ("dataConsulta", "Data da consulta"),
    ("dataExpiracao", "Atualizado na origem em"),
    ("cache", "Da base consolidada (cache)"),
    ("sandbox", "Sandbox (sem cobrança)"),
    // An owner lookup (`ProprietarioResponse` and its items).
    ("registroCar", "Código CAR"),
    ("proprietarioConsultado", "Proprietário"),
    ("total", "CARs do documento"),
    ("truncado", "Lista truncada"),
    // The columns a batch adds (CLI `lote`, Python `lote`): the key of each input line, what
    // became of it, what it cost, where the answer came from; the state and the IBGE
    // municipality its CAR code names (derived from the code: the record's own `municipio` may
    // differ), to join IBGE tables.
    ("linha", "Linha"),
    ("entrada", "Entrada"),
    ("chave", "Chave"),
    ("status", "Situação"),
    ("repetida", "Repetida"),
    ("httpStatus", "HTTP"),
    ("codigoErro", "Código do erro"),
    ("mensagem", "Mensagem"),
    ("cobrado", "Cobrado"),
    ("preco", "Preço (R$)"),
    ("arquivo", "Arquivo"),
    ("origem", "Origem"),
    ("compradoEm", "Comprado em"),
    ("siglaUf", "Sigla da UF"),
    ("municipioIbgeDoCodigo", "Município IBGE (do código CAR)"),
    ("latitudeDms", "Latitude (GMS)"),
    ("longitudeDms", "Longitude (GMS)"),
    ("semPosicao", "Sem posição"),
    // The archive of paid answers (its entries).
    ("seq", "Seq"),
    ("operacao", "Operação"),
    ("conta", "Conta (impressão da chave)"),
    ("finalidade", "Finalidade"),
    ("baseLegal", "Base legal"),
    ("hashConteudo", "Hash do conteúdo"),
    ("hashAnterior", "Hash anterior"),
    ("hash", "Hash"),
    ("expurgadoEm", "Expurgado em"),
    // Watching a list (CLI `vigiar`): a code's outcome and its changes field by field.
    ("situacao", "Situação"),
    ("campo", "Campo"),
    ("antes", "Antes"),
    ("depois", "Depois"),
    ("anteriorCompradoEm", "Anterior comprado em"),
    ("proprietarios", "Proprietários"),
];

/// The Portuguese title of the column `field` (see [`TITLES`]); `None` for a name the map does
/// not know.
#[must_use]
pub fn title(field: &str) -> Option<&'static str> {
    TITLES.iter().find(|(f, _)| *f == field).map(|(_, t)| *t)
}

/// [`title`], or `field` itself when the map does not know it (a field a newer server added).
#[must_use]
pub fn title_or_name(field: &str) -> &str {
    title(field).unwrap_or(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_one_title() {
        let mut names: Vec<&str> = TITLES.iter().map(|(f, _)| *f).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a field listed twice");
        assert!(TITLES.iter().all(|(_, t)| !t.is_empty()));
    }
}
