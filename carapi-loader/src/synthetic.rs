//! A deterministic synthetic CAR data set for load tests and demos (`carapi-server seed
//! --synthetic N --seed S`).

use std::sync::LazyLock;

use carapi_sdk::{CodigoCar, CpfCnpj};
use chrono::{NaiveDate, TimeDelta};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;

use crate::complete::{SicarRecord, complete_with};
use crate::fictitious::{self, Rng8};
use carapi_service::dados::{Imovel, Proprietario, StatusImovel, TipoImovel};

use crate::municipios;

/// With at least this many records, [`synthetic`] gives each of the
/// [`large_owners`] [`CARS_PER_LARGE_OWNER`] CARs.
pub(crate) const MIN_FOR_LARGE_OWNERS: usize = 1000;

/// CARs given to each large owner (more than the 200-item ceiling of an owner lookup, so its
/// `truncado` is true).
pub(crate) const CARS_PER_LARGE_OWNER: usize = 210;

static LARGE_OWNERS: LazyLock<[Proprietario; 2]> = LazyLock::new(|| {
    let doc = |base: &str| CpfCnpj::from_base(base).expect("base de documento fixa inválida");
    [
        Proprietario {
            documento: doc("987654320001"),
            nome: "Agropecuária Fictícia Grande Exemplo S.A.".to_owned(),
        },
        Proprietario {
            documento: doc("GR4NDEEX0001"),
            nome: "Cooperativa Fictícia Exemplo do Cerrado".to_owned(),
        },
    ]
});

/// The two fixed large owners of synthetic data sets with at least `MIN_FOR_LARGE_OWNERS`
/// records: a numeric CNPJ (`98.765.432/0001-98`) and an alphanumeric one
/// (`GR.4ND.EEX/0001-73`), each first owner of `CARS_PER_LARGE_OWNER` records. Their documents do
/// not depend on the seed.
pub fn large_owners() -> &'static [Proprietario; 2] {
    &LARGE_OWNERS
}

/// `n` synthetic CAR records, the same for the same `(n, seed)`. With the same seed, a larger `n`
/// extends a smaller one when both are below `MIN_FOR_LARGE_OWNERS` or both at least that.
/// Holds all `n` records: for big `n`, stream with [`Synthetic`] instead (same records).
///
/// Each record sits in a real IBGE municipality drawn uniformly (the code's UF matches its IBGE
/// prefix, so every code passes [`CodigoCar::parse`]); the hash is the upper-case hex of a UUIDv4
/// made from the seeded RNG; registered between 06/05/2014 (SICAR launch) and 2024, 60% updated
/// since, at the latest on 30/06/2026 (the extract's date); area in
/// hectares from a skewed distribution (40% 1-20 ha, 30% 20-100, 20% 100-1,000,
/// 10% 1,000-10,000); módulos fiscais = area / the municipality's fiscal module (5 to 110 ha by
/// region); status 85% `AT`, 8% `PE`, 4% `SU`, 3% `CA`; type 94% `IRU`, 4% `AST`, 2% `PCT`.
/// Owners are 1 to 3 fresh fictitious people or companies (CPF, numeric and alphanumeric
/// CNPJ); when `n >= 1000`, the first `2 * 210` records have one of the
/// [`large_owners`] as first owner instead. Then completed like every record (name,
/// matrícula, protocol, centroid).
pub fn synthetic(n: usize, seed: u64) -> Vec<Imovel> {
    Synthetic::new(n, seed).collect()
}

/// Records per block of [`Synthetic`]: each block draws from its own ChaCha stream, so blocks
/// can be generated apart (in parallel) and give the same records.
pub(crate) const BLOCK: usize = 4096;

static MUNICIPIOS: LazyLock<Vec<&'static municipios::Municipio>> =
    LazyLock::new(|| municipios::all().collect());

/// The records of [`synthetic`] one at a time, in constant memory (`seed --synthetic N`).
///
/// Record `i` belongs to block `i / BLOCK`, generated from ChaCha8 with the seed and the
/// block's number as stream: `Synthetic::block` gives one block alone, the same records as
/// the whole iterator gives there.
#[derive(Debug, Clone)]
pub struct Synthetic {
    rng: Rng8,
    seed: u64,
    next_item: usize,
    /// One past the last record this iterator yields.
    end: usize,
    n: usize,
    /// CARs of each of the two [`large_owners`].
    quotas: [usize; 2],
}

impl Synthetic {
    /// The `n` records of [`synthetic`]`(n, seed)`.
    pub fn new(n: usize, seed: u64) -> Self {
        let quota = if n >= MIN_FOR_LARGE_OWNERS {
            CARS_PER_LARGE_OWNER
        } else {
            0
        };
        Synthetic {
            rng: Rng8::seed_from_u64(seed),
            seed,
            next_item: 0,
            end: n,
            n,
            quotas: [quota, quota],
        }
    }

    /// How many blocks of [`BLOCK`] records the `n` records span.
    pub(crate) fn blocks(&self) -> usize {
        self.n.div_ceil(BLOCK)
    }

    /// Block `k` alone: records `k * BLOCK` up to the next block or `n`, as `(index, record)`.
    pub(crate) fn block(&self, k: usize) -> impl Iterator<Item = (usize, Imovel)> + use<> {
        let start = (k * BLOCK).min(self.n);
        let generator = Synthetic {
            next_item: start,
            end: ((k + 1) * BLOCK).min(self.n),
            ..self.clone()
        };
        (start..).zip(generator)
    }

    /// Gives the first of the [`large_owners`] (`98.765.432/0001-98`) `cars` CARs
    /// instead of `CARS_PER_LARGE_OWNER` (an owner of 10,000 CARs for the owner-lookup figure);
    /// the second keeps its share. The two alternate over the first records while both have
    /// CARs left; then the first takes the following ones. At most `n` in all: the shares are
    /// cut to fit.
    pub fn with_large_owner(mut self, cars: usize) -> Self {
        self.quotas[0] = cars.min(self.n);
        self.quotas[1] = self.quotas[1].min(self.n - self.quotas[0]);
        self
    }

    /// Which large owner (0 or 1) is the first owner of record `i`, if any.
    fn large_of(&self, i: usize) -> Option<usize> {
        let [a, b] = self.quotas;
        let alternating = 2 * a.min(b);
        if i < alternating {
            Some(i % 2)
        } else if i < a + b {
            Some(usize::from(b > a))
        } else {
            None
        }
    }
}

impl Iterator for Synthetic {
    type Item = Imovel;

    fn next(&mut self) -> Option<Imovel> {
        if self.next_item >= self.end {
            return None;
        }
        let i = self.next_item;
        self.next_item += 1;
        if i.is_multiple_of(BLOCK) {
            self.rng = Rng8::seed_from_u64(self.seed);
            self.rng.set_stream((i / BLOCK) as u64);
        }
        let municipio = MUNICIPIOS
            .choose(&mut self.rng)
            .copied()
            .expect("lista do IBGE vazia");
        let record = sicar_record(&mut self.rng, municipio);
        let proprietarios = match self.large_of(i) {
            Some(g) => vec![large_owners()[g].clone()],
            None => (0..fictitious::owner_count(&mut self.rng))
                .map(|_| fictitious::proprietario(&mut self.rng))
                .collect(),
        };
        let centre = municipios::by_code(record.codigo_municipio_ibge);
        let mut imovel = complete_with(record, proprietarios, &mut self.rng);
        // Synthetic records sit at their municipality's IBGE centroid (they are made up anyway).
        imovel.latitude = centre.map(|m| m.latitude);
        imovel.longitude = centre.map(|m| m.longitude);
        Some(imovel)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remains = self.end - self.next_item;
        (remains, Some(remains))
    }
}

fn sicar_record(rng: &mut Rng8, m: &municipios::Municipio) -> SicarRecord {
    let hash = uuid::Builder::from_random_bytes(rng.random()).into_uuid();
    let mut hex = uuid::Uuid::encode_buffer();
    let hex = hash.simple().encode_upper(&mut hex);
    let codigo = format!("{}-{:07}-{hex}", m.uf, m.codigo_ibge);
    let codigo_car = CodigoCar::parse(&codigo).expect("código CAR sintético fora do formato");

    let start = NaiveDate::from_ymd_opt(2014, 5, 6)
        .and_then(|d| d.and_hms_opt(8, 0, 0))
        .expect("data fixa");
    let ten_years = 10 * 365 * 24 * 3600;
    let data_cadastro = start + TimeDelta::seconds(rng.random_range(0..ten_years));
    // Updated (60%) between an hour after the registration and the extract's date.
    let extraction = NaiveDate::from_ymd_opt(2026, 6, 30)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("data fixa");
    let data_atualizacao = rng.random_bool(0.6).then(|| {
        data_cadastro
            + TimeDelta::seconds(rng.random_range(3600..(extraction - data_cadastro).num_seconds()))
    });

    let (lo, hi) = match rng.random_range(0..10u8) {
        0..4 => (1, 20),
        4..7 => (20, 100),
        7..9 => (100, 1_000),
        _ => (1_000, 10_000),
    };
    let area = Decimal::new(rng.random_range(lo * 10_000..hi * 10_000), 4);
    let modulo = Decimal::from(modulo_fiscal_ha(m));
    let status = match rng.random_range(0..100u8) {
        0..85 => StatusImovel::Ativo,
        85..93 => StatusImovel::Pendente,
        93..97 => StatusImovel::Suspenso,
        _ => StatusImovel::Cancelado,
    };
    let tipo = match rng.random_range(0..100u8) {
        0..94 => TipoImovel::Rural,
        94..98 => TipoImovel::Assentamento,
        _ => TipoImovel::PovosTradicionais,
    };
    let condicao = CONDITIONS
        .choose(rng)
        .copied()
        .unwrap_or("Aguardando análise");
    SicarRecord {
        codigo_car,
        status_imovel: status,
        condicao: Some(condicao.to_owned()),
        data_cadastro,
        data_atualizacao,
        area_total_ha: area,
        modulos_fiscais: Some((area / modulo).round_dp(4)),
        tipo_imovel: tipo,
        municipio: m.nome.clone(),
        codigo_municipio_ibge: m.codigo_ibge,
        uf: m.uf,
    }
}

const CONDITIONS: &[&str] = &[
    "Aguardando análise",
    "Em análise",
    "Analisado, aguardando atendimento a notificação",
    "Analisado, em conformidade com a Lei nº 12.651/2012",
    "Aguardando análise, após retificação do cadastrante",
];

/// The municipality's fiscal module in hectares: 5 ha in DF, otherwise picked deterministically
/// (by IBGE code) from the range INCRA uses in the region (Sul/Sudeste 5-40 ha, Nordeste 15-90,
/// Centro-Oeste 30-110, Norte 50-100). Approximate: INCRA's per-municipality table is not bundled.
fn modulo_fiscal_ha(m: &municipios::Municipio) -> u32 {
    let faixa: &[u32] = match m.codigo_uf {
        53 => &[5],
        11..=17 => &[50, 60, 70, 75, 80, 90, 100],
        21..=29 => &[15, 20, 30, 35, 45, 55, 60, 65, 70, 75, 90],
        31..=43 => &[5, 7, 10, 12, 16, 18, 20, 22, 24, 26, 28, 30, 35, 40],
        _ => &[30, 35, 40, 45, 50, 60, 65, 70, 80, 90, 100, 110],
    };
    faixa[m.codigo_ibge as usize % faixa.len()]
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    #[test]
    fn mesma_semente_mesmos_dados_outra_semente_outros() {
        let a = synthetic(50, 42);
        assert_eq!(a, synthetic(50, 42));
        assert_eq!(&synthetic(80, 42)[..50], &a[..]);
        let b = synthetic(50, 43);
        assert!(a.iter().zip(&b).all(|(x, y)| x.codigo_car != y.codigo_car));
    }

    #[test]
    fn codigos_validos_com_municipio_real_e_hash_uuid_v4() {
        for i in synthetic(300, 7) {
            let c = CodigoCar::parse(i.codigo_car.as_str()).expect("código");
            let m = municipios::by_code(i.codigo_municipio_ibge).expect("município real");
            assert_eq!(c.municipio_ibge(), Some(m.codigo_ibge));
            assert_eq!(c.uf(), m.uf.as_str());
            assert_eq!(i.uf, m.uf);
            assert_eq!(i.municipio, m.nome);
            let hash = &c.as_str()[11..];
            let uuid = uuid::Uuid::parse_str(hash).expect("hex de UUID");
            assert_eq!(uuid.get_version_num(), 4, "{hash}");
            assert_eq!(
                (i.latitude, i.longitude),
                (Some(m.latitude), Some(m.longitude))
            );
            assert!(i.area_total_ha >= Decimal::ONE && i.area_total_ha < Decimal::from(10_000));
            assert!(i.modulos_fiscais.is_some_and(|mf| mf > Decimal::ZERO));
            assert!((1..=3).contains(&i.proprietarios.len()));
            for p in &i.proprietarios {
                assert_eq!(
                    CpfCnpj::parse(p.documento.formatted()).as_ref(),
                    Ok(&p.documento)
                );
            }
            assert_eq!(i.data_cadastro.and_utc().timestamp_subsec_nanos(), 0);
        }
    }

    #[test]
    fn mil_registros_tem_donos_com_mais_de_200_cars() {
        let v = synthetic(1000, 1);
        let mut per_owner: HashMap<&CpfCnpj, HashSet<&CodigoCar>> = HashMap::new();
        for i in &v {
            for p in &i.proprietarios {
                per_owner
                    .entry(&p.documento)
                    .or_default()
                    .insert(&i.codigo_car);
            }
        }
        for g in large_owners() {
            assert!(per_owner[&g.documento].len() > 200, "{}", g.nome);
        }
        assert_eq!(
            v.iter()
                .map(|i| &i.codigo_car)
                .collect::<HashSet<_>>()
                .len(),
            1000
        );
        let docs: Vec<&CpfCnpj> = per_owner.keys().copied().collect();
        assert!(
            docs.iter()
                .any(|d| d.as_str().bytes().any(|b| b.is_ascii_uppercase()))
        );
        assert!(v.iter().any(|i| !i.has_recibo) && v.iter().filter(|i| i.has_recibo).count() > 800);
    }

    #[test]
    fn dono_grande_tem_exatamente_os_cars_pedidos() {
        let v: Vec<Imovel> = Synthetic::new(3000, 5).with_large_owner(2500).collect();
        let de = |g: usize| {
            v.iter()
                .filter(|i| i.proprietarios[0] == large_owners()[g])
                .count()
        };
        assert_eq!((de(0), de(1)), (2500, 210));
        let small: Vec<Imovel> = Synthetic::new(50, 5).with_large_owner(80).collect();
        assert!(
            small
                .iter()
                .all(|i| i.proprietarios[0] == large_owners()[0])
        );
        assert_eq!(
            Synthetic::new(1200, 9).collect::<Vec<_>>(),
            synthetic(1200, 9)
        );
    }

    #[test]
    fn blocos_gerados_a_parte_sao_os_mesmos_registros() {
        let g = Synthetic::new(BLOCK * 2 + 100, 8).with_large_owner(5000);
        let consecutive: Vec<Imovel> = g.clone().collect();
        let per_block: Vec<(usize, Imovel)> =
            (0..g.blocks()).rev().flat_map(|k| g.block(k)).collect();
        assert_eq!((g.blocks(), per_block.len()), (3, consecutive.len()));
        for (i, im) in per_block {
            assert_eq!(consecutive[i], im, "registro {i}");
        }
    }

    #[test]
    fn poucos_registros_nao_tem_grandes_donos() {
        let v = synthetic(100, 1);
        let large: Vec<&CpfCnpj> = large_owners().iter().map(|p| &p.documento).collect();
        assert!(
            v.iter()
                .flat_map(|i| &i.proprietarios)
                .all(|p| !large.contains(&&p.documento))
        );
    }
}
