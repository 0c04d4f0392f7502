//! Organizations from e-mail addresses: the domain after `@`, reduced to the one an
//! organization registers (mail.acme.io → acme.io, ops.acme.co.uk → acme.co.uk), unless it
//! is a personal provider (gmail, outlook, yahoo, icloud, proton, yandex, …), which says
//! nothing about where someone works.

use std::collections::BTreeSet;
use std::sync::LazyLock;

/// The built-in list of personal providers.
pub const PERSONAL_DOMAINS: &str = include_str!("../data/personal-domains.txt");
const PUBLIC_SUFFIXES: &str = include_str!("../data/public-suffixes.txt");

fn lines(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect()
}

static SUFFIXES: LazyLock<BTreeSet<String>> = LazyLock::new(|| lines(PUBLIC_SUFFIXES));

/// Domains whose addresses belong to people, not organizations.
#[derive(Debug, Clone)]
pub struct PersonalDomains(BTreeSet<String>);

impl Default for PersonalDomains {
    /// The built-in list.
    fn default() -> Self {
        Self::parse(PERSONAL_DOMAINS)
    }
}

impl PersonalDomains {
    /// One domain per line, `#` comments.
    pub fn parse(text: &str) -> Self {
        Self(lines(text))
    }

    /// The list in `LEVH_PERSONAL_DOMAINS` (a file) when set, else the built-in one.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var_os("LEVH_PERSONAL_DOMAINS") {
            None => Ok(Self::default()),
            Some(path) => std::fs::read_to_string(&path)
                .map(|text| Self::parse(&text))
                .map_err(|e| format!("LEVH_PERSONAL_DOMAINS={}: {e}", path.to_string_lossy())),
        }
    }

    /// Whether `domain` (or a domain it is under) is a personal provider.
    pub fn is_personal(&self, domain: &str) -> bool {
        let domain = domain.to_lowercase();
        let mut rest = domain.as_str();
        loop {
            if self.0.contains(rest) {
                return true;
            }
            match rest.split_once('.') {
                Some((_, parent)) if parent.contains('.') => rest = parent,
                _ => return false,
            }
        }
    }
}

/// The organization's domain of an e-mail address, or `None` for a personal provider or
/// something that is not an address.
pub fn organization_of(email: &str, personal: &PersonalDomains) -> Option<String> {
    let (local, domain) = email.trim().rsplit_once('@')?;
    let domain = domain.trim_end_matches('.').to_lowercase();
    if local.is_empty() || !domain.contains('.') || personal.is_personal(&domain) {
        return None;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    let keep = if labels.len() >= 3 && SUFFIXES.contains(&labels[labels.len() - 2..].join(".")) {
        3
    } else {
        2
    };
    Some(labels[labels.len().saturating_sub(keep)..].join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_its_organization_unless_a_person_uses_a_provider() {
        let personal = PersonalDomains::default();
        assert_eq!(
            organization_of("priya@mail.acme.io", &personal).as_deref(),
            Some("acme.io")
        );
        assert_eq!(
            organization_of("ops@eu.acme.co.uk", &personal).as_deref(),
            Some("acme.co.uk")
        );
        assert_eq!(
            organization_of("Deniz@Örnek.com.tr", &personal).as_deref(),
            Some("örnek.com.tr")
        );
        for private in [
            "a@gmail.com",
            "b@outlook.com",
            "c@yahoo.com",
            "d@icloud.com",
            "e@proton.me",
            "f@yandex.ru",
            "g@mail.yahoo.com",
        ] {
            assert_eq!(organization_of(private, &personal), None, "{private}");
        }
        assert_eq!(organization_of("not an address", &personal), None);
        let custom = PersonalDomains::parse("# mine\nacme.io\n");
        assert_eq!(organization_of("priya@acme.io", &custom), None);
        assert_eq!(
            organization_of("x@gmail.com", &custom).as_deref(),
            Some("gmail.com")
        );
    }
}
