//! `carapi.Acervo`: the LGPD tools of the archive of paid answers (the SDK's
//! `carapi_sdk::archive::Archive`), as the CLI's `carapi acervo` has them: `listar`, `mostrar`,
//! `corpo`, `titular`, `expurgos`, `expurgar`, `verificar`, `cabeca`, `exportar`, `vincular`.
//!
//! An entry is a dict with the names the SDK's `Entry` serialises with (the CLI's
//! `carapi acervo listar -o json` and the exports): `seq`, `operacao`, `chave`, `preco`
//! (`Decimal`), `dataConsulta`, `compradoEm` (aware datetime, UTC), `conta`, `finalidade`,
//! `baseLegal`, `hashConteudo`, `hashAnterior`, `hash`, `expurgadoEm`. Every call blocks on the
//! archive (a file, or a PostgreSQL database) with the GIL released.

use std::path::PathBuf;

use carapi_sdk::CpfCnpj;
use carapi_sdk::archive::{Archive, ArchiveError, Entry, Head};
use chrono::{DateTime, NaiveDate, Utc};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDate, PyDateTime, PyDict, PyList};

use crate::conv;

/// The archive of paid answers and its LGPD tools (Lei 13.709/2018).
///
/// Acervo(caminho=None)
///
/// Args:
///     caminho: the archive's file (str or os.PathLike), a PostgreSQL URL
///         ("postgres://...", when the extension was built with `archive-postgres`), or None
///         for the data directory's file (the CLI's `acervo padrao`). `Client(acervo=...)`
///         gives the same archive as `client.acervo`.
///
/// An `Acervo` belongs to the process that made it: after `os.fork`, make another in the child
/// (a `Client` does so by itself).
///
/// Raises:
///     OSError: the archive cannot be opened.
#[pyclass(module = "carapi._carapi", name = "Acervo", frozen)]
pub(crate) struct ArchiveTools {
    archive: Archive,
}

impl ArchiveTools {
    pub(crate) fn of(archive: Archive) -> Self {
        Self { archive }
    }
}

/// An archive failure as `OSError` (its text names no key, code or document).
fn os_error(e: &ArchiveError) -> PyErr {
    PyOSError::new_err(carapi_sdk::error_chain(e))
}

/// Opens the archive a `caminho` names (see [`Acervo`]).
///
/// # Errors
/// `TypeError` for another type; `OSError` when it cannot be opened.
pub(crate) fn open(location: Option<&Bound<'_, PyAny>>) -> PyResult<(Archive, Option<PathBuf>)> {
    let Some(c) = location else {
        return Archive::open_default()
            .map(|a| (a, None))
            .map_err(|e| os_error(&e));
    };
    let path: PathBuf = c.extract().map_err(|_| {
        PyTypeError::new_err("acervo: um caminho (str ou os.PathLike), uma URL postgres:// ou True")
    })?;
    let archive = match path.to_str() {
        Some(s) if carapi_sdk::archive::is_postgres_url(s) => Archive::open_location(s),
        _ => Archive::open(&path),
    }
    .map_err(|e| os_error(&e))?;
    Ok((archive, Some(path)))
}

fn entry<'py>(py: Python<'py>, e: &Entry) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", e.seq)?;
    d.set_item("operacao", e.consulta.name())?;
    d.set_item("chave", &e.chave)?;
    d.set_item("preco", e.preco.map(conv::brl))?;
    d.set_item("dataConsulta", &e.data_consulta)?;
    d.set_item("compradoEm", e.bought_at)?;
    d.set_item("conta", &e.conta)?;
    d.set_item("finalidade", &e.purpose)?;
    d.set_item("baseLegal", &e.legal_basis)?;
    d.set_item("hashConteudo", &e.content_hash)?;
    d.set_item("hashAnterior", &e.prev_hash)?;
    d.set_item("hash", &e.hash)?;
    d.set_item("expurgadoEm", e.purged_at)?;
    Ok(d)
}

fn entries<'py>(
    py: Python<'py>,
    r: Result<Vec<Entry>, ArchiveError>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for e in r.map_err(|e| os_error(&e))? {
        list.append(entry(py, &e)?)?;
    }
    Ok(list)
}

/// `antes_de`: a date (midnight UTC) or an aware datetime.
fn instant(v: &Bound<'_, PyAny>) -> PyResult<DateTime<Utc>> {
    if v.cast::<PyDateTime>().is_ok() {
        return v.extract::<DateTime<Utc>>().map_err(|_| {
            PyValueError::new_err("antes_de: um datetime com fuso (tzinfo), ou uma date")
        });
    }
    if v.cast::<PyDate>().is_ok() {
        let day: NaiveDate = v.extract()?;
        return Ok(day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    Err(PyTypeError::new_err(
        "antes_de: datetime.date ou datetime.datetime",
    ))
}

#[pymethods]
impl ArchiveTools {
    #[new]
    #[pyo3(signature = (caminho=None))]
    fn new(caminho: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(Self::of(open(caminho)?.0))
    }

    /// The archive's file; for a PostgreSQL archive, its URL without the password.
    #[getter]
    fn caminho(&self) -> String {
        self.archive.path().display().to_string()
    }

    /// Every entry, oldest first (what, when, price, purpose, legal basis, hashes); with
    /// `conta` (a key's fingerprint, `carapi_sdk::archive::fingerprint`: 16 hex digits), only
    /// that account's, with those of the keys linked to it (`vincular`).
    ///
    /// Raises:
    ///     OSError: the archive cannot be read.
    #[pyo3(signature = (conta=None))]
    fn listar<'py>(&self, py: Python<'py>, conta: Option<String>) -> PyResult<Bound<'py, PyList>> {
        let a = self.archive.clone();
        let r = py.detach(move || match conta {
            Some(fingerprint) => a.conta_entries(&fingerprint),
            None => a.entries(),
        });
        entries(py, r)
    }

    /// The entry `seq`, or None.
    ///
    /// Raises:
    ///     OSError: the archive cannot be read.
    fn mostrar<'py>(&self, py: Python<'py>, seq: u64) -> PyResult<Option<Bound<'py, PyDict>>> {
        let a = self.archive.clone();
        let e = py.detach(move || a.entry(seq)).map_err(|e| os_error(&e))?;
        e.map(|e| entry(py, &e)).transpose()
    }

    /// The exact body bytes kept for entry `seq` (JSON, or the receipt PDF); None once purged.
    ///
    /// Raises:
    ///     OSError: the archive cannot be read.
    fn corpo<'py>(&self, py: Python<'py>, seq: u64) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let a = self.archive.clone();
        let b = py.detach(move || a.body(seq)).map_err(|e| os_error(&e))?;
        Ok(b.map(|b| PyBytes::new(py, &b)))
    }

    /// Every entry holding the CPF/CNPJ `documento` (the data subject's access request, LGPD
    /// art. 18, II, and art. 9): owner lookups of it, complete answers and receipts naming it.
    ///
    /// Raises:
    ///     EntradaInvalida: not a valid CPF/CNPJ.
    ///     OSError: the archive cannot be read.
    fn titular<'py>(&self, py: Python<'py>, documento: &str) -> PyResult<Bound<'py, PyList>> {
        let doc = CpfCnpj::parse(documento)
            .map_err(|e| crate::errors::to_py(py, carapi_sdk::Error::from(e)))?;
        let a = self.archive.clone();
        let r = py.detach(move || a.subject(&doc));
        entries(py, r)
    }

    /// When `documento` was purged from this archive at its owner's request (`expurgar`), oldest
    /// first (aware datetimes, UTC); empty when it never was. The purged documents are kept as
    /// keyed hashes (pseudonymised personal data, LGPD art. 13, § 4): this asks about one.
    ///
    /// Raises:
    ///     EntradaInvalida: not a valid CPF/CNPJ.
    ///     OSError: the archive or its purge key's file cannot be read.
    fn expurgos(&self, py: Python<'_>, documento: &str) -> PyResult<Vec<DateTime<Utc>>> {
        let doc = CpfCnpj::parse(documento)
            .map_err(|e| crate::errors::to_py(py, carapi_sdk::Error::from(e)))?;
        let a = self.archive.clone();
        py.detach(move || a.purges_of(&doc))
            .map_err(|e| os_error(&e))
    }

    /// Removes the personal data (key, body, documents) of every entry holding `documento`,
    /// or bought before `antes_de` (a date, midnight UTC, or an aware datetime), keeping each
    /// entry's charge record and a verifiable chain (LGPD art. 16 and art. 18, IV and VI).
    /// Exactly one of the two. Returns how many entries were purged. No confirmation asked.
    ///
    /// Raises:
    ///     ValueError: neither or both given.
    ///     EntradaInvalida: not a valid CPF/CNPJ.
    ///     OSError: the archive cannot be written.
    #[pyo3(signature = (*, documento=None, antes_de=None))]
    fn expurgar(
        &self,
        py: Python<'_>,
        documento: Option<&str>,
        antes_de: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let a = self.archive.clone();
        let r = match (documento, antes_de) {
            (Some(d), None) => {
                let doc = CpfCnpj::parse(d)
                    .map_err(|e| crate::errors::to_py(py, carapi_sdk::Error::from(e)))?;
                py.detach(move || a.purge_documento(&doc))
            }
            (None, Some(t)) => {
                let t = instant(t)?;
                py.detach(move || a.purge_before(t))
            }
            _ => {
                return Err(PyValueError::new_err(
                    "expurgar: documento=... ou antes_de=... (um dos dois)",
                ));
            }
        };
        r.map_err(|e| os_error(&e))
    }

    /// Walks the hash chain; with `cabeca` (the `"SEQ:HASH"` of `cabeca()`, kept elsewhere),
    /// also checks it is still in the chain: a changed byte, a removed or truncated entry and a
    /// chain recomputed from scratch are found. Returns a dict: `ok` (bool), `entradas`,
    /// `expurgadas`, `cabeca` (the head now, or None) and `falhas` (one text per problem).
    ///
    /// Raises:
    ///     ValueError: `cabeca` is not `SEQ:HASH`.
    ///     OSError: the archive cannot be read.
    #[pyo3(signature = (cabeca=None))]
    fn verificar<'py>(
        &self,
        py: Python<'py>,
        cabeca: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let kept = cabeca
            .map(str::parse::<Head>)
            .transpose()
            .map_err(PyValueError::new_err)?;
        let a = self.archive.clone();
        let v = py
            .detach(move || a.verify(kept.as_ref()))
            .map_err(|e| os_error(&e))?;
        let d = PyDict::new(py);
        d.set_item("ok", v.is_ok())?;
        d.set_item("entradas", v.entries)?;
        d.set_item("expurgadas", v.purged)?;
        d.set_item("cabeca", v.head.map(|h| h.to_string()))?;
        d.set_item("falhas", v.failures)?;
        Ok(d)
    }

    /// The chain's head, `"SEQ:HASH"` (keep it elsewhere; give it to `verificar`), or None
    /// while the archive is empty.
    ///
    /// Raises:
    ///     OSError: the archive cannot be read.
    fn cabeca(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let a = self.archive.clone();
        let h = py.detach(move || a.head()).map_err(|e| os_error(&e))?;
        Ok(h.map(|h| h.to_string()))
    }

    /// The record of processing for an auditor (LGPD art. 37): every entry's what, when,
    /// price, purpose, legal basis and hashes, no bodies; `formato` "csv" or "json". Written
    /// to `caminho` when given (returns None), else returned as text.
    ///
    /// Raises:
    ///     ValueError: another `formato`.
    ///     OSError: the archive cannot be read or the file written.
    #[pyo3(signature = (caminho=None, *, formato="csv"))]
    fn exportar(
        &self,
        py: Python<'_>,
        caminho: Option<PathBuf>,
        formato: &str,
    ) -> PyResult<Option<String>> {
        let json = match formato {
            "csv" => false,
            "json" => true,
            _ => return Err(PyValueError::new_err("formato: \"csv\" ou \"json\"")),
        };
        let a = self.archive.clone();
        let buf = py
            .detach(move || {
                let mut buf = Vec::new();
                if json {
                    a.export_json(&mut buf).map(|()| buf)
                } else {
                    a.export_csv(&mut buf).map(|()| buf)
                }
            })
            .map_err(|e| os_error(&e))?;
        match caminho {
            Some(p) => {
                std::fs::write(&p, &buf)
                    .map_err(|e| PyOSError::new_err(format!("{}: {e}", p.display())))?;
                Ok(None)
            }
            None => Ok(Some(String::from_utf8_lossy(&buf).into_owned())),
        }
    }

    /// Records that the key of fingerprint `nova` belongs to the account of fingerprint
    /// `antiga` (a rotated key): `listar(conta=...)` of either then lists both keys' entries.
    ///
    /// Raises:
    ///     ValueError: a fingerprint is not 16 hex digits.
    ///     OSError: the archive cannot be written.
    fn vincular(&self, py: Python<'_>, antiga: String, nova: String) -> PyResult<()> {
        let a = self.archive.clone();
        py.detach(move || a.link_contas(&antiga, &nova))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `carapi.Acervo('...')`, without a password.
    fn __repr__(&self) -> String {
        format!("carapi.Acervo({:?})", self.caminho())
    }
}
