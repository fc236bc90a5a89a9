//! The command tree (clap derive). Names follow the contract (docs/contrato.md); each command's own
//! arguments live in its file under [`crate::commands`], the options every command shares in
//! [`crate::options`]. Dependencies go one way: `cli` → `commands` → `options`.

use clap::{Parser, Subcommand};

use crate::commands;
use crate::error::EXIT_CODES_HELP;
use crate::options::{FormatArgs, Global};

/// `carapi`: consultas ao Cadastro Ambiental Rural (CAR), recargas PIX e lotes, pela API carapi.
#[derive(Debug, Parser)]
#[command(
    name = "carapi",
    version,
    about = "Consultas ao Cadastro Ambiental Rural (CAR), recargas PIX e lotes pela API carapi",
    after_help = EXIT_CODES_HELP,
    max_term_width = 100
)]
pub(crate) struct Cli {
    /// Global options.
    #[command(flatten)]
    pub(crate) global: Global,
    /// Output format (also accepted after the subcommand).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The command.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    #[command(name = "lote")]
    Batch(commands::batch::Args),
    /// Acervo das respostas pagas: listar, mostrar, titular, expurgar, verificar, exportar
    Acervo(commands::acervo::Args),
    /// Vigia uma lista de CARs: recompra o que passou da idade máxima, até um teto, e mostra o que mudou
    Vigiar(commands::vigiar::Args),
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
