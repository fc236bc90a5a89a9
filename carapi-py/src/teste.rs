//! `carapi._carapi.ServidorTeste`: [`carapi_test_double::TestServer`] for Python tests
//! (wrapped by `carapi.testing.ServidorTeste`, a context manager). The server runs on the
//! extension's runtime, so it keeps answering while Python waits on a client call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use carapi_test_double::{self as double, ContaCriada, ContaId, FaultRule, ServerError};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value, json};

use crate::{bloquear, conv};

/// The test double; `None` once stopped. Keys of the accounts it created, for `conta=` of
/// `falhar` and for `conta_de`.
#[pyclass(module = "carapi._carapi", name = "ServidorTeste", subclass, frozen)]
#[derive(Debug)]
pub struct ServidorTeste {
    srv: Mutex<Option<Arc<double::TestServer>>>,
    contas: Mutex<HashMap<String, ContaId>>,
}

fn erro_servidor(e: ServerError) -> PyErr {
    PyRuntimeError::new_err(format!("servidor de teste: {e}"))
}

impl ServidorTeste {
    fn srv(&self) -> PyResult<Arc<double::TestServer>> {
        self.srv
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("servidor de teste encerrado"))
    }

    fn conta_criada(&self, api_key: &str) -> PyResult<ContaCriada> {
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
fn regra_json(tipo: &str, campos: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    let mut falha = Map::new();
    falha.insert("tipo".into(), Value::String(tipo.to_owned()));
    if let Some(c) = campos {
        for (k, v) in c.iter() {
            let k: String = k.extract()?;
            let chave = match k.as_str() {
                "retry_after" => "retryAfter".to_owned(),
                _ => k,
            };
            falha.insert(chave, py_para_json(&v)?);
        }
    }
    let mut regra = Map::new();
    regra.insert("falha".into(), Value::Object(falha));
    Ok(regra)
}

fn py_para_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
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
impl ServidorTeste {
    #[new]
    #[pyo3(signature = (*, limite_taxa=Some(10), banco=None))]
    fn new(py: Python<'_>, limite_taxa: Option<u32>, banco: Option<String>) -> PyResult<Self> {
        let mut c = double::TestServer::builder().rate_limit(limite_taxa);
        if let Some(url) = banco {
            c = c.database(url);
        }
        let srv = bloquear(py, c.start()).map_err(erro_servidor)?;
        Ok(ServidorTeste {
            srv: Mutex::new(Some(Arc::new(srv))),
            contas: Mutex::new(HashMap::new()),
        })
    }

    #[getter]
    fn base_url(&self) -> PyResult<String> {
        Ok(self.srv()?.base_url())
    }

    /// `**opcoes`: `sem_documento=True`, `limite_diario=<int>`, `limite_mensal=<BRL>`.
    #[pyo3(signature = (saldo=None, legado=false, documento=None, **opcoes))]
    fn conta(
        &self,
        py: Python<'_>,
        saldo: Option<&Bound<'_, PyAny>>,
        legado: bool,
        documento: Option<String>,
        opcoes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let srv = self.srv()?;
        let mut b = srv.conta();
        if let Some(s) = saldo {
            b = b.saldo(conv::dinheiro(s)?);
        }
        if legado {
            b = b.legado();
        }
        if let Some(d) = documento {
            b = b.documento(d);
        }
        for (k, v) in opcoes.into_iter().flat_map(|o| o.iter()) {
            let k: String = k.extract()?;
            b = match k.as_str() {
                "sem_documento" if v.extract::<bool>()? => b.without_documento(),
                "sem_documento" => b,
                "limite_diario" => b.limite_diario(v.extract()?),
                "limite_mensal" => b.limite_mensal(conv::dinheiro(&v)?),
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "conta(): argumento desconhecido {k:?} (sem_documento, limite_diario, limite_mensal)"
                    )));
                }
            };
        }
        let conta = bloquear(py, b.create()).map_err(erro_servidor)?;
        self.contas
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .insert(conta.api_key.clone(), conta.conta_id);
        Ok(conta.api_key)
    }

    #[pyo3(signature = (tipo, *, rota=None, metodo=None, conta=None, vezes=Some(1), **campos))]
    fn falhar(
        &self,
        tipo: &str,
        rota: Option<String>,
        metodo: Option<String>,
        conta: Option<String>,
        vezes: Option<u32>,
        campos: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        let mut regra = regra_json(tipo, campos)?;
        regra.insert("rota".into(), json!(rota));
        regra.insert("metodo".into(), json!(metodo));
        let conta = conta.map(|k| self.conta_criada(&k)).transpose()?;
        regra.insert("conta".into(), json!(conta.map(|c| c.conta_id.0)));
        regra.insert("vezes".into(), json!(vezes));
        let regra: FaultRule = serde_json::from_value(Value::Object(regra))
            .map_err(|e| PyValueError::new_err(format!("falha inválida: {e}")))?;
        self.srv()?
            .try_inject(regra)
            .map_err(|e| PyValueError::new_err(format!("falha inválida: {e}")))
    }

    fn remover_falha(&self, id: u64) -> PyResult<bool> {
        Ok(self.srv()?.remove_fault(id))
    }

    fn limpar_falhas(&self) -> PyResult<()> {
        self.srv()?.clear_faults();
        Ok(())
    }

    /// The test clock now (UTC).
    fn now(&self) -> PyResult<chrono::DateTime<chrono::Utc>> {
        Ok(self.srv()?.clock().now())
    }

    fn avancar<'py>(&self, py: Python<'py>, segundos: f64) -> PyResult<Bound<'py, PyDict>> {
        let d = Duration::try_from_secs_f64(segundos)
            .map_err(|_| PyValueError::new_err(format!("segundos inválidos: {segundos}")))?;
        let srv = self.srv()?;
        let a = bloquear(py, srv.advance(d)).map_err(erro_servidor)?;
        let r = PyDict::new(py);
        r.set_item("agora", a.now)?;
        r.set_item("reconciliadas", a.reconciliadas)?;
        Ok(r)
    }

    #[pyo3(signature = (recarga_id, *, sem_webhook=false))]
    fn pagar(
        &self,
        py: Python<'_>,
        recarga_id: &Bound<'_, PyAny>,
        sem_webhook: bool,
    ) -> PyResult<()> {
        let texto = recarga_id.str()?.to_string();
        let id = carapi_sdk::Uuid::parse_str(texto.trim())
            .map_err(|_| PyValueError::new_err(format!("recarga_id inválido: {texto:?}")))?;
        let srv = self.srv()?;
        let pagamento = srv.pay(id);
        let pagamento = if sem_webhook {
            pagamento.without_webhook()
        } else {
            pagamento
        };
        bloquear(py, async move { pagamento.await }).map_err(erro_servidor)
    }

    fn conta_de<'py>(&self, py: Python<'py>, api_key: &str) -> PyResult<Bound<'py, PyAny>> {
        let conta = self.conta_criada(api_key)?;
        let srv = self.srv()?;
        let estado = bloquear(py, srv.conta_state(&conta)).map_err(erro_servidor)?;
        conv::para_py(py, &estado)
    }

    fn encerrar(&self, py: Python<'_>) -> PyResult<()> {
        let srv = self
            .srv
            .lock()
            .map_err(|_| PyRuntimeError::new_err("servidor de teste: estado envenenado"))?
            .take();
        if let Some(srv) = srv.and_then(|s| Arc::try_unwrap(s).ok()) {
            bloquear(py, srv.shutdown());
        }
        Ok(())
    }
}
