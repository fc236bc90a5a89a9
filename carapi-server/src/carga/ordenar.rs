//! External merge sort of a load's rows by CAR code, in bounded memory, keeping one version
//! per code: what lets a load into an empty SQLite base append to its B-trees in key order
//! (one write of each page) instead of inserting at random places.
//!
//! Rows are buffered up to [`CORRIDA`] at a time; a full buffer is sorted by (code, order
//! read) and spilled to an anonymous temporary file as length-prefixed postcard records (a
//! run). [`Ordenador::vencedores`] merges the runs (a binary heap over one reader per run)
//! and yields, for each code, the version that wins by [`super::wfs::mais_nova`]'s rule: the
//! newest `data_atualizacao` (a missing one the oldest), then the newest `data_cadastro`, and
//! on a tie the version read last.
//!
//! Memory: one buffer of [`CORRIDA`] rows while reading; one row and a 64 KiB read buffer per
//! run while merging (a 7.5M-row load has 150 runs).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};

use super::CargaError;

/// Rows per run: about 1 KiB each in memory.
pub(super) const CORRIDA: usize = 50_000;

/// One value of a SQL row, in the store's encoding (`store/sqlite/linhas.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) enum Valor {
    /// SQL NULL.
    Nulo,
    /// An integer column.
    Inteiro(i64),
    /// A text column.
    Texto(String),
}

impl rusqlite::ToSql for Valor {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Valor::Nulo => ValueRef::Null,
            Valor::Inteiro(n) => ValueRef::Integer(*n),
            Valor::Texto(t) => ValueRef::Text(t.as_bytes()),
        }))
    }
}

/// One version of a record as the load writes it: the `imoveis` row and its owners' rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Linha {
    /// The CAR code (also the first value of `valores`).
    pub codigo: String,
    /// `data_atualizacao` and `data_cadastro` as stored (`YYYY-MM-DD HH:MM:SS`, whose text order
    /// is the time order); a missing `data_atualizacao` is `""`, the earliest.
    pub versao: (String, String),
    /// The `imoveis` columns, in the order of `carga::sqlite::COLUNAS`.
    pub valores: Vec<Valor>,
    /// The owners' (documento, nome), in order.
    pub donos: Vec<(String, String)>,
}

/// A row and the position it was read at (ties of one code go to the later one).
#[derive(Debug)]
struct Lida {
    seq: u64,
    linha: Linha,
}

impl Lida {
    fn chave(&self) -> (&str, u64) {
        (&self.linha.codigo, self.seq)
    }
}

/// Buffers rows, spills sorted runs, merges them back in code order.
#[derive(Debug, Default)]
pub(super) struct Ordenador {
    buffer: Vec<Lida>,
    corridas: Vec<File>,
    lidas: u64,
}

impl Ordenador {
    /// Adds one row (spilling a run when the buffer is full).
    ///
    /// # Errors
    /// [`CargaError::Io`] when the temporary file cannot be written.
    pub fn push(&mut self, linha: Linha) -> Result<(), CargaError> {
        self.buffer.push(Lida {
            seq: self.lidas,
            linha,
        });
        self.lidas += 1;
        if self.buffer.len() >= CORRIDA {
            self.despejar()?;
        }
        Ok(())
    }

    /// Sorts the buffer and writes it as one run.
    fn despejar(&mut self) -> Result<(), CargaError> {
        self.buffer.sort_unstable_by(|a, b| a.chave().cmp(&b.chave()));
        let mut w = BufWriter::with_capacity(1 << 16, tempfile::tempfile().map_err(temp)?);
        let mut bytes = Vec::with_capacity(1024);
        for l in self.buffer.drain(..) {
            bytes.clear();
            bytes.extend_from_slice(&l.seq.to_le_bytes());
            bytes = postcard::to_extend(&l.linha, bytes).map_err(codec)?;
            let tamanho = u32::try_from(bytes.len()).map_err(|_| codec("linha grande demais"))?;
            w.write_all(&tamanho.to_le_bytes()).map_err(temp)?;
            w.write_all(&bytes).map_err(temp)?;
        }
        let mut f = w.into_inner().map_err(|e| temp(e.into_error()))?;
        f.seek(SeekFrom::Start(0)).map_err(temp)?;
        self.corridas.push(f);
        Ok(())
    }

    /// The winning version of each code, in code order.
    ///
    /// # Errors
    /// [`CargaError::Io`] when a run cannot be written or read back.
    pub fn vencedores(mut self) -> Result<Vencedores, CargaError> {
        if !self.buffer.is_empty() {
            self.despejar()?;
        }
        let mut leitores: Vec<Corrida> = self
            .corridas
            .into_iter()
            .map(|f| Corrida(BufReader::with_capacity(1 << 16, f)))
            .collect();
        let mut heap = BinaryHeap::with_capacity(leitores.len());
        for (i, r) in leitores.iter_mut().enumerate() {
            if let Some(l) = r.proxima()? {
                heap.push(Reverse(NoHeap(l, i)));
            }
        }
        Ok(Vencedores { leitores, heap })
    }
}

/// A run being read back.
#[derive(Debug)]
struct Corrida(BufReader<File>);

impl Corrida {
    fn proxima(&mut self) -> Result<Option<Lida>, CargaError> {
        let mut tamanho = [0u8; 4];
        match self.0.read_exact(&mut tamanho) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(temp(e)),
        }
        let mut bytes = vec![0u8; u32::from_le_bytes(tamanho) as usize];
        self.0.read_exact(&mut bytes).map_err(temp)?;
        let (seq, resto) = bytes.split_at(8);
        let seq = u64::from_le_bytes(seq.try_into().map_err(|_| codec("registro curto"))?);
        let linha = postcard::from_bytes(resto).map_err(codec)?;
        Ok(Some(Lida { seq, linha }))
    }
}

/// A heap entry: a row and the run it came from, ordered by (code, position read).
#[derive(Debug)]
struct NoHeap(Lida, usize);

impl PartialEq for NoHeap {
    fn eq(&self, outro: &Self) -> bool {
        self.0.chave() == outro.0.chave()
    }
}
impl Eq for NoHeap {}
impl PartialOrd for NoHeap {
    fn partial_cmp(&self, outro: &Self) -> Option<Ordering> {
        Some(self.cmp(outro))
    }
}
impl Ord for NoHeap {
    fn cmp(&self, outro: &Self) -> Ordering {
        self.0.chave().cmp(&outro.0.chave())
    }
}

/// Iterator over the winning versions (see [`Ordenador::vencedores`]).
#[derive(Debug)]
pub(super) struct Vencedores {
    leitores: Vec<Corrida>,
    heap: BinaryHeap<Reverse<NoHeap>>,
}

impl Vencedores {
    /// The smallest row left, refilling the heap from its run.
    fn menor(&mut self) -> Result<Option<Lida>, CargaError> {
        let Some(Reverse(NoHeap(l, i))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(proxima) = self.leitores[i].proxima()? {
            self.heap.push(Reverse(NoHeap(proxima, i)));
        }
        Ok(Some(l))
    }

    /// The winner of the next code and how many versions of it lost.
    ///
    /// # Errors
    /// [`CargaError::Io`] when a run cannot be read back.
    pub fn proximo(&mut self) -> Result<Option<(Linha, u64)>, CargaError> {
        let Some(mut vencedor) = self.menor()? else {
            return Ok(None);
        };
        let mut perdedores = 0;
        while self
            .heap
            .peek()
            .is_some_and(|Reverse(NoHeap(l, _))| l.linha.codigo == vencedor.linha.codigo)
        {
            let outra = self.menor()?.expect("peek viu uma linha");
            perdedores += 1;
            // `outra` was read later: it wins unless older (the rule of wfs::mais_nova)
            if outra.linha.versao >= vencedor.linha.versao {
                vencedor = outra;
            }
        }
        Ok(Some((vencedor.linha, perdedores)))
    }
}

fn temp(source: std::io::Error) -> CargaError {
    CargaError::Io {
        caminho: "arquivo temporário da ordenação".into(),
        source,
    }
}

fn codec(e: impl std::fmt::Display) -> CargaError {
    temp(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        e.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linha(codigo: &str, atualizacao: &str, cadastro: &str, nome: &str) -> Linha {
        Linha {
            codigo: codigo.into(),
            versao: (atualizacao.into(), cadastro.into()),
            valores: vec![Valor::Texto(codigo.into()), Valor::Texto(nome.into()), Valor::Nulo],
            donos: vec![("52998224725".into(), nome.into())],
        }
    }

    fn todos(o: Ordenador) -> Vec<(Linha, u64)> {
        let mut v = o.vencedores().unwrap();
        std::iter::from_fn(|| v.proximo().unwrap()).collect()
    }

    #[test]
    fn rows_come_back_in_code_order_across_runs() {
        let mut o = Ordenador::default();
        let n = CORRIDA * 2 + 17;
        // codes in a scrambled order: i * 7919 mod n is a permutation (7919 is prime, n is not
        // its multiple)
        for i in 0..n {
            let k = (i * 7919) % n;
            o.push(linha(&format!("C{k:08}"), "", "2020-01-01 00:00:00", "x"))
                .unwrap();
        }
        let v = todos(o);
        assert_eq!(v.len(), n);
        assert!(v.windows(2).all(|w| w[0].0.codigo < w[1].0.codigo));
        assert!(v.iter().all(|(_, perdidas)| *perdidas == 0));
    }

    #[test]
    fn the_newest_version_wins_and_a_tie_goes_to_the_one_read_last() {
        let mut o = Ordenador::default();
        o.push(linha("B", "2024-01-01 00:00:00", "2020-01-01 00:00:00", "b-nova"))
            .unwrap();
        o.push(linha("A", "", "2021-01-01 00:00:00", "a-cadastro-novo"))
            .unwrap();
        o.push(linha("B", "", "2023-01-01 00:00:00", "b-sem-atualizacao"))
            .unwrap();
        o.push(linha("A", "", "2020-01-01 00:00:00", "a-velha")).unwrap();
        o.push(linha("C", "", "2020-01-01 00:00:00", "c-primeira")).unwrap();
        o.push(linha("C", "", "2020-01-01 00:00:00", "c-lida-por-ultimo"))
            .unwrap();
        let v = todos(o);
        let nomes: Vec<(&str, u64)> = v
            .iter()
            .map(|(l, p)| (l.donos[0].1.as_str(), *p))
            .collect();
        assert_eq!(
            nomes,
            [("a-cadastro-novo", 1), ("b-nova", 1), ("c-lida-por-ultimo", 1)]
        );
    }

    #[test]
    fn versions_split_across_runs_are_resolved() {
        let mut o = Ordenador::default();
        o.push(linha("X", "2025-01-01 00:00:00", "2020-01-01 00:00:00", "nova"))
            .unwrap();
        for i in 0..CORRIDA {
            o.push(linha(&format!("Y{i:06}"), "", "2020-01-01 00:00:00", "y"))
                .unwrap();
        }
        o.push(linha("X", "2024-01-01 00:00:00", "2020-01-01 00:00:00", "velha"))
            .unwrap();
        let v = todos(o);
        assert_eq!(v.len(), CORRIDA + 1);
        assert_eq!((v[0].0.donos[0].1.as_str(), v[0].1), ("nova", 1));
    }

    #[test]
    fn nothing_pushed_yields_nothing() {
        assert!(todos(Ordenador::default()).is_empty());
    }
}
