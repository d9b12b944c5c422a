//! Notices for one person. The smart robot's reply in a group is everyone's, so a notice for
//! one person never goes there: it goes as the self-built app's message to the person (the group
//! only hears that it went), or, without an app, the group is asked to write privately. A reply
//! in a one-to-one chat, or to an app message, is private already.

use workmate_adapter::{AdapterError, ChatTarget};
use workmate_cards::Card;

use super::{ReplyHandle, WeComPlatform};
use crate::card::markdown;

/// What a group is told when a notice for one person went to them as an app message.
const SENT_PRIVATELY: &str = "I sent the details to whoever asked, in a private message.";
/// What a group is told when a notice for one person cannot be shown to them alone.
const WRITE_PRIVATELY: &str = "This answer is only for whoever asked: please message me \
                               directly (a one-to-one chat) and ask again there.";
impl WeComPlatform {
    /// A notice only `user` sees. The smart robot's reply is seen by everyone in a group, so
    /// there the content goes as the self-built app's message to `user` alone, and the group
    /// only hears that it went; without an app, the group is only asked to write in private.
    /// A reply in a one-to-one chat (or to an app message) is private already.
    pub(super) async fn notice_privately(
        &self,
        target: &ChatTarget,
        user: &str,
        card: &Card,
    ) -> Result<(), AdapterError> {
        let handle = ReplyHandle::decode(target.reply.as_deref());
        // Without a handle (after a restart) where it was written is unknown: take it for a
        // group.
        let in_group = handle.as_ref().is_none_or(|h| h.group && !h.app);
        if !in_group {
            return self.show(target, markdown(card)).await;
        }
        if self.app.is_some() {
            self.send_app_markdown(user, &markdown(card)).await?;
            if let Err(e) = self.show(target, SENT_PRIVATELY.to_owned()).await {
                tracing::debug!(error = %e, "Cannot point the group at the private message.");
            }
            return Ok(());
        }
        self.show(target, WRITE_PRIVATELY.to_owned()).await
    }
}
