//! The one place that maps errors to exit codes and hints (docs/contrato.md, "Errors", for the API codes).
//!
//! | code | meaning |
//! |---|---|
//! | 0 | ok (also: stdout closed early, a broken pipe) |
//! | 1 | other |
//! | 2 | usage: bad arguments or input (also a 400 about the input) |
//! | 3 | authentication: key missing or rejected (401) |
//! | 4 | not found (404) |
//! | 5 | insufficient balance (402) |
//! | 6 | limit exceeded (429) |
//! | 7 | network or server (5xx, transport, undecodable response) |
//! | 10 | not an error: `carapi vigiar` found a change ([`EXIT_CHANGED`]) |
//! | 11 | not an error: `carapi vigiar` changed nothing it checked, but its ceiling left due codes unchecked ([`EXIT_CEILING`]) |
//! | 130 | interrupted (Ctrl-C) |
//!
//! Every error prints `erro: <message> (<CODE>)` and, when there is one, `dica: <hint>`.

use std::io;
use std::process::ExitCode;

use carapi_sdk::{Error as SdkError, ErrorCode};

/// The text listed by `carapi --help` (and the README).
pub(crate) const EXIT_CODES_HELP: &str = "\
Códigos de saída:
  0    sucesso
  1    outro erro
  2    uso incorreto (argumento ou entrada inválida)
  3    autenticação (401): chave ausente ou inválida
  4    não encontrado (404)
  5    saldo insuficiente (402)
  6    limite excedido (429)
  7    rede ou servidor (5xx, falha de conexão)
  10   carapi vigiar: algum imóvel mudou (não é erro)
  11   carapi vigiar: o teto deixou códigos sem verificar, nada mudou nos verificados
  130  interrompido (Ctrl-C)

Ambiente:
  CARAPI_API_KEY     chave da API (antes do chaveiro e do arquivo)
  CARAPI_BASE_URL    URL base da API (como --url-base)
  CARAPI_LOCAL=1     modo local (como --local)
  CARAPI_CONFIG_DIR  diretório de configuração (config.toml, credentials)
  CARAPI_DATA_DIR    diretório de dados do modo local
  CARAPI_KEYRING=off não usar o chaveiro do sistema (usa o arquivo 0600)
  NO_COLOR           sem cores";

/// The exit status of `carapi vigiar` when something changed since the archived answers (for
/// cron): apart from every error code above, so a script tells "changed" from "failed".
pub(crate) const EXIT_CHANGED: u8 = 10;

/// The exit status of `carapi vigiar` when nothing it checked changed but its ceiling (`--teto`)
/// left due codes unchecked: neither "all checked, unchanged" (0) nor "changed"
/// ([`EXIT_CHANGED`], which wins when both hold).
pub(crate) const EXIT_CEILING: u8 = 11;

/// The class of an error: decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Exit 1.
    Other,
    /// Exit 2.
    Usage,
    /// Exit 3 (401, or no key).
    Auth,
    /// Exit 4 (404).
    NotFound,
    /// Exit 5 (402).
    Balance,
    /// Exit 6 (429).
    Limit,
    /// Exit 7 (5xx, transport).
    Network,
    /// Exit 130 (Ctrl-C).
    Interrupted,
    /// Exit 0, silently: stdout was closed (`carapi historico | head`).
    BrokenPipe,
}

impl Kind {
    /// The process exit code.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Kind::Other => 1,
            Kind::Usage => 2,
            Kind::Auth => 3,
            Kind::NotFound => 4,
            Kind::Balance => 5,
            Kind::Limit => 6,
            Kind::Network => 7,
            Kind::Interrupted => 130,
            Kind::BrokenPipe => 0,
        }
    }
}

/// An error of the CLI: what to print and how to exit.
#[derive(Debug)]
pub(crate) struct CliError {
    /// The class (exit code).
    pub(crate) kind: Kind,
    /// Stable code shown in parentheses: the API's code (`SALDO_INSUFICIENTE`) or the CLI's own.
    pub(crate) code: String,
    /// Readable message in Portuguese.
    pub(crate) message: String,
    /// What to do next.
    pub(crate) hint: Option<String>,
}

/// Result with [`CliError`].
pub(crate) type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// A new error.
    pub(crate) fn new(kind: Kind, code: impl Into<String>, message: impl Into<String>) -> Self {
        CliError {
            kind,
            code: code.into(),
            message: message.into(),
            hint: None,
        }
    }

    /// Adds (replaces) the hint.
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A usage error (exit 2) with code `USO`.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::new(Kind::Usage, "USO", message)
    }

    /// Any other failure (exit 1).
    pub(crate) fn other(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Kind::Other, code, message)
    }

    /// Ctrl-C (exit 130) with how to resume.
    pub(crate) fn interrupted(hint: impl Into<String>) -> Self {
        Self::new(Kind::Interrupted, "INTERROMPIDO", "Interrompido (Ctrl-C)").hint(hint)
    }

    /// The exit code.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.kind.exit_code())
    }

    /// A file-system error about `path`.
    pub(crate) fn io_at(path: &std::path::Path, e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return e.into();
        }
        Self::other(
            "ES",
            format!("{}: {}", path.display(), crate::foreign_errors::io(&e)),
        )
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for CliError {}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::new(Kind::BrokenPipe, "EPIPE", "saída fechada")
        } else {
            CliError::other(
                "ES",
                format!("erro de E/S: {}", crate::foreign_errors::io(&e)),
            )
        }
    }
}

impl From<SdkError> for CliError {
    fn from(e: SdkError) -> Self {
        CliError::from_ref(&e)
    }
}

impl CliError {
    /// [`CliError::from`] an SDK error that is only borrowed.
    pub(crate) fn from_ref(e: &SdkError) -> Self {
        match e {
            SdkError::Api(api) if off_contract(api) => off_contract_error(api.status),
            SdkError::Api(api) => from_api(api.status, &api.code, &api.message),
            SdkError::Validation(v) => {
                CliError::new(Kind::Usage, "ENTRADA_INVALIDA", v.to_string())
                    .hint(validation_hint(v))
            }
            SdkError::Transport { .. } => CliError::new(Kind::Network, "REDE", transport(e))
                .hint("verifique a conexão e a URL base (carapi config mostrar) e tente de novo"),
            SdkError::Decode {
                operation,
                status,
                path,
                ..
            } => {
                tracing::debug!("{e}");
                CliError::new(
                    Kind::Network,
                    "RESPOSTA_INVALIDA",
                    format!("o servidor não segue o contrato da API carapi: resposta inesperada de {operation} (HTTP {status}) em `{path}`"),
                )
                .hint("a resposta do servidor não segue o contrato; confira a URL base (carapi config mostrar)")
            }
            SdkError::SpendLimit { .. } => CliError::other("CUSTO_MAXIMO", e.to_string())
                .hint("aumente --max-custo para continuar"),
            SdkError::Timeout { recarga_id, .. } => {
                CliError::other("TEMPO_ESGOTADO", e.to_string()).hint(format!(
                    "para continuar aguardando: carapi recarga status {recarga_id} --esperar"
                ))
            }
            SdkError::Io(io) if io.kind() == io::ErrorKind::BrokenPipe => {
                CliError::new(Kind::BrokenPipe, "EPIPE", "saída fechada")
            }
            SdkError::Io(io) => CliError::other(
                "ES",
                format!("erro de E/S: {}", crate::foreign_errors::io(io)),
            ),
            SdkError::Config(_) => CliError::new(Kind::Usage, "CONFIG", e.to_string())
                .hint("confira a URL base: carapi config definir base-url URL"),
            SdkError::Archive(a) => archive_error(a),
            _ => CliError::other("ERRO", e.to_string()),
        }
    }
}

/// An archive that refused a lookup (nothing was sent), with what to do about it.
fn archive_error(a: &carapi_sdk::archive::ArchiveError) -> CliError {
    use carapi_sdk::archive::ArchiveErrorKind as K;
    let text = carapi_sdk::error_chain(a);
    match a.kind() {
        K::Tampered => CliError::other("ACERVO_ALTERADO", text).hint(
            "confira o acervo com carapi acervo verificar; para comprar a resposta de novo (uma nova entrada), repita com --comprar",
        ),
        K::Purged => CliError::other("TITULAR_EXPURGADO", text).hint(
            "o titular pediu a eliminação dos dados (carapi acervo titular); uma nova consulta é um novo tratamento: só com --comprar e base legal própria",
        ),
        K::Unavailable | K::PoolTimeout => CliError::other("ACERVO", text)
            .hint("nada foi enviado nem cobrado; tente de novo em instantes"),
        _ => CliError::other("ACERVO", text),
    }
}

/// What to check in a value refused before sending, by what it should have been.
fn validation_hint(v: &carapi_sdk::domain::ValidationError) -> &'static str {
    use carapi_sdk::domain::ValidationError as V;
    match v {
        V::CodigoCar(_) => {
            "um código CAR é UF-IIIIIII-<32 hexadecimais> (pontos, minúsculas, espaços ou travessões no lugar dos hífens, ou sem hífens, são aceitos)"
        }
        V::CpfCnpj(_) => "CPF com 11 dígitos ou CNPJ com 14 caracteres, com ou sem máscara",
        _ => "confira o valor",
    }
}

/// The text of an SDK error without the API's own code and hint: what [`CliError::from`] shows
/// (a transport cause in Portuguese, a decode error without serde's English detail).
pub(crate) fn message(e: &SdkError) -> String {
    match e {
        SdkError::Transport { .. } => transport(e),
        SdkError::Decode { .. } | SdkError::Io(_) => CliError::from_ref(e).message,
        _ => e.to_string(),
    }
}

/// The SDK's transport error with its cause in Portuguese ([`crate::foreign_errors::transport`]);
/// the HTTP stack's own chain goes to the debug log (`-vv`).
fn transport(e: &SdkError) -> String {
    let SdkError::Transport {
        operation,
        sent,
        chargeable,
        attempts,
        source,
    } = e
    else {
        return e.to_string();
    };
    tracing::debug!("{e}");
    let phase = if !*sent {
        "requisição não enviada"
    } else if *chargeable {
        "a consulta pode ter sido cobrada"
    } else {
        "a requisição pode ter chegado ao servidor"
    };
    format!(
        "falha de comunicação em {operation} (tentativa {attempts}; {phase}): {}",
        crate::foreign_errors::transport(source)
    )
}

/// The code of an answer that does not follow the contract (exit 7).
const OFF_CONTRACT: &str = "FORA_DO_CONTRATO";

/// True when an error answer's body was not an `ApiError` (contract, "Errors"): the SDK then
/// names it `HTTP_<status>` (an HTML page of a proxy or of another server, an empty body).
fn off_contract(api: &carapi_sdk::ApiError) -> bool {
    matches!(&api.code, ErrorCode::Other(c) if c.as_str() == format!("HTTP_{}", api.status))
}

/// A non-contract answer: the server at the base URL is not a carapi API (exit 7, whatever the
/// status). The URL is added by [`CliError::with_server_url`].
fn off_contract_error(status: u16) -> CliError {
    CliError::new(
        Kind::Network,
        OFF_CONTRACT,
        format!("o servidor não segue o contrato da API carapi (HTTP {status} sem o corpo de erro da API)"),
    )
    .hint("confira a URL base: carapi config mostrar; carapi config definir base-url URL ou --url-base URL")
}

impl CliError {
    /// Names the server in an answer that does not follow the contract (`o servidor em URL`).
    pub(crate) fn with_server_url(mut self, base_url: Option<&str>) -> Self {
        if let Some(url) = base_url
            && (self.code == OFF_CONTRACT || self.code == "RESPOSTA_INVALIDA")
        {
            self.message = self.message.replacen(
                "o servidor não segue",
                &format!("o servidor em {url} não segue"),
                1,
            );
        }
        self
    }
}

fn from_api(status: u16, code: &ErrorCode, message: &str) -> CliError {
    let (kind, hint): (Kind, Option<&str>) = match status {
        401 => (
            Kind::Auth,
            Some("confira a chave: carapi login (ou a variável CARAPI_API_KEY)"),
        ),
        402 => (
            Kind::Balance,
            Some("faça uma recarga: carapi recarga criar 500 (veja carapi recarga faixas)"),
        ),
        404 => (Kind::NotFound, Some(not_found_hint(code))),
        429 => (
            Kind::Limit,
            Some(
                "limite de requisições ou limite diário/mensal atingido: veja carapi saldo e carapi limites",
            ),
        ),
        400 => match code {
            ErrorCode::DocumentoAusente => {
                (Kind::Other, Some("cadastre um CPF/CNPJ no painel da conta"))
            }
            ErrorCode::ConfirmacaoPrecosObrigatoria => (
                Kind::Usage,
                Some("confirme a nova tabela de preços: --confirmar-novos-precos"),
            ),
            ErrorCode::ValorMinimo => (Kind::Usage, Some("o valor mínimo de recarga é R$ 500,00")),
            _ => (Kind::Usage, None),
        },
        s if s >= 500 => (
            Kind::Network,
            Some("falha do servidor; tente de novo em instantes"),
        ),
        _ => (Kind::Other, None),
    };
    let mut err = CliError::new(kind, code.as_str(), message);
    err.hint = hint.map(str::to_owned);
    err
}

fn not_found_hint(code: &ErrorCode) -> &'static str {
    match code {
        ErrorCode::CpfCnpjNaoEncontrado => "nenhum CAR vinculado a este documento",
        ErrorCode::RecargaNaoEncontrada => "confira o ID com carapi recargas",
        ErrorCode::ReciboNaoEncontrado => "o recibo deste CAR não está disponível",
        _ => "confira o código CAR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carapi_sdk::ApiError;

    fn api(status: u16, code: ErrorCode) -> CliError {
        SdkError::Api(ApiError::new(status, code, "msg")).into()
    }

    #[test]
    fn statuses_map_to_exit_codes() {
        assert_eq!(api(401, ErrorCode::TokenInvalido).kind.exit_code(), 3);
        assert_eq!(api(404, ErrorCode::CarNaoEncontrado).kind.exit_code(), 4);
        assert_eq!(api(402, ErrorCode::SaldoInsuficiente).kind.exit_code(), 5);
        assert_eq!(api(429, ErrorCode::LimiteExcedido).kind.exit_code(), 6);
        assert_eq!(api(503, ErrorCode::ServicoIndisponivel).kind.exit_code(), 7);
        assert_eq!(api(400, ErrorCode::CodigoCarInvalido).kind.exit_code(), 2);
        assert_eq!(
            api(402, ErrorCode::SaldoInsuficiente).code,
            "SALDO_INSUFICIENTE"
        );
        let pipe: CliError = io::Error::from(io::ErrorKind::BrokenPipe).into();
        assert_eq!(pipe.kind.exit_code(), 0);
    }
}
