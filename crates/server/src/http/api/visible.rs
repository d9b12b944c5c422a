//! What the acting user may see over HTTP: the store's one visibility rule ([`Sight`]) applied
//! to the API's routes.
//!
//! Invariants: a session (or an inbox item) the caller may not see answers exactly as one that does
//! not exist, `404`, so the API never confirms that a coworker's session or prompt exists; listings
//! only ever contain what the caller may see. An acting user with no user row (the admin token
//! before its user was prepared) is given the least sight: their own sessions.

use workmate_protocol::{InboxItemId, SessionId};
use workmate_store::{InboxItem, SessionRecord, Sight, Store};

use super::Principal;
use crate::http::ApiError;

/// What `caller` sees, by their role in the tenant.
pub(crate) async fn sight(store: &Store, caller: &Principal) -> Result<Sight, ApiError> {
    let user = store
        .tenants()
        .get_user(&caller.tenant, &caller.actor.user_id)
        .await?;
    Ok(user.map_or_else(
        || Sight::OwnSessions(caller.actor.user_id.clone()),
        |user| Sight::of(&user),
    ))
}

/// The session, if it exists and `caller` may see it; `404` otherwise.
pub(crate) async fn session(
    store: &Store,
    caller: &Principal,
    id: &SessionId,
) -> Result<SessionRecord, ApiError> {
    let missing = || ApiError::Missing(format!("session {id} not found"));
    let record = store
        .sessions()
        .get(&caller.tenant, id)
        .await?
        .ok_or_else(missing)?;
    if sight(store, caller).await?.allows(&record.owner) {
        Ok(record)
    } else {
        Err(missing())
    }
}

/// The inbox item, if it exists and `caller` may see its session; `404` otherwise.
pub(crate) async fn inbox_item(
    store: &Store,
    caller: &Principal,
    id: &InboxItemId,
) -> Result<InboxItem, ApiError> {
    let missing = || ApiError::Missing("no such inbox item".into());
    let item = store
        .inbox()
        .get(&caller.tenant, id)
        .await?
        .ok_or_else(missing)?;
    let owner = store
        .sessions()
        .get(&caller.tenant, &item.session_id)
        .await?
        .map(|s| s.owner);
    let sight = sight(store, caller).await?;
    match owner {
        Some(owner) if sight.allows(&owner) => Ok(item),
        _ => Err(missing()),
    }
}
