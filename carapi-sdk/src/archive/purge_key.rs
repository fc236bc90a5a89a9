//! How the archive remembers the documents purged at their owners' request (LGPD art. 18, VI)
//! without keeping them: a keyed hash (HMAC-SHA-256) of the bare document, whose key lives in a
//! file of its own, outside the archive. The tags are pseudonymised personal data (LGPD art. 13,
//! § 4): whoever holds the archive alone cannot tell which documents they stand for (a CPF has
//! only about 10^9 values, so a plain hash would be reversed by trying them all); whoever also
//! holds the key can. Keep the key file as private as the archive (mode 0600), and apart from the
//! archive's copies.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::ArchiveError;
use super::chain::hex;

/// Bytes of a key.
const KEY_LEN: usize = 32;

/// The key of the purged documents' tags.
#[derive(Clone)]
pub(crate) struct PurgeKey {
    key: [u8; KEY_LEN],
}

impl std::fmt::Debug for PurgeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PurgeKey(<redacted>)")
    }
}

impl PurgeKey {
    /// The key in the file at `path`; `None` when there is no such file.
    ///
    /// # Errors
    /// [`ArchiveError`] when the file cannot be read or is not a key.
    pub(crate) fn load(path: &Path) -> Result<Option<PurgeKey>, ArchiveError> {
        let mut text = String::new();
        match std::fs::File::open(path) {
            Ok(mut f) => f
                .read_to_string(&mut text)
                .map_err(ArchiveError::io("ler a chave dos expurgos"))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ArchiveError::io("ler a chave dos expurgos")(e)),
        };
        let text = text.trim();
        let mut key = [0u8; KEY_LEN];
        if text.len() != KEY_LEN * 2 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ArchiveError::plain(
                "ler a chave dos expurgos (64 dígitos hexadecimais)",
            ));
        }
        for (i, b) in key.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                .map_err(|_| ArchiveError::plain("ler a chave dos expurgos"))?;
        }
        Ok(Some(PurgeKey { key }))
    }

    /// The key in the file at `path`, created (mode 0600, random) when there is none; two
    /// processes creating it at once end with the same key.
    ///
    /// # Errors
    /// [`ArchiveError`] when the file cannot be created or read.
    pub(crate) fn load_or_create(path: &Path) -> Result<PurgeKey, ArchiveError> {
        if let Some(k) = Self::load(path)? {
            return Ok(k);
        }
        let mut key = [0u8; KEY_LEN];
        getrandom::fill(&mut key).map_err(|e| {
            ArchiveError::new(
                super::ArchiveErrorKind::Other,
                "gerar a chave dos expurgos",
                e.to_string(),
            )
        })?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(ArchiveError::io("criar a chave dos expurgos"))?;
        }
        // Written aside, then linked into place: a reader never sees half a key, and of two
        // processes creating it at once the first link wins and both read its key.
        let temp = aside(path);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let written = opts.open(&temp).and_then(|mut f| {
            f.write_all(hex(&key).as_bytes())?;
            f.sync_all()
        });
        let linked = written.and_then(|()| std::fs::hard_link(&temp, path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(PurgeKey { key }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Self::load(path)?.ok_or_else(|| ArchiveError::plain("ler a chave dos expurgos"))
            }
            Err(e) => Err(ArchiveError::io("criar a chave dos expurgos")(e)),
        }
    }

    /// The tag of a bare document.
    pub(crate) fn tag(&self, documento: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(b"carapi-acervo-expurgo-v1\n");
        mac.update(documento.as_bytes());
        hex(&mac.finalize().into_bytes())
    }
}

/// A temporary name beside `path`.
fn aside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{:016x}.tmp", fastrand::u64(..)))
}
