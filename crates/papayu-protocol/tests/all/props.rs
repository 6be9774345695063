//! Properties: parsing never panics, and a response survives serialise → parse.

use papayu_protocol::{
    Action, ActionKind, ProtocolVersion, Response, extract_json, parse_document, parse_response,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics(text in ".{0,400}") {
        for v in ProtocolVersion::ALL {
            let _ = parse_response(&text, v);
            let _ = parse_document(&text, v);
        }
    }

    #[test]
    fn parse_never_panics_on_jsonish_text(text in r#"[\[\]{}",:a-z0-9 \\`\n]{0,200}"#) {
        for v in ProtocolVersion::ALL {
            let _ = parse_response(&text, v);
            let _ = parse_document(&text, v);
        }
    }

    #[test]
    fn create_file_round_trips(path in "[a-z]{1,8}(/[a-z]{1,8}){0,3}\\.md", content in "\\PC{0,200}", prose in "[A-Za-z ,.!]{0,40}") {
        let mut a = Action::new(ActionKind::CreateFile, path);
        a.content = Some(content);
        let response = Response { summary: Some("s".into()), ..Response::from_actions(vec![a]) };
        let json = serde_json::to_string(&response).unwrap();
        for text in [json.clone(), format!("{prose}\n```json\n{json}\n```\n{prose}"), format!("{prose} {json} {prose}")] {
            let back = parse_response(&text, ProtocolVersion::V2).unwrap();
            prop_assert_eq!(&back, &response);
        }
    }

    /// An answer whose strings hold raw newlines and tabs (what a server's grammar may let
    /// through: llama-cpp-python 0.3) reads as the same value as the JSON it should have been,
    /// whole or fenced.
    #[test]
    fn raw_control_characters_in_strings_read_as_their_escapes(
        summary in "[^\\\\`]{0,80}", content in "[^\\\\`]{0,200}", prose in "[A-Za-z ,.!]{0,40}"
    ) {
        let value = serde_json::json!({
            "summary": summary,
            "actions": [{"kind": "CREATE_FILE", "path": "a.md", "content": content}],
        });
        // Without backslashes (or fences) in the texts, every `\n` and `\t` in the JSON is an escape.
        let raw = value.to_string().replace("\\n", "\n").replace("\\t", "\t");
        for text in [raw.clone(), format!("{prose}\n```json\n{raw}\n```\n{prose}")] {
            prop_assert_eq!(&extract_json(&text).unwrap(), &value);
        }
    }
}
