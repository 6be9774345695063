//! Arbitrary bytes (as lossy UTF-8) through lenient parsing and every validation rule, under
//! every protocol version and mode. Properties beyond "no panic": the report is deterministic
//! and path normalisation is idempotent.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use papayu_protocol::{ProtocolVersion, parse_document};
use papayu_validate::{Context, Mode, Policy, RelPath, check_text, validate_document};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let policy = Policy::default();
    let sent: BTreeSet<RelPath> = ["src/lib.rs", "a.rs"].iter().filter_map(|p| RelPath::parse(p).ok()).collect();
    let exists = |p: &RelPath| p.as_str().len() % 2 == 0;
    for version in ProtocolVersion::ALL {
        let doc = parse_document(&text, version);
        for mode in [None, Some(Mode::Plan), Some(Mode::Apply)] {
            let mut ctx = Context::new(version).with_sent_files(&sent).with_exists(&exists);
            ctx.mode = mode;
            let report = check_text(&text, &ctx, &policy);
            if let Ok(doc) = &doc {
                assert_eq!(validate_document(doc, &ctx, &policy), report);
            }
        }
    }
    if let Ok(p) = RelPath::parse(&text) {
        assert_eq!(RelPath::parse(p.as_str()).as_ref(), Ok(&p));
    }
});
