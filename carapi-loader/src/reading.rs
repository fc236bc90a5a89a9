//! The first phase of a SQLite load: the origin read, every record checked, completed and
//! encoded ([`super::record`]) and sorted into runs ([`super::sort`]), before anything is
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

    fn tag(&self, line: u64) {
        self.0.fetch_min(line, Ordering::Relaxed);
    }

    /// Whether rows from `linha` on no longer matter (a bad one was found before).
    fn is_after(&self, line: u64) -> bool {
        line > self.0.load(Ordering::Relaxed)
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
pub(super) fn read(origin: &Origin, bar: &ProgressBar) -> Result<(Sorter, u64), LoadError> {
    let n = workers();
    let (packets, received) = bounded::<Package>(2 * n);
    // Emptied batches go back to the workers: the same buffers, mostly.
    let (give_back, returned) = bounded::<Package>(4 * n);
    let (work, to_do) = bounded::<Job>(2 * n);
    let (return_lines, lines_read) = bounded::<RowBatch>(2 * n);
    let (next_item, bad) = (AtomicUsize::new(0), FirstBad::fresh());
    let plan = match origin {
        Origin::Synthetic {
            n: total,
            seed,
            large_owner,
        } => {
            let mut g = Synthetic::new(*total, *seed);
            if let Some(cars) = large_owner {
                g = g.with_large_owner(*cars);
            }
            ReadPlan::Generate(Box::new(g))
        }
        Origin::File(path) => ReadPlan::Read(path),
    };
    std::thread::scope(|s| {
        let mut producers = Vec::new();
        for _ in 0..n {
            let (packets, returned, to_do) = (packets.clone(), returned.clone(), to_do.clone());
            let return_lines = return_lines.clone();
            let (plan, next_item, bad) = (&plan, &next_item, &bad);
            producers.push(s.spawn(move || match plan {
                ReadPlan::Generate(g) => generate(g, next_item, &returned, &packets),
                ReadPlan::Read(_) => {
                    let output = SortOutput {
                        empty: &returned,
                        packets: &packets,
                        lines: &return_lines,
                    };
                    complete(&to_do, bad, &output)
                }
            }));
        }
        if let ReadPlan::Read(path) = plan {
            let bad = &bad;
            producers.push(s.spawn(move || read_file(path, bad, &work, &lines_read)));
        } else {
            drop(work);
        }
        drop((packets, to_do, return_lines));
        let sorted = sort(&received, &give_back, bar);
        // A sorter that failed stops the producers: their sends fail once `recebidos` is gone.
        drop(received);
        let erros: Vec<LoadError> = producers
            .into_iter()
            .filter_map(|p| {
                p.join()
                    .unwrap_or_else(|_| Err(LoadError::Interrupted("leitor em pânico".into())))
                    .err()
            })
            .collect();
        // The sorter's own error explains the producers' (they stopped because it did); of
        // the rows' errors, the first line's.
        let sorted = sorted?;
        match erros
            .into_iter()
            .min_by_key(|e| e.line_of().unwrap_or(u64::MAX))
        {
            Some(e) => Err(e),
            None => Ok(sorted),
        }
    })
}

/// What the producers do.
enum ReadPlan<'a> {
    /// Generate synthetic records, whole blocks per worker.
    Generate(Box<Synthetic>),
    /// Read this file: one reader, the workers check and complete.
    Read(&'a Path),
}

/// Sorts every batch received (until all producers are done).
fn sort(
    received: &Receiver<Package>,
    give_back: &Sender<Package>,
    bar: &ProgressBar,
) -> Result<(Sorter, u64), LoadError> {
    let mut o = Sorter::default();
    let mut read_count = 0u64;
    for p in received {
        read_count += p.len() as u64;
        bar.inc(p.len() as u64);
        for free in o.push(p)? {
            // A full return queue: the buffer is freed instead.
            let _ = give_back.try_send(free);
        }
    }
    Ok((o, read_count))
}

/// An empty batch: one handed back by the sorter, else a new one.
fn empty(returned: &Receiver<Package>, records: usize) -> Package {
    returned
        .try_recv()
        .unwrap_or_else(|_| Package::with_capacity(records))
}

/// A closed channel: the sorter stopped (its error is the one reported).
fn stopped<T>(_: T) -> LoadError {
    LoadError::Interrupted("a ordenação parou".into())
}

/// Generates blocks of synthetic records until none is left.
fn generate(
    g: &Synthetic,
    next_item: &AtomicUsize,
    returned: &Receiver<Package>,
    packets: &Sender<Package>,
) -> Result<(), LoadError> {
    loop {
        let k = next_item.fetch_add(1, Ordering::Relaxed);
        if k >= g.blocks() {
            return Ok(());
        }
        let mut p = empty(returned, crate::synthetic::BLOCK);
        for (i, imovel) in g.block(k) {
            p.push(i as u64, &imovel)?;
        }
        packets.send(p).map_err(stopped)?;
    }
}

/// Where a worker's results go: encoded batches to the sorter, the CSV rows back to the
/// reader; emptied batches come back from the sorter.
struct SortOutput<'a> {
    empty: &'a Receiver<Package>,
    packets: &'a Sender<Package>,
    lines: &'a Sender<RowBatch>,
}

/// Checks, completes and encodes the rows handed over; returns the first bad row's error
/// (the later batches are then only drained, those before it still checked).
fn complete(
    to_do: &Receiver<Job>,
    bad: &FirstBad,
    output: &SortOutput<'_>,
) -> Result<(), LoadError> {
    let mut error = None;
    for t in to_do {
        let mut p = empty(output.empty, BATCH);
        match t {
            Job::RowBatch(columns, lines) => {
                for (seq, line, r) in &lines {
                    if bad.is_after(*line) {
                        break;
                    }
                    match validate_raw(&columns, r, *line) {
                        Ok(r) => p.push(*seq, &complete_record(r))?,
                        Err(e) => {
                            bad.tag(*line);
                            error = Some(e.into());
                            break;
                        }
                    }
                }
                // A full queue: the reader has records enough; these are freed.
                let _ = output.lines.try_send(lines);
            }
            Job::Imoveis(is) => {
                for (seq, i) in &is {
                    p.push(*seq, i)?;
                }
            }
        }
        output.packets.send(p).map_err(stopped)?;
    }
    error.map_or(Ok(()), Err)
}

/// Reads a CSV's rows in order into batches of [`BATCH`] for the workers, into the records of
/// the batches they hand back when there are some.
fn read_csv(
    path: &Path,
    bad: &FirstBad,
    work: &Sender<Job>,
    parsed: &Receiver<RowBatch>,
) -> Result<(), LoadError> {
    let mut reader = CsvReader::new(BufReader::with_capacity(1 << 16, open(path)?))?;
    let columns = reader.columns();
    let mut reservation: Vec<StringRecord> = Vec::new();
    let mut batch = Vec::with_capacity(BATCH);
    for seq in 0u64.. {
        if reservation.is_empty() {
            reservation.extend(parsed.try_iter().flatten().map(|(_, _, r)| r));
        }
        let mut r = reservation
            .pop()
            .unwrap_or_else(|| StringRecord::with_capacity(256, 16));
        let Some(line) = reader.read_raw(&mut r)? else {
            break;
        };
        if bad.is_after(line) {
            break;
        }
        batch.push((seq, line, r));
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            work.send(Job::RowBatch(columns, full)).map_err(stopped)?;
        }
    }
    if !batch.is_empty() {
        work.send(Job::RowBatch(columns, batch)).map_err(stopped)?;
    }
    Ok(())
}

/// Reads the file's rows in order, handing batches of [`BATCH`] to the workers (a WFS
/// file's features checked here, a CSV's rows by the workers); stops after the first bad
/// line found.
fn read_file(
    path: &Path,
    bad: &FirstBad,
    work: &Sender<Job>,
    parsed: &Receiver<RowBatch>,
) -> Result<(), LoadError> {
    match Format::de(path)? {
        Format::Csv => read_csv(path, bad, work, parsed)?,
        Format::GeoJson => {
            let mut batch = Vec::with_capacity(BATCH);
            let mut seq = 0u64;
            wfs::walk(open(path)?, |f| -> Result<(), LoadError> {
                batch.push((seq, f.imovel));
                seq += 1;
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    work.send(Job::Imoveis(full)).map_err(stopped)?;
                }
                Ok(())
            })?;
            if !batch.is_empty() {
                work.send(Job::Imoveis(batch)).map_err(stopped)?;
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
    fn csv_with_bad_lines(dir: &tempfile::TempDir, n: usize, bad_ones: &[usize]) -> Origin {
        let mut bytes = Vec::new();
        write_csv(&mut bytes, Synthetic::new(n, 3)).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let lines: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if bad_ones.contains(&(i + 1)) {
                    let mut fields: Vec<&str> = l.split(',').collect();
                    fields[4] = "-1";
                    fields.join(",")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        let path = dir.path().join("imoveis.csv");
        std::fs::write(&path, lines.join("\n")).unwrap();
        Origin::File(path)
    }

    fn error_line(origin: &Origin) -> Option<u64> {
        match read(origin, &ProgressBar::hidden()) {
            Ok(_) => None,
            Err(e) => Some(e.line_of().expect("an error naming its line")),
        }
    }

    #[test]
    fn the_first_bad_line_is_reported_whichever_worker_finds_a_bad_line_first() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2 * BATCH + 500;
        // Lines in three batches: [2, LOTE + 1], [LOTE + 2, 2 LOTE + 1], the rest.
        for (bad_ones, first) in [
            (vec![2 * BATCH + 7], 2 * BATCH + 7),
            (vec![BATCH + 345, 2 * BATCH + 7], BATCH + 345),
            (vec![3, 2 * BATCH + 7], 3),
            (vec![BATCH + 1, BATCH + 2], BATCH + 1),
        ] {
            let origin = csv_with_bad_lines(&dir, n, &bad_ones);
            assert_eq!(error_line(&origin), Some(first as u64), "{bad_ones:?}");
        }
        let origin = csv_with_bad_lines(&dir, n, &[]);
        let (_, read_count) = read(&origin, &ProgressBar::hidden()).unwrap();
        assert_eq!(read_count, n as u64);
    }
}
