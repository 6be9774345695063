//! Properties: parsing never panics, and a response survives serialise → parse.

use papayu_protocol::{
    Action, ActionKind, ProtocolVersion, Response, parse_document, parse_response,
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
}
