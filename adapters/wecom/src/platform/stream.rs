//! One streamed answer of the smart robot in callback mode: what WeCom is shown when it asks
//! for the stream again.
//!
//! A user's message opens one stream, and the stream carries every answer card of the turn that
//! message started, one below the other (a turn goes on in a new card after an approval, and a
//! long answer is several cards): WeCom lets a message have one stream and asks for its whole
//! content on each refresh.
//!
//! Invariants:
//! - a snapshot's content is at most [`MAX_STREAM_BYTES`]; what does not fit is the *tail*,
//!   sent once as a further message when the stream is complete;
//! - a stream is finished when its newest card says nothing more is coming, or when it is
//!   [`HAND_OVER_AFTER`] old (WeCom stops asking at 6 minutes): then it ends with
//!   "↓ Continued below", and what comes later is the tail;
//! - once a snapshot says `finish`, every later snapshot says the same content: WeCom shows the
//!   first finished one.

use std::time::{Duration, Instant};

use workmate_cards::CONTINUED_BELOW;

use crate::card::{MAX_STREAM_BYTES, split_stream};

/// How long a stream is refreshed before workmate finishes it itself: half a minute inside the
/// 6 minutes after which WeCom stops asking.
pub const HAND_OVER_AFTER: Duration = Duration::from_secs(330);
/// Between two cards of one stream.
const SEPARATOR: &str = "\n\n";

/// A stream's state.
#[derive(Debug)]
pub(crate) struct Stream {
    opened: Instant,
    /// The cards it carries, in the order they were posted: (message id, markdown, more to come).
    parts: Vec<Part>,
    /// The content of the finished snapshot, once one was given.
    finished: Option<String>,
    /// Whether the tail was handed out to be sent.
    tail_taken: bool,
    /// Whether the stream was finished while its answer was still being written (its last
    /// shown line may be cut short).
    cut_while_writing: bool,
    /// The `response_url` of the message the stream answers, which takes the tail (callback
    /// mode).
    pub(crate) response_url: Option<String>,
    /// The frame that answers the message (long-connection mode).
    pub(crate) req_id: Option<String>,
    /// The chat the message was written in, where the tail goes (long-connection mode).
    pub(crate) chat_id: String,
    /// The snapshot last pushed (long-connection mode).
    pushed: Option<Snapshot>,
    /// The template card riding on the stream, and whether WeCom was shown it.
    card: Option<(serde_json::Value, bool)>,
}

#[derive(Debug)]
struct Part {
    message_id: String,
    markdown: String,
    more: bool,
}

/// What WeCom is answered on a refresh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) content: String,
    pub(crate) finish: bool,
}

impl Stream {
    pub(crate) fn new(opened: Instant) -> Self {
        Self {
            opened,
            parts: Vec::new(),
            finished: None,
            tail_taken: false,
            cut_while_writing: false,
            response_url: None,
            req_id: None,
            chat_id: String::new(),
            pushed: None,
            card: None,
        }
    }

    /// Adds or replaces the card `message_id`.
    pub(crate) fn set(&mut self, message_id: &str, markdown: String, more: bool) {
        match self.parts.iter_mut().find(|p| p.message_id == message_id) {
            Some(part) => {
                part.markdown = markdown;
                part.more = more;
            }
            None => self.parts.push(Part {
                message_id: message_id.to_owned(),
                markdown,
                more,
            }),
        }
    }

    /// When the message it answers opened it.
    pub(crate) fn opened(&self) -> Instant {
        self.opened
    }

    /// Lets `card` ride on the stream; false when one does already (a stream carries one).
    pub(crate) fn attach_card(&mut self, card: serde_json::Value) -> bool {
        if self.card.is_some() {
            return false;
        }
        self.card = Some((card, false));
        true
    }

    /// The riding card, the first time it is asked for.
    pub(crate) fn card_to_show(&mut self) -> Option<serde_json::Value> {
        match &mut self.card {
            Some((card, shown)) if !*shown => {
                *shown = true;
                Some(card.clone())
            }
            _ => None,
        }
    }

    /// Notes that the riding card was shown (pushed with the stream).
    pub(crate) fn card_shown(&mut self) {
        if let Some((_, shown)) = &mut self.card {
            *shown = true;
        }
    }

    /// The id the next card of this stream gets.
    pub(crate) fn next_part_id(&self, stream_id: &str) -> String {
        format!("{stream_id}.{}", self.parts.len())
    }

    /// Whether every card is complete.
    fn complete(&self) -> bool {
        self.parts.last().is_some_and(|p| !p.more)
    }

    fn joined(&self) -> String {
        let texts: Vec<&str> = self.parts.iter().map(|p| p.markdown.as_str()).collect();
        texts.join(SEPARATOR)
    }

    /// The answer to a refresh at `now`.
    pub(crate) fn snapshot(&mut self, now: Instant) -> Snapshot {
        if let Some(content) = &self.finished {
            return Snapshot {
                content: content.clone(),
                finish: true,
            };
        }
        let joined = self.joined();
        let first = first_part(&joined);
        let fits = first.len() == joined.len();
        if self.complete() && fits {
            self.finished = Some(joined.clone());
            return Snapshot {
                content: joined,
                finish: true,
            };
        }
        let late = now.duration_since(self.opened) >= HAND_OVER_AFTER;
        if late || !fits {
            let content = handed_over(&joined);
            self.finished = Some(content.clone());
            self.cut_while_writing = !self.complete();
            return Snapshot {
                content,
                finish: true,
            };
        }
        Snapshot {
            content: joined,
            finish: false,
        }
    }

    /// The snapshot at `now` when it differs from the one last pushed (long-connection mode,
    /// where workmate pushes instead of being asked).
    pub(crate) fn next_push(&mut self, now: Instant) -> Option<Snapshot> {
        let snapshot = self.snapshot(now);
        if self.pushed.as_ref() == Some(&snapshot) {
            return None;
        }
        self.pushed = Some(snapshot.clone());
        Some(snapshot)
    }

    /// What the finished snapshot did not show, once the stream is complete: taken once.
    ///
    /// The cards' text is not append-only (a turn card's status line at the top changes when the
    /// turn ends), so the rest is found after the last lines the snapshot showed, looked up in
    /// the final text; a last line that may have been cut short is shown again, whole. When they
    /// cannot be found, the whole final text is the rest: shown twice rather than lost.
    pub(crate) fn take_tail(&mut self) -> Option<String> {
        if self.tail_taken || !self.complete() {
            return None;
        }
        let shown = self.finished.as_ref()?;
        let joined = self.joined();
        let shown_answer = shown
            .strip_suffix(CONTINUED_BELOW)
            .map(str::trim_end)
            .unwrap_or(shown);
        let tail = after_shown(&joined, shown_answer, self.cut_while_writing)
            .unwrap_or(&joined)
            .trim_start();
        self.tail_taken = true;
        (!tail.is_empty()).then(|| tail.to_owned())
    }
}

/// Lines of the shown text that anchor where the rest begins in the final text.
const ANCHOR_LINES: usize = 3;

/// What follows, in `all`, the end of `shown`: found by the last [`ANCHOR_LINES`] non-blank
/// lines of `shown` (without its last line when `last_may_be_cut`); `None` when `all` does not
/// contain them.
fn after_shown<'a>(all: &'a str, shown: &str, last_may_be_cut: bool) -> Option<&'a str> {
    if shown.trim().is_empty() {
        return Some(all);
    }
    let mut lines: Vec<(usize, &str)> = line_starts(shown)
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    if last_may_be_cut {
        lines.pop();
    }
    let (&(end_start, end_line), _) = lines.split_last()?;
    let first = lines.len().saturating_sub(ANCHOR_LINES);
    let start = lines[first].0;
    let anchor = &shown[start..end_start + end_line.len()];
    let at = all.find(anchor)?;
    Some(&all[at + anchor.len()..])
}

/// Each line of `text` with the byte offset it starts at.
fn line_starts(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').scan(0, |offset, line| {
        let start = *offset;
        *offset += line.len() + 1;
        Some((start, line))
    })
}

/// The first message's worth of `text`.
fn first_part(text: &str) -> &str {
    let parts = split_stream(text, MAX_STREAM_BYTES);
    let len = parts.first().map_or(0, String::len);
    // `split_stream` cuts at line breaks and trims nothing from the first part's start.
    &text[..len.min(text.len())]
}

/// The content of a stream finished before its answer: as much as fits with the last line
/// saying the answer goes on below.
fn handed_over(text: &str) -> String {
    let room = MAX_STREAM_BYTES - SEPARATOR.len() - CONTINUED_BELOW.len();
    let parts = split_stream(text, room);
    let first = parts.first().map_or("", String::as_str).trim_end();
    if first.is_empty() {
        CONTINUED_BELOW.to_owned()
    } else {
        format!("{first}{SEPARATOR}{CONTINUED_BELOW}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_finishes_with_its_last_card() {
        let t0 = Instant::now();
        let mut stream = Stream::new(t0);
        assert!(!stream.snapshot(t0).finish);
        stream.set("s.0", "Thinking".into(), true);
        assert_eq!(
            stream.snapshot(t0),
            Snapshot {
                content: "Thinking".into(),
                finish: false
            }
        );
        stream.set("s.0", "Waiting for approval".into(), true);
        stream.set("s.1", "Done: 4".into(), false);
        let done = stream.snapshot(t0);
        assert!(done.finish);
        assert_eq!(done.content, "Waiting for approval\n\nDone: 4");
        assert_eq!(stream.take_tail(), None);
    }

    #[test]
    fn a_late_stream_is_handed_over_and_its_rest_is_the_tail() {
        let t0 = Instant::now();
        let mut stream = Stream::new(t0);
        stream.set("s.0", "Part one".into(), true);
        let late = stream.snapshot(t0 + HAND_OVER_AFTER);
        assert!(late.finish);
        assert_eq!(late.content, format!("Part one\n\n{CONTINUED_BELOW}"));
        stream.set("s.0", "Part one\nPart two".into(), false);
        assert_eq!(stream.snapshot(t0 + HAND_OVER_AFTER), late);
        // "Part one" was shown while being written, so it may have been cut: it is shown again.
        assert_eq!(stream.take_tail().as_deref(), Some("Part one\nPart two"));
        assert_eq!(stream.take_tail(), None);
    }

    #[test]
    fn the_rest_is_found_though_the_status_line_changed_and_a_cut_line_is_shown_again() {
        let t0 = Instant::now();
        let mut stream = Stream::new(t0);
        stream.set("s.0", "⏳ Writing\nLine 1\nLine 2\nLine 3\nLi".into(), true);
        let late = stream.snapshot(t0 + HAND_OVER_AFTER);
        assert!(late.finish);
        stream.set(
            "s.0",
            "✅ Done\nLine 1\nLine 2\nLine 3\nLine 4\nLine 5".into(),
            false,
        );
        assert_eq!(stream.take_tail().as_deref(), Some("Line 4\nLine 5"));
    }

    #[test]
    fn an_answer_over_the_cap_is_shown_in_two_messages_and_nothing_is_lost() {
        let t0 = Instant::now();
        let mut stream = Stream::new(t0);
        let line = "x".repeat(99);
        let answer: Vec<String> = (0..300).map(|i| format!("{i:03}{line}")).collect();
        let answer = answer.join("\n");
        assert!(answer.len() > MAX_STREAM_BYTES);
        stream.set("s.0", answer.clone(), false);
        let shown = stream.snapshot(t0);
        assert!(shown.finish);
        assert!(shown.content.len() <= MAX_STREAM_BYTES);
        assert!(shown.content.ends_with(CONTINUED_BELOW));
        let tail = stream.take_tail().unwrap();
        let head = shown
            .content
            .strip_suffix(CONTINUED_BELOW)
            .unwrap()
            .trim_end();
        assert_eq!(format!("{head}\n{tail}"), answer);
    }
}
