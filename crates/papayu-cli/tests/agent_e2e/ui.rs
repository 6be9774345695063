//! `papayu ui`: the HTTP transport's security checks and the real backend behind it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A running `papayu ui --port 0 --no-open`; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(project: &Project, model: &Model) -> Server {
        Server::launch(
            project
                .command(
                    model,
                    &[("PAPAYU_TRACE", "1")],
                    &["ui", "--port", "0", "--no-open"],
                )
                .stderr(Stdio::null()),
        )
    }

    /// Start `cmd` (a `papayu ui`) and read the URL it prints first.
    fn launch(cmd: &mut Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        // The rest of stdout is drained so the server never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
        let url = line
            .trim()
            .strip_prefix("papayu ui: ")
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, token) = rest.split_once("/#token=").unwrap();
        assert_eq!(token.len(), 64, "32 random bytes in hex");
        Server {
            child,
            port: port.parse().unwrap(),
            token: token.to_owned(),
        }
    }

    /// One HTTP/1.1 request; the status and the body.
    fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        // A server that refuses a request by its headers (an oversized Content-Length) answers
        // and closes before the body is sent: the write then fails with a broken pipe or a
        // reset, and the answer is already waiting to be read.
        if let Err(e) = s.write_all(req.as_bytes()) {
            assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ),
                "{e}"
            );
        }
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match s.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
                Err(e) if !bytes.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => {
                    break;
                }
                Err(e) => panic!("reading the answer: {e}"),
            }
        }
        let resp = String::from_utf8(bytes).unwrap();
        let status = resp.split(' ').nth(1).unwrap().parse().unwrap();
        let body = resp
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    fn host(&self) -> (&'static str, String) {
        ("Host", format!("127.0.0.1:{}", self.port))
    }

    fn auth(&self) -> (&'static str, String) {
        ("Authorization", format!("Bearer {}", self.token))
    }

    /// A command as the UI sends it; the status and the JSON answer.
    fn call(&self, command: &str, args: Value) -> (u16, Value) {
        let (status, body) = self.raw(
            "POST",
            &format!("/api/{command}"),
            &[
                self.host(),
                self.auth(),
                ("Origin", format!("http://127.0.0.1:{}", self.port)),
                ("Content-Type", "application/json".into()),
            ],
            &args.to_string(),
        );
        (
            status,
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
        )
    }

    fn ok(&self, command: &str, args: Value) -> Value {
        let (status, v) = self.call(command, args);
        assert_eq!(status, 200, "{command}: {v}");
        v
    }

    fn wait(&self, started: Value) -> Value {
        let id = started["job_id"].as_str().unwrap().to_owned();
        let t = Instant::now();
        loop {
            let s = self.ok("job_status", json!({"job_id": id, "since": 0}));
            if s["state"] != "running" {
                return s;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "job still running: {s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn ui_refuses_requests_without_the_token_or_from_elsewhere() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let s = Server::start(&project, &model);
    let body = "{}";
    let forbidden = |(status, body): (u16, String)| {
        assert_eq!(status, 403, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["code"], "ERR_UI_FORBIDDEN");
    };
    // No token, a wrong token, a token of the right length but wrong.
    forbidden(s.raw("POST", "/api/app_info", &[s.host()], body));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), ("Authorization", "Bearer nope".into())],
        body,
    ));
    let wrong = format!("Bearer {}", "0".repeat(64));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), ("Authorization", wrong)],
        body,
    ));
    // A foreign Origin with the right token.
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), s.auth(), ("Origin", "http://evil.example".into())],
        body,
    ));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[
            s.host(),
            s.auth(),
            ("Origin", format!("http://127.0.0.1:{}", s.port + 1)),
        ],
        body,
    ));
    // A rebinding page's Host, for the API and the static files.
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[("Host", format!("evil.example:{}", s.port)), s.auth()],
        body,
    ));
    forbidden(s.raw("GET", "/", &[("Host", "evil.example".into())], ""));
    // The same request done right; localhost works as well.
    let (status, _) = s.raw(
        "POST",
        "/api/app_info",
        &[("Host", format!("localhost:{}", s.port)), s.auth()],
        body,
    );
    assert_eq!(status, 200);
    // The static UI needs no token; unknown commands and bad arguments are 400s.
    let (status, page) = s.raw("GET", "/", &[s.host()], "");
    assert_eq!(status, 200);
    assert!(
        page.contains("<html") || page.contains("<!doctype html"),
        "{page}"
    );
    let (status, v) = s.call("no_such_command", json!({}));
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("ERR_UI_BAD_REQUEST"))
    );
    let (status, v) = s.call("open_project", json!({"wrong": 1}));
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("ERR_UI_BAD_REQUEST"))
    );
    // Bodies are capped at 8 MiB.
    let big = format!("{{\"path\": \"{}\"}}", "x".repeat(9 << 20));
    let (status, _) = s.raw("POST", "/api/list_dir", &[s.host(), s.auth()], &big);
    assert_eq!(status, 413);
    let info = s.ok("app_info", json!({}));
    assert_eq!(info["transport"], "http");
    assert_eq!(info["env"]["model"], "scripted");
}

#[test]
fn ui_opens_the_working_directorys_project_or_the_one_given() {
    let project = Project::new(&[("src/lib.rs", "pub fn a() {}\n")]);
    let model = Model::start(&[]);
    let root = std::fs::canonicalize(project.root()).unwrap();
    let opened = |s: &Server| {
        let info = s.ok("app_info", json!({}));
        let path = info["project"].as_str().unwrap_or_else(|| panic!("{info}"));
        std::fs::canonicalize(path).unwrap()
    };
    // The working directory's project.
    let s = Server::start(&project, &model);
    assert_eq!(opened(&s), root);
    drop(s);
    // `--project` from elsewhere (a relative one is taken from the working directory).
    let elsewhere = tempfile::tempdir().unwrap();
    let s = Server::launch(
        project
            .command(&model, &[], &["ui", "--port", "0", "--no-open"])
            .arg("--project")
            .arg(project.root())
            .current_dir(elsewhere.path())
            .stderr(Stdio::null()),
    );
    assert_eq!(opened(&s), root);
    // Opening it gives the project (its undo history with it), not an empty one.
    let view = s.ok("open_project", json!({"path": root}));
    assert_eq!(
        std::fs::canonicalize(view["path"].as_str().unwrap()).unwrap(),
        root
    );
    drop(s);
    // A project that is not a directory is a usage error before anything listens.
    let out = project
        .command(
            &model,
            &[],
            &["ui", "--port", "0", "--no-open", "--project"],
        )
        .arg(project.root().join("src/lib.rs"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a directory"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing was served");
}

#[test]
fn ui_listens_on_loopback_only() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let s = Server::start(&project, &model);
    // The kernel's table of listening TCP sockets: this port is bound to 127.0.0.1 alone.
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap()
        + &std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    let port_hex = format!(":{:04X}", s.port);
    let listening: Vec<&str> = table
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&port_hex) && f[3] == "0A"
        })
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(listening, [format!("0100007F{port_hex}")], "{listening:?}");
}

#[test]
fn ui_drives_the_real_backend_plan_preview_apply_undo() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) return 42"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let s = Server::start(&project, &model);
    let root = project.root().canonicalize().unwrap();
    let opened = s.ok("open_project", json!({"path": root}));
    let p = opened["path"].as_str().unwrap().to_owned();
    let plan = s.wait(s.ok(
        "start_plan",
        json!({"project": p, "goal": "make answer() return 42"}),
    ));
    assert_eq!(plan["state"], "done", "{plan}");
    assert_eq!(
        plan["result"]["context"]["sent_files"],
        json!(["src/lib.rs"])
    );
    let preview = s.wait(s.ok("start_prepare_apply", json!({"project": p, "goal": null})));
    assert_eq!(preview["state"], "done", "{preview}");
    let preview_id = preview["result"]["preview_id"].as_str().unwrap();
    // Deselect the note: only src/lib.rs changes.
    let applied = s.wait(s.ok("start_apply", json!({"project": p, "preview_id": preview_id, "selection": [0], "confirmed_deletes": false})));
    assert_eq!(applied["state"], "done", "{applied}");
    assert!(
        applied["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["stage"] == "applying")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS_42
    );
    assert!(!root.join("docs/NOTES.md").exists());
    let report = s.ok("undo", json!({"project": p, "force": false}));
    assert!(report["tx_id"].is_string());
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS
    );
    let traces = s.ok("traces", json!({"project": p}));
    assert_eq!(traces.as_array().unwrap().len(), 2);
    // Redo works once; a second one is an error with its papayu code and an HTTP status.
    s.ok("redo", json!({"project": p, "force": false}));
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS_42
    );
    let (status, e) = s.call("redo", json!({"project": p, "force": false}));
    assert_eq!(
        (status, e["code"].as_str()),
        (422, Some("ERR_NOTHING_TO_REDO")),
        "{e}"
    );
}

/// A fake browser opener on PATH (`xdg-open`, and `open` as macOS names it): it writes the
/// arguments it was given, one a line, to `argv` next to it.
struct FakeOpener {
    dir: tempfile::TempDir,
}

impl FakeOpener {
    fn new() -> FakeOpener {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let argv = dir.path().join("argv");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
            argv.display()
        );
        for name in ["xdg-open", "open"] {
            let path = bin.join(name);
            std::fs::write(&path, &script).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        FakeOpener { dir }
    }

    /// PATH with the fake opener first.
    fn path(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// The arguments the opener was started with (waits until it has been).
    fn argv(&self) -> Vec<String> {
        let file = self.dir.path().join("argv");
        let t = Instant::now();
        while !file.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "papayu ui never started the browser opener"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// `file:///a%20b/c` → `/a b/c`.
fn file_url_path(url: &str) -> PathBuf {
    let encoded = url
        .strip_prefix("file://")
        .unwrap_or_else(|| panic!("not a file URL: {url}"));
    let mut bytes = Vec::new();
    let mut it = encoded.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next().unwrap(), it.next().unwrap()];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap());
        } else {
            bytes.push(b);
        }
    }
    PathBuf::from(String::from_utf8(bytes).unwrap())
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// `papayu ui` opening the browser, with the fake opener and a runtime directory of its own;
/// its stderr (every log line, at the most verbose level) goes to `stderr.log` in `runtime`.
fn launch_with_browser(
    project: &Project,
    model: &Model,
    opener: &FakeOpener,
    runtime: &Path,
) -> Server {
    let stderr = std::fs::File::create(runtime.join("stderr.log")).unwrap();
    let path = opener.path();
    let runtime = runtime.to_str().unwrap();
    Server::launch(
        project
            .command(
                model,
                &[
                    ("PATH", &path),
                    ("XDG_RUNTIME_DIR", runtime),
                    ("RUST_LOG", "trace"),
                ],
                &["ui", "--port", "0"],
            )
            .stderr(stderr),
    )
}

/// The page papayu asked the browser to open: its path, after checking that nothing on the
/// opener's command line carries the token.
fn launch_page(s: &Server, opener: &FakeOpener) -> PathBuf {
    let argv = opener.argv();
    for arg in &argv {
        assert!(
            !arg.contains(&s.token),
            "the token is on the browser's command line, visible in ps: {argv:?}"
        );
    }
    assert_eq!(argv.len(), 1, "{argv:?}");
    file_url_path(&argv[0])
}

#[test]
fn r_browser_command_line_carries_no_token() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let opener = FakeOpener::new();
    let runtime = tempfile::tempdir().unwrap();
    let s = launch_with_browser(&project, &model, &opener, runtime.path());
    let page = launch_page(&s, &opener);
    // A page only this user can read, in a directory only this user can enter.
    let dir = page.parent().unwrap();
    assert!(dir.starts_with(runtime.path()), "{}", page.display());
    assert_eq!(mode(dir), 0o700, "{}", dir.display());
    assert_eq!(mode(&page), 0o600, "{}", page.display());
    assert!(!page.to_str().unwrap().contains(&s.token));
    // Following it leads to the tokened URL papayu printed.
    let html = std::fs::read_to_string(&page).unwrap();
    let url = format!("http://127.0.0.1:{}/#token={}", s.port, s.token);
    assert!(
        html.contains(&format!("content=\"0;url={url}\"")),
        "no redirect to {url} in {html}"
    );
    assert!(
        html.contains(&format!("location.replace(\"{url}\")")),
        "{html}"
    );
    // The first request with the token retires the page.
    let info = s.ok("app_info", json!({}));
    assert_eq!(info["transport"], "http");
    assert!(!page.exists(), "the launch page outlived the first request");
    assert!(dir.exists());
    let token = s.token.clone();
    drop(s);
    // Nor in anything it logged at the most verbose level (today: nothing on this path).
    let log = std::fs::read_to_string(runtime.path().join("stderr.log")).unwrap();
    assert!(!log.contains(&token), "the token is in the log:\n{log}");
}

#[test]
fn r_launch_page_is_removed_when_the_server_stops() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let opener = FakeOpener::new();
    let runtime = tempfile::tempdir().unwrap();
    let mut s = launch_with_browser(&project, &model, &opener, runtime.path());
    let page = launch_page(&s, &opener);
    assert!(
        page.exists(),
        "no request yet: the page waits for the browser"
    );
    // Ctrl-C.
    let kill = Command::new("kill")
        .args(["-INT", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let t = Instant::now();
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "papayu ui ignored Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(!page.exists(), "the launch page outlived the server");
}
