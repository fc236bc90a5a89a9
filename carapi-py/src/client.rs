//! `carapi._carapi.Client`: [`carapi_sdk::Client`] with a synchronous Python face. One method
//! per SDK method, same names; results through [`conv::para_py`], errors through
//! [`erros::para_py`]. `carapi.Client` (python/carapi/__init__.py) subclasses it and adds `lote`.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use carapi_sdk::{
    DEFAULT_RATE_LIMIT, EndpointConsulta, HistoricoParams, LimitesUpdate, NovaRecarga,
    RecargaStatus, RecargasParams, StatusConsulta, Uuid,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::historico::Paginas;
use crate::{chamar, conv, erros};

/// Time-out of [`Client::aguardar_recarga`] when none is given, seconds (a PIX charge lives
/// 10 minutes at most before a new one is created, contract "Top-up endpoints").
const AGUARDAR_PADRAO_S: f64 = 600.0;

/// The synchronous client (see `carapi/__init__.pyi` for the Python signatures).
#[pyclass(module = "carapi._carapi", name = "Client", subclass, frozen)]
#[derive(Debug)]
pub struct Client {
    pub(crate) sdk: carapi_sdk::Client,
}

fn segundos(nome: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| PyValueError::new_err(format!("{nome} inválido: {s} s")))
}

fn uuid(texto: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    let s = texto.str()?.to_string();
    Uuid::parse_str(s.trim())
        .map_err(|_| PyValueError::new_err(format!("recarga_id inválido: {s:?}")))
}

fn endpoint(e: Option<&str>) -> PyResult<Option<EndpointConsulta>> {
    e.map(|s| EndpointConsulta::from_str(s).map_err(PyValueError::new_err))
        .transpose()
}

fn status_consulta(s: Option<&str>) -> PyResult<Option<StatusConsulta>> {
    match s.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(None),
        Some("sucesso") => Ok(Some(StatusConsulta::Sucesso)),
        Some("erro") => Ok(Some(StatusConsulta::Erro)),
        Some(outro) => Err(PyValueError::new_err(format!(
            "status inválido: {outro:?} (sucesso ou erro)"
        ))),
    }
}

/// `historico`'s query from Python's keyword arguments.
pub(crate) fn params_historico(
    page: Option<u32>,
    size: Option<u32>,
    busca: Option<String>,
    endpoint_: Option<&str>,
    status: Option<&str>,
) -> PyResult<HistoricoParams> {
    Ok(HistoricoParams {
        page,
        size,
        busca,
        endpoint: endpoint(endpoint_)?,
        status: status_consulta(status)?,
    })
}

/// One field of `atualizar_limites`'s keywords: absent keeps, `None` removes, a value sets.
fn campo<'py, T>(
    campos: Option<&Bound<'py, PyDict>>,
    nome: &str,
    conv: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<Option<T>>> {
    let Some(v) = campos.map(|c| c.get_item(nome)).transpose()?.flatten() else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(Some(None));
    }
    conv(&v).map(|x| Some(Some(x)))
}

/// Options of [`Client::new`] beyond the URL and the key.
#[derive(Debug)]
pub(crate) struct Opcoes {
    pub(crate) max_spend: Option<rust_decimal::Decimal>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) rate_limit: Option<u32>,
    pub(crate) poll_interval: Option<Duration>,
}

impl Client {
    /// The SDK client from `builder` and `o`.
    pub(crate) fn construir(
        py: Python<'_>,
        mut b: carapi_sdk::ClientBuilder,
        o: Opcoes,
    ) -> PyResult<Self> {
        if let Some(m) = o.max_spend {
            b = b.max_spend(m);
        }
        if let Some(t) = o.timeout {
            b = b.timeout(t);
        }
        if let Some(p) = o.poll_interval {
            b = b.poll_interval(p);
        }
        b = b.rate_limit(o.rate_limit.and_then(NonZeroU32::new));
        let sdk = b.build().map_err(|e| erros::para_py(py, e))?;
        Ok(Client { sdk })
    }
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (base_url=None, api_key=None, max_spend=None, timeout=None, *,
        rate_limit=Some(DEFAULT_RATE_LIMIT.get()), poll_interval=None))]
    fn new(
        py: Python<'_>,
        base_url: Option<String>,
        api_key: Option<String>,
        max_spend: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        rate_limit: Option<u32>,
        poll_interval: Option<f64>,
    ) -> PyResult<Self> {
        let mut b = carapi_sdk::Client::builder();
        if let Some(u) = base_url {
            b = b.base_url(u);
        }
        if let Some(k) = api_key {
            b = b.api_key(k);
        }
        let o = Opcoes {
            max_spend: max_spend.map(conv::dinheiro).transpose()?,
            timeout: timeout.map(|t| segundos("timeout", t)).transpose()?,
            rate_limit,
            poll_interval: poll_interval
                .map(|t| segundos("poll_interval", t))
                .transpose()?,
        };
        Client::construir(py, b, o)
    }

    /// The base address (without `/v1`).
    #[getter]
    fn base_url(&self) -> String {
        self.sdk
            .base_url()
            .as_str()
            .trim_end_matches('/')
            .to_owned()
    }

    /// The spend cap, BRL, or `None`.
    #[getter]
    fn max_spend(&self) -> Option<rust_decimal::Decimal> {
        self.sdk.max_spend()
    }

    fn car<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.car(codigo))?;
        conv::para_py(py, &r)
    }

    fn car_completo<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.car_completo(codigo))?;
        conv::para_py(py, &r)
    }

    fn recibo<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyBytes>> {
        let r = chamar(py, self.sdk.recibo(codigo))?;
        Ok(PyBytes::new(py, &r.bytes))
    }

    fn recibo_para_arquivo<'py>(
        &self,
        py: Python<'py>,
        codigo: &str,
        caminho: PathBuf,
    ) -> PyResult<Bound<'py, PyDict>> {
        let info = chamar(py, self.sdk.recibo_to_file(codigo, caminho))?;
        let d = PyDict::new(py);
        d.set_item("path", info.path)?;
        d.set_item("filename", info.filename)?;
        d.set_item("bytes", info.bytes)?;
        Ok(d)
    }

    fn proprietario<'py>(&self, py: Python<'py>, documento: &str) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.proprietario(documento))?;
        conv::para_py(py, &r)
    }

    fn saldo<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.saldo())?;
        conv::para_py(py, &r)
    }

    fn precos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.precos())?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (page=1, size=20, busca=None, endpoint=None, status=None))]
    fn historico<'py>(
        &self,
        py: Python<'py>,
        page: Option<u32>,
        size: Option<u32>,
        busca: Option<String>,
        endpoint: Option<&str>,
        status: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = params_historico(page, size, busca, endpoint, status)?;
        let r = chamar(py, self.sdk.historico(&p))?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (page=None, size=None, busca=None, endpoint=None, status=None))]
    fn historico_todo(
        &self,
        page: Option<u32>,
        size: Option<u32>,
        busca: Option<String>,
        endpoint: Option<&str>,
        status: Option<&str>,
    ) -> PyResult<Paginas> {
        let p = params_historico(page, size, busca, endpoint, status)?;
        Ok(Paginas::historico(&self.sdk, p))
    }

    fn limites<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.limites())?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (**campos))]
    fn atualizar_limites<'py>(
        &self,
        py: Python<'py>,
        campos: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(c) = campos {
            for k in c.keys() {
                let k: String = k.extract()?;
                if k != "diario" && k != "mensal" {
                    return Err(PyValueError::new_err(format!(
                        "atualizar_limites: argumento desconhecido {k:?} (diario, mensal)"
                    )));
                }
            }
        }
        let update = LimitesUpdate {
            limite_diario_requisicoes: campo(campos, "diario", |v| v.extract::<u32>())?,
            limite_mensal_reais: campo(campos, "mensal", conv::dinheiro)?,
        };
        let r = chamar(py, self.sdk.atualizar_limites(&update))?;
        conv::para_py(py, &r)
    }

    fn uso<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = chamar(py, self.sdk.uso())?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (valor=None))]
    fn faixas_recarga<'py>(
        &self,
        py: Python<'py>,
        valor: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let valor = valor.map(conv::dinheiro).transpose()?;
        let r = chamar(py, self.sdk.faixas_recarga(valor))?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (valor, confirmar_novos_precos=false))]
    fn criar_recarga<'py>(
        &self,
        py: Python<'py>,
        valor: &Bound<'py, PyAny>,
        confirmar_novos_precos: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let nova = NovaRecarga {
            valor: conv::dinheiro(valor)?,
            confirmar_novos_precos,
        };
        let r = chamar(py, self.sdk.criar_recarga(&nova))?;
        conv::para_py(py, &r)
    }

    fn recarga<'py>(
        &self,
        py: Python<'py>,
        recarga_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = uuid(recarga_id)?;
        let r = chamar(py, self.sdk.recarga(id))?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (recarga_id, timeout=AGUARDAR_PADRAO_S))]
    fn aguardar_recarga<'py>(
        &self,
        py: Python<'py>,
        recarga_id: &Bound<'py, PyAny>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = uuid(recarga_id)?;
        let t = segundos("timeout", timeout)?;
        let r = chamar(py, self.sdk.wait_for_recarga(id, t))?;
        conv::para_py(py, &r)
    }

    #[pyo3(signature = (page=None, size=None, status=None))]
    fn recargas<'py>(
        &self,
        py: Python<'py>,
        page: Option<u32>,
        size: Option<u32>,
        status: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let status = status
            .map(|s| RecargaStatus::from_str(s).map_err(PyValueError::new_err))
            .transpose()?;
        let p = RecargasParams { page, size, status };
        let r = chamar(py, self.sdk.recargas(&p))?;
        conv::para_py(py, &r)
    }

    /// `{"confirmado", "incerto", "total"}` as `Decimal` (BRL) and `"nao_precificadas"`.
    fn gasto<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let g = self.sdk.gasto();
        let d = PyDict::new(py);
        d.set_item("confirmado", conv::brl(g.confirmado))?;
        d.set_item("incerto", conv::brl(g.uncertain))?;
        d.set_item("total", conv::brl(g.total()))?;
        d.set_item("nao_precificadas", g.nao_precificadas)?;
        Ok(d)
    }

    /// `{"cobradas", "nao_cobradas", "pendentes"}` (counts of lookups).
    fn resolver_incertos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = chamar(py, self.sdk.settle_uncertain())?;
        let d = PyDict::new(py);
        d.set_item("cobradas", r.cobradas)?;
        d.set_item("nao_cobradas", r.nao_cobradas)?;
        d.set_item("pendentes", r.pendentes)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("carapi.Client(base_url={:?})", self.base_url())
    }
}
