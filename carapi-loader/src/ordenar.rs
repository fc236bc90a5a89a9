//! External merge sort of a load's records by CAR code, in bounded memory, keeping one version
//! per code: what lets a SQLite load write its B-trees in key order (each page written once)
//! instead of inserting at random places.
//!
//! Encoded batches ([`Pacote`]) are held until they reach [`ORCAMENTO`] bytes; then their records
//! are sorted by (code, position read) and spilled to an anonymous temporary file as
//! length-prefixed records (a run). The last run stays in memory. [`Ordenador::vencedores`]
//! merges the runs (a binary heap over one reader per run) and yields, for each code, the
//! version that wins by [`super::wfs::mais_nova`]'s rule: the newest `data_atualizacao` (a
//! missing one the oldest), then the newest `data_cadastro`, and on a tie the version read last.
//!
//! Memory: [`ORCAMENTO`] bytes of records while reading; while merging, the last run plus one
//! record per spilled run and [`LEITURA`] bytes of read buffers shared by the spilled runs (a
//! 7.5M-record load spills about 75), whatever their number.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::mpsc::{Receiver, SyncSender};

use super::CargaError;
use super::registro::{Pacote, Registro};

/// Bytes of encoded records held in memory before they are sorted and spilled (about 110,000
/// records of the synthetic shape).
pub(super) const ORCAMENTO: usize = 48 << 20;

/// Write buffer of a run.
const BUFFER: usize = 256 << 10;

/// Read buffers of all the spilled runs while they are merged, split among them (each 16 KiB
/// to 256 KiB).
const LEITURA: usize = 16 << 20;

/// Buffers batches, spills sorted runs, merges them back in code order.
#[derive(Debug, Default)]
pub(super) struct Ordenador {
    pacotes: Vec<Pacote>,
    bytes: usize,
    corridas: Vec<File>,
    orcamento: Option<usize>,
}

/// (batch, record) of a held record.
type Ref = (u32, u32);

impl Ordenador {
    /// A sorter that spills every `bytes` bytes instead of [`ORCAMENTO`] (tests).
    #[cfg(test)]
    fn com_orcamento(bytes: usize) -> Self {
        Ordenador {
            orcamento: Some(bytes),
            ..Ordenador::default()
        }
    }

    /// Adds a batch, spilling a run when the held records pass the budget; returns the
    /// batches a spill emptied, for their buffers to be reused.
    ///
    /// # Errors
    /// [`CargaError::Io`] when the temporary file cannot be written.
    pub fn push(&mut self, p: Pacote) -> Result<Vec<Pacote>, CargaError> {
        self.bytes += p.tamanho();
        self.pacotes.push(p);
        if self.bytes < self.orcamento.unwrap_or(ORCAMENTO) {
            return Ok(Vec::new());
        }
        self.despejar()?;
        let mut livres = std::mem::take(&mut self.pacotes);
        livres.iter_mut().for_each(Pacote::limpar);
        Ok(livres)
    }

    /// The held records in (code, position read) order.
    fn ordem(&self) -> Vec<Ref> {
        let registro = |(p, r): Ref| Registro(self.pacotes[p as usize].bruto(r as usize));
        // The codes' first 16 bytes sort most pairs without reading the records again.
        let mut chaves: Vec<(u128, Ref)> = self
            .pacotes
            .iter()
            .enumerate()
            .flat_map(|(p, pacote)| (0..pacote.len() as u32).map(move |r| (p as u32, r)))
            .map(|r| (prefixo(registro(r).codigo()), r))
            .collect();
        chaves.sort_unstable_by(|(pa, a), (pb, b)| {
            pa.cmp(pb).then_with(|| registro(*a).ordem(&registro(*b)))
        });
        chaves.into_iter().map(|(_, r)| r).collect()
    }

    /// Sorts the held records and writes them as one run.
    fn despejar(&mut self) -> Result<(), CargaError> {
        let refs = self.ordem();
        let mut w = BufWriter::with_capacity(BUFFER, tempfile::tempfile().map_err(temp)?);
        for (p, r) in refs {
            let bruto = self.pacotes[p as usize].bruto(r as usize);
            w.write_all(&(bruto.len() as u32).to_le_bytes())
                .and_then(|()| w.write_all(bruto))
                .map_err(temp)?;
        }
        let mut f = w.into_inner().map_err(|e| temp(e.into_error()))?;
        f.seek(SeekFrom::Start(0)).map_err(temp)?;
        self.corridas.push(f);
        self.bytes = 0;
        Ok(())
    }

    /// Runs spilled so far.
    pub fn corridas(&self) -> usize {
        self.corridas.len()
    }

    /// The winning version of each code, in code order.
    ///
    /// # Errors
    /// [`CargaError::Io`] when a run cannot be read back.
    pub fn vencedores(self) -> Result<Vencedores, CargaError> {
        let ordem = self.ordem();
        let buffer = (LEITURA / self.corridas.len().max(1)).clamp(16 << 10, BUFFER);
        let mut fontes: Vec<Fonte> = self
            .corridas
            .into_iter()
            .map(|f| Fonte::Arquivo(BufReader::with_capacity(buffer, f)))
            .collect();
        fontes.push(Fonte::Memoria {
            pacotes: self.pacotes,
            ordem,
            proxima: 0,
        });
        let mut heap = BinaryHeap::with_capacity(fontes.len());
        for (i, f) in fontes.iter_mut().enumerate() {
            let mut linha = Vec::new();
            if f.proxima(&mut linha)? {
                heap.push(Reverse(Topo { linha, fonte: i }));
            }
        }
        Ok(Vencedores {
            fontes,
            heap,
            livres: Vec::new(),
        })
    }
}

/// The first 16 bytes of `codigo` as a big-endian number (zero-padded): its order is the
/// bytes' order.
fn prefixo(codigo: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = codigo.len().min(16);
    b[..n].copy_from_slice(&codigo[..n]);
    u128::from_be_bytes(b)
}

/// A sorted run being read back.
#[derive(Debug)]
enum Fonte {
    /// Spilled to a temporary file.
    Arquivo(BufReader<File>),
    /// The last run, never spilled.
    Memoria {
        pacotes: Vec<Pacote>,
        ordem: Vec<Ref>,
        proxima: usize,
    },
}

impl Fonte {
    /// Reads the next record into `linha`; false at the end of the run.
    fn proxima(&mut self, linha: &mut Vec<u8>) -> Result<bool, CargaError> {
        linha.clear();
        match self {
            Fonte::Arquivo(r) => {
                let mut tamanho = [0u8; 4];
                match r.read_exact(&mut tamanho) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
                    Err(e) => return Err(temp(e)),
                }
                linha.resize(u32::from_le_bytes(tamanho) as usize, 0);
                r.read_exact(linha).map_err(temp)?;
                Ok(true)
            }
            Fonte::Memoria {
                pacotes,
                ordem,
                proxima,
            } => {
                let Some((p, r)) = ordem.get(*proxima) else {
                    return Ok(false);
                };
                linha.extend_from_slice(pacotes[*p as usize].bruto(*r as usize));
                *proxima += 1;
                Ok(true)
            }
        }
    }
}

/// A heap entry: the smallest unread record of one run.
#[derive(Debug)]
struct Topo {
    linha: Vec<u8>,
    fonte: usize,
}

impl PartialEq for Topo {
    fn eq(&self, outro: &Self) -> bool {
        self.cmp(outro) == Ordering::Equal
    }
}
impl Eq for Topo {}
impl PartialOrd for Topo {
    fn partial_cmp(&self, outro: &Self) -> Option<Ordering> {
        Some(self.cmp(outro))
    }
}
impl Ord for Topo {
    fn cmp(&self, outro: &Self) -> Ordering {
        Registro(&self.linha).ordem(&Registro(&outro.linha))
    }
}

/// The winning versions in code order (see [`Ordenador::vencedores`]).
#[derive(Debug)]
pub(super) struct Vencedores {
    fontes: Vec<Fonte>,
    heap: BinaryHeap<Reverse<Topo>>,
    /// Record buffers to reuse.
    livres: Vec<Vec<u8>>,
}

impl Vencedores {
    /// The smallest record left, refilling the heap from its run.
    fn menor(&mut self) -> Result<Option<Vec<u8>>, CargaError> {
        let Some(Reverse(Topo { linha, fonte })) = self.heap.pop() else {
            return Ok(None);
        };
        let mut proxima = self.livres.pop().unwrap_or_default();
        if self.fontes[fonte].proxima(&mut proxima)? {
            self.heap.push(Reverse(Topo {
                linha: proxima,
                fonte,
            }));
        } else {
            self.livres.push(proxima);
        }
        Ok(Some(linha))
    }

    /// Appends the winner of the next code to `saida` (its losers counted in
    /// `saida.perdidas`); false when no code is left.
    ///
    /// # Errors
    /// [`CargaError::Io`] when a run cannot be read back.
    pub fn proximo(&mut self, saida: &mut Pacote) -> Result<bool, CargaError> {
        let Some(mut vencedor) = self.menor()? else {
            return Ok(false);
        };
        while self
            .heap
            .peek()
            .is_some_and(|Reverse(t)| Registro(&t.linha).codigo() == Registro(&vencedor).codigo())
        {
            let outra = self.menor()?.expect("peek viu um registro");
            saida.perdidas += 1;
            // `outra` was read later: it wins unless older.
            if Registro(&outra).vence(&Registro(&vencedor)) {
                self.livres.push(std::mem::replace(&mut vencedor, outra));
            } else {
                self.livres.push(outra);
            }
        }
        saida.push_bruto(&vencedor);
        self.livres.push(vencedor);
        Ok(true)
    }
}

impl Vencedores {
    /// Sends the winners to `tx` in batches of `lote`, filling the batches handed back on
    /// `vazios` (new ones while none is); stops at the end, at an error (sent), or when the
    /// receiver has gone.
    pub fn enviar(
        mut self,
        lote: usize,
        tx: &SyncSender<Result<Pacote, CargaError>>,
        vazios: &Receiver<Pacote>,
    ) {
        loop {
            let mut p = match vazios.try_recv() {
                Ok(mut p) => {
                    p.limpar();
                    p
                }
                Err(_) => Pacote::com_capacidade(lote),
            };
            let mut fim = false;
            while p.len() < lote {
                match self.proximo(&mut p) {
                    Ok(true) => {}
                    Ok(false) => {
                        fim = true;
                        break;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
            if tx.send(Ok(p)).is_err() || fim {
                return;
            }
        }
    }
}

fn temp(source: std::io::Error) -> CargaError {
    CargaError::Io {
        caminho: "arquivo temporário da ordenação".into(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carapi_service::dados::Imovel;

    use crate::sinteticos::sinteticos;
    use chrono::NaiveDateTime;

    fn data(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    /// A record whose code ends in `codigo` (hex digits, zero-padded to 32), with versions.
    fn imovel(codigo: &str, atualizacao: Option<&str>, cadastro: &str, nome: &str) -> Imovel {
        let mut i = sinteticos(1, 1).remove(0);
        i.codigo_car = format!("DF-5300108-{codigo:0>32}").parse().unwrap();
        i.data_atualizacao = atualizacao.map(data);
        i.data_cadastro = data(cadastro);
        i.nome_imovel = Some(nome.into());
        i
    }

    fn pacote(itens: &[(u64, Imovel)]) -> Pacote {
        let mut p = Pacote::default();
        for (seq, i) in itens {
            p.push(*seq, i).unwrap();
        }
        p
    }

    /// Every winner as (code suffix, name, losers so far).
    fn todos(o: Ordenador) -> Vec<(String, String, u64)> {
        let mut v = o.vencedores().unwrap();
        let mut saida = Pacote::default();
        let mut out = Vec::new();
        while v.proximo(&mut saida).unwrap() {
            let r = saida.iter().last().unwrap();
            let mut l = r.ler();
            let nome = (0..4).map(|_| l.valor()).last().unwrap();
            let super::super::registro::Valor::Texto(nome) = nome else {
                panic!("nome")
            };
            out.push((
                String::from_utf8(r.codigo()[11..].to_vec()).unwrap(),
                String::from_utf8(nome.to_vec()).unwrap(),
                saida.perdidas,
            ));
        }
        out
    }

    #[test]
    fn records_come_back_in_code_order_across_runs() {
        let mut o = Ordenador::com_orcamento(40_000);
        let n = 2_017u64;
        // codes in a scrambled order: i * 7919 mod n is a permutation (7919 is prime, n is not
        // its multiple)
        for lote in (0..n).collect::<Vec<_>>().chunks(100) {
            let itens: Vec<(u64, Imovel)> = lote
                .iter()
                .map(|i| {
                    let k = (i * 7919) % n;
                    (
                        *i,
                        imovel(&format!("{k:08}"), None, "2020-01-01 00:00:00", "x"),
                    )
                })
                .collect();
            o.push(pacote(&itens)).unwrap();
        }
        assert!(o.corridas.len() > 3, "spilled {} runs", o.corridas.len());
        let v = todos(o);
        assert_eq!(v.len(), n as usize);
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(v.last().unwrap().2, 0);
    }

    #[test]
    fn the_newest_version_wins_and_a_tie_goes_to_the_one_read_last() {
        let mut o = Ordenador::default();
        o.push(pacote(&[
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
        o.push(pacote(&[(
            5,
            imovel("C", None, "2020-01-01 00:00:00", "c-lida-por-ultimo"),
        )]))
        .unwrap();
        let v: Vec<(String, u64)> = todos(o).into_iter().map(|(_, n, p)| (n, p)).collect();
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
        let mut o = Ordenador::com_orcamento(1);
        o.push(pacote(&[(
            0,
            imovel(
                "E",
                Some("2025-01-01 00:00:00"),
                "2020-01-01 00:00:00",
                "nova",
            ),
        )]))
        .unwrap();
        o.push(pacote(&[(
            1,
            imovel("F", None, "2020-01-01 00:00:00", "y"),
        )]))
        .unwrap();
        o.push(pacote(&[(
            2,
            imovel(
                "E",
                Some("2024-01-01 00:00:00"),
                "2020-01-01 00:00:00",
                "velha",
            ),
        )]))
        .unwrap();
        assert_eq!(o.corridas.len(), 3);
        let v = todos(o);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].1.as_str(), v[0].2), ("nova", 1));
    }

    #[test]
    fn nothing_pushed_yields_nothing() {
        assert!(todos(Ordenador::default()).is_empty());
    }
}
