//! Errors of other crates told in Portuguese at the CLI boundary: everything the CLI prints is
//! Portuguese, and the `Display` of `std::io`, `url`, `keyring` and the HTTP stack is English
//! (`No such file or directory (os error 2)`, `relative URL without a base`, `Platform secure
//! storage failure: ...`, `tcp connect error: Connection refused`). The original text stays
//! available with `-vv` (logged at debug level by the callers that drop it).

use std::io;

/// Why a URL did not parse.
pub(crate) fn url(e: url::ParseError) -> &'static str {
    use url::ParseError as P;
    match e {
        P::RelativeUrlWithoutBase | P::RelativeUrlWithCannotBeABaseBase => {
            "falta o esquema: comece com http:// ou https://"
        }
        P::EmptyHost => "falta o nome do servidor",
        P::InvalidPort => "porta inválida",
        P::InvalidIpv4Address => "endereço IPv4 inválido",
        P::InvalidIpv6Address => "endereço IPv6 inválido",
        P::InvalidDomainCharacter => "caractere inválido no nome do servidor",
        P::IdnaError => "nome de domínio internacional inválido",
        P::Overflow => "URL longa demais",
        _ => "URL mal formada",
    }
}

/// An I/O error in Portuguese: the usual kinds by name; others by the system's error number;
/// an error the program made itself (no OS error, kind `Other`) by its own text.
pub(crate) fn io(e: &io::Error) -> String {
    use io::ErrorKind as K;
    let text = match e.kind() {
        K::NotFound => "arquivo ou diretório não encontrado",
        K::PermissionDenied => "permissão negada",
        K::AlreadyExists => "já existe",
        K::IsADirectory => "é um diretório",
        K::NotADirectory => "não é um diretório",
        K::DirectoryNotEmpty => "o diretório não está vazio",
        K::ReadOnlyFilesystem => "sistema de arquivos somente leitura",
        K::StorageFull => "disco cheio",
        K::QuotaExceeded => "cota de disco excedida",
        K::FileTooLarge => "arquivo grande demais",
        K::InvalidFilename => "nome de arquivo inválido",
        K::InvalidData => "conteúdo inválido (não é texto UTF-8?)",
        K::UnexpectedEof => "o arquivo terminou antes do esperado",
        K::TimedOut => "tempo esgotado",
        K::ConnectionRefused => "conexão recusada",
        K::ConnectionReset | K::ConnectionAborted => "conexão interrompida",
        K::NotConnected => "sem conexão",
        K::AddrInUse => "endereço já em uso",
        K::AddrNotAvailable => "endereço indisponível nesta máquina",
        K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown => "rede inacessível",
        K::BrokenPipe => "saída fechada",
        K::OutOfMemory => "memória insuficiente",
        K::Interrupted => "operação interrompida",
        _ => {
            return match e.raw_os_error() {
                Some(n) => format!("erro do sistema (código {n})"),
                None => e.to_string(),
            };
        }
    };
    text.to_owned()
}

/// Why the OS keyring failed (the `keyring` crate's error).
pub(crate) fn keyring(e: &keyring::Error) -> String {
    use keyring::Error as E;
    match e {
        E::PlatformFailure(_) => {
            "o serviço de chaveiro não respondeu (no Linux: Secret Service no D-Bus da sessão)"
                .to_owned()
        }
        E::NoStorageAccess(_) => "sem acesso ao chaveiro (está bloqueado?)".to_owned(),
        E::NoEntry => "nenhuma chave guardada no chaveiro".to_owned(),
        E::BadEncoding(_) => "a chave guardada no chaveiro não é texto UTF-8".to_owned(),
        E::TooLong(field, max) => {
            format!("{field} longo demais para o chaveiro (máximo {max})")
        }
        E::Invalid(field, _) => format!("{field} inválido para o chaveiro"),
        E::Ambiguous(_) => "mais de uma chave do carapi no chaveiro".to_owned(),
        _ => "erro do chaveiro".to_owned(),
    }
}

/// Why an HTTP request failed, from its cause chain: the innermost I/O error when there is one
/// ([`io()`]), else what the chain says in reqwest's terms (time-out, connection, name lookup).
pub(crate) fn transport(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut text = String::new();
    while let Some(c) = cause {
        if let Some(io_err) = c.downcast_ref::<io::Error>()
            && (io_err.raw_os_error().is_some() || io_err.kind() != io::ErrorKind::Other)
        {
            return io(io_err);
        }
        text.push_str(&c.to_string().to_ascii_lowercase());
        text.push(' ');
        cause = c.source();
    }
    if text.contains("dns") || text.contains("lookup") || text.contains("resolve") {
        "nome do servidor não encontrado (DNS)".to_owned()
    } else if text.contains("timed out") || text.contains("timeout") {
        "tempo esgotado".to_owned()
    } else if text.contains("certificate") || text.contains("tls") {
        "falha na conexão segura (TLS/certificado)".to_owned()
    } else if text.contains("connect") {
        "não foi possível conectar ao servidor".to_owned()
    } else {
        "a conexão com o servidor falhou".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_of_the_system_are_portuguese() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(io(&e), "arquivo ou diretório não encontrado");
        let e = io::Error::other("mensagem própria");
        assert_eq!(io(&e), "mensagem própria");
    }

    #[test]
    fn url_errors_are_portuguese() {
        let e = url::Url::parse("foo").unwrap_err();
        assert!(url(e).starts_with("falta o esquema"));
        let e = url::Url::parse("http://[::1").unwrap_err();
        assert_eq!(url(e), "endereço IPv6 inválido");
    }

    #[test]
    fn transport_errors_name_the_io_cause() {
        #[derive(Debug)]
        struct Wrapped(io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error sending request")
            }
        }
        impl std::error::Error for Wrapped {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Wrapped(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(transport(&e), "conexão recusada");
    }
}
