//! Prompt-lookup drafting (`LocalConfig::draft_tokens`) on whole-file answers: the default model
//! (Qwen2.5-Coder-1.5B) rewrites a file of the task corpus with and without drafting (16), and the
//! bench prints wall time, generated tokens/s, how many proposed tokens the sampler took, and
//! whether the two answers are the same text.
//!
//! ```sh
//! cargo bench -p papayu-llm --features local --bench local_drafting
//! cargo bench -p papayu-llm --features local --bench local_drafting -- --rounds 3 --threads 2 js-06
//! ```
//!
//! Prints one JSON object per line: `{"bench", "case", "metric", "value", "unit"}`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[path = "../tests/support/llama_server.rs"]
mod llama_server;
use llama_server::cached_default_model;

use papayu_llm::{ChatRequest, LocalConfig, LocalProvider, Message};
use papayu_protocol::{EditStyle, RequestShape};
use serde_json::json;

/// (task, file, goal): files of the task corpus, small to medium.
const CASES: &[(&str, &str, &str)] = &[
    (
        "py-01-calc-add",
        "calc.py",
        "add() in calc.py subtracts instead of adding; test_calc.py fails",
    ),
    (
        "js-06-matrix-multiply-shape",
        "matrix.js",
        "multiply() must reject matrices whose shapes do not fit (a's columns != b's rows)",
    ),
    (
        "js-08-cli-verbose-flag",
        "cli.js",
        "add a --verbose flag (and -v) that sets options.verbose to true",
    ),
];

const SYSTEM: &str = "You are a careful software engineer working inside papayu. You get a GOAL, \
the project's files (FILE[path] blocks: the file's text under its header) and, when there are \
tests, their failing output. Answer with ONE JSON object and nothing else.\n\nCURRENT MODE: \
APPLY. {\"summary\": \"<one sentence: what is wrong and how you fix it>\", \"actions\": [ ... ]} \
where each action is one of:\n- change a file shown in a FILE block: {\"kind\": \"UPDATE_FILE\", \
\"path\": \"<path>\", \"content\": \"<the whole new file, every line>\"}\nFix the code the goal \
is about. Make the smallest change that makes the failing tests pass.\n";

fn emit(case: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": "local_drafting", "case": case, "metric": metric,
                "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn request(file: &str, text: &str, goal: &str) -> ChatRequest {
    let user = format!("GOAL:\n{goal}\n\nCONTEXT:\nFILE[{file}]:\n{text}");
    let shape = RequestShape {
        edit: EditStyle::WholeFile,
        files: vec![file.to_owned()],
        create: false,
        delete: false,
        context_requests: false,
        change_required: true,
        content_chars: 8_000,
        ..RequestShape::default()
    };
    ChatRequest::new(vec![Message::system(SYSTEM), Message::user(user)])
        .shaped(shape)
        .max_tokens(2_048)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args[i + 1].parse::<usize>().unwrap())
    };
    let rounds = arg("--rounds").unwrap_or(2);
    let path = cached_default_model();
    let mut config = LocalConfig::new(&path);
    config.timeout = Duration::from_secs(1_800);
    if let Some(threads) = arg("--threads") {
        config.threads = threads;
    }
    let mut plain = config.clone();
    plain.draft_tokens = 0;
    config.draft_tokens = 16;
    let drafting = LocalProvider::new(config).unwrap();
    let plain = LocalProvider::new(plain).unwrap();
    let cancel = AtomicBool::new(false);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/tasks");
    // Any other argument picks the cases whose task contains it.
    let filters: Vec<&String> = args
        .iter()
        .skip(1)
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[*i].starts_with("--")))
        .map(|(_, a)| a)
        .collect();
    let picked = CASES.iter().filter(|(task, _, _)| {
        filters.is_empty() || filters.iter().any(|f| task.contains(f.as_str()))
    });
    for (task, file, goal) in picked {
        let text = std::fs::read_to_string(corpus.join(task).join("project").join(file)).unwrap();
        let req = request(file, &text, goal);
        let mut figures: [[Vec<f64>; 2]; 2] = Default::default();
        let mut texts: [Option<String>; 2] = [None, None];
        let mut accepted = Vec::new();
        for _ in 0..rounds {
            for (i, p) in [&plain, &drafting].into_iter().enumerate() {
                // Each answer from the same state: a new context, the prompt decoded again.
                p.release_context();
                let t = Instant::now();
                let (c, s) = p.complete_blocking(&req, &cancel).unwrap();
                let wall = t.elapsed().as_secs_f64();
                eprintln!(
                    "{task} draft={}: {wall:.1} s, generated {} tok in {:.1} s ({:.1} tok/s), drafts {} proposed / {} taken",
                    i * 16,
                    s.generated_tokens,
                    s.generation_time.as_secs_f64(),
                    s.generated_tokens_per_sec(),
                    s.drafted_tokens,
                    s.accepted_drafts,
                );
                figures[i][0].push(wall);
                figures[i][1].push(s.generated_tokens_per_sec());
                if i == 1 {
                    accepted
                        .push(f64::from(s.accepted_drafts) / f64::from(s.generated_tokens.max(1)));
                }
                texts[i].get_or_insert(c.text);
            }
        }
        let [[plain_wall, plain_tps], [draft_wall, draft_tps]] = figures;
        let (plain_wall, draft_wall) = (median(plain_wall), median(draft_wall));
        emit(task, "wall_plain_median", plain_wall, "s");
        emit(task, "wall_drafting_median", draft_wall, "s");
        emit(task, "speedup", plain_wall / draft_wall, "x");
        emit(
            task,
            "generated_tok_per_s_plain_median",
            median(plain_tps),
            "tok/s",
        );
        emit(
            task,
            "generated_tok_per_s_drafting_median",
            median(draft_tps),
            "tok/s",
        );
        emit(
            task,
            "generated_tokens_from_drafts",
            median(accepted),
            "share",
        );
        if let [Some(a), Some(b)] = &texts
            && a != b
        {
            let at = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
            let around = |t: &str| {
                t.chars()
                    .skip(at.saturating_sub(30))
                    .take(60)
                    .collect::<String>()
            };
            eprintln!(
                "{task}: the answers part at character {at}:\n  plain:    {:?}\n  drafting: {:?}",
                around(a),
                around(b)
            );
        }
        emit(
            task,
            "same_answer",
            f64::from(u8::from(texts[0] == texts[1])),
            "bool",
        );
    }
}
