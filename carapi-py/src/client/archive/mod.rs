//! `Client(acervo=..., finalidade=..., base_legal=..., idade_maxima=...)`: the SDK's archive of
//! paid answers (`carapi_sdk::archive`), and the keys `origem` / `compradoEm` it adds to a
//! lookup's dict. The archive's LGPD tools (`carapi.Acervo`) are in [`tools`].

mod tools;

pub(crate) use tools::ArchiveTools;

use std::path::PathBuf;
use std::time::Duration;

use carapi_sdk::Answer;
use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness, LegalBasis};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDelta};

/// The default maximum age of a reused answer: 30 days (the CLI's `--idade-maxima`).
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The archive arguments of `Client(...)`, as given.
pub(crate) struct ArchiveArgs<'a, 'py> {
    /// `acervo=`.
    pub(crate) location: Option<&'a Bound<'py, PyAny>>,
    /// `finalidade=`.
    pub(crate) purpose: Option<String>,
    /// `base_legal=`.
    pub(crate) legal_basis: Option<String>,
    /// `idade_maxima=`.
    pub(crate) max_age: Option<&'a Bound<'py, PyAny>>,
}

/// The archive and its policy, or `None` when `acervo` is `None`/`False`.
///
/// # Errors
/// `ValueError` naming `finalidade` or `base_legal` when missing or blank, or an unknown legal
/// basis (the message lists the accepted ones), or a negative `idade_maxima`; `TypeError` for an
/// `acervo` or `idade_maxima` of another type; `OSError` when the archive cannot be opened.
/// All before any request.
pub(crate) fn from_args(a: &ArchiveArgs<'_, '_>) -> PyResult<Option<Setup>> {
    let Some(given) = a.location else {
        return Ok(None);
    };
    let location = if let Ok(b) = given.cast::<PyBool>() {
        if !b.is_true() {
            return Ok(None);
        }
        None
    } else {
        Some(given)
    };
    let purpose = a
        .purpose
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            PyValueError::new_err(
                "acervo sem finalidade: declare finalidade=... (LGPD art. 6, I), antes de qualquer consulta",
            )
        })?;
    let legal_basis_text = a
        .legal_basis
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            PyValueError::new_err(
                "acervo sem base legal: declare base_legal=... (LGPD arts. 7 e 11), antes de qualquer consulta",
            )
        })?;
    let legal_basis: LegalBasis =
        legal_basis_text
            .parse()
            .map_err(|e: carapi_sdk::archive::UnknownLegalBasis| {
                PyValueError::new_err(format!("base_legal: {e}"))
            })?;
    let max_age = a
        .max_age
        .map(max_age)
        .transpose()?
        .unwrap_or(DEFAULT_MAX_AGE);
    let (archive, location) = tools::open(location)?;
    let location = location.map(Location);
    let policy = ArchivePolicy::new(purpose, legal_basis, Freshness::MaxAge(max_age));
    Ok(Some(Setup {
        archive,
        policy,
        location,
    }))
}

/// The archive of a client, its policy, and what opens it again in a child after a fork (the
/// file's path or the full PostgreSQL URL; `None`: the default file).
pub(crate) struct Setup {
    pub(crate) archive: Archive,
    pub(crate) policy: ArchivePolicy,
    pub(crate) location: Option<Location>,
}

/// Where an archive lives, as given: a file's path or the full PostgreSQL URL (its `Debug`
/// hides it: the URL may hold a password).
#[derive(Clone)]
pub(crate) struct Location(pub(crate) PathBuf);

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Location(..)")
    }
}

impl std::fmt::Debug for Setup {
    /// Without the location: a PostgreSQL URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("archive", &self.archive)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Setup {
    /// The archive at `location` opened again (a child after a fork).
    ///
    /// # Errors
    /// As `Archive::open_location`.
    pub(crate) fn reopen(
        location: Option<&Location>,
    ) -> Result<Archive, carapi_sdk::archive::ArchiveError> {
        match location {
            None => Archive::open_default(),
            Some(Location(p)) => match p.to_str() {
                Some(s) if carapi_sdk::archive::is_postgres_url(s) => Archive::open_location(s),
                _ => Archive::open(p),
            },
        }
    }
}

/// `idade_maxima`: days (`int`/`float`) or a `datetime.timedelta`; 0 never reuses.
fn max_age(v: &Bound<'_, PyAny>) -> PyResult<Duration> {
    let secs: f64 = if v.cast::<PyDelta>().is_ok() {
        v.call_method0("total_seconds")?.extract()?
    } else if v.cast::<PyBool>().is_ok() {
        return Err(PyTypeError::new_err(
            "idade_maxima: dias (int ou float) ou datetime.timedelta",
        ));
    } else {
        let days: f64 = v.extract().map_err(|_| {
            PyTypeError::new_err("idade_maxima: dias (int ou float) ou datetime.timedelta")
        })?;
        days * 86_400.0
    };
    Duration::try_from_secs_f64(secs)
        .map_err(|_| PyValueError::new_err("idade_maxima: um prazo finito, zero ou positivo"))
}

/// Adds `origem` (`"api"` or `"acervo"`) and `compradoEm` (aware datetime, UTC) to a lookup's
/// dict; a bought answer that could not be archived warns (`UserWarning`) with the SDK's reason.
pub(crate) fn mark<T>(py: Python<'_>, d: &Bound<'_, PyAny>, a: &Answer<T>) -> PyResult<()> {
    d.set_item("origem", a.origin.as_str())?;
    d.set_item("compradoEm", a.bought_at)?;
    if let Some(w) = &a.warning {
        let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
        let msg =
            std::ffi::CString::new(format!("resposta não arquivada: {w}")).unwrap_or_default();
        PyErr::warn(py, &cat, &msg, 1)?;
    }
    Ok(())
}
