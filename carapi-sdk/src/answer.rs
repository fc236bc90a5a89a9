//! [`Answer`]: the answer of a charged lookup and where it came from.

use std::ops::{Deref, DerefMut};

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Origin {
    /// Bought now from the API (charged, unless a sandbox value).
    #[serde(rename = "api")]
    Api,
    /// Read from the archive of paid answers (cargo feature `archive`): no request, no charge.
    #[serde(rename = "acervo")]
    Archive,
}

impl Origin {
    /// `api` or `acervo`, the word the CLI and Python print (and the JSON value).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Api => "api",
            Origin::Archive => "acervo",
        }
    }
}

/// The answer of a charged lookup ([`Client::car`](crate::Client::car),
/// [`car_completo`](crate::Client::car_completo), [`proprietario`](crate::Client::proprietario),
/// [`recibo`](crate::Client::recibo)) with its provenance. It dereferences to the answer, so
/// `client.car(c).await?.dados` reads as before; [`Answer::into_value`] takes it out.
///
/// Without an archive every answer is [`Origin::Api`], bought now, with no entry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answer<T> {
    /// The answer.
    pub value: T,
    /// Bought now, or read from the archive.
    pub origin: Origin,
    /// When it was bought, UTC (now, for an answer of the API).
    pub bought_at: DateTime<Utc>,
    /// Its entry in the archive of paid answers; `None` without an archive, for a sandbox value,
    /// for an answer whose append was left behind
    /// ([`Commit::Behind`](crate::archive::Commit::Behind)), and when it could not be archived
    /// (see `warning`).
    pub seq: Option<u64>,
    /// Set when something about the answer needs a person's attention: it was bought (and
    /// charged) but could not be archived (a full disk, the database away), or it names an
    /// owner whose data was purged from the archive at the owner's request (LGPD art. 18).
    pub warning: Option<String>,
}

impl<T> Answer<T> {
    /// An answer the API gave now, not archived.
    pub(crate) fn from_api(value: T) -> Self {
        Self::bought(value, Utc::now())
    }

    /// An answer the API gave at `bought_at`, not (yet) archived.
    pub(crate) fn bought(value: T, bought_at: DateTime<Utc>) -> Self {
        Answer {
            value,
            origin: Origin::Api,
            bought_at,
            seq: None,
            warning: None,
        }
    }

    /// The answer itself, without its provenance.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The answer and its provenance apart (the provenance around `()`).
    pub fn into_parts(self) -> (T, Answer<()>) {
        let Answer {
            value,
            origin,
            bought_at,
            seq,
            warning,
        } = self;
        let provenance = Answer {
            value: (),
            origin,
            bought_at,
            seq,
            warning,
        };
        (value, provenance)
    }

    /// The same provenance around another value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answer<U> {
        Answer {
            value: f(self.value),
            origin: self.origin,
            bought_at: self.bought_at,
            seq: self.seq,
            warning: self.warning,
        }
    }

    /// The same provenance around another value, or `f`'s error.
    pub(crate) fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Answer<U>, E> {
        let value = f(self.value)?;
        Ok(Answer {
            value,
            origin: self.origin,
            bought_at: self.bought_at,
            seq: self.seq,
            warning: self.warning,
        })
    }
}

impl<T> Deref for Answer<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Answer<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}
