//! JSON shapes of stored records that the API returns.

use serde_json::{Value, json};
use workmate_store::{AutomationRun, InboxItem, SessionRecord};

/// An inbox item as the API shows it.
pub(crate) fn inbox_item(item: &InboxItem) -> Value {
    json!({
        "id": item.id,
        "session_id": item.session_id,
        "tool_call_id": item.tool_call_id,
        "kind": item.kind,
        "title": item.title,
        "body": item.body,
        "state": item.state,
        "inbox": item.inbox,
        "visibility": item.visibility,
        "requested_by": item.requested_by,
        "data": item.data,
        "resolution": item.resolution,
        "resolved_by": item.resolved_by,
        "resolved_via": item.resolved_via,
        "created_at_ms": item.created_at_ms,
        "resolved_at_ms": item.resolved_at_ms,
    })
}

/// A session as the API shows it (its grants stay internal).
pub(crate) fn session(record: &SessionRecord) -> Value {
    json!({
        "id": record.id,
        "surface": record.key.surface,
        "owner": record.owner,
        "title": record.title,
        "persona": record.persona,
        "model": record.model,
        "mode": record.mode,
        "unattended": record.unattended,
        "last_seq": record.last_seq,
        "message_count": record.message_count,
        "created_at_ms": record.created_at_ms,
        "updated_at_ms": record.updated_at_ms,
        "compaction": record.compaction,
    })
}

/// An automation run as the API shows it.
pub(crate) fn automation_run(run: &AutomationRun) -> Value {
    json!({
        "id": run.id,
        "automation_id": run.automation_id,
        "session_id": run.session_id,
        "trigger": run.trigger,
        "status": run.status,
        "started_at_ms": run.started_at_ms,
        "finished_at_ms": run.finished_at_ms,
        "result_text": run.result_text,
        "error": run.error,
        "artifacts": run.artifacts,
    })
}
