//! Whether a change verifies: the tests the goal is about pass now, and nothing that passed
//! before fails (SPEC §14). Per test when the runner's output names its tests, else by the exit
//! status.

use serde::Serialize;

use super::outcomes::{TestOutcomes, TestStatus};

/// The test run before the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Baseline {
    /// Whether the command exited 0.
    pub exit_ok: bool,
    /// Its per-test outcomes (empty when the output named no tests).
    pub outcomes: TestOutcomes,
}

impl Baseline {
    /// The tests that failed before the change.
    pub fn failing(&self) -> Vec<String> {
        self.outcomes.with(TestStatus::Fail)
    }
}

/// The judgement of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Keep the change.
    Verified {
        /// Tests that failed before and pass now.
        fixed: Vec<String>,
    },
    /// Roll the change back.
    NotVerified {
        /// Why, in one sentence the model and the user can act on.
        reason: String,
        /// Target tests that still do not pass.
        still_failing: Vec<String>,
        /// Tests that passed before and do not now (or that fail and did not exist before).
        regressed: Vec<String>,
    },
}

impl Verdict {
    /// Whether the change verified.
    pub fn is_verified(&self) -> bool {
        matches!(self, Verdict::Verified { .. })
    }
}

/// Words of a test's name that a goal could mention: its last segment (`test_add`, `adds`) and
/// the file or module it lives in (`test_calc`, `test_calc.py`).
fn name_parts(name: &str) -> Vec<String> {
    let segments: Vec<&str> = name
        .split(['.', ':', '/', '>', ' '])
        .filter(|s| !s.is_empty())
        .collect();
    let mut parts = Vec::new();
    if let Some(last) = segments.last() {
        parts.push((*last).to_owned());
    }
    for s in &segments {
        if s.starts_with("test") || s.ends_with("_test") || s.ends_with("Test") {
            parts.push((*s).to_owned());
        }
    }
    parts.retain(|p| p.chars().count() >= 4);
    parts
}

/// Whether a failing "test" is a file that could not be loaded rather than a test: node's
/// runner names a failing test file by its path, unittest reports `unittest.loader._FailedTest`.
fn is_load_failure(name: &str) -> bool {
    name.contains("_FailedTest")
        || ((name.contains('/') || name.contains('\\'))
            && [".js", ".mjs", ".cjs", ".ts", ".mts", ".py"]
                .iter()
                .any(|e| name.ends_with(e)))
}

/// Whether `word` occurs in `text` as a whole identifier (not inside a longer one).
fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The failing tests of `baseline` that `goal` is about: those it names (by test or file),
/// else every failing test.
pub fn goal_tests(goal: &str, baseline: &Baseline) -> Vec<String> {
    let failing = baseline.failing();
    let named: Vec<String> = failing
        .iter()
        .filter(|t| name_parts(t).iter().any(|p| mentions(goal, p)))
        .cloned()
        .collect();
    if named.is_empty() { failing } else { named }
}

/// Judge the run after a change against the `baseline`, for the `targets` (from
/// [`goal_tests`]). See the module docs for the rule.
pub fn judge(
    baseline: &Baseline,
    after_ok: bool,
    after: &TestOutcomes,
    targets: &[String],
) -> Verdict {
    let not =
        |reason: String, still_failing: Vec<String>, regressed: Vec<String>| Verdict::NotVerified {
            reason,
            still_failing,
            regressed,
        };
    if baseline.outcomes.is_empty() || after.is_empty() {
        if !baseline.outcomes.is_empty() {
            return not(
                "the tests did not run after the change (or their output names no test); see the output"
                    .to_owned(),
                targets.to_vec(),
                Vec::new(),
            );
        }
        let failing = after.with(TestStatus::Fail);
        return if after_ok && failing.is_empty() {
            Verdict::Verified { fixed: Vec::new() }
        } else {
            not(
                "the test command still fails".to_owned(),
                failing,
                Vec::new(),
            )
        };
    }
    // A test file that failed to load (node names it by its path; unittest reports a
    // `_FailedTest`) has no outcome of its own once it loads: its tests stand for it then.
    let clean_after = after_ok && after.with(TestStatus::Fail).is_empty();
    let passes = |name: &str| match after.get(name) {
        Some(status) => status == TestStatus::Pass,
        None => clean_after && is_load_failure(name),
    };
    let mut regressed: Vec<String> = baseline
        .outcomes
        .with(TestStatus::Pass)
        .into_iter()
        .filter(|t| !passes(t))
        .collect();
    // A failure that did not exist before (a new test the change added, say) is a regression too.
    regressed.extend(
        after
            .with(TestStatus::Fail)
            .into_iter()
            .filter(|t| baseline.outcomes.get(t).is_none()),
    );
    let still_failing: Vec<String> = targets.iter().filter(|t| !passes(t)).cloned().collect();
    match (still_failing.is_empty(), regressed.is_empty()) {
        (true, true) => Verdict::Verified {
            fixed: targets.to_vec(),
        },
        (false, _) => not(
            format!(
                "{} of the failing test(s) the goal is about still fail: {}",
                still_failing.len(),
                still_failing.join(", ")
            ),
            still_failing,
            regressed,
        ),
        (true, false) => not(
            format!(
                "the change breaks {} test(s) that passed before: {}",
                regressed.len(),
                regressed.join(", ")
            ),
            still_failing,
            regressed,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::parse_outcomes;

    fn baseline(output: &str, exit_ok: bool) -> Baseline {
        Baseline {
            exit_ok,
            outcomes: parse_outcomes(output),
        }
    }

    const BEFORE: &str = "test_add (test_calc.CalcTest.test_add) ... FAIL\n\
                          test_mean (test_calc.CalcTest.test_mean) ... ok\n\
                          test_net (test_io.IoTest.test_net) ... ERROR\n";

    #[test]
    fn the_goal_picks_its_failing_tests() {
        let b = baseline(BEFORE, false);
        assert_eq!(
            goal_tests("fix: add() subtracts, so test_calc.py fails", &b),
            ["test_calc.CalcTest.test_add"]
        );
        assert_eq!(
            goal_tests("test_add fails", &b),
            ["test_calc.CalcTest.test_add"]
        );
        // Named nowhere: every failing test is a target.
        assert_eq!(goal_tests("make it work", &b).len(), 2);
        // `test_add` inside a longer word is no mention.
        assert_eq!(goal_tests("see test_addition", &b).len(), 2);
    }

    #[test]
    fn verified_when_targets_pass_and_nothing_regresses() {
        let b = baseline(BEFORE, false);
        let targets = goal_tests("test_calc.py fails", &b);
        let after = parse_outcomes(
            "test_add (test_calc.CalcTest.test_add) ... ok\n\
             test_mean (test_calc.CalcTest.test_mean) ... ok\n\
             test_net (test_io.IoTest.test_net) ... ERROR\n",
        );
        // The unrelated failure was there before and is not the goal's: still verified.
        assert_eq!(
            judge(&b, false, &after, &targets),
            Verdict::Verified {
                fixed: vec!["test_calc.CalcTest.test_add".to_owned()]
            }
        );
    }

    #[test]
    fn not_verified_when_a_target_still_fails_or_something_regresses() {
        let b = baseline(BEFORE, false);
        let targets = goal_tests("test_calc.py fails", &b);
        let still = parse_outcomes(
            "test_add (test_calc.CalcTest.test_add) ... FAIL\n\
             test_mean (test_calc.CalcTest.test_mean) ... ok\n",
        );
        let v = judge(&b, false, &still, &targets);
        assert!(
            matches!(&v, Verdict::NotVerified { still_failing, .. } if still_failing.len() == 1)
        );
        let broke = parse_outcomes(
            "test_add (test_calc.CalcTest.test_add) ... ok\n\
             test_mean (test_calc.CalcTest.test_mean) ... FAIL\n",
        );
        let v = judge(&b, false, &broke, &targets);
        assert!(
            matches!(&v, Verdict::NotVerified { regressed, .. } if regressed == &["test_calc.CalcTest.test_mean"])
        );
        // A test that vanished does not pass.
        let gone = parse_outcomes("test_mean (test_calc.CalcTest.test_mean) ... ok\n");
        assert!(!judge(&b, true, &gone, &targets).is_verified());
    }

    #[test]
    fn a_test_file_that_failed_to_load_is_fixed_when_its_tests_pass() {
        // node: the file's import failed, so the file itself is the failing "test".
        let b = baseline(
            "not ok 1 - /p/test/client.test.js\nok 2 - /p/test/other.test.js\n",
            false,
        );
        let after = parse_outcomes("ok 1 - fetches a user\nok 2 - /p/test/other.test.js\n");
        assert!(judge(&b, true, &after, &b.failing()).is_verified());
        // Not while anything fails.
        let after = parse_outcomes("not ok 1 - fetches a user\nok 2 - /p/test/other.test.js\n");
        assert!(!judge(&b, false, &after, &b.failing()).is_verified());
        // unittest's stand-in for a module it could not import.
        let b = baseline(
            "test_calc (unittest.loader._FailedTest.test_calc) ... ERROR\n",
            false,
        );
        let after = parse_outcomes("test_add (test_calc.CalcTest.test_add) ... ok\n");
        assert!(judge(&b, true, &after, &b.failing()).is_verified());
    }

    #[test]
    fn a_new_failing_test_is_a_regression() {
        let b = baseline("test_a (m.T.test_a) ... FAIL\n", false);
        let after = parse_outcomes("test_a (m.T.test_a) ... ok\ntest_b (m.T.test_b) ... FAIL\n");
        assert!(!judge(&b, false, &after, &b.failing()).is_verified());
    }

    #[test]
    fn without_per_test_output_the_exit_status_decides() {
        let b = baseline("make: *** [test] Error 1\n", false);
        let none = TestOutcomes::default();
        assert!(judge(&b, true, &none, &[]).is_verified());
        assert!(!judge(&b, false, &none, &[]).is_verified());
    }

    #[test]
    fn tests_that_stop_running_do_not_verify() {
        let b = baseline(BEFORE, false);
        let v = judge(&b, true, &TestOutcomes::default(), &b.failing());
        assert!(!v.is_verified(), "{v:?}");
    }

    #[test]
    fn a_goal_not_about_tests_only_needs_no_regression() {
        let b = baseline("test_a (m.T.test_a) ... ok\n", true);
        let after = parse_outcomes("test_a (m.T.test_a) ... ok\n");
        assert!(judge(&b, true, &after, &[]).is_verified());
    }
}
