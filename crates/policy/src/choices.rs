//! Which answers an approval prompt offers (spec §2.5): only those that would mean something.

use workmate_protocol::ApprovalChoice;

use super::RiskClass;

/// The choices for a prompt about a call of class `risk`.
pub(crate) fn offered(
    risk: RiskClass,
    connector: bool,
    command: Option<&str>,
    readonly_ok: bool,
    automation_target: bool,
    shell_standing: bool,
) -> Vec<ApprovalChoice> {
    let mut choices = vec![ApprovalChoice::Once];
    // In a shared channel whoever approves one command would let every later command of the
    // session run unasked; the tenant decides whether shell calls may get such grants.
    let session_wide = risk != RiskClass::Exec || shell_standing;
    // A connector tool ignores session-wide allowances, so offering one would be a lie.
    if !connector && session_wide {
        choices.push(ApprovalChoice::AlwaysTool);
    }
    if risk == RiskClass::Exec && command.is_some_and(|c| !c.is_empty()) {
        choices.push(ApprovalChoice::AlwaysCommand);
    }
    if readonly_ok && session_wide {
        choices.push(ApprovalChoice::ReadonlySession);
    }
    if automation_target && risk == RiskClass::External {
        choices.push(ApprovalChoice::AlwaysTask);
    }
    choices.push(ApprovalChoice::Deny);
    choices
}
