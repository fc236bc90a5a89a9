//! The command tree (clap derive). Names follow the contract (docs/contrato.md); each command's own
//! arguments live in its file under [`crate::commands`].

use clap::{Args, Parser, Subcommand};

use crate::commands;
use crate::error::EXIT_CODES_HELP;
use crate::output::Formato;

/// `carapi`: consultas ao Cadastro Ambiental Rural (CAR), recargas PIX e lotes, pela API carapi.
#[derive(Debug, Parser)]
#[command(
    name = "carapi",
    version,
    about = "Consultas ao Cadastro Ambiental Rural (CAR), recargas PIX e lotes pela API carapi",
    after_help = EXIT_CODES_HELP,
    max_term_width = 100
)]
pub struct Cli {
    /// Global options.
    #[command(flatten)]
    pub global: Global,
    /// Output format (also accepted after the subcommand).
    #[command(flatten)]
    pub formato: FormatoArgs,
    /// The command.
    #[command(subcommand)]
    pub comando: Comando,
}

/// Options accepted by every command.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Usa o servidor de referência local (em processo, porta efêmera, dados no diretório do usuário)
    #[arg(
        long,
        global = true,
        help_heading = "Opções globais",
        env = "CARAPI_LOCAL",
        hide_env_values = true,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub local: bool,
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
    pub base_url: Option<String>,
    /// Silencioso: só dados e erros
    #[arg(
        short,
        long = "silencioso",
        alias = "quiet",
        global = true,
        help_heading = "Opções globais"
    )]
    pub quiet: bool,
    /// Sem cores (também com a variável NO_COLOR)
    #[arg(
        long = "sem-cor",
        alias = "no-color",
        global = true,
        help_heading = "Opções globais"
    )]
    pub no_color: bool,
    /// Não usa o paginador (também com CARAPI_PAGER= vazio)
    #[arg(long = "sem-paginador", aliases = ["sem-pager", "no-pager"], global = true, help_heading = "Opções globais")]
    pub sem_pager: bool,
    /// Mostra um resumo de cada requisição HTTP no stderr (-vv: mais detalhes)
    #[arg(short, long = "detalhado", alias = "verbose", global = true, help_heading = "Opções globais", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `-o/--formato table|json|csv`: the one meaning of `-o` in every command (files are `--saida`).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct FormatoArgs {
    /// Formato da saída: tabela, o JSON da API, ou CSV (uma linha por item)
    #[arg(
        short = 'o',
        long = "formato",
        alias = "output",
        value_enum,
        value_name = "FORMATO"
    )]
    pub output: Option<Formato>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Comando {
    /// Consulta um imóvel pelo código CAR (cobrada)
    Car(commands::car::Args),
    /// Baixa o recibo de inscrição (PDF) de um CAR (cobrada)
    Recibo(commands::recibo::Args),
    /// Lista os CARs vinculados a um CPF/CNPJ (cobrada)
    Proprietario(commands::proprietario::Args),
    /// Saldo, preços efetivos, limites e uso de hoje e do mês
    Saldo(commands::saldo::Args),
    /// Histórico de consultas (mais recentes primeiro)
    Historico(commands::historico::Args),
    /// Limites de consumo (diário e mensal); `limites definir` altera
    Limites(commands::limites::Args),
    /// Uso por endpoint nos últimos 30 dias
    Uso(commands::uso::Args),
    /// Recarga de créditos por PIX: faixas de bônus, criar, status
    Recarga(commands::recarga::Args),
    /// Histórico de recargas
    Recargas(commands::recargas::Args),
    /// Consultas em lote a partir de um arquivo (retomável)
    Lote(commands::lote::Args),
    /// Guarda a chave da API (chaveiro do sistema ou arquivo 0600)
    Login(commands::login::Args),
    /// Apaga a chave guardada
    Logout(commands::logout::Args),
    /// Mostra ou altera a configuração
    Config(commands::config::Args),
    /// Gera o script de autocompletar para o shell
    #[command(name = "completar", alias = "completions")]
    Completions(commands::completions::Args),
    /// Mostra ou grava as páginas de manual (man)
    Man(commands::man::Args),
    /// Servidor de referência local: servir, simular o pagamento de uma recarga
    Local(commands::local::Args),
}
