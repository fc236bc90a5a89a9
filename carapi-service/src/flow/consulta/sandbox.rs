//! The fixed answers of the contract's reserved values (docs/contrato.md, "Sandbox"): never
//! recorded, never charged, counted toward no limit; every one, errors included, says
//! `sandbox: true`.

use carapi_sdk::{EndpointConsulta, ErrorCode, sandbox};
use chrono::{DateTime, FixedOffset};

use super::{
    Answer, Chave, car_answer, car_not_found, proprietario_not_found, recibo_indisponivel,
};
use crate::api_error::ApiError;
use crate::dados;

/// The sandbox answer of `chave` on `endpoint` at `data_consulta`.
///
/// # Errors
/// The reserved values' fixed errors (404, 402), with `sandbox: true`.
pub(super) fn answer(
    endpoint: EndpointConsulta,
    chave: &Chave,
    data_consulta: DateTime<FixedOffset>,
) -> Result<Answer, ApiError> {
    match chave {
        Chave::Documento(documento) => match dados::sandbox::proprietario(documento.as_str()) {
            Some(mut r) if documento.as_str() != sandbox::CPF_NAO_ENCONTRADO => {
                r.sandbox = true;
                Ok(Answer::Proprietario(r))
            }
            _ => Err(proprietario_not_found(documento.as_str()).sandbox()),
        },
        Chave::Car(codigo) => {
            match codigo.as_str() {
                sandbox::CAR_NAO_EXISTE => return Err(car_not_found(codigo).sandbox()),
                sandbox::CAR_SEM_SALDO => {
                    return Err(ApiError::new(
                        ErrorCode::SaldoInsuficiente,
                        "Saldo insuficiente (valor reservado de sandbox). Nada foi cobrado.",
                    )
                    .sandbox());
                }
                _ => {}
            }
            let imovel = dados::sandbox::imovel();
            if endpoint != EndpointConsulta::Recibo {
                return Ok(car_answer(endpoint, &imovel, true, false, data_consulta));
            }
            let pdf = crate::recibo::render(&imovel, data_consulta).map_err(|e| {
                tracing::error!(erro = %e, "recibo de sandbox");
                recibo_indisponivel().sandbox()
            })?;
            Ok(Answer::Recibo {
                codigo: codigo.clone(),
                pdf,
            })
        }
    }
}
