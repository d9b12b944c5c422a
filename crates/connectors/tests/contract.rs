//! What every shipped connector promises: a risk annotation on each tool, a required target
//! argument on each write, and names no other connector uses.

use std::collections::HashSet;

use workmate_connectors::{Risk, builtin_connectors};

#[test]
fn every_write_names_a_required_target_and_every_name_is_unique() {
    let mut names = HashSet::new();
    for connector in builtin_connectors() {
        let descriptor = connector.descriptor();
        assert!(
            !descriptor.fields.is_empty(),
            "{} has a connect form",
            descriptor.name
        );
        for tool in &descriptor.tools {
            assert!(names.insert(tool.name), "{} is defined twice", tool.name);
            let risk = tool
                .risk
                .unwrap_or_else(|| panic!("{} has no risk annotation", tool.name));
            let meta = tool.metadata();
            match risk {
                Risk::Read => assert!(!meta.requires_approval, "{} reads", tool.name),
                Risk::Write => {
                    let target = tool
                        .target_arg
                        .unwrap_or_else(|| panic!("the write {} names no target", tool.name));
                    let required = tool.parameters["required"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    assert!(
                        required.iter().any(|r| r == target),
                        "{}'s target {target} is not a required argument: {}",
                        tool.name,
                        tool.parameters
                    );
                    assert!(meta.requires_approval, "{} asks", tool.name);
                }
            }
        }
    }
    assert_eq!(
        builtin_connectors()
            .iter()
            .map(|c| c.descriptor().name)
            .collect::<Vec<_>>(),
        [
            "github",
            "gitlab",
            "jira",
            "confluence",
            "notion",
            "gmail",
            "google_calendar",
            "feishu",
            "dingtalk_docs"
        ]
    );
}
