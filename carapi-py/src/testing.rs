//! `carapi._carapi.TestServer`: [`carapi_test_double::TestServer`] for Python tests
//! (wrapped by `carapi.testing.TestServer`, a context manager). The server runs on the
//! process's runtime, so it keeps answering while Python waits on a client call (also while
//! the parent waits on forked children that call it). It belongs to the process that started
//! it: in a child after a fork its methods raise `RuntimeError` (its threads are not there).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use carapi_test_double::{self as double, ContaCriada, ContaId, FaultRule, ServerError};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value, json};

use crate::{block_on, conv, process};

/// The reference server in-process as a test double (`carapi.testing.TestServer`).
///
/// ServidorTeste(*, limite_taxa=10, banco=None)
///
/// Args:
///     limite_taxa: requests per second per key (the contract's 10); None turns the
///         server's limiter off.
///     banco: a database URL (`postgres://...`); default a fresh in-memory SQLite database
///         with the bundled records (`carapi.testing.IMOVEIS`).
#[pyclass(module = "carapi._carapi", name = "ServidorTeste", subclass, frozen)]
#[derive(Debug)]
pub struct TestServer {
    srv: Mutex<Option<Arc<double::TestServer>>>,
    contas: Mutex<HashMap<String, ContaId>>,
    pid: u32,
}

fn server_error(e: ServerError) -> PyErr {
    PyRuntimeError::new_err(format!("servidor de teste: {e}"))
}

impl TestServer {
    fn srv(&self) -> PyResult<Arc<double::TestServer>> {
        if !process::is_current(self.pid) {
            return Err(PyRuntimeError::new_err(
                "servidor de teste iniciado em outro processo (antes do fork): use-o no processo que o iniciou",
            ));
        }
        self.srv
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("servidor de teste encerrado"))
    }

    fn created_conta(&self, api_key: &str) -> PyResult<ContaCriada> {
        let contas = self
            .contas
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?;
        let conta_id = *contas.get(api_key).ok_or_else(|| {
            PyValueError::new_err("conta desconhecida: use uma chave criada por este servidor")
        })?;
        Ok(ContaCriada {
            conta_id,
            api_key: api_key.to_owned(),
        })
    }
}

/// The JSON form of a fault rule (`FaultRule`): `{"falha": {"tipo": …}, "rota", "metodo",
/// "conta", "vezes"}`; the fault's own fields come as camelCase keys.
fn fault_rule_json(kind: &str, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    let mut fault = Map::new();
    fault.insert("tipo".into(), Value::String(kind.to_owned()));
    if let Some(c) = fields {
        for (k, v) in c.iter() {
            let k: String = k.extract()?;
            let name = match k.as_str() {
                "retry_after" => "retryAfter".to_owned(),
                _ => k,
            };
            fault.insert(name, py_to_json(&v)?);
        }
    }
    let mut rule = Map::new();
    rule.insert("falha".into(), Value::Object(fault));
    Ok(rule)
}

fn py_to_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        Ok(Value::Null)
    } else if let Ok(b) = v.extract::<bool>() {
        Ok(Value::Bool(b))
    } else if let Ok(n) = v.extract::<u64>() {
        Ok(json!(n))
    } else {
        Ok(Value::String(v.str()?.to_string()))
    }
}

#[pymethods]
impl TestServer {
    #[new]
    #[pyo3(signature = (*, limite_taxa=Some(10), banco=None),
        text_signature = "(*, limite_taxa=10, banco=None)")]
    fn new(py: Python<'_>, limite_taxa: Option<u32>, banco: Option<String>) -> PyResult<Self> {
        let mut c = double::TestServer::builder().rate_limit(limite_taxa);
        if let Some(url) = banco {
            c = c.database(url);
        }
        let srv = block_on(py, c.start()).map_err(server_error)?;
        Ok(TestServer {
            srv: Mutex::new(Some(Arc::new(srv))),
            contas: Mutex::new(HashMap::new()),
            pid: process::current_pid(),
        })
    }

    /// The server's address, `http://127.0.0.1:<port>` (without `/v1`).
    #[getter]
    fn base_url(&self) -> PyResult<String> {
        Ok(self.srv()?.base_url())
    }

    /// Creates an account and returns its API key (`str`).
    ///
    /// Args:
    ///     saldo: the balance, BRL (`Decimal`, `int` or `str`), default 0.
    ///     legado: True puts the account on the legacy price table (until its next top-up).
    ///     documento: the CPF/CNPJ of the account's user (PIX top-ups need one; a valid
    ///         fictitious one by default).
    ///     sem_documento: True leaves the user without a document (400 DOCUMENTO_AUSENTE).
    ///     limite_diario: charged lookups per Brasília day.
    ///     limite_mensal: spending per Brasília month, BRL.
    ///
    /// Raises:
    ///     TypeError: another keyword. RuntimeError: the server was stopped.
    #[pyo3(signature = (saldo=None, legado=false, documento=None, **options))]
    fn conta(
        &self,
        py: Python<'_>,
        saldo: Option<&Bound<'_, PyAny>>,
        legado: bool,
        documento: Option<String>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let srv = self.srv()?;
        let mut b = srv.conta();
        if let Some(s) = saldo {
            b = b.saldo(conv::money(s)?);
        }
        if legado {
            b = b.legado();
        }
        if let Some(d) = documento {
            b = b.documento(d);
        }
        for (k, v) in options.into_iter().flat_map(|o| o.iter()) {
            let k: String = k.extract()?;
            b = match k.as_str() {
                "sem_documento" if v.extract::<bool>()? => b.without_documento(),
                "sem_documento" => b,
                "limite_diario" => b.limite_diario(v.extract()?),
                "limite_mensal" => b.limite_mensal(conv::money(&v)?),
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "conta(): argumento desconhecido {k:?} (sem_documento, limite_diario, limite_mensal)"
                    )));
                }
            };
        }
        let conta = block_on(py, b.create()).map_err(server_error)?;
        self.contas
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .insert(conta.api_key.clone(), conta.conta_id);
        Ok(conta.api_key)
    }

    /// Adds a fault rule; returns its id. See `carapi.testing.TestServer.falhar`.
    #[pyo3(signature = (tipo, *, rota=None, metodo=None, conta=None, vezes=Some(1), **fields),
        text_signature = "($self, /, tipo, *, rota=None, metodo=None, conta=None, vezes=1, **campos)")]
    fn falhar(
        &self,
        tipo: &str,
        rota: Option<String>,
        metodo: Option<String>,
        conta: Option<String>,
        vezes: Option<u32>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        let mut rule = fault_rule_json(tipo, fields)?;
        rule.insert("rota".into(), json!(rota));
        rule.insert("metodo".into(), json!(metodo));
        let conta = conta.map(|k| self.created_conta(&k)).transpose()?;
        rule.insert("conta".into(), json!(conta.map(|c| c.conta_id.0)));
        rule.insert("vezes".into(), json!(vezes));
        let rule: FaultRule = serde_json::from_value(Value::Object(rule))
            .map_err(|e| PyValueError::new_err(format!("falha inválida: {e}")))?;
        self.srv()?
            .try_inject(rule)
            .map_err(|e| PyValueError::new_err(format!("falha inválida: {e}")))
    }

    /// Removes the fault rule `id`; True when it was there.
    fn remover_falha(&self, id: u64) -> PyResult<bool> {
        Ok(self.srv()?.remove_fault(id))
    }

    /// Removes every fault rule.
    fn limpar_falhas(&self) -> PyResult<()> {
        self.srv()?.clear_faults();
        Ok(())
    }

    /// The test clock now, an aware `datetime` in UTC (every time-based rule of the server
    /// reads it: PIX reuse window, reconciliation, daily and monthly limits).
    fn agora(&self) -> PyResult<chrono::DateTime<chrono::Utc>> {
        Ok(self.srv()?.clock().now())
    }

    /// Moves the test clock forward `segundos` seconds and runs what became due (the
    /// reconciliation of pending top-ups every 2 minutes).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.Advance`): agora (the clock after the move), reconciliadas
    ///     (top-ups confirmed by reconciliation).
    fn avancar<'py>(&self, py: Python<'py>, segundos: f64) -> PyResult<Bound<'py, PyDict>> {
        let d = Duration::try_from_secs_f64(segundos)
            .map_err(|_| PyValueError::new_err(format!("segundos inválidos: {segundos}")))?;
        let srv = self.srv()?;
        let a = block_on(py, srv.advance(d)).map_err(server_error)?;
        let r = PyDict::new(py);
        r.set_item("agora", a.now)?;
        r.set_item("reconciliadas", a.reconciled)?;
        Ok(r)
    }

    /// Pays a PIX top-up at the (simulated) bank. With the webhook (default) the top-up is
    /// confirmed at once; with `sem_webhook=True` it stays `Pendente` until the
    /// reconciliation (`advance(120)`).
    #[pyo3(signature = (recarga_id, *, sem_webhook=false))]
    fn pagar(
        &self,
        py: Python<'_>,
        recarga_id: &Bound<'_, PyAny>,
        sem_webhook: bool,
    ) -> PyResult<()> {
        let text = recarga_id.str()?.to_string();
        let id = carapi_sdk::Uuid::parse_str(text.trim())
            .map_err(|_| PyValueError::new_err(format!("recarga_id inválido: {text:?}")))?;
        let srv = self.srv()?;
        let payment = srv.pay(id);
        let payment = if sem_webhook {
            payment.without_webhook()
        } else {
            payment
        };
        block_on(py, async move { payment.await }).map_err(server_error)
    }

    /// The account of `api_key` (a key made by `conta()`) as the store has it.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.ContaState`): contaId, saldo, legado, limiteDiario,
    ///     limiteMensal, debitado (BRL debited in total), razaoConsistente (the ledger adds up).
    ///
    /// Raises:
    ///     ValueError: a key this server did not make.
    fn conta_de<'py>(&self, py: Python<'py>, api_key: &str) -> PyResult<Bound<'py, PyAny>> {
        let conta = self.created_conta(api_key)?;
        let srv = self.srv()?;
        let state = block_on(py, srv.conta_state(&conta)).map_err(server_error)?;
        conv::to_py(py, &state)
    }

    /// Stops the server (gracefully); later calls raise `RuntimeError`. Idempotent.
    fn encerrar(&self, py: Python<'_>) -> PyResult<()> {
        let srv = self
            .srv
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .take();
        if let Some(srv) = srv.and_then(|s| Arc::try_unwrap(s).ok()) {
            block_on(py, srv.shutdown());
        }
        Ok(())
    }
}

/// The bundled real records the test double answers (`double::dados::bundled`), as
/// dicts: codigoCar, uf, municipio, status (SICAR `status_imovel`), recibo (False for status
/// `PE` and `CA`: 404 `RECIBO_NAO_ENCONTRADO`).
pub(crate) fn bundled_records(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyList>> {
    let list = pyo3::types::PyList::empty(py);
    for i in double::dados::bundled() {
        let d = PyDict::new(py);
        d.set_item("codigoCar", i.codigo_car.as_str())?;
        d.set_item("uf", i.uf.as_str())?;
        d.set_item("municipio", &i.municipio)?;
        d.set_item("recibo", i.status_imovel.has_recibo())?;
        d.set_item("status", i.status_imovel.as_str())?;
        list.append(d)?;
    }
    Ok(list)
}

/// An owner document tied to several bundled records (`double::dados::exemplo_documento`),
/// formatted (`"385.211.390-39"`).
pub(crate) fn example_document() -> String {
    double::dados::example_documento().formatted().to_string()
}
