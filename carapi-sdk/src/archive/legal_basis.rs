//! The legal hypotheses of the LGPD (Lei 13.709/2018) under which personal data may be
//! processed: art. 7 (personal data) and art. 11 (sensitive personal data).

use std::fmt;
use std::str::FromStr;

/// The legal basis a caller declares for a lookup kept in the [`Archive`](super::Archive): one
/// hypothesis of the LGPD (Lei 13.709/2018), art. 7 (personal data) or art. 11 (sensitive
/// personal data). The API client is the controller and answers for it (contract, "What the
/// service does"); the archive only records what was declared.
///
/// [`LegalBasis::as_str`] is the word users type (`--base-legal`, Python's `base_legal`) and the
/// one written in the archive; [`LegalBasis::article`] names the provision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LegalBasis {
    /// Art. 7, I: the data subject's consent.
    Consent,
    /// Art. 7, II: compliance with a legal or regulatory obligation of the controller.
    LegalObligation,
    /// Art. 7, III: execution of public policies by the public administration.
    PublicPolicy,
    /// Art. 7, IV: studies by a research body.
    Research,
    /// Art. 7, V: execution of a contract or preliminary procedures with the data subject.
    Contract,
    /// Art. 7, VI: regular exercise of rights in judicial, administrative or arbitral proceedings.
    ExerciseOfRights,
    /// Art. 7, VII: protection of the life or physical safety of the data subject or a third party.
    ProtectionOfLife,
    /// Art. 7, VIII: protection of health, by health professionals or authorities.
    HealthProtection,
    /// Art. 7, IX: the legitimate interests of the controller or of a third party.
    LegitimateInterest,
    /// Art. 7, X: protection of credit.
    CreditProtection,
    /// Art. 11, I: specific and highlighted consent, for specific purposes (sensitive data).
    SpecificConsent,
    /// Art. 11, II, g: fraud prevention and the data subject's security (sensitive data).
    FraudPrevention,
}

impl LegalBasis {
    /// Every hypothesis, in the law's order.
    pub const ALL: [LegalBasis; 12] = [
        LegalBasis::Consent,
        LegalBasis::LegalObligation,
        LegalBasis::PublicPolicy,
        LegalBasis::Research,
        LegalBasis::Contract,
        LegalBasis::ExerciseOfRights,
        LegalBasis::ProtectionOfLife,
        LegalBasis::HealthProtection,
        LegalBasis::LegitimateInterest,
        LegalBasis::CreditProtection,
        LegalBasis::SpecificConsent,
        LegalBasis::FraudPrevention,
    ];

    /// The word users type and the archive stores (`interesse-legitimo`, `protecao-credito`, …).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LegalBasis::Consent => "consentimento",
            LegalBasis::LegalObligation => "obrigacao-legal",
            LegalBasis::PublicPolicy => "politicas-publicas",
            LegalBasis::Research => "estudos-pesquisa",
            LegalBasis::Contract => "execucao-contrato",
            LegalBasis::ExerciseOfRights => "exercicio-direitos",
            LegalBasis::ProtectionOfLife => "protecao-vida",
            LegalBasis::HealthProtection => "tutela-saude",
            LegalBasis::LegitimateInterest => "interesse-legitimo",
            LegalBasis::CreditProtection => "protecao-credito",
            LegalBasis::SpecificConsent => "consentimento-especifico",
            LegalBasis::FraudPrevention => "prevencao-fraude",
        }
    }

    /// The provision of Lei 13.709/2018 (`art. 7, IX`).
    #[must_use]
    pub fn article(self) -> &'static str {
        match self {
            LegalBasis::Consent => "art. 7, I",
            LegalBasis::LegalObligation => "art. 7, II",
            LegalBasis::PublicPolicy => "art. 7, III",
            LegalBasis::Research => "art. 7, IV",
            LegalBasis::Contract => "art. 7, V",
            LegalBasis::ExerciseOfRights => "art. 7, VI",
            LegalBasis::ProtectionOfLife => "art. 7, VII",
            LegalBasis::HealthProtection => "art. 7, VIII",
            LegalBasis::LegitimateInterest => "art. 7, IX",
            LegalBasis::CreditProtection => "art. 7, X",
            LegalBasis::SpecificConsent => "art. 11, I",
            LegalBasis::FraudPrevention => "art. 11, II, g",
        }
    }
}

impl fmt::Display for LegalBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no hypothesis; its `Display` lists the accepted ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLegalBasis(pub String);

impl fmt::Display for UnknownLegalBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let accepted: Vec<&str> = LegalBasis::ALL.iter().map(|b| b.as_str()).collect();
        write!(
            f,
            "base legal desconhecida {:?}; aceitas (LGPD arts. 7 e 11): {}",
            self.0,
            accepted.join(", ")
        )
    }
}

impl std::error::Error for UnknownLegalBasis {}

impl FromStr for LegalBasis {
    type Err = UnknownLegalBasis;

    /// Accepts [`LegalBasis::as_str`], case and `_`/`-`/space insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm: String = s
            .trim()
            .to_lowercase()
            .chars()
            .map(|c| if c == '_' || c == ' ' { '-' } else { c })
            .collect();
        LegalBasis::ALL
            .into_iter()
            .find(|b| b.as_str() == norm)
            .ok_or_else(|| UnknownLegalBasis(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_unknown() {
        for b in LegalBasis::ALL {
            assert_eq!(b.as_str().parse::<LegalBasis>().unwrap(), b);
        }
        assert_eq!(
            "Interesse_Legitimo".parse::<LegalBasis>().unwrap(),
            LegalBasis::LegitimateInterest
        );
        let e = "palpite".parse::<LegalBasis>().unwrap_err().to_string();
        assert!(e.contains("interesse-legitimo"), "{e}");
    }
}
