//! Finding the JSON in an answer (SPEC §3.3 step 1) in time linear in the answer, and the hard
//! ceilings checked before any `serde_json::Value` is built.
//!
//! Both the balanced-span search and the action pre-scan are single passes over the bytes: an
//! answer is model output, and "prose followed by 400 000 `[`" or "200 MB of actions" must be
//! refused in milliseconds, not after minutes or gigabytes.

use std::collections::VecDeque;

use super::ParseError;

/// The largest answer papayu parses: 32 MiB. It is well above any plan the default policy
/// accepts (5 MiB of payload, JSON-escaped), and papayu-validate refuses a policy whose limits
/// exceed it; papayu-llm stops reading a provider's answer at this size.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// The most actions an answer may hold before it is refused without being parsed in full. The
/// policy's own limit (default 200, papayu-validate) is checked later, precisely; this ceiling
/// only keeps a hostile answer from costing seconds and gigabytes first.
pub const MAX_ACTIONS: usize = 10_000;

/// An answer over [`MAX_ANSWER_BYTES`] is refused before anything else looks at it.
pub(super) fn check_size(text: &str) -> Result<(), ParseError> {
    if text.len() > MAX_ANSWER_BYTES {
        return Err(ParseError::TooLarge {
            bytes: text.len(),
            limit: MAX_ANSWER_BYTES,
        });
    }
    Ok(())
}

/// How many balanced spans [`extract_json`](super::extract_json) tries, in order of their start.
pub(super) const MAX_CANDIDATES: usize = 64;

/// The balanced `{…}` / `[…]` spans of a text that extraction needs: whether the span opened
/// at the very start closes, and the first [`MAX_CANDIDATES`] spans in order of their start.
pub(super) struct Spans {
    end_at_start: Option<usize>,
    first: VecDeque<(usize, usize)>,
}

impl Spans {
    pub(super) fn new(text: &str) -> Self {
        let mut spans = Self {
            end_at_start: None,
            first: VecDeque::new(),
        };
        for_each_span(text.as_bytes(), |start, end| {
            if start == 0 {
                spans.end_at_start = end;
            }
            if let Some(end) = end {
                // Found right to left: the smallest starts arrive last.
                spans.first.push_front((start, end));
                spans.first.truncate(MAX_CANDIDATES);
            }
        });
        spans
    }

    /// The end of the balanced span opened by the text's first byte, if it opens one.
    pub(super) fn end_at_start(&self) -> Option<usize> {
        self.end_at_start
    }

    /// The first [`MAX_CANDIDATES`] balanced spans in order of their start.
    pub(super) fn candidates<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        self.first
            .iter()
            .map(move |&(start, end)| &text[start..end])
    }
}

/// No closing bracket (the sentinel of the `u32` indices below).
const NONE: u32 = u32::MAX;

/// Call `found(start, end)` for every opening bracket of `bytes`, right to left, with the
/// exclusive end of the balanced span it opens (string- and escape-aware), or `None`.
///
/// A scan from an opening bracket is string-aware, and whether a byte lies inside a string
/// depends on where the scan started, so the same byte can be read in three states (outside a
/// string, inside one, just after a backslash inside one). For each position and state, the
/// pass keeps the first closing bracket a scan from there meets that no later bracket opened
/// — all an enclosing scan needs to know, and a function of later positions only. So one
/// right-to-left pass answers every start in O(n) time, keeping 8 bytes per closing bracket;
/// the old scan from each start was quadratic on `[[[[…`.
fn for_each_span(bytes: &[u8], mut found: impl FnMut(usize, Option<usize>)) {
    // Positions are stored as u32; the size ceiling keeps answers far below 4 GiB.
    if u32::try_from(bytes.len()).is_err() {
        return;
    }
    const OUT: usize = 0;
    const IN: usize = 1;
    const ESCAPED: usize = 2;
    // The first unmatched closer from the current position in each state, as an index into
    // `closers`.
    let mut cur = [NONE; 3];
    // For each closing bracket met: its position and the first unmatched closer after it.
    let mut closers: Vec<(u32, u32)> = Vec::new();
    for (j, &b) in bytes.iter().enumerate().rev() {
        let out = match b {
            b'"' => cur[IN],
            b'{' | b'[' => {
                let matched = closers
                    .get(cur[OUT] as usize)
                    .filter(|(p, _)| bytes[*p as usize] == closing(b));
                found(j, matched.map(|(p, _)| *p as usize + 1));
                matched.map_or(NONE, |(_, after)| *after)
            }
            b'}' | b']' => {
                closers.push((j as u32, cur[OUT]));
                (closers.len() - 1) as u32
            }
            _ => cur[OUT],
        };
        let inside = match b {
            b'\\' => cur[ESCAPED],
            b'"' => cur[OUT],
            _ => cur[IN],
        };
        cur = [out, inside, cur[IN]];
    }
}

fn closing(open: u8) -> u8 {
    if open == b'{' { b'}' } else { b']' }
}

/// Count the actions of a JSON text without building it, and refuse it as soon as the count
/// passes [`MAX_ACTIONS`]: the elements of a root array, of a root `actions` array and of
/// `proposed_changes.actions`. Malformed JSON is left for serde_json to report.
pub(super) fn check_action_count(json: &str) -> Result<(), ParseError> {
    let mut scan = ActionScan::default();
    for (i, &b) in json.as_bytes().iter().enumerate() {
        if scan.byte(json, i, b) > MAX_ACTIONS {
            return Err(ParseError::TooManyActions { limit: MAX_ACTIONS });
        }
    }
    Ok(())
}

/// What a container at depth 1–3 means to the count.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The root object: its `actions` and `proposed_changes` members matter.
    Root,
    /// `proposed_changes`: its `actions` member matters.
    Proposed,
    /// An action list: its elements are counted.
    Actions,
    /// Anything else.
    Other,
}

#[derive(Clone, Copy)]
struct Frame {
    role: Role,
    is_object: bool,
    /// Objects: the next string is a key. Arrays: the next value starts an element.
    expect_key: bool,
    /// The role a container value of the current member would get.
    member: Role,
}

#[derive(Default)]
struct ActionScan {
    /// Frames of depths 1..=3; deeper containers only move `depth`.
    frames: Vec<Frame>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Start of the string being read when it is a key of a frame that cares.
    key_start: Option<usize>,
    count: usize,
}

impl ActionScan {
    /// Feed byte `b` at `i`; returns the number of actions counted so far.
    fn byte(&mut self, text: &str, i: usize, b: u8) -> usize {
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => {
                    self.in_string = false;
                    if let Some(start) = self.key_start.take() {
                        let role = member_role(self.top().map(|f| f.role), &text[start..=i]);
                        if let Some(f) = self.top_mut() {
                            f.member = role;
                        }
                    }
                }
                _ => {}
            }
            return self.count;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b',' => {
                if let Some(f) = self.top_mut() {
                    f.expect_key = true;
                    f.member = Role::Other;
                }
            }
            b':' => {
                if let Some(f) = self.top_mut() {
                    f.expect_key = false;
                }
            }
            b'}' | b']' => {
                if self.depth <= self.frames.len() {
                    self.frames.pop();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            _ => {
                self.value_start(i, b);
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.open(b == b'{'),
                    _ => {}
                }
            }
        }
        self.count
    }

    /// A value (or, in an object, a key) starts at `i` with byte `b`.
    fn value_start(&mut self, i: usize, b: u8) {
        let Some(f) = self.top_mut() else { return };
        if f.is_object {
            if f.expect_key {
                f.expect_key = false;
                if b == b'"' && matches!(f.role, Role::Root | Role::Proposed) {
                    self.key_start = Some(i);
                }
            }
        } else if f.expect_key {
            f.expect_key = false;
            if f.role == Role::Actions {
                self.count += 1;
            }
        }
    }

    fn open(&mut self, is_object: bool) {
        let role = match self.top() {
            None if self.depth == 0 => {
                if is_object {
                    Role::Root
                } else {
                    Role::Actions
                }
            }
            Some(f) if f.is_object => match (f.member, is_object) {
                (Role::Actions, false) | (Role::Proposed, true) => f.member,
                _ => Role::Other,
            },
            _ => Role::Other,
        };
        self.depth += 1;
        if self.depth <= 3 && self.frames.len() == self.depth - 1 {
            self.frames.push(Frame {
                role,
                is_object,
                expect_key: true,
                member: Role::Other,
            });
        }
    }

    fn top(&self) -> Option<&Frame> {
        if self.depth == self.frames.len() {
            self.frames.last()
        } else {
            None
        }
    }

    fn top_mut(&mut self) -> Option<&mut Frame> {
        if self.depth == self.frames.len() {
            self.frames.last_mut()
        } else {
            None
        }
    }
}

/// The role a member's value gets from its quoted key (escapes decoded, so `"act\u0069ons"`
/// counts too).
fn member_role(parent: Option<Role>, quoted_key: &str) -> Role {
    const LONGEST: usize = "\"proposed_changes\"".len() * 6;
    if quoted_key.len() > LONGEST {
        return Role::Other;
    }
    let key: String = match serde_json::from_str(quoted_key) {
        Ok(k) => k,
        Err(_) => return Role::Other,
    };
    match (parent, key.as_str()) {
        (Some(Role::Root | Role::Proposed), "actions") => Role::Actions,
        (Some(Role::Root), "proposed_changes") => Role::Proposed,
        _ => Role::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(json: &str) -> usize {
        let mut scan = ActionScan::default();
        let mut n = 0;
        for (i, &b) in json.as_bytes().iter().enumerate() {
            n = scan.byte(json, i, b);
        }
        n
    }

    #[test]
    fn counts_the_actions_of_every_shape() {
        assert_eq!(count(r#"{"actions": [{"a": [1, 2]}, {}, "x", 3]}"#), 4);
        assert_eq!(count(r#"[{"kind": "A"}, {"kind": "B"}]"#), 2);
        assert_eq!(count(r#"[]"#), 0);
        assert_eq!(count(r#"{"actions": []}"#), 0);
        assert_eq!(
            count(r#"{"summary": "actions: [1,2]", "x": {"actions": [1, 2, 3]}, "actions": [1]}"#),
            1
        );
        assert_eq!(
            count(r#"{"proposed_changes": {"actions": [{}, {}]}, "actions": [{}]}"#),
            3
        );
        assert_eq!(count(r#"{"act\u0069ons": [1, 2]}"#), 2);
        assert_eq!(count(r#"{"actions": [[[[1, 2], 3]], [4]]}"#), 2);
        assert_eq!(count(r#"{"actions": ["a\"]", "b,c"]}"#), 2);
    }

    fn brute_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut stack = Vec::new();
        let (mut in_string, mut escaped) = (false, false);
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => stack.push(closing(b)),
                b'}' | b']' => {
                    if stack.pop() != Some(b) {
                        return None;
                    }
                    if stack.is_empty() {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }

    #[test]
    fn spans_agree_with_a_scan_from_each_start() {
        // Every string of up to 6 bytes over the alphabet that matters.
        let alphabet = [b'{', b'}', b'[', b']', b'"', b'\\', b'x'];
        let mut text = Vec::new();
        for len in 0..=6u32 {
            for mut code in 0..alphabet.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let mut seen = 0;
                for_each_span(&text, |start, end| {
                    seen += 1;
                    assert_eq!(end, brute_end(&text, start), "{text:?} at {start}");
                });
                let openers = text.iter().filter(|b| matches!(b, b'{' | b'[')).count();
                assert_eq!(seen, openers, "{text:?}");
            }
        }
    }
}
