//! A 200-file, 5 MB transaction against a plain non-durable write loop of the same files, and
//! against the bare durable I/O of the same writes ([`floor`]): lock, journal and commit excluded.
//!
//! `cargo bench -p papayu-patch --bench tx` prints one JSON object per line:
//! `{"bench":..,"metric":..,"value":..,"unit":..}`. Each measurement runs in a fresh child
//! process (this binary re-executed) so peak RSS (`VmHWM`) belongs to that measurement alone.
//!
//! Every run writes a new tree in one directory for the whole bench (in `PAPAYU_BENCH_DIR`, else
//! the temp dir), deleted only at the end, and that directory gets ext4's "top of a directory
//! hierarchy" flag (`chattr +T`) so that ext4 spreads the runs' trees over other block groups.
//! Both because ext4 without a journal skips the inodes freed in the last minute (five, while
//! their inode table block is not written back) when it allocates new ones in a block group,
//! looking each one up: deleting each run's 200 files in the temp dir's block group made every
//! later run's creates slower — the plain loop's 7 ms grew to 17-21 ms over 22 runs, and to
//! 40-180 ms over back-to-back benches — which made the tx/plain ratio look far better than it
//! is.
#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types
)]
#![allow(missing_docs)]

use std::time::Instant;

use papayu_patch::Project;
use papayu_protocol::{Action, ActionKind, ProtocolVersion};
use papayu_validate::{Context, Policy, ValidatedPlan, validate_actions};

const FILES: usize = 200;
const PAYLOAD: usize = 5_000_000;

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn contents() -> Vec<(String, String)> {
    let per = PAYLOAD / FILES;
    (0..FILES)
        .map(|i| {
            let line = format!("// file {i}: some generated source text for the benchmark\n");
            let mut s = line.repeat(per / line.len() + 1);
            s.truncate(per - 1);
            s.push('\n');
            (format!("src/mod{}/file{i}.rs", i % 10), s)
        })
        .collect()
}

/// The durable floor: only the I/O of SPEC §5.2 step 4, done as fast as this bench knows how
/// — each file written to a temp file with its write-back started (`sync_file_range`) on two
/// threads, every temp file fsynced on eight threads (the fsyncs overlap on the device), renamed
/// into place, and every directory fsynced. No lock, no journal, no hashing, no checks of any
/// kind: what a transaction costs beyond this is papayu's own overhead, and what this costs
/// beyond the plain loop is what per-file durability costs on this machine's storage.
#[allow(unsafe_code)]
fn floor(dir: &std::path::Path, files: &[(String, String)]) {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut dirs: Vec<std::path::PathBuf> = files
        .iter()
        .map(|(p, _)| dir.join(p).parent().unwrap().to_path_buf())
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    let tmp = |p: &str| dir.join(format!("{p}.tmp"));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let written = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((p, c)) = files.get(i) else { return };
                    let mut f = std::fs::File::create_new(tmp(p)).unwrap();
                    f.write_all(c.as_bytes()).unwrap();
                    // SAFETY: a valid open descriptor; no pointers.
                    unsafe {
                        libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE)
                    };
                    written.lock().unwrap().push(f);
                }
            });
        }
    });
    let fsync_all = |fds: Vec<std::fs::File>| {
        let fds = std::sync::Mutex::new(fds);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    loop {
                        let Some(f) = fds.lock().unwrap().pop() else {
                            return;
                        };
                        f.sync_all().unwrap();
                    }
                });
            }
        });
    };
    fsync_all(written.into_inner().unwrap());
    for (p, _) in files {
        std::fs::rename(tmp(p), dir.join(p)).unwrap();
    }
    dirs.push(dir.to_path_buf());
    fsync_all(
        dirs.iter()
            .map(|d| std::fs::File::open(d).unwrap())
            .collect(),
    );
}

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        serde_json::json!({"bench": bench, "metric": metric, "value": value, "unit": unit})
    );
}

/// The tx run's plan, built the way a frontend builds one: through validation.
fn validated_plan(files: Vec<(String, String)>) -> ValidatedPlan {
    let actions: Vec<Action> = files
        .into_iter()
        .map(|(p, c)| {
            let mut action = Action::new(ActionKind::CreateFile, p);
            action.content = Some(c);
            action
        })
        .collect();
    validate_actions(
        &actions,
        &Context::new(ProtocolVersion::V2),
        &Policy::default(),
    )
    .into_plan()
    .unwrap()
}

/// Give the heap's free pages back to the kernel and start the peak RSS (`VmHWM`) over from the
/// current RSS.
#[allow(unsafe_code)]
fn forget_peak_rss() {
    // SAFETY: `malloc_trim` only returns free heap memory to the kernel; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
    // "5" resets the high-water mark (Linux ≥ 4.0); best effort elsewhere.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn child(mode: &str) {
    let files = contents();
    // Kept: the parent deletes the whole bench directory once every run is done.
    let dir = tempfile::tempdir_in(std::env::var_os("PAPAYU_BENCH_RUN_DIR").unwrap())
        .unwrap()
        .keep();
    // Validation holds a second copy of the payload for a moment (its plan owns its actions):
    // that copy is not the apply's, so it is freed before the measurement starts.
    let (files, plan) = if mode == "tx" {
        let plan = validated_plan(files);
        forget_peak_rss();
        (Vec::new(), Some(plan))
    } else {
        (files, None)
    };
    let rss_before = status_kb("VmRSS:");
    // Start from a clean page cache: otherwise the first fsync of the measured run also pays for
    // writing back whatever the previous run left dirty (the plain loop's 5 MB, a deleted tree).
    rustix::fs::sync();
    let started = Instant::now();
    match mode {
        "plain" => {
            for (p, c) in &files {
                let full = dir.join(p);
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(full, c).unwrap();
            }
        }
        "floor" => floor(&dir, &files),
        _ => {
            let plan = plan.unwrap();
            let project = Project::open(&dir).unwrap();
            project.transaction(&plan).apply().unwrap();
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!("{secs} {rss_before} {}", status_kb("VmHWM:"));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1]);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let bench_dir = tempfile::tempdir_in(
        std::env::var_os("PAPAYU_BENCH_DIR").unwrap_or_else(|| std::env::temp_dir().into()),
    )
    .unwrap();
    // Best effort: other filesystems have no such flag, and lose nothing without it.
    if let Ok(d) = rustix::fs::open(
        bench_dir.path(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        let _ = rustix::fs::ioctl_getflags(&d)
            .and_then(|f| rustix::fs::ioctl_setflags(&d, f | rustix::fs::IFlags::TOPDIR));
    }
    let runs: usize = std::env::var("PAPAYU_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut results = std::collections::BTreeMap::<&str, Vec<(f64, f64, f64)>>::new();
    for _ in 0..runs {
        for mode in ["plain", "floor", "tx"] {
            let out = std::process::Command::new(&exe)
                .args(["--child", mode])
                .env("PAPAYU_BENCH_RUN_DIR", bench_dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Vec<f64> = text
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            results.entry(mode).or_default().push((v[0], v[1], v[2]));
        }
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let bench = "tx_200_files_5mb";
    let mut wall = std::collections::BTreeMap::new();
    for (mode, rs) in &results {
        let w = median(rs.iter().map(|r| r.0).collect());
        let hwm = median(rs.iter().map(|r| r.2).collect());
        let base = median(rs.iter().map(|r| r.1).collect());
        wall.insert(*mode, w);
        emit(bench, &format!("{mode}_wall_median"), w * 1000.0, "ms");
        emit(bench, &format!("{mode}_peak_rss"), hwm / 1024.0, "MiB");
        emit(
            bench,
            &format!("{mode}_peak_rss_over_payload_input"),
            (hwm - base) * 1024.0 / PAYLOAD as f64,
            "x_payload",
        );
    }
    emit(bench, "payload", PAYLOAD as f64 / 1e6, "MB");
    emit(
        bench,
        "tx_over_plain_wall",
        wall["tx"] / wall["plain"],
        "ratio",
    );
    emit(
        bench,
        "floor_over_plain_wall",
        wall["floor"] / wall["plain"],
        "ratio",
    );
    emit(
        bench,
        "tx_over_floor_wall",
        wall["tx"] / wall["floor"],
        "ratio",
    );
    // The same ratios per round (the three modes run back to back), median over the rounds:
    // steadier than a ratio of medians while the device's speed drifts during the bench.
    let paired = |a: &str, b: &str| {
        median(
            results[a]
                .iter()
                .zip(&results[b])
                .map(|(x, y)| x.0 / y.0)
                .collect(),
        )
    };
    for (a, b) in [("tx", "plain"), ("floor", "plain"), ("tx", "floor")] {
        emit(
            bench,
            &format!("{a}_over_{b}_paired_median"),
            paired(a, b),
            "ratio",
        );
    }
}
