//! DingTalk interactive cards (互动卡片): the data workmate fills into its card templates.
//!
//! DingTalk cards are built from templates an admin imports (`templates/*.json`), so the code
//! never writes card JSON: it fills a template's variables and reads its buttons' params back.
//!
//! - [`approval_param_map`]: the approval template's `cardParamMap`, every value a string.
//! - [`click_choice`] / [`callback_choice`]: the choice a 回传请求 button click carries.
//! - [`ClickKeys`]: each decider's own key in an approval card's private data, which an HTTP
//!   card callback must carry back.
//! - [`out_track_id`]: the card id of an inbox item's approval card.
//! - [`markdown`]: a card of the IR as the markdown of the AI card's `content` variable.
//! - [`approval_params_of`]: the approval template's variables read back from an IR card, since
//!   the chat layer hands adapters the IR, not the view.
//! - [`Rendered`] / [`render`]: which template an IR card fills, and with what.
//! - [`item_id_of`]: the inbox item an approval card's `outTrackId` names.
//!
//! Invariant: what the approval template and this module agree on is exactly the contract (the
//! variable names, the `status` words, the `action` param holding a choice's wire name, the `click_key` param sending back the
//! private variable of the same name); a change
//! on either side is a change of `templates/approval.json` too.

mod approval;
mod click;
mod click_key;
mod inline;
mod markdown;
mod prompt;
mod template;

pub use approval::{approval_param_map, item_id_of, out_track_id, personal_out_track_id, status};
pub use click::{callback_choice, callback_param, click_choice};
pub use click_key::{CLICK_KEY, ClickKeys, ClickRefusal};
pub use markdown::markdown;
pub use prompt::approval_params_of;
pub use template::{FlowStatus, Rendered, Template, render};
