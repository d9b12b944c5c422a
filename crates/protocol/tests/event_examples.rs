//! The examples cover every event kind and command, round-trip, match the schema's shape, and are
//! snapshotted.

use std::collections::BTreeSet;

use workmate_protocol::{Command, Event, EventKind, command_schema, event_schema};

use crate::examples;
use crate::golden::{assert_shape, command_variants, event_kind_variants, pretty};

fn event_examples() -> Vec<(&'static str, Event)> {
    EventKind::NAMES
        .iter()
        .map(|name| {
            let event = examples::event(name)
                .unwrap_or_else(|| panic!("tests/examples.rs has no example for `{name}`"));
            (*name, event)
        })
        .collect()
}

fn command_names() -> Vec<String> {
    let schema = command_schema();
    command_variants(&schema)
        .into_iter()
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn names_examples_and_schema_agree() {
    let schema = event_schema();
    let in_schema: BTreeSet<&str> = event_kind_variants(&schema)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let listed: BTreeSet<&str> = EventKind::NAMES.iter().copied().collect();
    assert_eq!(
        in_schema, listed,
        "EventKind::NAMES must list every variant"
    );
    for (name, event) in event_examples() {
        assert_eq!(event.kind.name(), name, "example `{name}` has another kind");
    }
    assert!(examples::event("no_such_kind").is_none());
    for name in command_names() {
        assert!(
            examples::command(&name).is_some(),
            "no example for command `{name}`"
        );
    }
}

#[test]
fn event_examples_round_trip_and_match_the_schema() {
    let schema = event_schema();
    let variants = event_kind_variants(&schema);
    for (name, event) in event_examples() {
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["kind"]["type"], name);
        assert_shape("envelope", &schema, &json);
        let (_, variant) = variants.iter().find(|(n, _)| *n == name).unwrap();
        assert_shape(name, variant, &json["kind"]);
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event, "`{name}` does not round-trip");
    }
}

#[test]
fn command_examples_round_trip_and_match_the_schema() {
    let schema = command_schema();
    for (name, variant) in command_variants(&schema) {
        let command = examples::command(name).unwrap();
        assert_eq!(command.name(), name);
        let json = serde_json::to_value(&command).unwrap();
        assert_eq!(json["type"], name);
        assert_shape(name, variant, &json);
        let back: Command = serde_json::from_value(json).unwrap();
        assert_eq!(back, command, "`{name}` does not round-trip");
    }
}

#[test]
fn event_examples_snapshots() {
    for (name, event) in event_examples() {
        insta::assert_snapshot!(name, pretty(&event));
    }
}
