//! The first phase of a SQLite load: the origin read, every record checked, completed and
//! encoded ([`super::registro`]) and sorted into runs ([`super::sort`]), before anything is
//! written to the base. A bad row stops the read with its line (CSV) or feature index (WFS),
//! and the base is never touched.
//!
//! The work is spread over the machine's cores:
//! - synthetic records: each worker generates whole blocks ([`Synthetic::block`]);
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

use super::record::Package;
use super::sort::Sorter;
use super::{BATCH, Format, LoadError, Origin, open, wfs};
use csv::StringRecord;

use crate::import::{Columns, CsvReader, complete_record, validate_raw};
use carapi_service::dados::Imovel;

use crate::synthetic::Synthetic;

/// CSV rows as read: (position read, line, fields).
type RowBatch = Vec<(u64, u64, StringRecord)>;

/// Rows handed to a worker at once, each with the position it was read at.
enum Job {
    /// CSV rows as read, with their lines, to check and complete; handed back once done (for
    /// the reader to read into the same records again).
    RowBatch(Columns, RowBatch),
    /// Complete records (WFS features).
    Imoveis(Vec<(u64, Imovel)>),
}

/// The first line (CSV) found bad so far, `u64::MAX` while none is.
#[derive(Debug)]
struct FirstBad(AtomicU64);

impl FirstBad {
    fn fresh() -> Self {
        FirstBad(AtomicU64::new(u64::MAX))
    }

    fn tag(&self, linha: u64) {
        self.0.fetch_min(linha, Ordering::Relaxed);
    }

    /// Whether rows from `linha` on no longer matter (a bad one was found before).
    fn is_after(&self, linha: u64) -> bool {
        linha > self.0.load(Ordering::Relaxed)
    }
}

/// Worker threads: the machine's cores (at most 8).
fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8))
}

/// Reads `origem` into a sorter; returns it with how many records were read. `barra` counts
/// the records read.
///
/// # Errors
/// [`LoadError::Csv`] / [`LoadError::Wfs`] for the first bad row or feature;
/// [`LoadError::Io`] when the file or a temporary run cannot be read or written.
pub(super) fn read(origem: &Origin, barra: &ProgressBar) -> Result<(Sorter, u64), LoadError> {
    let n = workers();
    let (pacotes, recebidos) = bounded::<Package>(2 * n);
    // Emptied batches go back to the workers: the same buffers, mostly.
    let (give_back, devolvidos) = bounded::<Package>(4 * n);
    let (trabalho, a_fazer) = bounded::<Job>(2 * n);
    let (devolver_linhas, lines_read) = bounded::<RowBatch>(2 * n);
    let (next_item, ruim) = (AtomicUsize::new(0), FirstBad::fresh());
    let plano = match origem {
        Origin::Synthetic {
            n: total,
            seed,
            dono_grande,
        } => {
            let mut g = Synthetic::new(*total, *seed);
            if let Some(cars) = dono_grande {
                g = g.with_large_owner(*cars);
            }
            ReadPlan::Gerar(Box::new(g))
        }
        Origin::Arquivo(caminho) => ReadPlan::Ler(caminho),
    };
    std::thread::scope(|s| {
        let mut produtores = Vec::new();
        for _ in 0..n {
            let (pacotes, devolvidos, a_fazer) =
                (pacotes.clone(), devolvidos.clone(), a_fazer.clone());
            let devolver_linhas = devolver_linhas.clone();
            let (plano, next_item, ruim) = (&plano, &next_item, &ruim);
            produtores.push(s.spawn(move || match plano {
                ReadPlan::Gerar(g) => generate(g, next_item, &devolvidos, &pacotes),
                ReadPlan::Ler(_) => {
                    let saida = SortOutput {
                        vazios: &devolvidos,
                        pacotes: &pacotes,
                        linhas: &devolver_linhas,
                    };
                    complete(&a_fazer, ruim, &saida)
                }
            }));
        }
        if let ReadPlan::Ler(caminho) = plano {
            let ruim = &ruim;
            produtores.push(s.spawn(move || read_file(caminho, ruim, &trabalho, &lines_read)));
        } else {
            drop(trabalho);
        }
        drop((pacotes, a_fazer, devolver_linhas));
        let ordenado = sort(&recebidos, &give_back, barra);
        // A sorter that failed stops the producers: their sends fail once `recebidos` is gone.
        drop(recebidos);
        let erros: Vec<LoadError> = produtores
            .into_iter()
            .filter_map(|p| {
                p.join()
                    .unwrap_or_else(|_| Err(LoadError::Interrompida("leitor em pânico".into())))
                    .err()
            })
            .collect();
        // The sorter's own error explains the producers' (they stopped because it did); of
        // the rows' errors, the first line's.
        let ordenado = ordenado?;
        match erros
            .into_iter()
            .min_by_key(|e| e.line_of().unwrap_or(u64::MAX))
        {
            Some(e) => Err(e),
            None => Ok(ordenado),
        }
    })
}

/// What the producers do.
enum ReadPlan<'a> {
    /// Generate synthetic records, whole blocks per worker.
    Gerar(Box<Synthetic>),
    /// Read this file: one reader, the workers check and complete.
    Ler(&'a Path),
}

/// Sorts every batch received (until all producers are done).
fn sort(
    recebidos: &Receiver<Package>,
    give_back: &Sender<Package>,
    barra: &ProgressBar,
) -> Result<(Sorter, u64), LoadError> {
    let mut o = Sorter::default();
    let mut lidos = 0u64;
    for p in recebidos {
        lidos += p.len() as u64;
        barra.inc(p.len() as u64);
        for livre in o.push(p)? {
            // A full return queue: the buffer is freed instead.
            let _ = give_back.try_send(livre);
        }
    }
    Ok((o, lidos))
}

/// An empty batch: one handed back by the sorter, else a new one.
fn empty(devolvidos: &Receiver<Package>, registros: usize) -> Package {
    devolvidos
        .try_recv()
        .unwrap_or_else(|_| Package::with_capacity(registros))
}

/// A closed channel: the sorter stopped (its error is the one reported).
fn stopped<T>(_: T) -> LoadError {
    LoadError::Interrompida("a ordenação parou".into())
}

/// Generates blocks of synthetic records until none is left.
fn generate(
    g: &Synthetic,
    next_item: &AtomicUsize,
    devolvidos: &Receiver<Package>,
    pacotes: &Sender<Package>,
) -> Result<(), LoadError> {
    loop {
        let k = next_item.fetch_add(1, Ordering::Relaxed);
        if k >= g.blocks() {
            return Ok(());
        }
        let mut p = empty(devolvidos, crate::synthetic::BLOCK);
        for (i, imovel) in g.block(k) {
            p.push(i as u64, &imovel)?;
        }
        pacotes.send(p).map_err(stopped)?;
    }
}

/// Where a worker's results go: encoded batches to the sorter, the CSV rows back to the
/// reader; emptied batches come back from the sorter.
struct SortOutput<'a> {
    vazios: &'a Receiver<Package>,
    pacotes: &'a Sender<Package>,
    linhas: &'a Sender<RowBatch>,
}

/// Checks, completes and encodes the rows handed over; returns the first bad row's error
/// (the later batches are then only drained, those before it still checked).
fn complete(
    a_fazer: &Receiver<Job>,
    ruim: &FirstBad,
    saida: &SortOutput<'_>,
) -> Result<(), LoadError> {
    let mut erro = None;
    for t in a_fazer {
        let mut p = empty(saida.vazios, BATCH);
        match t {
            Job::RowBatch(colunas, linhas) => {
                for (seq, linha, r) in &linhas {
                    if ruim.is_after(*linha) {
                        break;
                    }
                    match validate_raw(&colunas, r, *linha) {
                        Ok(r) => p.push(*seq, &complete_record(r))?,
                        Err(e) => {
                            ruim.tag(*linha);
                            erro = Some(e.into());
                            break;
                        }
                    }
                }
                // A full queue: the reader has records enough; these are freed.
                let _ = saida.linhas.try_send(linhas);
            }
            Job::Imoveis(is) => {
                for (seq, i) in &is {
                    p.push(*seq, i)?;
                }
            }
        }
        saida.pacotes.send(p).map_err(stopped)?;
    }
    erro.map_or(Ok(()), Err)
}

/// Reads a CSV's rows in order into batches of [`BATCH`] for the workers, into the records of
/// the batches they hand back when there are some.
fn read_csv(
    caminho: &Path,
    ruim: &FirstBad,
    trabalho: &Sender<Job>,
    lidas: &Receiver<RowBatch>,
) -> Result<(), LoadError> {
    let mut reader = CsvReader::new(BufReader::with_capacity(1 << 16, open(caminho)?))?;
    let colunas = reader.columns();
    let mut reservation: Vec<StringRecord> = Vec::new();
    let mut lote = Vec::with_capacity(BATCH);
    for seq in 0u64.. {
        if reservation.is_empty() {
            reservation.extend(lidas.try_iter().flatten().map(|(_, _, r)| r));
        }
        let mut r = reservation
            .pop()
            .unwrap_or_else(|| StringRecord::with_capacity(256, 16));
        let Some(linha) = reader.read_raw(&mut r)? else {
            break;
        };
        if ruim.is_after(linha) {
            break;
        }
        lote.push((seq, linha, r));
        if lote.len() == BATCH {
            let cheio = std::mem::replace(&mut lote, Vec::with_capacity(BATCH));
            trabalho
                .send(Job::RowBatch(colunas, cheio))
                .map_err(stopped)?;
        }
    }
    if !lote.is_empty() {
        trabalho
            .send(Job::RowBatch(colunas, lote))
            .map_err(stopped)?;
    }
    Ok(())
}

/// Reads the file's rows in order, handing batches of [`BATCH`] to the workers (a WFS
/// file's features checked here, a CSV's rows by the workers); stops after the first bad
/// line found.
fn read_file(
    caminho: &Path,
    ruim: &FirstBad,
    trabalho: &Sender<Job>,
    lidas: &Receiver<RowBatch>,
) -> Result<(), LoadError> {
    match Format::de(caminho)? {
        Format::Csv => read_csv(caminho, ruim, trabalho, lidas)?,
        Format::GeoJson => {
            let mut lote = Vec::with_capacity(BATCH);
            let mut seq = 0u64;
            wfs::walk(open(caminho)?, |f| -> Result<(), LoadError> {
                lote.push((seq, f.imovel));
                seq += 1;
                if lote.len() == BATCH {
                    let cheio = std::mem::replace(&mut lote, Vec::with_capacity(BATCH));
                    trabalho.send(Job::Imoveis(cheio)).map_err(stopped)?;
                }
                Ok(())
            })?;
            if !lote.is_empty() {
                trabalho.send(Job::Imoveis(lote)).map_err(stopped)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::write_csv;

    /// A CSV of `n` synthetic records with `area` broken on each of `ruins` (1-based lines,
    /// the header is line 1).
    fn csv_com_linhas_ruins(dir: &tempfile::TempDir, n: usize, ruins: &[usize]) -> Origin {
        let mut bytes = Vec::new();
        write_csv(&mut bytes, Synthetic::new(n, 3)).unwrap();
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
        Origin::Arquivo(caminho)
    }

    fn error_line(origem: &Origin) -> Option<u64> {
        match read(origem, &ProgressBar::hidden()) {
            Ok(_) => None,
            Err(e) => Some(e.line_of().expect("an error naming its line")),
        }
    }

    #[test]
    fn the_first_bad_line_is_reported_whichever_worker_finds_a_bad_line_first() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2 * BATCH + 500;
        // Lines in three batches: [2, LOTE + 1], [LOTE + 2, 2 LOTE + 1], the rest.
        for (ruins, primeira) in [
            (vec![2 * BATCH + 7], 2 * BATCH + 7),
            (vec![BATCH + 345, 2 * BATCH + 7], BATCH + 345),
            (vec![3, 2 * BATCH + 7], 3),
            (vec![BATCH + 1, BATCH + 2], BATCH + 1),
        ] {
            let origem = csv_com_linhas_ruins(&dir, n, &ruins);
            assert_eq!(error_line(&origem), Some(primeira as u64), "{ruins:?}");
        }
        let origem = csv_com_linhas_ruins(&dir, n, &[]);
        let (_, lidos) = read(&origem, &ProgressBar::hidden()).unwrap();
        assert_eq!(lidos, n as u64);
    }
}
