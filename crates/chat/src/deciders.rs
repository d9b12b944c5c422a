//! [`Deciders`] for platforms that bind a card's buttons to people: the prompt's session owner
//! and the tenant's approvers and admins as accounts of that platform (from the store), and the
//! platform's configured admins, who are admins at first sight even before workmate has seen
//! them.

use workmate_adapter::{AdapterError, BoxFuture, Deciders};
use workmate_protocol::{InboxItemId, Surface};

use crate::Chat;

impl Deciders for Chat {
    fn deciders<'a>(
        &'a self,
        surface: Surface,
        item: &'a InboxItemId,
    ) -> BoxFuture<'a, Result<Vec<String>, AdapterError>> {
        Box::pin(async move {
            let mut deciders = self
                .store()
                .inbox()
                .deciders_on(surface.as_str(), item)
                .await
                .map_err(|e| AdapterError::Transient(format!("who may decide {item}: {e}")))?;
            if let Ok(slot) = self.slot(surface) {
                let mut admins: Vec<&String> = slot.admins.iter().collect();
                admins.sort();
                for admin in admins {
                    if !deciders.contains(admin) {
                        deciders.push(admin.clone());
                    }
                }
            }
            Ok(deciders)
        })
    }
}
