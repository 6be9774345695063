//! The plan-cycle cache: keys, counters, events, invalidation; and the sent-files record.

use std::sync::{Arc, Mutex};

use papayu_context::{CacheStats, ContextConfig, ContextEngine, HitMiss, cache_key};
use papayu_protocol::ContextRequest;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

use crate::common::TempProject;

/// Collects every event as `field=value` pairs joined by spaces.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push_str(&format!("{}={} ", field.name(), value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = Line(String::new());
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0.trim_end().to_owned());
    }
}

pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    let out = tracing::subscriber::with_default(subscriber, f);
    let lines = events.0.lock().unwrap().clone();
    (out, lines)
}

fn read(path: &str, start: Option<u64>, end: Option<u64>) -> ContextRequest {
    ContextRequest::ReadFile {
        path: path.to_owned(),
        start_line: start,
        end_line: end,
    }
}

#[test]
fn keys_are_exactly_as_specified() {
    let c = ContextConfig::default();
    assert_eq!(cache_key(&c, &ContextRequest::Env), "env");
    assert_eq!(
        cache_key(
            &c,
            &ContextRequest::Logs {
                source: "check".into(),
                last_n: None
            }
        ),
        r#"logs{source="check",last_n=200}"#
    );
    assert_eq!(
        cache_key(&c, &read("./src/a.rs", None, None)),
        r#"read_file{path="src/a.rs",start=1,end=200}"#
    );
    assert_eq!(
        cache_key(&c, &read("src\\a.rs", Some(10), None)),
        r#"read_file{path="src/a.rs",start=10,end=209}"#
    );
    assert_eq!(
        cache_key(&c, &read("../x", Some(0), Some(5))),
        r#"read_file{path="../x",start=1,end=5}"#
    );
    assert_eq!(
        cache_key(
            &c,
            &ContextRequest::Search {
                query: "a \"b\"".into(),
                glob: Some("*.rs".into())
            }
        ),
        r#"search{query="a \"b\"",glob="*.rs"}"#
    );
}

#[test]
fn hits_and_misses_are_counted_per_type_and_logged() {
    let p = TempProject::new(&[("a.txt", "needle\n")]);
    let mut engine = p.engine();
    engine.set_check_output("boom\n");
    let reqs = [
        read("a.txt", None, None),
        read("./a.txt", Some(1), Some(200)),
        ContextRequest::Search {
            query: "needle".into(),
            glob: None,
        },
        ContextRequest::Search {
            query: "needle".into(),
            glob: None,
        },
        ContextRequest::Search {
            query: "needle".into(),
            glob: Some("*.txt".into()),
        },
        ContextRequest::Logs {
            source: "check".into(),
            last_n: None,
        },
        ContextRequest::Logs {
            source: "check".into(),
            last_n: Some(200),
        },
        ContextRequest::Env,
        ContextRequest::Env,
    ];
    let (_, events) = capture(|| {
        for r in &reqs {
            engine.fulfil(r);
        }
    });
    let expected = CacheStats {
        env: HitMiss { hits: 1, misses: 1 },
        logs: HitMiss { hits: 1, misses: 1 },
        read_file: HitMiss { hits: 1, misses: 1 },
        search: HitMiss { hits: 1, misses: 2 },
    };
    assert_eq!(engine.cache_stats(), expected);
    assert_eq!(engine.cache_stats().total(), HitMiss { hits: 4, misses: 5 });
    assert_eq!(
        events,
        [
            r#"event=CONTEXT_CACHE_MISS key=read_file{path="a.txt",start=1,end=200}"#,
            r#"event=CONTEXT_CACHE_HIT key=read_file{path="a.txt",start=1,end=200}"#,
            r#"event=CONTEXT_CACHE_MISS key=search{query="needle",glob=none}"#,
            r#"event=CONTEXT_CACHE_HIT key=search{query="needle",glob=none}"#,
            r#"event=CONTEXT_CACHE_MISS key=search{query="needle",glob="*.txt"}"#,
            r#"event=CONTEXT_CACHE_MISS key=logs{source="check",last_n=200}"#,
            r#"event=CONTEXT_CACHE_HIT key=logs{source="check",last_n=200}"#,
            "event=CONTEXT_CACHE_MISS key=env",
            "event=CONTEXT_CACHE_HIT key=env",
        ]
    );
}

#[test]
fn cached_content_is_served_within_a_cycle_and_refreshed_by_a_new_cycle() {
    let p = TempProject::new(&[("a.txt", "old\n")]);
    let mut engine = p.engine();
    assert_eq!(engine.fulfil(&read("a.txt", None, None)).body, "1|old");
    p.write("a.txt", b"new\n");
    assert_eq!(
        engine.fulfil(&read("a.txt", None, None)).body,
        "1|old",
        "same plan cycle: cached"
    );
    engine.new_cycle();
    assert_eq!(engine.cache_stats(), CacheStats::default());
    assert_eq!(engine.fulfil(&read("a.txt", None, None)).body, "1|new");
}

#[test]
fn new_check_output_invalidates_cached_check_logs() {
    let p = TempProject::new(&[]);
    let mut engine = p.engine();
    let logs = ContextRequest::Logs {
        source: "check".into(),
        last_n: None,
    };
    engine.set_check_output("first");
    assert_eq!(engine.fulfil(&logs).body, "first");
    engine.set_check_output("second");
    assert_eq!(engine.fulfil(&logs).body, "second");
    assert_eq!(engine.cache_stats().logs, HitMiss { hits: 0, misses: 2 });
}

#[test]
fn sent_files_record_only_blocks_that_were_sent() {
    let big: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    let p = TempProject::new(&[("a.txt", "a\n"), ("b.txt", &big), ("c.txt", "c\n")]);
    p.write("bin.txt", b"\xff");
    let config = ContextConfig {
        max_files: 2,
        ..crate::common::hermetic_config()
    };
    let mut engine = ContextEngine::new(p.path(), config).unwrap();
    let ctx = engine.assemble(
        &[
            read("a.txt", None, None),
            read("b.txt", Some(1), Some(3000)),
            read("c.txt", None, None),
            read("bin.txt", None, None),
            read("../a.txt", None, None),
        ],
        None,
    );
    let sent: Vec<(String, String)> = ctx
        .sent_files
        .iter()
        .map(|(p, h)| (p.to_owned(), h.to_owned()))
        .collect();
    let sha = |s: &str| papayu_protocol::sha256_hex(s.as_bytes());
    // c.txt was dropped by max_files; b.txt was truncated but its (partial) content was sent
    // under the hash of the whole file.
    assert_eq!(
        sent,
        [
            ("a.txt".to_owned(), sha("a\n")),
            ("b.txt".to_owned(), sha(&big))
        ]
    );
    let c = papayu_validate::RelPath::parse("c.txt").unwrap();
    assert!(!ctx.sent_files.contains(&c));
    assert_eq!(ctx.stats.context_files_dropped_count, 1);
    assert_eq!(ctx.stats.context_truncated_files_count, 1);

    // A later round adds to the cycle's record.
    engine.assemble(&[read("c.txt", None, None)], None);
    assert!(engine.sent_files().contains(&c));
    assert_eq!(engine.sent_files().len(), 3);
    let json = serde_json::to_value(&ctx).unwrap();
    assert_eq!(json["sent_files"]["a.txt"], sha("a\n"));
    assert_eq!(json["stats"]["context_files_count"], 2);
}

#[test]
fn requested_and_auto_blocks_are_deduplicated() {
    let p = TempProject::new(&[("src/main.rs", "fn main() {\n    panic!()\n}\n")]);
    let mut engine = p.engine();
    let ctx = engine.assemble(
        &[read("src/main.rs", Some(1), Some(82))],
        Some("thread 'main' panicked at src/main.rs:2:5:"),
    );
    assert_eq!(ctx.blocks.len(), 1);
    assert_eq!(ctx.blocks[0].origin, papayu_context::Origin::Requested);
    assert_eq!(
        engine.cache_stats().read_file,
        HitMiss { hits: 1, misses: 1 }
    );
}
