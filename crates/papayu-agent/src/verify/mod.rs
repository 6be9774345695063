//! Verification of a change by the project's own tests (SPEC §14): which command runs them,
//! which tests passed or failed in its output, whether a change verifies, and whether it edits
//! the tests that judge it. It reads project files (to detect the command, and test code before a
//! change) and parses text; it runs nothing itself.

mod detect;
mod guard;
mod judge;
mod outcomes;

pub use detect::{TestCommand, TestCommandSource, detect_test_command};
pub use guard::{edited_tests, test_section};
pub use judge::{Baseline, Verdict, goal_tests, judge};
pub use outcomes::{TestOutcomes, TestStatus, failure_digest, parse_outcomes};
