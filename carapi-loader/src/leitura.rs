//! The first phase of a SQLite load: the origin read, every record checked, completed and
//! encoded ([`super::registro`]) and sorted into runs ([`super::ordenar`]), before anything is
//! written to the base. A bad row stops the read with its line (CSV) or feature index (WFS),
//! and the base is never touched.
//!
//! The work is spread over the machine's cores:
//! - synthetic records: each worker generates whole blocks ([`Sinteticos::bloco`]);
//! - a CSV: one reader splits the rows in file order and hands batches to the workers, which
//!   check, complete (owners, matrícula, centroid) and encode them. A worker that finds a bad
//!   row records its line; rows after the first bad line found are no longer checked, rows
//!   before it still are, so the error reported is the file's first bad line;
//! - a WFS GeoJSON: one reader parses and checks the features in order (the first bad one
//!   stops it), the workers encode them.
//!
//! This thread sorts what the workers send. Records carry the position they were read at, so
//! the order in which batches arrive changes nothing.

use std::io::BufReader;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_channel::{Receiver, Sender, bounded};
use indicatif::ProgressBar;

use super::ordenar::Ordenador;
use super::registro::Pacote;
use super::{CargaError, Formato, LOTE, Origem, abrir, wfs};
use csv::StringRecord;

use crate::import::{Colunas, LeitorCsv, completar_registro, validar_bruta};
use carapi_service::dados::Imovel;

use crate::sinteticos::Sinteticos;

/// CSV rows as read: (position read, line, fields).
type Linhas = Vec<(u64, u64, StringRecord)>;

/// Rows handed to a worker at once, each with the position it was read at.
enum Trabalho {
    /// CSV rows as read, with their lines, to check and complete; handed back once done (for
    /// the reader to read into the same records again).
    Linhas(Colunas, Linhas),
    /// Complete records (WFS features).
    Imoveis(Vec<(u64, Imovel)>),
}

/// The first line (CSV) found bad so far, `u64::MAX` while none is.
#[derive(Debug)]
struct PrimeiraRuim(AtomicU64);

impl PrimeiraRuim {
    fn nova() -> Self {
        PrimeiraRuim(AtomicU64::new(u64::MAX))
    }

    fn marcar(&self, linha: u64) {
        self.0.fetch_min(linha, Ordering::Relaxed);
    }

    /// Whether rows from `linha` on no longer matter (a bad one was found before).
    fn depois(&self, linha: u64) -> bool {
        linha > self.0.load(Ordering::Relaxed)
    }
}

/// Worker threads: the machine's cores (at most 8).
fn trabalhadores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8))
}

/// Reads `origem` into a sorter; returns it with how many records were read. `barra` counts
/// the records read.
///
/// # Errors
/// [`CargaError::Csv`] / [`CargaError::Wfs`] for the first bad row or feature;
/// [`CargaError::Io`] when the file or a temporary run cannot be read or written.
pub(super) fn ler(origem: &Origem, barra: &ProgressBar) -> Result<(Ordenador, u64), CargaError> {
    let n = trabalhadores();
    let (pacotes, recebidos) = bounded::<Pacote>(2 * n);
    // Emptied batches go back to the workers: the same buffers, mostly.
    let (devolver, devolvidos) = bounded::<Pacote>(4 * n);
    let (trabalho, a_fazer) = bounded::<Trabalho>(2 * n);
    let (devolver_linhas, linhas_lidas) = bounded::<Linhas>(2 * n);
    let (proximo, ruim) = (AtomicUsize::new(0), PrimeiraRuim::nova());
    let plano = match origem {
        Origem::Sinteticos {
            n: total,
            seed,
            dono_grande,
        } => {
            let mut g = Sinteticos::new(*total, *seed);
            if let Some(cars) = dono_grande {
                g = g.com_dono_grande(*cars);
            }
            Plano::Gerar(Box::new(g))
        }
        Origem::Arquivo(caminho) => Plano::Ler(caminho),
    };
    std::thread::scope(|s| {
        let mut produtores = Vec::new();
        for _ in 0..n {
            let (pacotes, devolvidos, a_fazer) =
                (pacotes.clone(), devolvidos.clone(), a_fazer.clone());
            let devolver_linhas = devolver_linhas.clone();
            let (plano, proximo, ruim) = (&plano, &proximo, &ruim);
            produtores.push(s.spawn(move || match plano {
                Plano::Gerar(g) => gerar(g, proximo, &devolvidos, &pacotes),
                Plano::Ler(_) => {
                    let saida = Saida {
                        vazios: &devolvidos,
                        pacotes: &pacotes,
                        linhas: &devolver_linhas,
                    };
                    completar(&a_fazer, ruim, &saida)
                }
            }));
        }
        if let Plano::Ler(caminho) = plano {
            let ruim = &ruim;
            produtores.push(s.spawn(move || ler_arquivo(caminho, ruim, &trabalho, &linhas_lidas)));
        } else {
            drop(trabalho);
        }
        drop((pacotes, a_fazer, devolver_linhas));
        let ordenado = ordenar(&recebidos, &devolver, barra);
        // A sorter that failed stops the producers: their sends fail once `recebidos` is gone.
        drop(recebidos);
        let erros: Vec<CargaError> = produtores
            .into_iter()
            .filter_map(|p| {
                p.join()
                    .unwrap_or_else(|_| Err(CargaError::Interrompida("leitor em pânico".into())))
                    .err()
            })
            .collect();
        // The sorter's own error explains the producers' (they stopped because it did); of
        // the rows' errors, the first line's.
        let ordenado = ordenado?;
        match erros
            .into_iter()
            .min_by_key(|e| e.linha().unwrap_or(u64::MAX))
        {
            Some(e) => Err(e),
            None => Ok(ordenado),
        }
    })
}

/// What the producers do.
enum Plano<'a> {
    /// Generate synthetic records, whole blocks per worker.
    Gerar(Box<Sinteticos>),
    /// Read this file: one reader, the workers check and complete.
    Ler(&'a Path),
}

/// Sorts every batch received (until all producers are done).
fn ordenar(
    recebidos: &Receiver<Pacote>,
    devolver: &Sender<Pacote>,
    barra: &ProgressBar,
) -> Result<(Ordenador, u64), CargaError> {
    let mut o = Ordenador::default();
    let mut lidos = 0u64;
    for p in recebidos {
        lidos += p.len() as u64;
        barra.inc(p.len() as u64);
        for livre in o.push(p)? {
            // A full return queue: the buffer is freed instead.
            let _ = devolver.try_send(livre);
        }
    }
    Ok((o, lidos))
}

/// An empty batch: one handed back by the sorter, else a new one.
fn vazio(devolvidos: &Receiver<Pacote>, registros: usize) -> Pacote {
    devolvidos
        .try_recv()
        .unwrap_or_else(|_| Pacote::com_capacidade(registros))
}

/// A closed channel: the sorter stopped (its error is the one reported).
fn parou<T>(_: T) -> CargaError {
    CargaError::Interrompida("a ordenação parou".into())
}

/// Generates blocks of synthetic records until none is left.
fn gerar(
    g: &Sinteticos,
    proximo: &AtomicUsize,
    devolvidos: &Receiver<Pacote>,
    pacotes: &Sender<Pacote>,
) -> Result<(), CargaError> {
    loop {
        let k = proximo.fetch_add(1, Ordering::Relaxed);
        if k >= g.blocos() {
            return Ok(());
        }
        let mut p = vazio(devolvidos, crate::sinteticos::BLOCO);
        for (i, imovel) in g.bloco(k) {
            p.push(i as u64, &imovel)?;
        }
        pacotes.send(p).map_err(parou)?;
    }
}

/// Where a worker's results go: encoded batches to the sorter, the CSV rows back to the
/// reader; emptied batches come back from the sorter.
struct Saida<'a> {
    vazios: &'a Receiver<Pacote>,
    pacotes: &'a Sender<Pacote>,
    linhas: &'a Sender<Linhas>,
}

/// Checks, completes and encodes the rows handed over; returns the first bad row's error
/// (the later batches are then only drained, those before it still checked).
fn completar(
    a_fazer: &Receiver<Trabalho>,
    ruim: &PrimeiraRuim,
    saida: &Saida<'_>,
) -> Result<(), CargaError> {
    let mut erro = None;
    for t in a_fazer {
        let mut p = vazio(saida.vazios, LOTE);
        match t {
            Trabalho::Linhas(colunas, linhas) => {
                for (seq, linha, r) in &linhas {
                    if ruim.depois(*linha) {
                        break;
                    }
                    match validar_bruta(&colunas, r, *linha) {
                        Ok(r) => p.push(*seq, &completar_registro(r))?,
                        Err(e) => {
                            ruim.marcar(*linha);
                            erro = Some(e.into());
                            break;
                        }
                    }
                }
                // A full queue: the reader has records enough; these are freed.
                let _ = saida.linhas.try_send(linhas);
            }
            Trabalho::Imoveis(is) => {
                for (seq, i) in &is {
                    p.push(*seq, i)?;
                }
            }
        }
        saida.pacotes.send(p).map_err(parou)?;
    }
    erro.map_or(Ok(()), Err)
}

/// Reads a CSV's rows in order into batches of [`LOTE`] for the workers, into the records of
/// the batches they hand back when there are some.
fn ler_csv(
    caminho: &Path,
    ruim: &PrimeiraRuim,
    trabalho: &Sender<Trabalho>,
    lidas: &Receiver<Linhas>,
) -> Result<(), CargaError> {
    let mut leitor = LeitorCsv::new(BufReader::with_capacity(1 << 16, abrir(caminho)?))?;
    let colunas = leitor.colunas();
    let mut reserva: Vec<StringRecord> = Vec::new();
    let mut lote = Vec::with_capacity(LOTE);
    for seq in 0u64.. {
        if reserva.is_empty() {
            reserva.extend(lidas.try_iter().flatten().map(|(_, _, r)| r));
        }
        let mut r = reserva
            .pop()
            .unwrap_or_else(|| StringRecord::with_capacity(256, 16));
        let Some(linha) = leitor.ler_bruta(&mut r)? else {
            break;
        };
        if ruim.depois(linha) {
            break;
        }
        lote.push((seq, linha, r));
        if lote.len() == LOTE {
            let cheio = std::mem::replace(&mut lote, Vec::with_capacity(LOTE));
            trabalho
                .send(Trabalho::Linhas(colunas, cheio))
                .map_err(parou)?;
        }
    }
    if !lote.is_empty() {
        trabalho
            .send(Trabalho::Linhas(colunas, lote))
            .map_err(parou)?;
    }
    Ok(())
}

/// Reads the file's rows in order, handing batches of [`LOTE`] to the workers (a WFS
/// file's features checked here, a CSV's rows by the workers); stops after the first bad
/// line found.
fn ler_arquivo(
    caminho: &Path,
    ruim: &PrimeiraRuim,
    trabalho: &Sender<Trabalho>,
    lidas: &Receiver<Linhas>,
) -> Result<(), CargaError> {
    match Formato::de(caminho)? {
        Formato::Csv => ler_csv(caminho, ruim, trabalho, lidas)?,
        Formato::GeoJson => {
            let mut lote = Vec::with_capacity(LOTE);
            let mut seq = 0u64;
            wfs::percorrer(abrir(caminho)?, |f| -> Result<(), CargaError> {
                lote.push((seq, f.imovel));
                seq += 1;
                if lote.len() == LOTE {
                    let cheio = std::mem::replace(&mut lote, Vec::with_capacity(LOTE));
                    trabalho.send(Trabalho::Imoveis(cheio)).map_err(parou)?;
                }
                Ok(())
            })?;
            if !lote.is_empty() {
                trabalho.send(Trabalho::Imoveis(lote)).map_err(parou)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::escrever_csv;

    /// A CSV of `n` synthetic records with `area` broken on each of `ruins` (1-based lines,
    /// the header is line 1).
    fn csv_com_linhas_ruins(dir: &tempfile::TempDir, n: usize, ruins: &[usize]) -> Origem {
        let mut bytes = Vec::new();
        escrever_csv(&mut bytes, Sinteticos::new(n, 3)).unwrap();
        let texto = String::from_utf8(bytes).unwrap();
        let linhas: Vec<String> = texto
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if ruins.contains(&(i + 1)) {
                    let mut campos: Vec<&str> = l.split(',').collect();
                    campos[4] = "-1";
                    campos.join(",")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        let caminho = dir.path().join("imoveis.csv");
        std::fs::write(&caminho, linhas.join("\n")).unwrap();
        Origem::Arquivo(caminho)
    }

    fn linha_do_erro(origem: &Origem) -> Option<u64> {
        match ler(origem, &ProgressBar::hidden()) {
            Ok(_) => None,
            Err(e) => Some(e.linha().expect("an error naming its line")),
        }
    }

    #[test]
    fn the_first_bad_line_is_reported_whichever_worker_finds_a_bad_line_first() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2 * LOTE + 500;
        // Lines in three batches: [2, LOTE + 1], [LOTE + 2, 2 LOTE + 1], the rest.
        for (ruins, primeira) in [
            (vec![2 * LOTE + 7], 2 * LOTE + 7),
            (vec![LOTE + 345, 2 * LOTE + 7], LOTE + 345),
            (vec![3, 2 * LOTE + 7], 3),
            (vec![LOTE + 1, LOTE + 2], LOTE + 1),
        ] {
            let origem = csv_com_linhas_ruins(&dir, n, &ruins);
            assert_eq!(linha_do_erro(&origem), Some(primeira as u64), "{ruins:?}");
        }
        let origem = csv_com_linhas_ruins(&dir, n, &[]);
        let (_, lidos) = ler(&origem, &ProgressBar::hidden()).unwrap();
        assert_eq!(lidos, n as u64);
    }
}
