//! Rendered prompts (insta snapshots) and their per-version guarantees.

use papayu_agent::prompt::{
    apply_saved_message, context_round_message, system_prompt, user_message,
};
use papayu_agent::{LlmMode, Mode, mode_name};
use papayu_protocol::ProtocolVersion;

#[test]
fn system_prompts() {
    for family in LlmMode::ALL {
        for mode in [Mode::Plan, Mode::Apply] {
            for v in ProtocolVersion::ALL {
                let p = system_prompt(family, mode, v, "");
                assert!(p.contains(&format!("LLM_PLAN_SCHEMA_VERSION={}", v.number())));
                assert!(p.contains(&format!("CURRENT MODE: {}", mode_name(mode))));
                assert_eq!(p.contains("EDIT_FILE"), v == ProtocolVersion::V3);
                // Seed 001 §B puts REPLACE_RANGE in protocol v2.
                assert_eq!(
                    p.contains("REPLACE_RANGE"),
                    v != ProtocolVersion::V1,
                    "REPLACE_RANGE in v{}",
                    v.number()
                );
                assert_eq!(p.contains("PATCH_FILE"), v != ProtocolVersion::V1);
                assert_eq!(
                    p.contains("ERR_V2_UPDATE_EXISTING_FORBIDDEN"),
                    v == ProtocolVersion::V2
                );
                insta::assert_snapshot!(
                    format!(
                        "system_{}_{}_v{}",
                        family.as_str(),
                        mode_name(mode).to_lowercase(),
                        v.number()
                    ),
                    p
                );
            }
        }
    }
}

#[test]
fn memory_block_and_user_messages() {
    let p = system_prompt(
        LlmMode::FixPlan,
        Mode::Plan,
        ProtocolVersion::V2,
        "{\"project\":{\"default_test_command\":\"cargo test\"}}",
    );
    assert!(p.ends_with(
        "ENGINEERING_MEMORY:\n{\"project\":{\"default_test_command\":\"cargo test\"}}\n"
    ));
    let ctx = "FILE[src/lib.rs] (sha256=abc):\n1|fn a() {}";
    insta::assert_snapshot!("user_message", user_message("fix the test", ctx));
    insta::assert_snapshot!(
        "apply_saved_message",
        apply_saved_message("fix the test", "1) change a", ctx)
    );
    insta::assert_snapshot!("context_round_last", context_round_message(2, ctx, true));
    assert_eq!(user_message("  goal  ", ""), "GOAL:\ngoal\n");
}
