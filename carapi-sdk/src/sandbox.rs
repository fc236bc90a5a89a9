//! The contract's reserved sandbox values (contract, section "Sandbox").
//!
//! They answer with fixed data, never read the real base, never debit the balance and never count
//! toward a limit; every response and error they produce carries `sandbox: true`. Authentication
//! still applies: a bad key gets 401 `TOKEN_INVALIDO` for them too. They always pass the SDK's
//! local validation even though they are not hexadecimal CAR codes nor valid CPF/CNPJ.

/// CAR basic, complete and receipt lookups: 200 with example data (the receipt is a real PDF).
pub const CAR_BASICO: &str = "ZZ-0000000-SANDBOXCARBASICO0000000000000000";
/// CAR basic, complete and receipt lookups: 404 `CAR_NAO_ENCONTRADO`.
pub const CAR_NAO_EXISTE: &str = "ZZ-0000000-SANDBOXNAOEXISTE0000000000000000";
/// CAR basic, complete and receipt lookups: 402 `SALDO_INSUFICIENTE`.
pub const CAR_SEM_SALDO: &str = "ZZ-0000000-SANDBOXSEMSALDO00000000000000000";
/// Owner lookup: 200 with two CARs, `truncado: false`.
pub const CPF_DOIS_CARS: &str = "00000000000";
/// Owner lookup: 200 with `truncado: true`.
pub const CNPJ_TRUNCADO: &str = "00000000000000";
/// Owner lookup: 404 `CPF_CNPJ_NAO_ENCONTRADO`.
pub const CPF_NAO_ENCONTRADO: &str = "11111111111";

/// Every reserved CAR code.
pub const CODIGOS_CAR: [&str; 3] = [CAR_BASICO, CAR_NAO_EXISTE, CAR_SEM_SALDO];
/// Every reserved owner document.
pub const DOCUMENTOS: [&str; 3] = [CPF_DOIS_CARS, CNPJ_TRUNCADO, CPF_NAO_ENCONTRADO];

/// True when `codigo` (already normalised) is a reserved CAR code.
#[must_use]
pub fn is_codigo_car(codigo: &str) -> bool {
    CODIGOS_CAR.contains(&codigo)
}

/// True when `documento` is a reserved owner document, masked or bare: white space and the
/// mask characters `.`, `/` and `-` are ignored, as the contract takes documents "with or
/// without mask" (contract, "Lookups"). `000.000.000-00` and `00000000000` are both
/// [`CPF_DOIS_CARS`].
#[must_use]
pub fn is_documento(documento: &str) -> bool {
    reserved_documento(documento).is_some()
}

/// The reserved owner document `documento` stands for, masked or bare (see [`is_documento`]);
/// `None` when it is not one.
///
/// ```
/// use carapi_sdk::sandbox;
/// assert_eq!(sandbox::reserved_documento("000.000.000-00"), Some(sandbox::CPF_DOIS_CARS));
/// assert_eq!(sandbox::reserved_documento("00.000.000/0000-00"), Some(sandbox::CNPJ_TRUNCADO));
/// assert_eq!(sandbox::reserved_documento("529.982.247-25"), None);
/// ```
#[must_use]
pub fn reserved_documento(documento: &str) -> Option<&'static str> {
    let bare: String = documento
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '.' | '/' | '-'))
        .collect();
    DOCUMENTOS.into_iter().find(|d| *d == bare)
}
