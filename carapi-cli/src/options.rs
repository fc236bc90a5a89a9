//! The options every command shares: the global ones ([`Global`]) and `-o/--formato`
//! ([`FormatArgs`]). A leaf module: [`crate::cli`] and every command use it, it uses neither.

use clap::Args;

/// The default maximum age of a reused answer, as typed (`--idade-maxima`): the one place it is
/// written; help texts take it with `concat!` (`archive::DEFAULT_MAX_AGE` is the same text).
macro_rules! default_max_age {
    () => {
        "30d"
    };
}
pub(crate) use default_max_age;

use crate::output::OutputFormat;

/// Options accepted by every command.
#[derive(Debug, Clone, Args)]
pub(crate) struct Global {
    /// Usa o servidor de referência local (em processo, porta efêmera, dados no diretório do usuário)
    #[arg(
        long,
        global = true,
        help_heading = "Opções globais",
        env = "CARAPI_LOCAL",
        hide_env_values = true,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub(crate) local: bool,
    /// URL base da API (tem precedência sobre `carapi config definir base-url`)
    #[arg(
        long = "url-base",
        alias = "base-url",
        global = true,
        help_heading = "Opções globais",
        env = "CARAPI_BASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) base_url: Option<String>,
    /// Silencioso: só dados e erros
    #[arg(
        short,
        long = "silencioso",
        alias = "quiet",
        global = true,
        help_heading = "Opções globais"
    )]
    pub(crate) quiet: bool,
    /// Sem cores (também com a variável NO_COLOR)
    #[arg(
        long = "sem-cor",
        alias = "no-color",
        global = true,
        help_heading = "Opções globais"
    )]
    pub(crate) no_color: bool,
    /// Não usa o paginador (também com CARAPI_PAGER= vazio)
    #[arg(long = "sem-paginador", aliases = ["sem-pager", "no-pager"], global = true, help_heading = "Opções globais")]
    pub(crate) no_pager: bool,
    /// Mostra um resumo de cada requisição HTTP no stderr (-vv: mais detalhes)
    #[arg(short, long = "detalhado", alias = "verbose", global = true, help_heading = "Opções globais", action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// `-o/--formato table|json|csv`: the one meaning of `-o` in every command (files are `--saida`).
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct FormatArgs {
    /// Formato da saída: tabela, o JSON da API, ou CSV (uma linha por item)
    #[arg(
        short = 'o',
        long = "formato",
        alias = "output",
        value_enum,
        value_name = "FORMATO"
    )]
    pub(crate) output: Option<OutputFormat>,
}

/// What a charged lookup declares to the archive of paid answers (`carapi config definir
/// acervo`), and whether it may reuse an archived answer: `car`, `proprietario`, `recibo`, `lote`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ArchiveArgs {
    /// Finalidade da consulta, registrada no acervo (LGPD art. 6, I); tem precedência sobre `carapi config definir finalidade`
    #[arg(long = "finalidade", value_name = "TEXTO", help_heading = "Acervo")]
    pub(crate) purpose: Option<String>,
    /// Base legal (LGPD arts. 7 e 11): consentimento, obrigacao-legal, execucao-contrato, interesse-legitimo, protecao-credito, …
    #[arg(long = "base-legal", value_name = "BASE", help_heading = "Acervo")]
    pub(crate) legal_basis: Option<String>,
    #[arg(
        long = "idade-maxima",
        value_name = "DURACAO",
        help_heading = "Acervo",
        help = concat!(
            "Idade máxima de uma resposta do acervo para ser reaproveitada sem nova compra (ex.: 12h, 90d; padrão ",
            default_max_age!(),
            ")"
        )
    )]
    pub(crate) max_age: Option<String>,
    /// Compra de novo mesmo com resposta recente no acervo (a nova resposta é arquivada). Uma resposta lida do acervo não vai à API: uma chave da API errada só é apontada quando algo é comprado
    #[arg(long = "comprar", help_heading = "Acervo")]
    pub(crate) buy: bool,
}

/// The options of a charged lookup (`car`, `proprietario`): `-o/--formato` after the
/// subcommand and the archive's flags.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ConsultaArgs {
    /// `-o/--formato` given after the subcommand ([`crate::context::Context::format`] falls
    /// back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// The arguments of a free command that takes only `-o/--formato` (`saldo`, `uso`).
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct FormatOnly {
    /// `-o/--formato` given after the subcommand.
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}
