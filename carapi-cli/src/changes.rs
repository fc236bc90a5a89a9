//! What changed in a CAR record between two answers of the same lookup (`carapi vigiar`):
//! field by field over `dados` (the contract's `CarDadosBasicos`/`CarDadosCompletos`) and
//! `dataExpiracao` (the record's last update in the origin base); the owners as documents added
//! and removed. What says only when and how it was answered (`dataConsulta`, `cache`,
//! `sandbox`, `success`) is not a change of the record.

use serde::Serialize;
use serde_json::Value;

/// One field that changed (JSON `campo`, `antes`, `depois`). For the owners (`proprietarios`),
/// one change per owner added (`before` empty) or removed (`after` empty), written
/// `<documento> <nome>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    /// The contract's name of the field (`areaTotalHa`), or `proprietarios`.
    #[serde(rename = "campo")]
    pub(crate) field: String,
    /// The value in the archived answer.
    #[serde(rename = "antes")]
    pub(crate) before: Option<String>,
    /// The value in the new answer.
    #[serde(rename = "depois")]
    pub(crate) after: Option<String>,
}

/// The owner fields of a complete answer, compared as a set of owners.
const OWNERS: [&str; 2] = ["proprietariosNomes", "proprietariosCpfs"];

/// The changes from `old` to `new`, two lookup answers (the JSON of `CarResponse`): the
/// owners first, then the other fields of `dados` in the contract's order, then
/// `dataExpiracao`.
pub(crate) fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let empty = serde_json::Map::new();
    let dados = |v: &Value| v.get("dados").and_then(Value::as_object).cloned();
    let (a, b) = (
        dados(old).unwrap_or_else(|| empty.clone()),
        dados(new).unwrap_or_else(|| empty.clone()),
    );
    let mut changes = owners(&a, &b);
    let mut keys: Vec<&String> = b.keys().collect();
    keys.extend(a.keys().filter(|k| !b.contains_key(*k)));
    for k in keys {
        if OWNERS.contains(&k.as_str()) {
            continue;
        }
        push_if_changed(&mut changes, k, a.get(k), b.get(k));
    }
    push_if_changed(
        &mut changes,
        "dataExpiracao",
        old.get("dataExpiracao"),
        new.get("dataExpiracao"),
    );
    changes
}

fn push_if_changed(changes: &mut Vec<Change>, field: &str, a: Option<&Value>, b: Option<&Value>) {
    let (before, after) = (a.and_then(text), b.and_then(text));
    if before != after {
        changes.push(Change {
            field: field.to_owned(),
            before,
            after,
        });
    }
}

/// A JSON value as text; `None` for null.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The owners of a complete answer as `<documento> <nome>`, paired in order from its two
/// comma-separated fields (contract: "owner names separated by commas"); when the two lists
/// differ in length (a name holding a comma), the documents alone.
fn owner_list(d: &serde_json::Map<String, Value>) -> Vec<String> {
    let split = |k: &str| -> Vec<String> {
        d.get(k)
            .and_then(Value::as_str)
            .map(|s| {
                s.split(", ")
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (names, docs) = (split(OWNERS[0]), split(OWNERS[1]));
    if names.len() == docs.len() {
        docs.into_iter()
            .zip(names)
            .map(|(d, n)| format!("{d} {n}"))
            .collect()
    } else {
        docs
    }
}

/// Owners removed (in the old answer's order), then added (in the new one's).
fn owners(a: &serde_json::Map<String, Value>, b: &serde_json::Map<String, Value>) -> Vec<Change> {
    if !OWNERS
        .iter()
        .any(|k| a.contains_key(*k) || b.contains_key(*k))
    {
        return vec![];
    }
    let (before, after) = (owner_list(a), owner_list(b));
    let removed = before
        .iter()
        .filter(|o| !after.contains(o))
        .map(|o| Change {
            field: "proprietarios".into(),
            before: Some(o.clone()),
            after: None,
        });
    let added = after
        .iter()
        .filter(|o| !before.contains(o))
        .map(|o| Change {
            field: "proprietarios".into(),
            before: None,
            after: Some(o.clone()),
        });
    removed.chain(added).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owners_added_and_removed_area_and_update_date() {
        let old = json!({"success": true, "dataConsulta": "2026-01-01T00:00:00Z", "cache": false,
            "dataExpiracao": null,
            "dados": {"codigoCar": "X", "areaTotalHa": "2,0131",
                "proprietariosNomes": "Ana Souza, Bruno Lima",
                "proprietariosCpfs": "111.444.777-35, 529.982.247-25"}});
        let new = json!({"success": true, "dataConsulta": "2026-02-01T00:00:00Z", "cache": true,
            "dataExpiracao": "2026-01-20T10:00:00-03:00",
            "dados": {"codigoCar": "X", "areaTotalHa": "3,5000",
                "proprietariosNomes": "Ana Souza, Carla Dias",
                "proprietariosCpfs": "111.444.777-35, 385.211.390-39"}});
        let c = diff(&old, &new);
        assert_eq!(c.len(), 4, "{c:?}");
        assert_eq!(c[0].before.as_deref(), Some("529.982.247-25 Bruno Lima"));
        assert_eq!(c[0].after, None);
        assert_eq!(c[1].after.as_deref(), Some("385.211.390-39 Carla Dias"));
        assert_eq!(c[2].field, "areaTotalHa");
        assert_eq!(c[2].before.as_deref(), Some("2,0131"));
        assert_eq!(c[3].field, "dataExpiracao");
        assert!(diff(&old, &old).is_empty());
    }
}
