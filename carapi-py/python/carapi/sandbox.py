"""The contract's reserved sandbox values (docs/contrato.md, "Sandbox"): free, never charged,
answered with `sandbox: True`. The same constants as the Rust `carapi_sdk::sandbox`."""

from ._carapi import SANDBOX as _SANDBOX

CAR_BASICO: str = _SANDBOX["CAR_BASICO"]
"""A CAR code answered with a fixed sample record."""
CAR_NAO_EXISTE: str = _SANDBOX["CAR_NAO_EXISTE"]
"""A CAR code answered with 404 `CAR_NAO_ENCONTRADO`."""
CAR_SEM_SALDO: str = _SANDBOX["CAR_SEM_SALDO"]
"""A CAR code answered with 402 `SALDO_INSUFICIENTE`."""
CPF_DOIS_CARS: str = _SANDBOX["CPF_DOIS_CARS"]
"""A CPF answered with two CAR records."""
CNPJ_TRUNCADO: str = _SANDBOX["CNPJ_TRUNCADO"]
"""A CNPJ answered with a truncated list."""
CPF_NAO_ENCONTRADO: str = _SANDBOX["CPF_NAO_ENCONTRADO"]
"""A CPF answered with 404."""

CODIGOS_CAR = (CAR_BASICO, CAR_NAO_EXISTE, CAR_SEM_SALDO)
DOCUMENTOS = (CPF_DOIS_CARS, CNPJ_TRUNCADO, CPF_NAO_ENCONTRADO)
