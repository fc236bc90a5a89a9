//! The receipt PDF: `GET /v1/car/{codigoCar}/recibo`, in memory, streamed, or to a file.

use std::fmt;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use reqwest::header::{CONTENT_DISPOSITION, HeaderMap};
use tokio::io::AsyncWriteExt;

use super::http::{Reply, Req};
use super::{Client, Op};
use crate::{Answer, CodigoCar, Error, Origin, Recibo, Result};

impl Client {
    /// The receipt ("Recibo de Inscrição do Imóvel Rural no CAR") as a PDF in memory:
    /// `GET /v1/car/{codigoCar}/recibo` (contract, "Lookup rules" 3). Uses the longer
    /// [`receipt_timeout`](crate::ClientBuilder::receipt_timeout). Charged on 200 (11.00 BRL,
    /// legacy 10.00). For large files prefer [`Client::recibo_to_file`] or
    /// [`Client::recibo_download`].
    ///
    /// # Errors
    /// - [`Error::Validation`] for a malformed code: nothing is sent.
    /// - [`Error::SpendLimit`] when the cap would be passed.
    /// - [`Error::Api`]: 400 `CODIGO_CAR_INVALIDO`, 401, 402 `SALDO_INSUFICIENTE`, 404
    ///   `CAR_NAO_ENCONTRADO` / `RECIBO_NAO_ENCONTRADO`, 429, 502 `RECIBO_INDISPONIVEL`, 503
    ///   `SERVICO_INDISPONIVEL` (502/503 are retried by the policy: errors are not charged).
    /// - [`Error::Transport`]: the answer was lost; not re-sent (it may have been charged)
    ///   unless [`retry_charged_consultas`](crate::ClientBuilder::retry_charged_consultas).
    /// - [`Error::Archive`], [`Error::Cancelled`]: as [`Client::car`].
    ///
    /// With an archive, the receipt is read from it when fresh, else bought and archived before
    /// it is returned, as [`Client::car`]; so are those of [`Client::recibo_download`] and
    /// [`Client::recibo_to_file`].
    pub async fn recibo(&self, codigo: impl AsRef<str>) -> Result<Answer<Recibo>> {
        let codigo = CodigoCar::parse(codigo)?;
        let req = self.recibo_req(&codigo)?;
        #[cfg(feature = "archive")]
        if let Some(setup) = self.archive_for(&req) {
            let filename = format!("{}.pdf", codigo.as_str());
            return Ok(self
                .through_archive(setup, req)
                .await?
                .map(|bytes| Recibo { filename, bytes }));
        }
        let (_, headers, bytes) = self
            .execute_charged(req, true)
            .await?
            .into_parts(Op::RECIBO, true)
            .await?;
        Ok(Answer::from_api(Recibo {
            filename: filename(&headers, &codigo),
            bytes,
        }))
    }

    /// Starts the receipt download and returns once the 200 headers arrived (the lookup is
    /// charged from then on); read the PDF with [`ReciboDownload::chunk`]. Errors before the
    /// body are those of [`Client::recibo`]. With an archive, the receipt comes whole from
    /// [`Client::recibo`] (read from the archive, or bought and archived) and is read from
    /// memory ([`ReciboDownload::origin`] says which).
    ///
    /// # Errors
    /// As [`Client::recibo`].
    pub async fn recibo_download(&self, codigo: impl AsRef<str>) -> Result<ReciboDownload> {
        let codigo = CodigoCar::parse(codigo)?;
        let req = self.recibo_req(&codigo)?;
        #[cfg(feature = "archive")]
        if self.archive_for(&req).is_some() {
            let recibo = self.recibo(codigo.as_str()).await?;
            return Ok(ReciboDownload::from_memory(recibo));
        }
        let chargeable = req.chargeable();
        let resp = match self.execute_charged(req, false).await? {
            Reply::Streaming(resp) => resp,
            Reply::Buffered { .. } => {
                return Err(Error::Config("download não pôde ser iniciado".into()));
            }
        };
        Ok(ReciboDownload {
            filename: filename(resp.headers(), &codigo),
            content_length: resp.content_length(),
            received: 0,
            body: Body::Streaming {
                response: resp,
                chargeable,
            },
            origin: Origin::Api,
        })
    }

    /// Downloads the receipt into `path` without ever leaving a half file: the PDF is streamed
    /// into a hidden temporary file in the same directory, synced, then renamed over `path`.
    /// When `path` is an existing directory, the file gets the server's name
    /// (`<codigoCar>.pdf`) inside it.
    ///
    /// The temporary file is created **before** the request, so a missing or read-only
    /// directory costs nothing; it is removed on an error and when the returned future is
    /// dropped before the end. Same as [`Client::recibo_to_file_with_progress`] without the
    /// progress callback.
    ///
    /// # Errors
    /// Those of [`Client::recibo`]; [`Error::Io`] when the file cannot be written (the
    /// temporary file is removed): before the request (nothing charged) when the temporary file
    /// cannot be created, after it (charged) when writing or renaming fails; [`Error::Transport`]
    /// when the body breaks off (charged: the 200 arrived).
    pub async fn recibo_to_file(
        &self,
        codigo: impl AsRef<str>,
        path: impl AsRef<Path>,
    ) -> Result<ReciboInfo> {
        self.recibo_to_file_with_progress(codigo, path, |_| {})
            .await
    }

    /// [`Client::recibo_to_file`] with a progress callback, e.g. to draw a progress bar.
    ///
    /// `progress` is called once with [`ReciboProgress::received`] `0` when the 200 headers
    /// arrived (from then on the receipt is charged: 11.00 BRL, contract "Prices"), then after
    /// each piece of the PDF written to the temporary file. A caller can tell from that first
    /// call whether a later [`Error::Io`] came after the charge. Nothing is called when the
    /// request fails before the 200 (nothing charged).
    ///
    /// # Errors
    /// As [`Client::recibo_to_file`].
    pub async fn recibo_to_file_with_progress(
        &self,
        codigo: impl AsRef<str>,
        path: impl AsRef<Path>,
        mut progress: impl FnMut(ReciboProgress) + Send,
    ) -> Result<ReciboInfo> {
        let path = path.as_ref();
        let is_dir = tokio::fs::metadata(path)
            .await
            .map(|m| m.is_dir())
            .unwrap_or(false);
        let dir = if is_dir {
            path.to_path_buf()
        } else {
            match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            }
        };
        let name = if is_dir {
            "recibo".to_owned()
        } else {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "recibo".into())
        };
        let temp = dir.join(format!(".{name}.{:016x}.part", fastrand::u64(..)));
        // Checked before paying: the directory exists and a file can be created in it.
        let file = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .await?;
        let mut partial = Partial(Some(temp.clone()));
        #[cfg(feature = "archive")]
        if self.inner.archive.is_some() {
            let recibo = self.recibo(codigo).await?;
            let target = Target {
                temp: &temp,
                path,
                is_dir,
            };
            return archived_to_file(file, target, recibo, progress, partial).await;
        }
        async {
            let mut download = self.recibo_download(codigo).await?;
            let destination = if is_dir {
                path.join(&download.filename)
            } else {
                path.to_path_buf()
            };
            let content_length = download.content_length();
            progress(ReciboProgress {
                received: 0,
                content_length,
            });
            let mut file = file;
            let mut bytes = 0u64;
            while let Some(chunk) = download.chunk().await? {
                file.write_all(&chunk).await?;
                bytes += chunk.len() as u64;
                progress(ReciboProgress {
                    received: bytes,
                    content_length,
                });
            }
            file.flush().await?;
            file.sync_all().await?;
            drop(file);
            tokio::fs::rename(&temp, &destination).await?;
            partial.0 = None;
            Ok::<_, Error>(ReciboInfo {
                path: destination,
                filename: download.filename,
                bytes,
                origin: download.origin,
            })
        }
        .await
    }

    pub(super) fn recibo_req(&self, codigo: &CodigoCar) -> Result<Req> {
        let url = self.url(&["car", codigo.as_str(), "recibo"])?;
        let mut req = Req::consulta(Op::RECIBO, url, codigo.as_str(), codigo.is_sandbox());
        req.recibo = true;
        Ok(req)
    }
}

/// Where [`archived_to_file`] writes.
#[cfg(feature = "archive")]
struct Target<'a> {
    temp: &'a Path,
    path: &'a Path,
    is_dir: bool,
}

/// Writes a receipt read through the archive into `path` as [`Client::recibo_to_file`] does
/// (temporary file, sync, rename).
#[cfg(feature = "archive")]
async fn archived_to_file(
    mut file: tokio::fs::File,
    target: Target<'_>,
    recibo: Answer<Recibo>,
    mut progress: impl FnMut(ReciboProgress) + Send,
    mut partial: Partial,
) -> Result<ReciboInfo> {
    let Target { temp, path, is_dir } = target;
    let origin = recibo.origin;
    let recibo = recibo.into_value();
    let destination = if is_dir {
        path.join(&recibo.filename)
    } else {
        path.to_path_buf()
    };
    let len = recibo.bytes.len() as u64;
    progress(ReciboProgress {
        received: 0,
        content_length: Some(len),
    });
    file.write_all(&recibo.bytes).await?;
    file.flush().await?;
    file.sync_all().await?;
    drop(file);
    progress(ReciboProgress {
        received: len,
        content_length: Some(len),
    });
    tokio::fs::rename(temp, &destination).await?;
    partial.0 = None;
    Ok(ReciboInfo {
        path: destination,
        filename: recibo.filename,
        bytes: len,
        origin,
    })
}

/// A receipt being downloaded ([`Client::recibo_download`]): the 200 headers arrived, the PDF
/// body is read chunk by chunk (e.g. to draw a progress bar).
pub struct ReciboDownload {
    filename: String,
    content_length: Option<u64>,
    received: u64,
    body: Body,
    origin: Origin,
}

/// Where a download's bytes come from.
enum Body {
    /// The server's answer, still being read; `chargeable` unless a sandbox code.
    Streaming {
        response: reqwest::Response,
        chargeable: bool,
    },
    /// A whole receipt (read through the archive), given once.
    #[cfg(feature = "archive")]
    Memory(Option<Bytes>),
}

impl ReciboDownload {
    /// A download of a receipt already in memory.
    #[cfg(feature = "archive")]
    fn from_memory(recibo: Answer<Recibo>) -> Self {
        let origin = recibo.origin;
        let recibo = recibo.into_value();
        Self {
            filename: recibo.filename,
            content_length: Some(recibo.bytes.len() as u64),
            received: 0,
            body: Body::Memory(Some(recibo.bytes)),
            origin,
        }
    }

    /// Where the receipt comes from: bought now, or read from the archive.
    #[must_use]
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The file name of `Content-Disposition` (`<codigoCar>.pdf`), reduced to a bare name (no
    /// directories); `<codigoCar>.pdf` when absent.
    #[must_use]
    pub fn filename(&self) -> &str {
        &self.filename
    }

    /// Size of the PDF in bytes, when the server sent `Content-Length`.
    #[must_use]
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// Bytes received so far.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The next piece of the PDF; `Ok(None)` at the end.
    ///
    /// # Errors
    /// [`Error::Transport`] (`sent: true`) when the body breaks off or the receipt time-out
    /// passes.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        let c = match &mut self.body {
            Body::Streaming {
                response,
                chargeable,
            } => response
                .chunk()
                .await
                .map_err(|e| lost(*chargeable, 1, e))?,
            #[cfg(feature = "archive")]
            Body::Memory(bytes) => bytes.take(),
        };
        if let Some(c) = &c {
            self.received += c.len() as u64;
        }
        Ok(c)
    }
}

impl fmt::Debug for ReciboDownload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReciboDownload")
            .field("filename", &self.filename)
            .field("content_length", &self.content_length)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

/// The temporary file of a download, removed unless renamed into place: on an error and also
/// when the caller drops the download (a Ctrl-C), so no `.part` file is left behind.
struct Partial(Option<PathBuf>);

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// How far a receipt download is ([`Client::recibo_to_file_with_progress`]): the same two
/// quantities as [`ReciboDownload::received`] and [`ReciboDownload::content_length`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReciboProgress {
    /// Bytes of the PDF written so far (`0` on the first call, when the 200 arrived).
    pub received: u64,
    /// Size of the PDF in bytes, when the server sent `Content-Length`.
    pub content_length: Option<u64>,
}

/// What [`Client::recibo_to_file`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReciboInfo {
    /// The file written.
    pub path: PathBuf,
    /// The server's file name (`<codigoCar>.pdf`).
    pub filename: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Bought now, or read from the archive.
    pub origin: Origin,
}

fn lost(chargeable: bool, attempts: u32, e: reqwest::Error) -> Error {
    Error::Transport {
        operation: Op::RECIBO.name(),
        sent: true,
        chargeable,
        attempts,
        source: e.without_url(),
    }
}

/// `filename` of `Content-Disposition: attachment; filename="<codigoCar>.pdf"`, as a bare name.
fn filename(headers: &HeaderMap, codigo: &CodigoCar) -> String {
    let from_header = headers
        .get(CONTENT_DISPOSITION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split(';')
                .map(str::trim)
                .find_map(|p| p.strip_prefix("filename="))
        })
        .map(|f| f.trim_matches('"'))
        .map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f))
        .map(|f| f.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|f| !f.is_empty() && f != "." && f != "..");
    from_header.unwrap_or_else(|| format!("{codigo}.pdf"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn filename_from_content_disposition() {
        let c = CodigoCar::parse(crate::sandbox::CAR_BASICO).unwrap();
        let mut h = HeaderMap::new();
        assert_eq!(
            filename(&h, &c),
            format!("{}.pdf", crate::sandbox::CAR_BASICO)
        );
        h.insert(
            CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"DF-1.pdf\""),
        );
        assert_eq!(filename(&h, &c), "DF-1.pdf");
        h.insert(
            CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"../../etc/passwd\""),
        );
        assert_eq!(filename(&h, &c), "passwd");
        h.insert(
            CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"..\""),
        );
        assert!(filename(&h, &c).ends_with(".pdf"));
    }
}
