//! External merge sort of a load's records by CAR code, in bounded memory, keeping one version
//! per code: what lets a SQLite load write its B-trees in key order (each page written once)
//! instead of inserting at random places.
//!
//! Encoded batches ([`Package`]) are held until they reach [`BUDGET`] bytes; then their records
//! are sorted by (code, position read) and spilled to an anonymous temporary file as
//! length-prefixed records (a run). The last run stays in memory. [`Sorter::winners`]
//! merges the runs (a binary heap over one reader per run) and yields, for each code, the
//! version that wins by [`super::wfs::newest`]'s rule: the newest `data_atualizacao` (a
//! missing one the oldest), then the newest `data_cadastro`, and on a tie the version read last.
//!
//! Memory: [`BUDGET`] bytes of records while reading; while merging, the last run plus one
//! record per spilled run and [`READ`] bytes of read buffers shared by the spilled runs (a
//! 7.5M-record load spills about 75), whatever their number.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::mpsc::{Receiver, SyncSender};

use super::LoadError;
use super::record::{Package, Record};

/// Bytes of encoded records held in memory before they are sorted and spilled (about 110,000
/// records of the synthetic shape).
pub(super) const BUDGET: usize = 48 << 20;

/// Write buffer of a run.
const BUFFER: usize = 256 << 10;

/// Read buffers of all the spilled runs while they are merged, split among them (each 16 KiB
/// to 256 KiB).
const READ: usize = 16 << 20;

/// Buffers batches, spills sorted runs, merges them back in code order.
#[derive(Debug, Default)]
pub(super) struct Sorter {
    packets: Vec<Package>,
    bytes: usize,
    races: Vec<File>,
    budget: Option<usize>,
}

/// (batch, record) of a held record.
type Ref = (u32, u32);

impl Sorter {
    /// A sorter that spills every `bytes` bytes instead of [`BUDGET`] (tests).
    #[cfg(test)]
    fn with_budget(bytes: usize) -> Self {
        Sorter {
            budget: Some(bytes),
            ..Sorter::default()
        }
    }

    /// Adds a batch, spilling a run when the held records pass the budget; returns the
    /// batches a spill emptied, for their buffers to be reused.
    ///
    /// # Errors
    /// [`LoadError::Io`] when the temporary file cannot be written.
    pub(crate) fn push(&mut self, p: Package) -> Result<Vec<Package>, LoadError> {
        self.bytes += p.size();
        self.packets.push(p);
        if self.bytes < self.budget.unwrap_or(BUDGET) {
            return Ok(Vec::new());
        }
        self.dump()?;
        let mut free = std::mem::take(&mut self.packets);
        free.iter_mut().for_each(Package::clear);
        Ok(free)
    }

    /// The held records in (code, position read) order.
    fn compare(&self) -> Vec<Ref> {
        let record = |(p, r): Ref| Record(self.packets[p as usize].raw(r as usize));
        // The codes' first 16 bytes sort most pairs without reading the records again.
        let mut keys: Vec<(u128, Ref)> = self
            .packets
            .iter()
            .enumerate()
            .flat_map(|(p, package)| (0..package.len() as u32).map(move |r| (p as u32, r)))
            .map(|r| (prefix(record(r).codigo()), r))
            .collect();
        keys.sort_unstable_by(|(pa, a), (pb, b)| {
            pa.cmp(pb).then_with(|| record(*a).compare(&record(*b)))
        });
        keys.into_iter().map(|(_, r)| r).collect()
    }

    /// Sorts the held records and writes them as one run.
    fn dump(&mut self) -> Result<(), LoadError> {
        let refs = self.compare();
        let mut w = BufWriter::with_capacity(BUFFER, tempfile::tempfile().map_err(temp)?);
        for (p, r) in refs {
            let raw = self.packets[p as usize].raw(r as usize);
            w.write_all(&(raw.len() as u32).to_le_bytes())
                .and_then(|()| w.write_all(raw))
                .map_err(temp)?;
        }
        let mut f = w.into_inner().map_err(|e| temp(e.into_error()))?;
        f.seek(SeekFrom::Start(0)).map_err(temp)?;
        self.races.push(f);
        self.bytes = 0;
        Ok(())
    }

    /// Runs spilled so far.
    pub(crate) fn races(&self) -> usize {
        self.races.len()
    }

    /// The winning version of each code, in code order.
    ///
    /// # Errors
    /// [`LoadError::Io`] when a run cannot be read back.
    pub(crate) fn winners(self) -> Result<Winners, LoadError> {
        let order = self.compare();
        let buffer = (READ / self.races.len().max(1)).clamp(16 << 10, BUFFER);
        let mut sources: Vec<Source> = self
            .races
            .into_iter()
            .map(|f| Source::File(BufReader::with_capacity(buffer, f)))
            .collect();
        sources.push(Source::Memory {
            packets: self.packets,
            order,
            next_one: 0,
        });
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, f) in sources.iter_mut().enumerate() {
            let mut line = Vec::new();
            if f.next_one(&mut line)? {
                heap.push(Reverse(HeapTop { line, source: i }));
            }
        }
        Ok(Winners {
            sources,
            heap,
            free: Vec::new(),
        })
    }
}

/// The first 16 bytes of `codigo` as a big-endian number (zero-padded): its order is the
/// bytes' order.
fn prefix(codigo: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = codigo.len().min(16);
    b[..n].copy_from_slice(&codigo[..n]);
    u128::from_be_bytes(b)
}

/// A sorted run being read back.
#[derive(Debug)]
enum Source {
    /// Spilled to a temporary file.
    File(BufReader<File>),
    /// The last run, never spilled.
    Memory {
        packets: Vec<Package>,
        order: Vec<Ref>,
        next_one: usize,
    },
}

impl Source {
    /// Reads the next record into `linha`; false at the end of the run.
    fn next_one(&mut self, line: &mut Vec<u8>) -> Result<bool, LoadError> {
        line.clear();
        match self {
            Source::File(r) => {
                let mut size = [0u8; 4];
                match r.read_exact(&mut size) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
                    Err(e) => return Err(temp(e)),
                }
                line.resize(u32::from_le_bytes(size) as usize, 0);
                r.read_exact(line).map_err(temp)?;
                Ok(true)
            }
            Source::Memory {
                packets,
                order,
                next_one,
            } => {
                let Some((p, r)) = order.get(*next_one) else {
                    return Ok(false);
                };
                line.extend_from_slice(packets[*p as usize].raw(*r as usize));
                *next_one += 1;
                Ok(true)
            }
        }
    }
}

/// A heap entry: the smallest unread record of one run.
#[derive(Debug)]
struct HeapTop {
    line: Vec<u8>,
    source: usize,
}

impl PartialEq for HeapTop {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapTop {}
impl PartialOrd for HeapTop {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapTop {
    fn cmp(&self, other: &Self) -> Ordering {
        Record(&self.line).compare(&Record(&other.line))
    }
}

/// The winning versions in code order (see [`Sorter::winners`]).
#[derive(Debug)]
pub(super) struct Winners {
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<HeapTop>>,
    /// Record buffers to reuse.
    free: Vec<Vec<u8>>,
}

impl Winners {
    /// The smallest record left, refilling the heap from its run.
    fn smallest(&mut self) -> Result<Option<Vec<u8>>, LoadError> {
        let Some(Reverse(HeapTop { line, source })) = self.heap.pop() else {
            return Ok(None);
        };
        let mut next_one = self.free.pop().unwrap_or_default();
        if self.sources[source].next_one(&mut next_one)? {
            self.heap.push(Reverse(HeapTop {
                line: next_one,
                source,
            }));
        } else {
            self.free.push(next_one);
        }
        Ok(Some(line))
    }

    /// Appends the winner of the next code to `saida` (its losers counted in
    /// `output.lost`); false when no code is left.
    ///
    /// # Errors
    /// [`LoadError::Io`] when a run cannot be read back.
    pub(crate) fn next_item(&mut self, output: &mut Package) -> Result<bool, LoadError> {
        let Some(mut winner) = self.smallest()? else {
            return Ok(false);
        };
        while self
            .heap
            .peek()
            .is_some_and(|Reverse(t)| Record(&t.line).codigo() == Record(&winner).codigo())
        {
            let another = self.smallest()?.expect("peek viu um registro");
            output.lost += 1;
            // `outra` was read later: it wins unless older.
            if Record(&another).wins(&Record(&winner)) {
                self.free.push(std::mem::replace(&mut winner, another));
            } else {
                self.free.push(another);
            }
        }
        output.push_raw(&winner);
        self.free.push(winner);
        Ok(true)
    }
}

impl Winners {
    /// Sends the winners to `tx` in batches of `lote`, filling the batches handed back on
    /// `vazios` (new ones while none is); stops at the end, at an error (sent), or when the
    /// receiver has gone.
    pub(crate) fn send(
        mut self,
        batch: usize,
        tx: &SyncSender<Result<Package, LoadError>>,
        empty: &Receiver<Package>,
    ) {
        loop {
            let mut p = match empty.try_recv() {
                Ok(mut p) => {
                    p.clear();
                    p
                }
                Err(_) => Package::with_capacity(batch),
            };
            let mut end = false;
            while p.len() < batch {
                match self.next_item(&mut p) {
                    Ok(true) => {}
                    Ok(false) => {
                        end = true;
                        break;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
            if tx.send(Ok(p)).is_err() || end {
                return;
            }
        }
    }
}

fn temp(source: std::io::Error) -> LoadError {
    LoadError::Io {
        path: "arquivo temporário da ordenação".into(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carapi_service::dados::Imovel;

    use crate::synthetic::synthetic;
    use chrono::NaiveDateTime;

    fn data(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    /// A record whose code ends in `codigo` (hex digits, zero-padded to 32), with versions.
    fn imovel(codigo: &str, update: Option<&str>, cadastro: &str, name: &str) -> Imovel {
        let mut i = synthetic(1, 1).remove(0);
        i.codigo_car = format!("DF-5300108-{codigo:0>32}").parse().unwrap();
        i.data_atualizacao = update.map(data);
        i.data_cadastro = data(cadastro);
        i.nome_imovel = Some(name.into());
        i
    }

    fn package(itens: &[(u64, Imovel)]) -> Package {
        let mut p = Package::default();
        for (seq, i) in itens {
            p.push(*seq, i).unwrap();
        }
        p
    }

    /// Every winner as (code suffix, name, losers so far).
    fn all(o: Sorter) -> Vec<(String, String, u64)> {
        let mut v = o.winners().unwrap();
        let mut output = Package::default();
        let mut out = Vec::new();
        while v.next_item(&mut output).unwrap() {
            let r = output.iter().last().unwrap();
            let mut l = r.read();
            let name = (0..4).map(|_| l.valor()).last().unwrap();
            let super::super::record::FieldValue::Text(name) = name else {
                panic!("nome")
            };
            out.push((
                String::from_utf8(r.codigo()[11..].to_vec()).unwrap(),
                String::from_utf8(name.to_vec()).unwrap(),
                output.lost,
            ));
        }
        out
    }

    #[test]
    fn records_come_back_in_code_order_across_runs() {
        let mut o = Sorter::with_budget(40_000);
        let n = 2_017u64;
        // codes in a scrambled order: i * 7919 mod n is a permutation (7919 is prime, n is not
        // its multiple)
        for batch in (0..n).collect::<Vec<_>>().chunks(100) {
            let itens: Vec<(u64, Imovel)> = batch
                .iter()
                .map(|i| {
                    let k = (i * 7919) % n;
                    (
                        *i,
                        imovel(&format!("{k:08}"), None, "2020-01-01 00:00:00", "x"),
                    )
                })
                .collect();
            o.push(package(&itens)).unwrap();
        }
        assert!(o.races.len() > 3, "spilled {} runs", o.races.len());
        let v = all(o);
        assert_eq!(v.len(), n as usize);
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(v.last().unwrap().2, 0);
    }

    #[test]
    fn the_newest_version_wins_and_a_tie_goes_to_the_one_read_last() {
        let mut o = Sorter::default();
        o.push(package(&[
            (
                0,
                imovel(
                    "B",
                    Some("2024-01-01 00:00:00"),
                    "2020-01-01 00:00:00",
                    "b-nova",
                ),
            ),
            (
                1,
                imovel("A", None, "2021-01-01 00:00:00", "a-cadastro-novo"),
            ),
            (
                2,
                imovel("B", None, "2023-01-01 00:00:00", "b-sem-atualizacao"),
            ),
            (3, imovel("A", None, "2020-01-01 00:00:00", "a-velha")),
            (4, imovel("C", None, "2020-01-01 00:00:00", "c-primeira")),
        ]))
        .unwrap();
        o.push(package(&[(
            5,
            imovel("C", None, "2020-01-01 00:00:00", "c-lida-por-ultimo"),
        )]))
        .unwrap();
        let v: Vec<(String, u64)> = all(o).into_iter().map(|(_, n, p)| (n, p)).collect();
        assert_eq!(
            v,
            [
                ("a-cadastro-novo".to_owned(), 1),
                ("b-nova".to_owned(), 2),
                ("c-lida-por-ultimo".to_owned(), 3)
            ]
        );
    }

    #[test]
    fn versions_split_across_runs_are_resolved() {
        let mut o = Sorter::with_budget(1);
        o.push(package(&[(
            0,
            imovel(
                "E",
                Some("2025-01-01 00:00:00"),
                "2020-01-01 00:00:00",
                "nova",
            ),
        )]))
        .unwrap();
        o.push(package(&[(
            1,
            imovel("F", None, "2020-01-01 00:00:00", "y"),
        )]))
        .unwrap();
        o.push(package(&[(
            2,
            imovel(
                "E",
                Some("2024-01-01 00:00:00"),
                "2020-01-01 00:00:00",
                "velha",
            ),
        )]))
        .unwrap();
        assert_eq!(o.races.len(), 3);
        let v = all(o);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].1.as_str(), v[0].2), ("nova", 1));
    }

    #[test]
    fn nothing_pushed_yields_nothing() {
        assert!(all(Sorter::default()).is_empty());
    }
}
