//! The personas workmate ships. They are always enabled: their capabilities were reviewed with
//! workmate itself.

use std::sync::OnceLock;

use crate::persona::{Persona, parse_persona};

/// The persona new sessions use when nothing else is chosen.
pub const DEFAULT_PERSONA: &str = "cowork";

const MANIFESTS: [(&str, &str); 3] = [
    ("cowork", include_str!("builtin/cowork.md")),
    (
        "release-manager",
        include_str!("builtin/release-manager.md"),
    ),
    ("sales-analyst", include_str!("builtin/sales-analyst.md")),
];

/// The built-in personas, the default first.
pub fn builtin_personas() -> &'static [Persona] {
    static PERSONAS: OnceLock<Vec<Persona>> = OnceLock::new();
    PERSONAS.get_or_init(|| {
        MANIFESTS
            .iter()
            .filter_map(|(stem, text)| parse_persona(text, stem, true).ok())
            .collect()
    })
}

/// The built-in persona of `id`.
pub(crate) fn builtin(id: &str) -> Option<&'static Persona> {
    builtin_personas().iter().find(|p| p.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_manifest_parses() {
        for (stem, text) in MANIFESTS {
            let persona = parse_persona(text, stem, true).unwrap();
            assert_eq!(persona.id, stem);
        }
        assert_eq!(builtin_personas().len(), MANIFESTS.len());
        assert_eq!(builtin_personas()[0].id, DEFAULT_PERSONA);
    }
}
