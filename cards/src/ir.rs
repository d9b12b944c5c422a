//! The card IR: a small, platform-neutral vocabulary of blocks every chat platform can show.
//!
//! Adapters map each block to their own card JSON (Block Kit, Feishu card 2.0, …) and enforce
//! their own limits (text length, block count, button count); nothing here is cut for a platform.
//! The enums are deliberately exhaustive: a new block kind must be rendered by every adapter, and
//! the compiler is what tells them.
//!
//! Serde shapes: blocks and inlines are adjacently tagged (`{"type": "text", "content": …}`),
//! because several variants wrap a sequence or a string, which internal tagging cannot represent.
//! A [`ButtonAction`] is internally tagged and small enough to travel as a button's value
//! (Slack allows 2,000 characters).

use serde::{Deserialize, Serialize};
use workmate_protocol::{InboxItemId, Resolution, SessionId, TurnId};

/// One card: blocks shown top to bottom.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// The blocks, in display order.
    pub blocks: Vec<Block>,
}

/// One block of a card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "content", rename_all = "snake_case")]
pub enum Block {
    /// A title line (plain text).
    Heading {
        /// The title.
        text: String,
    },
    /// A paragraph of formatted text. Newlines inside inlines are line breaks.
    Text(RichText),
    /// A small, muted line (status, provenance, hints).
    Context(Vec<Inline>),
    /// A horizontal rule.
    Divider,
    /// Label/value pairs, shown as a compact grid where the platform has one.
    Fields(Vec<(String, String)>),
    /// Preformatted text.
    Code {
        /// The language named on the fence, if any (`"sh"`, `"diff"`, `"json"`, …).
        language: Option<String>,
        /// The code, without a trailing newline.
        text: String,
    },
    /// A table of plain-text cells; rows may be shorter or longer than the header.
    Table {
        /// The column titles.
        header: Vec<String>,
        /// The rows.
        rows: Vec<Vec<String>>,
    },
    /// A list. Nested lists are flattened into their parent item as indented lines, so an
    /// ordered list's numbering stays right on platforms without nesting.
    List {
        /// Numbered (`true`) or bulleted.
        ordered: bool,
        /// One rich text per item.
        items: Vec<RichText>,
    },
    /// Quoted text.
    Quote(RichText),
    /// A row of buttons.
    Actions(Vec<Button>),
}

/// A run of inline pieces.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RichText(pub Vec<Inline>);

impl RichText {
    /// The text without markup (a link shows its text).
    pub fn plain(&self) -> String {
        self.0.iter().map(Inline::text).collect()
    }

    /// Whether there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|inline| inline.text().is_empty())
    }
}

/// One inline piece of text with at most one style. Mixed styles (bold italic) keep the
/// strongest one: code, then link, bold, italic, strike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "content", rename_all = "snake_case")]
pub enum Inline {
    /// Plain text.
    Text(String),
    /// Bold text.
    Bold(String),
    /// Italic text.
    Italic(String),
    /// Inline code.
    Code(String),
    /// A hyperlink.
    Link {
        /// The visible text (the URL when the source had none).
        text: String,
        /// The target.
        url: String,
    },
    /// Struck-through text.
    Strike(String),
}

impl Inline {
    /// The visible text.
    pub fn text(&self) -> &str {
        match self {
            Self::Text(t) | Self::Bold(t) | Self::Italic(t) | Self::Code(t) | Self::Strike(t) => t,
            Self::Link { text, .. } => text,
        }
    }
}

/// A button. Its action says what a click does; adapters serialize it into the button's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Button {
    /// The label (adapters shorten it to their limit).
    pub label: String,
    /// What a click does.
    pub action: ButtonAction,
    /// How prominent it is.
    pub style: ButtonStyle,
}

/// What a click on a button does.
///
/// The server must still check the clicker's authority and that the item is still pending (or the
/// turn still running): the value comes back from the platform, and a second click after
/// resolution must lose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ButtonAction {
    /// Resolve a parked inbox item with this answer.
    Resolve {
        /// The item.
        item_id: InboxItemId,
        /// The answer.
        resolution: Resolution,
    },
    /// Stop a running turn (the session's interrupt). A click after the turn ended changes
    /// nothing: the turn id lets the server tell a stale click from one meant for a newer turn.
    Stop {
        /// The session to interrupt.
        session_id: SessionId,
        /// The turn the button was shown on.
        turn_id: TurnId,
    },
}

/// How prominent a button is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ButtonStyle {
    /// The recommended action (green on Slack).
    Primary,
    /// A destructive or refusing action (red on Slack).
    Danger,
    /// Neither.
    #[default]
    Default,
}
