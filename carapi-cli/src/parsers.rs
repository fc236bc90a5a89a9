//! Value parsers of the command line whose errors are Portuguese (docs/contrato.md, and the
//! CLI's rule that everything it prints is Portuguese): clap shows a parser's error after
//! `valor inválido 'X' para <ARG>: ` ([`crate::help::message`]), so the messages of `uuid`,
//! `humantime`, `std` (`invalid length: found 3`, `unknown time unit`, `invalid digit found in
//! string`, `invalid socket address syntax`) would otherwise reach the user as they are.

use std::net::SocketAddr;

use uuid::Uuid;

/// A top-up id (`recargaId`, a UUID in the contract): 32 hexadecimal digits, with or without
/// hyphens, as `carapi recarga criar` and `carapi recargas` show it.
///
/// # Errors
/// A Portuguese message when `s` is not a UUID.
pub(crate) fn parse_id(s: &str) -> Result<Uuid, String> {
    Uuid::try_parse(s.trim()).map_err(|_| {
        "não é um ID de recarga: use o ID mostrado por `carapi recarga criar` ou `carapi recargas` \
         (36 caracteres, como 0b5c9e2a-1f3d-4c6e-9a7b-2d4e6f8a0c1e)"
            .to_owned()
    })
}

/// A duration such as `90s`, `30m`, `1h` or `1h30m` (humantime's syntax).
///
/// # Errors
/// A Portuguese message when `s` is not a duration.
pub(crate) fn parse_duration(s: &str) -> Result<humantime::Duration, String> {
    humantime::parse_duration(s.trim())
        .map(Into::into)
        .map_err(|_| "use um número e uma unidade: 90s, 30m, 1h ou 1h30m".to_owned())
}

/// A page number or page size: an integer from 1 (contract, "Pagination").
///
/// # Errors
/// A Portuguese message when `s` is not a positive integer that fits 32 bits.
pub(crate) fn parse_positive(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "use um número inteiro a partir de 1".to_owned())
}

/// A listening address `IP:PORTA`, e.g. `127.0.0.1:8080` or `[::1]:8080`.
///
/// # Errors
/// A Portuguese message when `s` is not an IP address and a port.
pub(crate) fn parse_address(s: &str) -> Result<SocketAddr, String> {
    s.trim()
        .parse()
        .map_err(|_| "use IP:PORTA, como 127.0.0.1:8080 ou 0.0.0.0:8080".to_owned())
}

/// Items per page the server returns at most (contract, `size`: "reduced to 100").
const MAX_PAGE_SIZE: u32 = 100;

/// `--por-pagina N` as sent: above [`MAX_PAGE_SIZE`] the server reduces it, so the CLI says so
/// (a warning) and sends the maximum.
pub(crate) fn page_size(ctx: &mut crate::context::Context, n: Option<u32>) -> Option<u32> {
    match n {
        Some(n) if n > MAX_PAGE_SIZE => {
            ctx.shell.warn(format!(
                "--por-pagina {n} reduzido para {MAX_PAGE_SIZE} (o máximo por página); para ver tudo, use --todas"
            ));
            Some(MAX_PAGE_SIZE)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_accept_the_usual_forms() {
        let id = "0b5c9e2a-1f3d-4c6e-9a7b-2d4e6f8a0c1e";
        assert_eq!(parse_id(id).unwrap().to_string(), id);
        assert_eq!(parse_id(&id.replace('-', "")).unwrap().to_string(), id);
        assert_eq!(
            std::time::Duration::from(parse_duration("1h30m").unwrap()).as_secs(),
            5400
        );
        assert_eq!(parse_positive("20").unwrap(), 20);
        assert_eq!(parse_address("127.0.0.1:8080").unwrap().port(), 8080);
    }

    #[test]
    fn errors_are_portuguese() {
        assert!(parse_id("abc").unwrap_err().starts_with("não é um ID"));
        assert!(parse_duration("5x").unwrap_err().contains("unidade"));
        assert!(parse_positive("0").unwrap_err().contains("a partir de 1"));
        assert!(parse_positive("abc").is_err());
        assert!(parse_address("foo").unwrap_err().contains("IP:PORTA"));
    }
}
